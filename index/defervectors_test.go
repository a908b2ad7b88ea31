package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestDeferVectors: syncs that defer the vectors (a hook's) write the
// catalog a sync that embeds writes, byte for byte, leave the sidecar
// unread and untouched and mark the index behind; the next sync without
// it (of a change, or CatchUpVectors on an index otherwise up to date)
// leaves every lesson a vector of its content and none of a lesson gone,
// clears the mark, and searches as an index that never deferred (once the
// two have fitted the embedder on the same lessons). Changes include
// lessons removed and restored as they were, and the syncs of changes
// stay on the fast path.
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
	deferred, commands, commandFast, whole, lagging := 0, 0, 0, 0, false
	for round := range 40 {
		changed, removed := randomChange(c, files, n)
		since, stamp := fmt.Sprintf("s%d", round), fmt.Sprintf("s%d", round+1)
		if _, err := ref.SyncChanged(since, slices.Clone(changed), slices.Clone(removed), files.read, stamp); err != nil {
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
		for _, name := range []string{catalogName, deltaName} {
			a, _ := os.ReadFile(filepath.Join(defDir, name))
			b, _ := os.ReadFile(filepath.Join(refDir, name))
			if !bytes.Equal(a, b) {
				t.Fatalf("round %d (deferring %v): %s differs from a sync that embeds", round, defers, name)
			}
		}
		if defers {
			deferred++
			if fs.Embedded != 0 || !def.vecPending.Load() || !slices.EqualFunc(before, vectorFiles(), bytes.Equal) {
				t.Fatalf("round %d: a deferring sync embedded %d, read the sidecar %v, or wrote it", round, fs.Embedded, !def.vecPending.Load())
			}
			if (fs.Indexed > 0 || len(fs.Removed) > 0) && !def.vectorsBehind() {
				t.Fatalf("round %d: a deferring sync indexed %d lessons, removed %v, and left no mark", round, fs.Indexed, fs.Removed)
			}
			lagging = lagging || def.vectorsBehind()
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
			commands++
			commandFast += def.fastSyncs
			lagging = false
		}
		if !lagging {
			def.ensureVectors()
			if def.vectorsBehind() || !def.vectorsMatch() {
				t.Fatalf("round %d: after a sync that embeds, marked behind %v, sidecar in step %v", round, def.vectorsBehind(), def.vectorsMatch())
			}
			ofContent(t, def, files)
			if def.vec.len() != ref.vec.len() {
				t.Fatalf("round %d: %d vectors, want %d", round, def.vec.len(), ref.vec.len())
			}
			// A refit a deferring sync left to a later one was fitted on
			// the lessons of a later round than ref's.
			if bytes.Equal(def.emb.(CorpusFitter).State(), ref.emb.(CorpusFitter).State()) {
				sameSearches(t, def, ref, corpusQueries)
			} else {
				sameLexical(t, def, ref, corpusQueries)
			}
		}
		whole += def.wholeVecs
		def.Close()
	}
	if deferred < 10 || commands < 5 || commandFast < commands*2/3 {
		t.Fatalf("%d of 40 syncs deferred; %d of the %d others took the fast path", deferred, commandFast, commands)
	}
	if whole > 0 {
		t.Fatalf("%d catch-ups compared every vector; the lessons the mark lists were enough", whole)
	}
}

// flakyEmbedder is the n-gram embedder as an endpoint that fails every
// batch holding a text with the word fail.
type flakyEmbedder struct {
	*NGramEmbedder
	fail string
}

func (e *flakyEmbedder) Embed(texts []string) ([][]float32, error) {
	for _, s := range texts {
		if e.fail != "" && strings.Contains(s, e.fail) {
			return nil, errors.New("endpoint failed")
		}
	}
	return e.NGramEmbedder.Embed(texts)
}

// TestDeferVectorsMends: what the sidecar lacks besides the hooks' lag is
// found and mended by the catch-up too: a lesson an embedder failed on
// when the index was built (not on the mark: the comparison of every
// vector finds it), beside a base lesson a hook removed, and a lesson a
// hook removed and another restored as it was (its vector is of its
// content still). Before the catch-up the vector arm finds no lesson by an
// old vector; a catch-up whose embedder fails keeps the mark, and the
// next one ends the lag.
func TestDeferVectorsMends(t *testing.T) {
	files := newFileSet()
	lesson := func(i int) domain.Lesson {
		return domain.Lesson{ID: fmt.Sprintf("lesson-%03d", i), Type: "semantic", Title: fmt.Sprintf("note %d", i),
			Gist: fmt.Sprintf("Topic%d services retry payments with backoff %d", i, i)}
	}
	for i := range 60 {
		files.put(lesson(i))
	}
	dir := t.TempDir()
	emb := &flakyEmbedder{NGramEmbedder: NewNGramEmbedder(NGramOptions{}), fail: "Topic59 "}
	open := func(o Options) *Index {
		o.EmbedBatch = 1
		ix, err := Open(dir, emb, o)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix := open(Options{})
	if st, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil || st.EmbedError == "" {
		t.Fatalf("build: %v, embed error %q; want the flaky lesson to fail", err, st.EmbedError)
	}
	ix.Close()
	emb.fail = ""

	// Hooks: lesson-010 removed (a base lesson), lesson-020 removed and
	// restored as it was, lesson-030 rewritten, lesson-100 added.
	delete(files.lessons, "lesson-010")
	delete(files.stamps, "lesson-010")
	restored := files.lessons["lesson-020"]
	delete(files.lessons, "lesson-020")
	delete(files.stamps, "lesson-020")
	hook := Options{DeferMerge: true, LazyVectors: true, DeferVectors: true}
	for k, change := range []struct {
		changed []FileStamp
		removed []string
	}{
		{nil, []string{"lesson-010", "lesson-020"}},
		{[]FileStamp{files.put(restored), files.put(lesson(100)), files.put(domain.Lesson{ID: "lesson-030", Type: "semantic",
			Title: "vacuum", Gist: "Nightly database vacuum runs with a cost limit of 2000"})}, nil},
	} {
		h := open(hook)
		if _, err := h.SyncChanged(fmt.Sprintf("s%d", k), change.changed, change.removed, files.read, fmt.Sprintf("s%d", k+1)); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}

	// Before any catch-up, the vector arm (alone here) finds no lesson by
	// a vector of content it no longer has.
	ix = open(Options{})
	hits, err := ix.Search(context.Background(), Query{Text: "Topic30 services retry payments with backoff 30", K: 60, Arms: ArmWeights{Vector: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == "lesson-030" {
			t.Errorf("the vector arm found the rewritten lesson by its old vector (hit %+v)", h)
		}
	}
	ix.Close()

	emb.fail = "Topic100 "
	ix = open(Options{})
	if st, refit, err := ix.CatchUpVectors(files.read); err != nil || refit || st.EmbedError == "" || !ix.vectorsBehind() {
		t.Fatalf("a catch-up whose embedder fails: %v, refit %v, embed error %q, marked behind %v; want the mark kept", err, refit, st.EmbedError, ix.vectorsBehind())
	}
	ix.Close()
	emb.fail = ""
	ix = open(Options{})
	defer ix.Close()
	if _, refit, err := ix.CatchUpVectors(files.read); err != nil || refit {
		t.Fatalf("catch-up: %v, refit %v", err, refit)
	}
	if ix.vectorsBehind() || !ix.vectorsMatch() || ix.wholeVecs != 1 {
		t.Fatalf("after the catch-up: marked behind %v, sidecar in step %v, %d comparisons of every vector (want 1: the failed lesson is not on the mark)", ix.vectorsBehind(), ix.vectorsMatch(), ix.wholeVecs)
	}
	ofContent(t, ix, files)
	if _, ok := ix.vec.hash("lesson-010"); ok {
		t.Error("the removed lesson kept its vector")
	}
	if ix.vec.len() != ix.cat.len() {
		t.Errorf("%d vectors for %d lessons", ix.vec.len(), ix.cat.len())
	}
}

// TestDeferVectorsListing: a hook's sync from a listing of every file
// (taken when a change cannot be read from git) marks the lessons it
// changed or removed, and nothing when it changed none, so that the next
// command embeds those alone.
func TestDeferVectorsListing(t *testing.T) {
	files := newFileSet()
	c := newSegCorpus(7)
	for i := range 40 {
		files.put(c.lesson(i, 40))
	}
	dir := t.TempDir()
	open := func(o Options) *Index {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), o)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix := open(Options{})
	if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	hook := Options{DeferMerge: true, LazyVectors: true, DeferVectors: true}
	sync := func(stamp string) {
		t.Helper()
		h := open(hook)
		defer h.Close()
		if _, err := h.SyncFiles(files.listing(), files.read, stamp, false); err != nil {
			t.Fatal(err)
		}
	}
	sync("s1")
	if ids, marked := ix.behindIDs(); marked {
		t.Fatalf("a listing that changed nothing marked %v", ids)
	}
	files.put(c.lesson(3, 40))
	delete(files.lessons, "lesson-007")
	delete(files.stamps, "lesson-007")
	sync("s2")
	if ids, _ := ix.behindIDs(); !slices.Equal(ids, []string{"lesson-003", "lesson-007"}) {
		t.Fatalf("the mark lists %v, want the rewritten and the removed lesson", ids)
	}
	ix = open(Options{})
	defer ix.Close()
	if _, refit, err := ix.CatchUpVectors(files.read); err != nil || refit || ix.wholeVecs != 0 || ix.vectorsBehind() {
		t.Fatalf("catch-up: %v, refit %v, compared every vector %d time(s), marked %v", err, refit, ix.wholeVecs, ix.vectorsBehind())
	}
	ofContent(t, ix, files)
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

// probingEmbedder is an embedder that, like an HTTP one without a
// configured dimension, must call out to learn its dimension: probes counts
// those calls (Dim, or ID, which names it).
type probingEmbedder struct {
	*NGramEmbedder
	probes int
	model  string
}

func (e *probingEmbedder) Dim() int              { e.probes++; return e.NGramEmbedder.Dim() }
func (e *probingEmbedder) ID() string            { return e.IDWith(e.Dim()) }
func (e *probingEmbedder) KnownDim() int         { return 0 }
func (e *probingEmbedder) IDWith(dim int) string { return fmt.Sprintf("probing-%s-d%d", e.model, dim) }

// TestDeferredVectorsAskNoDimension: an index that defers its vectors (a
// hook's) reads the sidecar, when it diversifies its hits, at the
// dimension the sidecar was written at by the same embedder, without
// asking the embedder (an endpoint call on the hook's clock); a sidecar of
// another model is not read.
func TestDeferredVectorsAskNoDimension(t *testing.T) {
	c := newSegCorpus(7)
	const n = 40
	files := newFileSet()
	for i := range n {
		files.put(c.lesson(i, n))
	}
	dir := t.TempDir()
	ix, err := Open(dir, &probingEmbedder{NGramEmbedder: NewNGramEmbedder(NGramOptions{}), model: "a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for _, tt := range []struct {
		model string
		want  int
	}{{"a", n}, {"b", 0}} {
		emb := &probingEmbedder{NGramEmbedder: NewNGramEmbedder(NGramOptions{}), model: tt.model}
		hook, err := Open(dir, emb, Options{LazyVectors: true, DeferVectors: true})
		if err != nil {
			t.Fatal(err)
		}
		hook.ensureVectors()
		got := 0
		for _, f := range files.listing() {
			if hook.vectorOf(f.ID) != nil {
				got++
			}
		}
		if got != tt.want || emb.probes != 0 {
			t.Errorf("model %s: %d lessons with a vector (want %d), %d probe(s) of the dimension (want none)", tt.model, got, tt.want, emb.probes)
		}
		hook.Close()
	}
	// A header claiming a dimension no model has is not believed: no
	// embedder vouches for it, and reading it would allocate for it.
	emb := &probingEmbedder{NGramEmbedder: NewNGramEmbedder(NGramOptions{}), model: "a"}
	id := emb.IDWith(0xFFFFFFF0)
	head := binary.LittleEndian.AppendUint32(nil, sidecarFormat)
	head = binary.LittleEndian.AppendUint32(head, 0xFFFFFFF0)
	head = binary.LittleEndian.AppendUint32(head, 0)
	head = binary.LittleEndian.AppendUint32(head, uint32(len(id)))
	if err := os.WriteFile(filepath.Join(dir, sidecarName), append(append([]byte(sidecarMagic), head...), id...), 0o644); err != nil {
		t.Fatal(err)
	}
	hook, err := Open(dir, emb, Options{LazyVectors: true, DeferVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hook.Close()
	hook.ensureVectors()
	if hook.vec.len() != 0 || emb.probes != 0 {
		t.Errorf("a header of dimension %d: %d vectors read, %d probe(s)", uint32(0xFFFFFFF0), hook.vec.len(), emb.probes)
	}
}
