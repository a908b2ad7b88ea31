package index

import (
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
