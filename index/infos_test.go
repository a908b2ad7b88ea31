package index

import (
	"math"
	"slices"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestInfosSortedAcrossSyncAndReopen(t *testing.T) {
	dir := t.TempDir()
	emb := NewNGramEmbedder(NGramOptions{})
	lessons := []domain.Lesson{
		{ID: "zeta-lesson-0001", Type: "semantic", Gist: "Zeta gist.", Reach: "repo:api"},
		{ID: "alpha-lesson-0002", Type: "semantic", Gist: "Alpha gist."},
		{ID: "mid-lesson-0003", Type: "procedural", Gist: "Mid gist."},
	}
	want := []domain.LessonInfo{{ID: "alpha-lesson-0002"}, {ID: "mid-lesson-0003"}, {ID: "zeta-lesson-0001", Reach: "repo:api"}}
	ix, err := Open(dir, emb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	if got := ix.Infos(); !slices.Equal(got, want) {
		t.Fatalf("after Sync: %v, want %v", got, want)
	}
	_ = ix.Close()
	ix, err = Open(dir, emb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := ix.Infos(); !slices.Equal(got, want) {
		t.Fatalf("after reopen: %v, want %v", got, want)
	}
	if _, err := ix.Sync(lessons[:2]); err != nil {
		t.Fatal(err)
	}
	if got := ix.Infos(); !slices.Equal(got, []domain.LessonInfo{want[0], want[2]}) {
		t.Fatalf("after a removal: %v", got)
	}
}

// TestUsefulFuncAskedOncePerCandidate: Search asks about each candidate once,
// in a few batches (the text arms' candidates, then the lateral arm's), and
// applies the answers.
func TestUsefulFuncAskedOncePerCandidate(t *testing.T) {
	ix, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lessons []domain.Lesson
	for i, g := range []string{"payments retry backoff jitter", "payments gateway timeout", "stylesheet colour tokens", "kafka consumer lag alert", "database migration schema"} {
		lessons = append(lessons, domain.Lesson{ID: "lesson-" + string(rune('a'+i)) + "-0000", Type: "semantic", Gist: g})
	}
	lessons[1].Reach = "repo:payments" // handed to UsefulFunc as the index holds it
	if _, err := ix.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	batches := 0
	q := Query{Text: "payments retry", K: 3, Repo: "payments", UsefulFunc: func(lessons []domain.LessonInfo) []Usefulness {
		batches++
		out := make([]Usefulness, len(lessons))
		for i, l := range lessons {
			id := l.ID
			calls[id]++
			if want := map[bool]string{true: "repo:payments"}[id == "lesson-b-0000"]; l.Reach != want {
				t.Errorf("UsefulFunc got %s with reach %q; want %q", id, l.Reach, want)
			}
			out[i] = neutral
			if id == "lesson-b-0000" {
				out[i] = Usefulness{Results: 40, Mean: 0.02, Draw: 0.02}
			}
		}
		return out
	}}
	hits, err := ix.Search(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if calls["lesson-b-0000"] == 0 {
		t.Fatalf("UsefulFunc never asked about lesson-b-0000 (of reach repo:payments): %v", calls)
	}
	if len(calls) == 0 || batches > 3 {
		t.Fatalf("UsefulFunc calls: %v in %d batches", calls, batches)
	}
	for id, n := range calls {
		if n != 1 {
			t.Fatalf("UsefulFunc asked %d times for %s", n, id)
		}
	}
	if len(hits) == 0 || hits[0].ID != "lesson-a-0000" {
		t.Fatalf("hits %v", hits)
	}
	for _, h := range hits {
		if want := 1 + (0.02-0.5)*40/42.0; h.ID == "lesson-b-0000" && math.Abs(h.Weight-want) > 1e-9 {
			t.Fatalf("UsefulFunc's weight not applied: %+v", h)
		}
	}
}
