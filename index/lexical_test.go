package index

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestLexicalBlocksMatchDense: the lexical arm summed a block at a time,
// whatever the block size, returns exactly (ordinals and scores, bit for
// bit) what summing every lesson's score in one dense array and ranking
// them all does, on an index with a delta segment and tombstoned base
// lessons, with ties (lessons of the same text), and with a keep that
// rejects most lessons (the pass that asks keep of each lesson) or all.
func TestLexicalBlocksMatchDense(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newSegCorpus(seed)
	const n = 300
	current := c.lessons(n)
	for i := 0; i < n; i += 25 { // a twin: the same text under another id ties
		twin := current[fmt.Sprintf("lesson-%03d", i)]
		twin.ID = fmt.Sprintf("twin-%03d", i)
		current[twin.ID] = twin
	}
	ix, err := Open(filepath.Join(t.TempDir(), "ix"), NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(sortedLessons(current)); err != nil {
		t.Fatal(err)
	}
	for range 40 { // edits and removals: a delta, and dead base lessons
		id := fmt.Sprintf("lesson-%03d", c.r.IntN(n))
		if c.r.IntN(3) == 0 {
			delete(current, id)
		} else {
			l := c.lesson(c.r.IntN(n), n)
			l.ID = id
			current[id] = l
		}
	}
	if _, err := ix.Sync(sortedLessons(current)); err != nil {
		t.Fatal(err)
	}
	v := ix.cat
	if v.delta.len() == 0 || v.dead == nil {
		t.Fatalf("want a delta and tombstones: delta %d, dead %v", v.delta.len(), v.dead != nil)
	}
	keeps := map[string]func(int) bool{
		"all":     nil,
		"a tenth": func(o int) bool { return o%10 == 3 },
		"none":    func(int) bool { return false },
	}
	ctx := context.Background()
	for _, q := range append(corpusQueries, "retry retry backoff", "nothing-matches-this") {
		terms := analyze(q)
		for name, keep := range keeps {
			for _, k := range []int{1, 5, 50, 400} {
				want := denseLexical(v, terms, k, keep)
				for _, block := range []int{1, 2, 7, 64, lexicalBlock} {
					got, err := v.lexicalSearchBlocks(ctx, terms, k, keep, block)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%q keep %s n %d block %d:\n got %v\nwant %v", q, name, k, block, got, want)
					}
				}
			}
		}
	}
}

// denseLexical is the lexical arm without blocks or heaps: every live
// lesson's BM25 summed over the query's (field, term) lists in their order,
// all ranked (score, then id), those keep accepts, the n first.
func denseLexical(v *view, terms []string, n int, keep func(int) bool) []scoredOrd {
	order, qtf := queryTerms(terms)
	sums := make([]float64, v.span())
	touched := make([]bool, v.span())
	for f := textField(0); f < numFields; f++ {
		avg := v.avgLen[f]
		if fieldBoost[f] <= 0 || !(avg > 0) {
			continue
		}
		for _, t := range order {
			tfs := map[int]float64{} // global ordinal → tf
			for i, c := range [2]*catalog{v.base, v.delta} {
				first := 0
				if i == 1 {
					first = v.base.len()
				}
				post := c.postings(f, t)
				for p := 0; p+postingSize <= len(post); p += postingSize {
					d := int(le32(post[p:]))
					if i == 0 && v.dead != nil && d < len(v.dead) && v.dead[d] {
						continue
					}
					tfs[first+d] = float64(le32(post[p+4:]))
				}
			}
			if len(tfs) == 0 {
				continue
			}
			df := float64(len(tfs))
			w := fieldBoost[f] * math.Log(1+(float64(v.len())-df+0.5)/(df+0.5)) * float64(qtf[t])
			for g, tf := range tfs {
				dl := avg
				if l := v.fieldLen(f, g); l > 0 {
					dl = float64(l)
				}
				touched[g] = true
				sums[g] += w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
			}
		}
	}
	var all []scoredOrd
	for g, ok := range touched {
		if ok {
			all = append(all, scoredOrd{ord: g, score: sums[g]})
		}
	}
	slices.SortFunc(all, func(a, b scoredOrd) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case v.idLess(a.ord, b.ord):
			return -1
		case v.idLess(b.ord, a.ord):
			return 1
		}
		return 0
	})
	var out []scoredOrd
	for _, c := range all {
		if len(out) == n {
			break
		}
		if keep == nil || keep(c.ord) {
			out = append(out, c)
		}
	}
	return out
}
