package index

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestLazyVectors: an index opened with LazyVectors leaves a fit sidecar
// unread until a call needs it, and answers every call as an index opened
// without it: a hook's lexical search that diversifies nothing reads no
// vector; one with the vector arm, one that diversifies, a sync, MergeDue
// and Pending read them first. A sidecar of another embedder is read (and
// dropped) at Open, so Stale says so at once.
func TestLazyVectors(t *testing.T) {
	dir := t.TempDir()
	emb := func() Embedder { return NewNGramEmbedder(NGramOptions{}) }
	ls := append(filler(40), corpus()...)
	ix, err := Open(dir, emb(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.SyncStamp(ls, "s1"); err != nil {
		t.Fatal(err)
	}
	ix.Close()

	open := func(lazy bool) *Index {
		t.Helper()
		ix, err := Open(dir, emb(), Options{LazyVectors: lazy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	search := func(ix *Index, q Query) []Hit {
		t.Helper()
		hits, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	hook := Query{Text: "Run make migrate before go test ./integration/... the tables were missing", K: 3, Arms: HookArmWeights(), OnlyOverBar: true, MMRLambda: 1}
	queries := []Query{
		hook,
		{Text: hook.Text, K: 3, Arms: HookArmWeights(), OnlyOverBar: true}, // diversified
		{Text: "retry the payment gateway with backoff", K: 5},             // every arm
		{Text: "billing helm chart", K: 5, Bar: -1},
		// Lexical alone, diversified: MMR reads the hits' vectors.
		{Text: "billing helm chart terraform", K: 10, Arms: ArmWeights{Lexical: 1}, Bar: -1, MMRLambda: 0.5},
	}
	for i, q := range queries {
		eager, lazy := open(false), open(true)
		if eager.Stale() || lazy.Stale() {
			t.Fatalf("query %d: a fit index reads as stale", i)
		}
		if !lazy.vecPending.Load() {
			t.Fatalf("query %d: the sidecar was read at Open", i)
		}
		want, got := search(eager, q), search(lazy, q)
		if !reflect.DeepEqual(ids(got), ids(want)) {
			t.Errorf("query %d: lazy %v, eager %v", i, ids(got), ids(want))
		}
		if i == 0 && lazy.vecPending.Load() == false {
			t.Error("a lexical search that diversifies nothing read the sidecar")
		}
		if q.Arms.Vector > 0 || q.Arms.isZero() || q.MMRLambda == 0.5 {
			if lazy.vecPending.Load() {
				t.Errorf("query %d needed the vectors (its vector arm, or MMR) and did not read the sidecar", i)
			}
		}
	}

	// The calls that read the sidecar first.
	for name, call := range map[string]func(ix *Index){
		"MergeDue":       func(ix *Index) { ix.MergeDue() },
		"Pending":        func(ix *Index) { ix.Pending(nil) },
		"PendingChanged": func(ix *Index) { ix.PendingChanged(nil, nil) },
		"SyncStamp":      func(ix *Index) { ix.SyncStamp(ls, "s1") },
	} {
		ix := open(true)
		call(ix)
		if ix.vecPending.Load() {
			t.Errorf("%s did not read the sidecar", name)
		}
	}

	// A sync after a lazy open embeds what changed, as after an eager one.
	changed := append([]domain.Lesson(nil), ls...)
	changed[len(changed)-1].Gist = "Wrap outbound HTTP calls to the payment gateway in a retry with jitter."
	lazy := open(true)
	st, err := lazy.SyncStamp(changed, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 1 || st.SidecarRebuilt {
		t.Fatalf("sync after a lazy open: %+v", st)
	}

	// Searches from several goroutines, each diversifying, on a lazy index.
	lazy = open(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { search(lazy, queries[1]) })
	}
	wg.Wait()

	// A sidecar of another embedder: read at Open, and stale at once.
	other, err := Open(dir, NewNGramEmbedder(NGramOptions{Dim: 64}), Options{LazyVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.vecPending.Load() || !other.Stale() {
		t.Fatalf("a sidecar of another embedder: pending %v, stale %v", other.vecPending.Load(), other.Stale())
	}
	// No sidecar at all: likewise.
	if err := os.Remove(filepath.Join(dir, sidecarName)); err != nil {
		t.Fatal(err)
	}
	none := open(true)
	if none.vecPending.Load() || !none.Stale() {
		t.Fatalf("no sidecar: pending %v, stale %v", none.vecPending.Load(), none.Stale())
	}
}
