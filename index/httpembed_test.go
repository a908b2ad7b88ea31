package index

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeEmbeddingServer answers both dialects on loopback with vectors from
// a small n-gram embedder, and counts requests.
func fakeEmbeddingServer(t *testing.T, status int) (*httptest.Server, *int) {
	t.Helper()
	inner := NewNGramEmbedder(NGramOptions{Dim: 32, NoIDF: true})
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if status != http.StatusOK {
			http.Error(w, "model not loaded", status)
			return
		}
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		vecs, _ := inner.Embed(req.Input)
		switch r.URL.Path {
		case "/api/embed":
			_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": vecs})
		case "/v1/embeddings":
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			data := make([]item, len(vecs))
			for i := range vecs { // reversed, as a server may
				j := len(vecs) - 1 - i
				data[i] = item{Index: j, Embedding: vecs[j]}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestHTTPEmbedder(t *testing.T) {
	for _, api := range []string{APIOpenAI, APIOllama} {
		t.Run(api, func(t *testing.T) {
			srv, calls := fakeEmbeddingServer(t, http.StatusOK)
			emb, err := NewHTTPEmbedder(HTTPEmbedderOptions{URL: srv.URL + "/", API: api, Model: "m", Key: "k", Batch: 4})
			if err != nil {
				t.Fatal(err)
			}
			if emb.Dim() != 32 || *calls != 1 {
				t.Fatalf("probed dim %d after %d calls", emb.Dim(), *calls)
			}
			if !strings.HasPrefix(emb.ID(), "http-"+api+"-m-d32") {
				t.Fatalf("id %q", emb.ID())
			}
			ix, err := Open(t.TempDir(), emb, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			st, err := ix.Sync(corpus())
			if err != nil || st.Embedded != len(corpus()) {
				t.Fatalf("sync %+v %v", st, err)
			}
			if *calls != 1+2 { // probe + 6 lessons in batches of 4
				t.Fatalf("%d requests", *calls)
			}
			hits, err := ix.Search(context.Background(), Query{Text: "retrying flaky network", Arms: ArmWeights{Vector: 1}})
			if err != nil || len(hits) == 0 || hits[0].ID != "flaky-network-retry" {
				t.Fatalf("vector-only search %v %v", ids(hits), err)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		srv, _ := fakeEmbeddingServer(t, http.StatusServiceUnavailable)
		emb, err := NewHTTPEmbedder(HTTPEmbedderOptions{URL: srv.URL, Model: "m", Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := emb.Embed([]string{"x"}); err == nil || !strings.Contains(err.Error(), "model not loaded") {
			t.Fatalf("error %v", err)
		}
		// An index over a failing endpoint still syncs and searches lexically.
		ix, err := Open(t.TempDir(), emb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		st, err := ix.Sync(corpus())
		if err != nil || st.EmbedError == "" || st.Indexed != len(corpus()) || st.Embedded != 0 {
			t.Fatalf("sync over a failing endpoint: %+v %v", st, err)
		}
		hits, err := ix.Search(context.Background(), Query{Text: "postgres foreign key"})
		if err != nil || len(hits) == 0 || hits[0].ID != "sql-index-on-fk" {
			t.Fatalf("search over a failing endpoint: %v %v", ids(hits), err)
		}
		bad := []HTTPEmbedderOptions{
			{URL: "ftp://x", Model: "m"},
			{URL: "http://127.0.0.1:1", Model: ""},
			{URL: "http://127.0.0.1:1", Model: "m", API: "grpc"},
		}
		for _, o := range bad {
			if _, err := NewHTTPEmbedder(o); err == nil {
				t.Fatalf("accepted %+v", o)
			}
		}
	})
}
