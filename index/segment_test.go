package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

var corpusQueries = []string{"retry backoff payments", "schema migration postgres index", "race detector cache",
	"docker layer python venv", "kafka consumer lag alert", "redis session token timeout", "gateway"}

// sameSearches checks that a and b answer queries alike: the same hits in
// the same order with the same fused scores (float tolerance), the same
// supersession, and the same lexical and vector arms.
func sameSearches(t *testing.T, a, b *Index, queries []string) {
	t.Helper()
	sameLexical(t, a, b, queries)
	for _, q := range queries {
		qv, _ := a.emb.Embed([]string{q})
		va, vb := a.vec.search(qv[0], 50, nil), b.vec.search(qv[0], 50, nil)
		if len(va) != len(vb) {
			t.Fatalf("%q: %d vector hits, want %d", q, len(va), len(vb))
		}
		for i := range va {
			if va[i].id != vb[i].id || math.Abs(va[i].score-vb[i].score) > 1e-6 {
				t.Fatalf("%q vector %d: %v, want %v", q, i, va[i], vb[i])
			}
		}
		ha, err := a.Search(context.Background(), Query{Text: q, K: 20, Repo: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		hb, _ := b.Search(context.Background(), Query{Text: q, K: 20, Repo: "r1"})
		if len(ha) != len(hb) {
			t.Fatalf("%q: %d hits %v, want %d %v", q, len(ha), ids(ha), len(hb), ids(hb))
		}
		for i := range ha {
			x, y := ha[i], hb[i]
			if x.ID != y.ID || math.Abs(x.Fused-y.Fused) > 1e-9 || !slices.Equal(x.SupersededBy, y.SupersededBy) ||
				x.Title != y.Title || x.Reach != y.Reach {
				t.Fatalf("%q hit %d: %+v, want %+v", q, i, x, y)
			}
		}
	}
}

// sameLexical checks the lexical arm (hits and BM25 scores), the lessons
// and the link graph of a and b.
func sameLexical(t *testing.T, a, b *Index, queries []string) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("%d lessons, want %d", a.Len(), b.Len())
	}
	if !slices.Equal(a.Infos(), b.Infos()) {
		t.Fatalf("infos differ")
	}
	for _, q := range queries {
		la, _ := a.cat.lexicalSearch(context.Background(), q, 50, nil)
		lb, _ := b.cat.lexicalSearch(context.Background(), q, 50, nil)
		if len(la) != len(lb) {
			t.Fatalf("%q: %d lexical hits, want %d", q, len(la), len(lb))
		}
		for i := range la {
			if a.cat.id(la[i].ord) != b.cat.id(lb[i].ord) || math.Abs(la[i].score-lb[i].score) > 1e-9 {
				t.Fatalf("%q lexical %d: %s %v, want %s %v", q, i, a.cat.id(la[i].ord), la[i].score, b.cat.id(lb[i].ord), lb[i].score)
			}
		}
	}
	for _, g := range a.cat.ordered() {
		id := a.cat.id(g)
		h, ok := b.cat.find(id)
		if !ok {
			t.Fatalf("%s missing from the rebuild", id)
		}
		na, nb := neighbourIDs(a, g), neighbourIDs(b, h)
		if !slices.Equal(na, nb) {
			t.Fatalf("%s neighbours %v, want %v", id, na, nb)
		}
	}
}

