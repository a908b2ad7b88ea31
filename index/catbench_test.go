package index

import (
	"path/filepath"
	"testing"
)

// BenchmarkOpenParts times the pieces of Open on a 10,000-lesson index:
// mapping and checking the catalog, and the sidecar load.
func BenchmarkOpenParts(b *testing.B) {
	ls := newLessonGen(1, 20_000).lessons(10_000)
	dir := b.TempDir()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Sync(ls); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	b.Run("catalog", func(b *testing.B) {
		for b.Loop() {
			c, ok := readCatalog(filepath.Join(dir, catalogName))
			if !ok {
				b.Fatal("catalog unreadable")
			}
			c.close()
		}
	})
	b.Run("sidecar", func(b *testing.B) {
		emb := NewNGramEmbedder(NGramOptions{})
		for b.Loop() {
			s, err := loadSidecar(filepath.Join(dir, sidecarName), emb.ID(), emb.Dim())
			if err != nil {
				b.Fatal(err)
			}
			if err := emb.LoadState(s.state); err != nil {
				b.Fatal(err)
			}
			s.close()
		}
	})
}

// BenchmarkSaveSidecar times writing the vectors of 10,000 lessons, what a
// sync after one new lesson pays on top of embedding it.
func BenchmarkSaveSidecar(b *testing.B) {
	ls := newLessonGen(1, 20_000).lessons(10_000)
	ix, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Sync(ls); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), sidecarName)
	b.ResetTimer()
	for b.Loop() {
		if err := ix.vec.base.save(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeCatalog times encoding the catalog of 20,000 analysed
// lessons, a rebuild's last step before it writes the file.
func BenchmarkEncodeCatalog(b *testing.B) {
	ls := newLessonGen(1, 20_000).lessons(20_000)
	docs := make([]catalogDoc, len(ls))
	c := newTermCache()
	for i, l := range ls {
		docs[i] = catalogDoc{id: l.ID, hash: ContentHash(l), title: l.Title, gist: l.Gist, typ: l.Type, reach: l.Reach, links: l.Links,
			terms: analyzeDocWith(c, lexDoc{Title: l.Title, Gist: l.Gist, Body: l.Body, Tags: l.Tags})}
	}
	for b.Loop() {
		if _, err := encodeCatalog(docs, "stamp", "screen", nil); err != nil {
			b.Fatal(err)
		}
	}
}
