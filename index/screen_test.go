package index

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestScreenVerdicts checks that a lesson the screen refuses is recorded
// with its reason, never a search hit, screened once while unchanged, and
// screened again when the screen's rules change.
func TestScreenVerdicts(t *testing.T) {
	var calls atomic.Int32
	screen := func(l domain.Lesson) string {
		calls.Add(1)
		if strings.Contains(l.Body, "TOKEN-LIKE") {
			return "secret (test) in the body"
		}
		return ""
	}
	lessons := []domain.Lesson{
		lesson("deploy-clean", "", "Deploy the billing service with make deploy", "billing deploy notes"),
		lesson("deploy-secret", "", "Deploy the billing service with this key", "billing deploy TOKEN-LIKE"),
	}
	dir := t.TempDir()
	open := func(id string) *Index {
		t.Helper()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{Screen: screen, ScreenID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ix.Close() })
		return ix
	}
	search := func(ix *Index) []string {
		t.Helper()
		hits, err := ix.Search(context.Background(), Query{Text: "deploy the billing service key", K: 5, Bar: -1})
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}

	ix := open("rules-1")
	if _, err := ix.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		ix   func() *Index
		sync bool
		want int32 // screen calls so far
	}{
		{"first sync screens both", func() *Index { return ix }, false, 2},
		{"unchanged lessons are not screened again", func() *Index { return ix }, true, 2},
		{"a reopened index keeps the verdicts", func() *Index { return open("rules-1") }, false, 2},
		{"other rules screen everything again", func() *Index { return open("rules-2") }, true, 4},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ix := st.ix()
			if st.sync {
				if _, err := ix.Sync(lessons); err != nil {
					t.Fatal(err)
				}
			}
			if got := calls.Load(); got != st.want {
				t.Fatalf("screen called %d times, want %d", got, st.want)
			}
			if got := ix.Flag("deploy-secret"); got != "secret (test) in the body" {
				t.Fatalf("Flag = %q", got)
			}
			if got := ix.Flag("deploy-clean"); got != "" {
				t.Fatalf("Flag of the clean lesson = %q", got)
			}
			if hits := search(ix); slices.Contains(hits, "deploy-secret") || !slices.Contains(hits, "deploy-clean") {
				t.Fatalf("hits %v: want deploy-clean and never deploy-secret", hits)
			}
		})
	}
}
