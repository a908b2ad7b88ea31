package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// FuzzDecodeSidecar feeds arbitrary bytes to the sidecar decoder: it must
// return a store or an error, never panic, and a decoded store whose keys
// pass their checks must re-encode to a file that decodes to the same
// rows.
func FuzzDecodeSidecar(f *testing.F) {
	s := newVectorStore("emb", 3)
	s.state = []byte{1, 2, 3}
	s.put("alpha", "h1", []float32{1, 0, 0})
	s.put("beta", "h2", []float32{0, 0.6, 0.8})
	path := filepath.Join(f.TempDir(), sidecarName)
	if err := s.save(path); err != nil {
		f.Fatal(err)
	}
	good, err := loadSidecar(path, "emb", 3)
	if err != nil || good.len() != 2 {
		f.Fatalf("round trip: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(sidecarMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeSidecar(append([]byte(nil), raw...), "emb", 3)
		if err != nil {
			return
		}
		if len(got.cols) != 3 {
			t.Fatalf("inconsistent store: %d rows, %d columns", got.len(), len(got.cols))
		}
		// Keys not yet checked, as a hook's sync reads them, read without
		// a panic whatever they hold.
		for i := range got.len() {
			id := got.idAt(i)
			got.find(id)
			got.hash(id)
			got.vector(id)
		}
		if got.verify() != nil {
			return
		}
		// Checked keys read in place (fileKeys), then decoded whole: the
		// same rows.
		var inPlace []string
		for i := range got.len() {
			id := got.idAt(i)
			inPlace = append(inPlace, id)
			if j, ok := got.find(id); !ok || j != i {
				t.Fatalf("row %d (%q) found at %d, %v", i, id, j, ok)
			}
			if v := got.vector(id); len(v) != 3 {
				t.Fatalf("row %d's vector has %d components", i, len(v))
			}
		}
		got.keys()
		if !slices.Equal(got.ids, inPlace) {
			t.Fatalf("decoded ids %q, read in place %q", got.ids, inPlace)
		}
		for _, col := range got.cols {
			if len(col) != got.len() {
				t.Fatalf("column of %d rows in a store of %d", len(col), got.len())
			}
		}
	})
}

// FuzzDecodeCatalog: whatever the bytes, parsing and then reading every
// record, link, graph run and posting of the result never panics, and what
// it reads stays in range.
func FuzzDecodeCatalog(f *testing.F) {
	docs := []catalogDoc{
		{id: "a-lesson", hash: "h", title: "T", reach: "repo:x", gist: "The staging database of payments is pay-db-2.",
			terms: analyzeDoc(lexDoc{Title: "Run the migrations", Body: "before tests"}),
			links: []domain.LessonLink{{Rel: domain.RelSupersedes, Target: "b-lesson"}}},
		{id: "b-lesson", hash: "g", title: "U", gist: "The staging database of payments is pay-db-1.",
			terms: analyzeDoc(lexDoc{Title: "Retry", Body: "flaky network calls"})},
	}
	raw, err := encodeCatalog(docs, "tree", "", nil)
	if err != nil {
		f.Fatal(err)
	}
	got, err := parseCatalog(raw)
	if err != nil || got.stamp != "tree" || repoTag(got.reach(0).String()) != "x" || len(got.supersededBy(1)) != 1 {
		f.Fatalf("catalog round trip failed: %v", err)
	}
	f.Add(raw)
	f.Add([]byte(catalogMagic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := parseCatalog(append([]byte(nil), raw...))
		if err != nil {
			return
		}
		for o := 0; o < c.len(); o++ {
			_, _, _ = c.id(o), c.hash(o), c.reach(o)
			_ = c.lessonLinks(o)
			for _, n := range append(c.supersededBy(o), c.neighbours(o)...) {
				if n < 0 || n >= c.len() {
					t.Fatalf("ordinal %d out of range", n)
				}
			}
		}
		_ = c.verify()
		// Re-encoding every lesson from it (the merge a sync does) must not
		// crash either, and what it writes must parse.
		docs := make([]catalogDoc, c.len())
		for o := range docs {
			docs[o] = catalogDoc{id: c.id(o).String(), hash: c.hash(o).String(), from: o + 1}
		}
		if raw, err := encodeCatalog(docs, "again", "", c); err == nil {
			if _, err := parseCatalog(raw); err != nil {
				t.Fatalf("re-encoded catalog does not parse: %v", err)
			}
		}
		_, _ = baseView(c).lexicalSearch(context.Background(), "run migrations retry", 5, nil)
	})
}

// FuzzDecodeDelta feeds arbitrary bytes as the delta segments of a real
// base: parsing must return a view or an error, never panic, and a parsed
// view must answer every query without panicking.
func FuzzDecodeDelta(f *testing.F) {
	c := newSegCorpus(9)
	var ls []domain.Lesson
	for i := range 12 {
		ls = append(ls, c.lesson(i, 12))
	}
	dir := f.TempDir()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{Dim: 16, NoIDF: true}), Options{DeferMerge: true})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := ix.Sync(ls); err != nil {
		f.Fatal(err)
	}
	ls[3], ls = c.lesson(3, 12), append(ls[:5], ls[6:]...)
	if _, err := ix.Sync(append(ls, c.lesson(20, 12))); err != nil {
		f.Fatal(err)
	}
	ix.Close()
	for _, name := range []string{deltaName, vecDeltaName} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	base, ok := readCatalog(filepath.Join(dir, catalogName))
	if !ok {
		f.Fatal("no base")
	}
	vbase, err := loadSidecar(filepath.Join(dir, sidecarName), NewNGramEmbedder(NGramOptions{Dim: 16, NoIDF: true}).ID(), 16)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, err := parseDelta(data, base); err == nil {
			for _, g := range v.ordered() {
				_, _, _ = v.id(g), v.hash(g), v.flagged(g)
				_, _ = v.neighbours(g), v.supersededBy(g)
			}
			_ = v.lookup([]string{"lesson-003", "lesson-020", "x"})
			_, _ = v.lexicalSearch(context.Background(), "retry backoff schema", 5, nil)
			_ = v.delta.verify()
		}
		if d, dead, err := decodeVecDelta(data, vbase); err == nil {
			vv := newVecView(vbase)
			vbase.setDead(dead)
			vv.delta = d
			_ = vv.search([]float32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 5, nil)
			_, _ = vv.join([]string{"lesson-003", "lesson-020"})
			vbase.setDead(nil)
		}
	})
}
