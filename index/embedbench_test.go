package index

import (
	"testing"
)

// BenchmarkEmbedStages times the n-gram embedder's stages of a rebuild on
// 10,000 generated lessons: the IDF fit, the embedding of every lesson
// (both as a sync runs them, from the lessons' parts), and the lexical
// analysis beside them.
func BenchmarkEmbedStages(b *testing.B) {
	ls := newLessonGen(1, 20_000).lessons(10_000)
	grams := func(e *NGramEmbedder) gramsOf {
		return func(g *gramScratch, hs []uint32, i int) []uint32 {
			return e.lessonGrams(g, hs, ls[i].Title, ls[i].Gist, ls[i].Body, ls[i].Tags)
		}
	}
	b.Run("fit", func(b *testing.B) {
		e := NewNGramEmbedder(NGramOptions{})
		for b.Loop() {
			e.fit(len(ls), grams(e))
		}
	})
	b.Run("embed", func(b *testing.B) {
		e := NewNGramEmbedder(NGramOptions{})
		e.fit(len(ls), grams(e))
		rows := make([][]float32, len(ls))
		for i := range rows {
			rows[i] = make([]float32, e.Dim())
		}
		for b.Loop() {
			for _, r := range rows {
				clear(r)
			}
			e.embedRows(rows, grams(e))
		}
	})
	b.Run("analyse", func(b *testing.B) {
		for b.Loop() {
			c := newTermCache()
			for _, l := range ls {
				analyzeDocWith(c, lexDoc{Title: l.Title, Gist: l.Gist, Body: l.Body, Tags: l.Tags})
			}
		}
	})
}
