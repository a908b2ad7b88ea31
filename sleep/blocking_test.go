package sleep

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// sharedBEIR is the evaluation data beside the project (never inside it).
const sharedBEIR = "../../shared/data/beir"

// TestBlockedPlanMatchesAllPairs holds the blocked and the sketch-scan
// candidate enumerations to the all-pairs planner: the same neighbour pairs
// and the same plan (merges, refusals, conflicts, edges, file bytes and
// commit messages) on the shared BEIR sets (a bounded slice of each), the
// superseded-facts set and randomised near-duplicate stores.
func TestBlockedPlanMatchesAllPairs(t *testing.T) {
	check := func(t *testing.T, lessons []domain.Lesson, wantPairs bool, emb ...index.Embedder) {
		t.Helper()
		snap := snapshotOf(t, lessons, emb...)
		exact := MakePlan(snap, PlanOptions{pairs: pairsExact})
		p := newPlanner(snap, PlanOptions{})
		ids := p.active()
		opts := domain.NeighborOptions{Floor: p.opts.MergeCandidateFloor, PerSourceK: p.opts.MergePerSource}
		all := domain.TopNeighborPairs(p.vectors(ids), opts)
		if wantPairs && len(all) == 0 {
			t.Fatal("the set has no candidate pairs to find")
		}
		for _, mode := range []pairMode{pairsScan, pairsBlocked} {
			var cands []domain.CandidatePair
			if mode == pairsScan {
				cands = p.sketchPairs(ids)
			} else {
				cands = p.blockedPairs(ids)
			}
			if got := domain.RankCandidatePairs(cands, p.vectors(ids), opts); !slices.Equal(got, all) {
				t.Errorf("mode %d: %d neighbour pairs, all pairs give %d", mode, len(got), len(all))
			}
			if got := MakePlan(snap, PlanOptions{pairs: mode}); !reflect.DeepEqual(got, exact) {
				t.Errorf("mode %d: the plan differs from the all-pairs plan:\n%s\nall pairs:\n%s", mode, got, exact)
			}
		}
		t.Logf("%d lessons, %d candidate pairs", len(lessons), len(all))
	}

	t.Run("beir", func(t *testing.T) {
		sets, _ := filepath.Glob(filepath.Join(sharedBEIR, "*", "corpus.jsonl"))
		if len(sets) == 0 {
			t.Skipf("no shared evaluation data at %s: the BEIR cases are skipped", sharedBEIR)
		}
		for _, corpus := range sets {
			name := filepath.Base(filepath.Dir(corpus))
			t.Run(name, func(t *testing.T) { check(t, beirLessons(t, corpus, 700), false) })
		}
	})
	t.Run("superseded facts", func(t *testing.T) {
		check(t, factLessons(t, filepath.Join("..", "cmd", "borg", "testdata", "facts", "tessellate.jsonl")), true)
	})
	t.Run("generated store", func(t *testing.T) { check(t, genLessons(1500), true) })
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("near-duplicates seed %d", seed), func(t *testing.T) { check(t, nearDuplicateLessons(seed, 600), true) })
	}
	t.Run("near-duplicates, 300-dimension embedder", func(t *testing.T) {
		check(t, nearDuplicateLessons(5, 400), true, wordEmbedder{dim: 300})
	})
}

// snapshotOf is a snapshot of lessons (no events) with the vectors of emb
// (the default embedder when none).
func snapshotOf(t *testing.T, lessons []domain.Lesson, emb ...index.Embedder) Snapshot {
	t.Helper()
	snap := Snapshot{Date: benchDate, Base: "base"}
	for _, l := range lessons {
		snap.Lessons = append(snap.Lessons, LessonFile{Lesson: l, Raw: memfs.Render(l)})
	}
	snap.Lessons = sortedLessons(snap.Lessons)
	var e index.Embedder
	if len(emb) > 0 {
		e = emb[0]
	}
	vecs, id, err := embedLessons(snap.Lessons, e)
	if err != nil {
		t.Fatal(err)
	}
	snap.Vectors, snap.EmbedderID = vecs, id
	return snap
}

