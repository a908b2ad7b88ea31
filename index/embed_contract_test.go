package index

import (
	"math"
	"net/http"
	"reflect"
	"testing"
)

// Compile-time checks: the embedders implement the index's interfaces.
var (
	_ Embedder     = (*NGramEmbedder)(nil)
	_ CorpusFitter = (*NGramEmbedder)(nil)
	_ Embedder     = (*HTTPEmbedder)(nil)
	_ Searcher     = (*labSearcher)(nil)
)

// TestEmbedderContract runs the contract every Embedder keeps against each
// implementation: a stable id, one vector of Dim finite
// components per text in order, the same vector for the same text, and an
// empty batch answered without error.
func TestEmbedderContract(t *testing.T) {
	impls := map[string]func(t *testing.T) Embedder{
		"ngram": func(*testing.T) Embedder { return NewNGramEmbedder(NGramOptions{}) },
		"ngram-noidf": func(*testing.T) Embedder {
			return NewNGramEmbedder(NGramOptions{Dim: 64, NoIDF: true})
		},
		"http-openai": func(t *testing.T) Embedder {
			srv, _ := fakeEmbeddingServer(t, http.StatusOK)
			e, err := NewHTTPEmbedder(HTTPEmbedderOptions{URL: srv.URL, API: APIOpenAI, Model: "m", Key: "k"})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		"http-ollama": func(t *testing.T) Embedder {
			srv, _ := fakeEmbeddingServer(t, http.StatusOK)
			e, err := NewHTTPEmbedder(HTTPEmbedderOptions{URL: srv.URL, API: APIOllama, Model: "m", Key: "k"})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	texts := []string{"retry with backoff", "postgres foreign key index", "", "race detector"}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			if e.ID() == "" || e.ID() != e.ID() || e.Dim() <= 0 {
				t.Fatalf("id %q dim %d", e.ID(), e.Dim())
			}
			vs, err := e.Embed(texts)
			if err != nil || len(vs) != len(texts) {
				t.Fatalf("Embed: %d vectors, %v", len(vs), err)
			}
			for i, v := range vs {
				if len(v) != e.Dim() {
					t.Fatalf("vector %d has %d components, want %d", i, len(v), e.Dim())
				}
				for _, x := range v {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("vector %d not finite", i)
					}
				}
			}
			again, err := e.Embed(texts[1:2])
			if err != nil || !reflect.DeepEqual(again[0], vs[1]) {
				t.Fatalf("the same text embedded twice differs (%v)", err)
			}
			if none, err := e.Embed(nil); err != nil || len(none) != 0 {
				t.Fatalf("empty batch: %v %v", none, err)
			}
		})
	}
}
