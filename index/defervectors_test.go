package index

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDeferVectors: syncs that defer the vectors (a hook's) write the
// catalog a sync that embeds writes, byte for byte, and leave the sidecar
// unread and untouched; the next sync without it (a change, or
// CatchUpVectors on an index otherwise up to date) leaves the vector arm
// as an index that never deferred has it: every lesson's vector of its
// content, none of a lesson gone, the same searches. Both stay on the fast
// path.
func TestDeferVectors(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newSegCorpus(seed)
	const n = 120
	files := newFileSet()
	for i := range n {
		files.put(c.lesson(i, n))
	}
	hook := Options{DeferMerge: true, LazyVectors: true, DeferVectors: true}
	command := Options{DeferMerge: true}
	open := func(dir string, o Options) *Index {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), o)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	defDir, refDir := t.TempDir(), t.TempDir()
	ref := open(refDir, command)
	defer ref.Close()
	for _, dir := range []string{defDir, refDir} {
		ix := ref
		if dir == defDir {
			ix = open(dir, command)
		}
		if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
			t.Fatal(err)
		}
		if ix != ref {
			ix.Close()
		}
	}
	vectorFiles := func() [][]byte {
		var out [][]byte
		for _, name := range []string{sidecarName, vecDeltaName} {
			b, _ := os.ReadFile(filepath.Join(defDir, name))
			out = append(out, b)
		}
		return out
	}
	deferred, lagging, fast := 0, false, 0
	for round := range 40 {
		changed, removed := randomChange(c, files, n)
		since, stamp := fmt.Sprintf("s%d", round), fmt.Sprintf("s%d", round+1)
		_, err := ref.SyncChanged(since, slices.Clone(changed), slices.Clone(removed), files.read, stamp)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		defers := c.r.IntN(3) > 0
		o := command
		if defers {
			o = hook
		}
		def := open(defDir, o)
		before := vectorFiles()
		fs, err := def.SyncChanged(since, slices.Clone(changed), slices.Clone(removed), files.read, stamp)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		fast += def.fastSyncs
		for _, name := range []string{catalogName, deltaName} {
			a, _ := os.ReadFile(filepath.Join(defDir, name))
			b, _ := os.ReadFile(filepath.Join(refDir, name))
			if !bytes.Equal(a, b) {
				t.Fatalf("round %d (deferring %v): %s differs from a sync that embeds", round, defers, name)
			}
		}
		if defers {
			deferred++
			lagging = lagging || len(changed)+len(removed) > 0
			if fs.Embedded != 0 || !def.vecPending.Load() || !slices.EqualFunc(before, vectorFiles(), bytes.Equal) {
				t.Fatalf("round %d: a deferring sync embedded %d, read the sidecar %v, or wrote it", round, fs.Embedded, !def.vecPending.Load())
			}
			if c.r.IntN(2) == 0 {
				// A command whose catalog is up to date catches up.
				def.Close()
				def = open(defDir, command)
				_, refit, err := def.CatchUpVectors(files.read)
				if err != nil {
					t.Fatal(err)
				}
				if refit {
					if _, err := def.SyncFiles(files.listing(), files.read, stamp, false); err != nil {
						t.Fatal(err)
					}
				}
				lagging = false
			}
		} else {
			lagging = false
		}
		if !lagging {
			def.ensureVectors()
			if lag, ok := def.vectorLag(); !ok || !lag.empty() {
				t.Fatalf("round %d: vectors lag after a sync that embeds: %+v (follow the catalog %v)", round, lag, ok)
			}
			if def.vec.len() != ref.vec.len() {
				t.Fatalf("round %d: %d vectors, want %d", round, def.vec.len(), ref.vec.len())
			}
			ofContent(t, def, files)
			// A refit a deferring sync left to this one was fitted on the
			// lessons of a later round than ref's: the arms agree once the
			// fits do.
			if bytes.Equal(def.emb.(CorpusFitter).State(), ref.emb.(CorpusFitter).State()) {
				sameSearches(t, def, ref, corpusQueries)
			} else {
				sameLexical(t, def, ref, corpusQueries)
			}
		}
		def.Close()
	}
	if deferred < 10 || fast < 20 {
		t.Fatalf("%d of 40 syncs deferred, %d took the fast path", deferred, fast)
	}
}

// ofContent checks that every lesson ix holds has a vector of its content
// as files holds it, as ix's embedder embeds it now.
func ofContent(t *testing.T, ix *Index, files *fileSet) {
	t.Helper()
	for id, l := range files.lessons {
		if _, ok := ix.cat.find(id); !ok {
			continue
		}
		want, err := ix.emb.Embed([]string{lessonText(l.Title, l.Gist, l.Body, l.Tags)})
		if err != nil {
			t.Fatal(err)
		}
		got := ix.vec.vector(id)
		if got == nil || cosine(got, normalized(want[0])) < 0.999 {
			t.Fatalf("%s: its vector is not of its content (cosine %.4f)", id, cosine(got, normalized(want[0])))
		}
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range min(len(a), len(b)) {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