// beirLessons reads the first limit documents of a BEIR corpus as lessons:
// the title as title, the first sentence of the text as gist, the text as
// body, created a minute apart in file order.
func beirLessons(t *testing.T, corpus string, limit int) []domain.Lesson {
	t.Helper()
	f, err := os.Open(corpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	var out []domain.Lesson
	for sc.Scan() && len(out) < limit {
		var d struct{ ID, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", corpus, err)
		}
		d.ID = ""
		gist, _, _ := strings.Cut(d.Text, ". ")
		out = append(out, domain.Lesson{ID: fmt.Sprintf("doc-%05d", len(out)), Type: domain.TypeSemantic,
			Title: d.Title, Gist: gist, Body: d.Text, Confidence: 0.5,
			Created: benchDate.AddDate(0, -1, 0).Add(time.Duration(len(out)) * time.Minute)})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", corpus, err)
	}
	return out
}

// factLessons reads the superseded-facts set as lessons: the rewrites two
// months after the rest, as TestSupersededFacts learns them.
func factLessons(t *testing.T, path string) []domain.Lesson {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.Lesson
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var f struct{ Group, When, Gist string }
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		created := benchDate.AddDate(0, -3, 0)
		if f.When == "new" {
			created = benchDate.AddDate(0, -1, 0)
		}
		out = append(out, domain.Lesson{ID: fmt.Sprintf("fact-%03d", i), Type: domain.TypeSemantic, Title: f.Gist,
			Gist: f.Gist, Confidence: 0.6, Created: created.Add(time.Duration(i) * time.Minute)})
	}
	return out
}

// nearDuplicateLessons makes n lessons of which about a third copy an
// earlier one with a few words replaced, dropped or added, so their cosines
// spread over the candidate floor and the merge threshold.
func nearDuplicateLessons(seed uint64, n int) []domain.Lesson {
	r := &genRand{x: seed * 7919}
	vocab := make([]string, 800)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%c%c%c", 'a'+r.intn(26), 'a'+r.intn(26), 'a'+r.intn(26))
	}
	var texts [][]string
	out := make([]domain.Lesson, 0, n)
	for i := 0; i < n; i++ {
		var ws []string
		if i > 0 && r.intn(3) == 0 {
			ws = slices.Clone(texts[r.intn(len(texts))])
			for k := r.intn(4); k > 0; k-- {
				switch r.intn(3) {
				case 0:
					ws[r.intn(len(ws))] = vocab[r.intn(len(vocab))]
				case 1:
					if len(ws) > 4 {
						j := r.intn(len(ws))
						ws = append(ws[:j], ws[j+1:]...)
					}
				default:
					ws = append(ws, vocab[r.intn(len(vocab))])
				}
			}
		} else {
			for k := 6 + r.intn(20); k > 0; k-- {
				ws = append(ws, vocab[r.intn(len(vocab))])
			}
		}
		texts = append(texts, ws)
		s := strings.Join(ws, " ")
		out = append(out, domain.Lesson{ID: fmt.Sprintf("dup-%04d", i), Type: domain.TypeSemantic, Title: s, Gist: s,
			Confidence: 0.5, Created: benchDate.Add(-time.Duration(n-i) * time.Hour)})
	}
	return out
}

// TestFWHTMatchesTextbook holds the fused transform to the textbook loop, bit
// for bit: the sketches (and so the candidate pairs) depend on its output.
func TestFWHTMatchesTextbook(t *testing.T) {
	textbook := func(a []float32) {
		for span := 1; span < len(a); span *= 2 {
			for i := 0; i < len(a); i += 2 * span {
				for j := i; j < i+span; j++ {
					x, y := a[j], a[j+span]
					a[j], a[j+span] = x+y, x-y
				}
			}
		}
	}
	r := &genRand{x: 5}
	for _, n := range []int{1, 2, 4, 8, 64, 512, 1024} {
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(r.intn(100000))/7919 - 5
		}
		b := slices.Clone(a)
		fwht(a)
		textbook(b)
		if !slices.Equal(a, b) {
			t.Fatalf("length %d: the fused transform differs from the textbook one", n)
		}
	}
}