func neighbourIDs(ix *Index, g int) []string {
	var out []string
	for _, n := range ix.cat.neighbours(g) {
		out = append(out, ix.cat.id(n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// segCorpus makes random lessons with links (supersedes and supports) and
// repo reach, the parts the segments' overlay must get right.
type segCorpus struct {
	r     *rand.Rand
	words []string
}

func newSegCorpus(seed uint64) *segCorpus {
	return &segCorpus{r: rand.New(rand.NewPCG(seed, 11)), words: strings.Fields("retry backoff payments gateway timeout migrate schema postgres index foreign key " +
		"race detector cache docker layer venv python linter kafka consumer lag alert redis session token")}
}

func (c *segCorpus) text(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(c.words[c.r.IntN(len(c.words))])
		b.WriteByte(' ')
	}
	return b.String()
}

func (c *segCorpus) lesson(i, n int) domain.Lesson {
	l := domain.Lesson{ID: fmt.Sprintf("lesson-%03d", i), Type: "semantic", Title: c.text(3), Gist: c.text(6),
		Body: c.text(c.r.IntN(30)), Tags: strings.Fields(c.text(c.r.IntN(3)))}
	if c.r.IntN(8) == 0 {
		l.Reach = fmt.Sprintf("repo:r%d", c.r.IntN(2))
	}
	for range c.r.IntN(3) {
		rel := domain.RelSupports
		if c.r.IntN(2) == 0 {
			rel = domain.RelSupersedes
		}
		// Targets may be lessons that do not exist yet, or any longer.
		l.Links = append(l.Links, domain.LessonLink{Rel: rel, Target: fmt.Sprintf("lesson-%03d", c.r.IntN(n+10))})
	}
	return l
}

// lessons are the corpus's lessons 0 to n-1, by id.
func (c *segCorpus) lessons(n int) map[string]domain.Lesson {
	out := make(map[string]domain.Lesson, n)
	for i := range n {
		l := c.lesson(i, n)
		out[l.ID] = l
	}
	return out
}

func sortedLessons(m map[string]domain.Lesson) []domain.Lesson {
	out := make([]domain.Lesson, 0, len(m))
	for _, l := range m {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b domain.Lesson) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func rebuild(t *testing.T, ls []domain.Lesson) *Index {
	t.Helper()
	full, err := NewMemory(NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := full.Sync(ls); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { full.Close() })
	return full
}

// TestSegmentsMatchRebuild: an index on disk after many incremental
// changes (adds, edits, removals, links into and out of the delta), its
// merges deferred, answers exactly as a fresh rebuild of the same lessons,
// in process and reopened from its files. The embedder is the n-gram one
// without IDF: with IDF a delta embeds with the base's fitted weights until
// a refit, as a sync always did between refits, so vector scores then
// differ from a rebuild's by design.
func TestSegmentsMatchRebuild(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newSegCorpus(seed)
	const n = 80
	current := c.lessons(n)
	dir := t.TempDir()
	open := func() *Index {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix := open()
	defer func() { ix.Close() }()
	if _, err := ix.Sync(sortedLessons(current)); err != nil {
		t.Fatal(err)
	}
	for round := range 12 {
		for range 1 + c.r.IntN(4) {
			i := c.r.IntN(n + 5)
			id := fmt.Sprintf("lesson-%03d", i)
			if c.r.IntN(4) == 0 {
				delete(current, id)
			} else {
				current[id] = c.lesson(i, n)
			}
		}
		st, err := ix.Sync(sortedLessons(current))
		if err != nil {
			t.Fatal(err)
		}
		if st.Merged {
			t.Fatalf("round %d: a deferred merge happened", round)
		}
		full := rebuild(t, sortedLessons(current))
		sameSearches(t, ix, full, corpusQueries)
		ix.Close()
		ix = open()
		if ix.Stale() {
			t.Fatalf("round %d: reopened index is stale", round)
		}
		sameSearches(t, ix, full, corpusQueries)
	}
	if _, err := os.Stat(filepath.Join(dir, deltaName)); err != nil {
		t.Fatalf("no delta segment written: %v", err)
	}
	if err := Verify(dir, ix.emb); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// TestSegmentChangeOrder: the same changes applied one sync at a time in
// different orders leave indexes that answer alike (and as a rebuild).
func TestSegmentChangeOrder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newSegCorpus(seed)
	const n = 60
	start := map[string]domain.Lesson{}
	for i := range n {
		l := c.lesson(i, n)
		start[l.ID] = l
	}
	type change struct {
		id     string
		lesson *domain.Lesson // nil: removed
	}
	var changes []change
	for k := range 10 {
		i := c.r.IntN(n + 5)
		id := fmt.Sprintf("lesson-%03d", i)
		if k%3 == 0 {
			changes = append(changes, change{id: id})
			continue
		}
		l := c.lesson(i, n)
		changes = append(changes, change{id: id, lesson: &l})
	}
	// Each id changes once, so every order ends at the same lessons.
	seen := map[string]bool{}
	changes = slices.DeleteFunc(changes, func(ch change) bool {
		dup := seen[ch.id]
		seen[ch.id] = true
		return dup
	})
	final := map[string]domain.Lesson{}
	for id, l := range start {
		final[id] = l
	}
	for _, ch := range changes {
		if ch.lesson == nil {
			delete(final, ch.id)
		} else {
			final[ch.id] = *ch.lesson
		}
	}
	full := rebuild(t, sortedLessons(final))
	for trial := range 4 {
		order := slices.Clone(changes)
		c.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		ix, err := Open(t.TempDir(), NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
		if err != nil {
			t.Fatal(err)
		}
		cur := map[string]domain.Lesson{}
		for id, l := range start {
			cur[id] = l
		}
		if _, err := ix.Sync(sortedLessons(cur)); err != nil {
			t.Fatal(err)
		}
		for _, ch := range order {
			if ch.lesson == nil {
				delete(cur, ch.id)
			} else {
				cur[ch.id] = *ch.lesson
			}
			if _, err := ix.Sync(sortedLessons(cur)); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) { sameSearches(t, ix, full, corpusQueries) })
		ix.Close()
	}
}

// TestSegmentDeltaCorrupt: a torn or foreign delta is ignored: the index
// reads as its base (a committed state) and the next sync redoes the rest.
func TestSegmentDeltaCorrupt(t *testing.T) {
	c := newSegCorpus(3)
	ls := map[string]domain.Lesson{}
	for i := range 30 {
		l := c.lesson(i, 30)
		ls[l.ID] = l
	}
	dir := t.TempDir()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.SyncStamp(sortedLessons(ls), "one"); err != nil {
		t.Fatal(err)
	}
	ls["lesson-001"] = c.lesson(1, 30)
	if _, err := ix.SyncStamp(sortedLessons(ls), "two"); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for _, name := range []string{deltaName, vecDeltaName} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)/2] ^= 0xff
		if err := os.WriteFile(filepath.Join(dir, name), raw[:len(raw)-3], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err = Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Stamp() != "one" || ix.Len() != 30 {
		t.Fatalf("stamp %q len %d, want the base's", ix.Stamp(), ix.Len())
	}
	if _, err := ix.SyncStamp(sortedLessons(ls), "two"); err != nil {
		t.Fatal(err)
	}
	sameSearches(t, ix, rebuild(t, sortedLessons(ls)), corpusQueries)
}

// TestMergeDue: past the bound, a sync merges unless DeferMerge holds it,
// and says so.
func TestMergeDue(t *testing.T) {
	c := newSegCorpus(5)
	ls := map[string]domain.Lesson{}
	for i := range 200 {
		l := c.lesson(i, 200)
		ls[l.ID] = l
	}
	for _, deferMerge := range []bool{true, false} {
		ix, err := Open(t.TempDir(), NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: deferMerge})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(sortedLessons(ls)); err != nil {
			t.Fatal(err)
		}
		var st SyncStats
		for i := range 70 {
			ls[fmt.Sprintf("lesson-%03d", i)] = c.lesson(i, 200)
			if st, err = ix.Sync(sortedLessons(ls)); err != nil {
				t.Fatal(err)
			}
			if st.Merged {
				break
			}
		}
		if deferMerge && (st.Merged || !st.MergeDue || st.DeltaDocs != 70 || !ix.MergeDue()) {
			t.Fatalf("deferred: %+v", st)
		}
		if deferMerge {
			// A process that may merge does, though nothing changed.
			dir := ix.dir
			ix.Close()
			if ix, err = Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{}); err != nil {
				t.Fatal(err)
			}
			if !ix.MergeDue() {
				t.Fatal("reopened: merge not due")
			}
			if st, err = ix.Sync(sortedLessons(ls)); err != nil || !st.Merged || ix.MergeDue() {
				t.Fatalf("merge: %+v %v", st, err)
			}
		}
		if !deferMerge && !st.Merged {
			t.Fatalf("not merged: %+v", st)
		}
		sameSearches(t, ix, rebuild(t, sortedLessons(ls)), corpusQueries)
		ix.Close()
	}
}

// TestAdversarialCorruptVectorDelta: a vector delta corrupted on disk, beside a
// sound catalog, is never taken for an up-to-date index: Verify names it,
// Open reports the index stale, and the sync a stale index gets embeds the
// lessons it held again, so the vector arm finds them.
func TestAdversarialCorruptVectorDelta(t *testing.T) {
	c := newSegCorpus(9)
	ls := map[string]domain.Lesson{}
	for i := range 30 {
		l := c.lesson(i, 30)
		ls[l.ID] = l
	}
	dir := t.TempDir()
	emb := func() Embedder { return NewNGramEmbedder(NGramOptions{NoIDF: true}) }
	ix, err := Open(dir, emb(), Options{DeferMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.SyncStamp(sortedLessons(ls), "one"); err != nil {
		t.Fatal(err)
	}
	added := domain.Lesson{ID: "lesson-new", Type: "semantic", Gist: "Rotate the kafka consumer session token weekly."}
	ls[added.ID] = added
	if _, err := ix.SyncStamp(sortedLessons(ls), "two"); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := Verify(dir, emb()); err != nil {
		t.Fatalf("a sound index: %v", err)
	}
	path := filepath.Join(dir, vecDeltaName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-6] ^= 0x10 // a vector's bytes
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, emb()); err == nil || !strings.Contains(err.Error(), vecDeltaName) {
		t.Fatalf("Verify of a corrupt vector delta: %v, want it named", err)
	}
	ix, err = Open(dir, emb(), Options{DeferMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !ix.Stale() {
		t.Fatal("an index whose vector delta is corrupt says it is not stale")
	}
	if _, err := ix.SyncStamp(sortedLessons(ls), "two"); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), Query{Text: added.Gist, K: 5, Arms: ArmWeights{Vector: 1}, Floor: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != added.ID {
		t.Fatalf("the vector arm after the sync: %v, want %s first", ids(hits), added.ID)
	}
	if err := Verify(dir, emb()); err != nil {
		t.Fatalf("after the sync: %v", err)
	}
}
