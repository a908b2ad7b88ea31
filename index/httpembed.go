package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Embedding endpoint dialects NewHTTPEmbedder speaks.
const (
	// APIOpenAI is POST {URL}/v1/embeddings {"model","input":[…]} →
	// {"data":[{"index","embedding":[…]}]} (OpenAI, llama.cpp, vLLM, LM Studio…).
	APIOpenAI = "openai"
	// APIOllama is POST {URL}/api/embed {"model","input":[…]} →
	// {"embeddings":[[…]]}.
	APIOllama = "ollama"
)

// HTTPEmbedderOptions configures an embedder that calls a local HTTP
// endpoint the user configured.
type HTTPEmbedderOptions struct {
	URL   string // base URL, e.g. http://127.0.0.1:11434
	API   string // APIOpenAI (default) or APIOllama
	Model string // model name sent with every request
	// Dim is the model's vector length. 0 asks the endpoint once, on the
	// first Dim or Embed call.
	Dim int
	// Key is sent as a bearer token when set.
	Key string
	// Timeout bounds each request (default 30 s); Batch is the number of
	// texts per request (default 64).
	Timeout time.Duration
	Batch   int
	// Client replaces http.DefaultClient (tests, proxies).
	Client *http.Client
}

// HTTPEmbedder embeds through an embedding endpoint. Its ID names the
// dialect, URL-independent model and dimension, so switching models
// invalidates the sidecar while moving the server does not.
type HTTPEmbedder struct {
	opts HTTPEmbedderOptions
	dim  int
	err  error // a failed dimension probe, reported by Embed
}

// NewHTTPEmbedder validates opts; it does no I/O.
func NewHTTPEmbedder(opts HTTPEmbedderOptions) (*HTTPEmbedder, error) {
	if opts.API == "" {
		opts.API = APIOpenAI
	}
	if opts.API != APIOpenAI && opts.API != APIOllama {
		return nil, fmt.Errorf("http embedder: unknown api %q (want %s or %s)", opts.API, APIOpenAI, APIOllama)
	}
	if !strings.HasPrefix(opts.URL, "http://") && !strings.HasPrefix(opts.URL, "https://") {
		return nil, fmt.Errorf("http embedder: url %q is not http(s)", opts.URL)
	}
	if opts.Model == "" {
		return nil, errors.New("http embedder: no model")
	}
	if opts.Dim < 0 {
		return nil, fmt.Errorf("http embedder: negative dim %d", opts.Dim)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Batch <= 0 {
		opts.Batch = 64
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	opts.URL = strings.TrimRight(opts.URL, "/")
	return &HTTPEmbedder{opts: opts, dim: opts.Dim}, nil
}

// ID is "http-<api>-<model>-d<dim>".
func (e *HTTPEmbedder) ID() string { return e.IDWith(e.Dim()) }

// IDWith is the embedder's ID at dimension dim, without a call.
func (e *HTTPEmbedder) IDWith(dim int) string {
	return fmt.Sprintf("http-%s-%s-d%d", e.opts.API, e.opts.Model, dim)
}

// KnownDim is the dimension known without calling the endpoint: the
// configured one, or what a probe found (0: neither yet).
func (e *HTTPEmbedder) KnownDim() int { return e.dim }

// Dim is the vector length, probed from the endpoint when not configured
// (0 when the probe failed; Embed then returns the error).
func (e *HTTPEmbedder) Dim() int {
	if e.dim == 0 && e.err == nil {
		v, err := e.request(context.Background(), []string{"dimension probe"})
		if err != nil {
			e.err = fmt.Errorf("probe dimension: %w", err)
		} else {
			e.dim = len(v[0])
		}
	}
	return e.dim
}

// Embed embeds texts in batches of opts.Batch.
func (e *HTTPEmbedder) Embed(texts []string) ([][]float32, error) {
	if e.Dim() == 0 {
		return nil, fmt.Errorf("http embedder: %w", e.err)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.Batch {
		batch := texts[start:min(start+e.opts.Batch, len(texts))]
		vecs, err := e.request(context.Background(), batch)
		if err != nil {
			return nil, fmt.Errorf("http embedder: %w", err)
		}
		for _, v := range vecs {
			if len(v) != e.dim {
				return nil, fmt.Errorf("http embedder: got dim %d, want %d", len(v), e.dim)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// request posts one batch and decodes the vectors in input order.
func (e *HTTPEmbedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	path := "/v1/embeddings"
	if e.opts.API == APIOllama {
		path = "/api/embed"
	}
	body, err := json.Marshal(map[string]any{"model": e.opts.Model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.opts.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.Key)
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, msg)
	}
	var vecs [][]float32
	if e.opts.API == APIOllama {
		var r struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		vecs = r.Embeddings
	} else {
		var r struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		vecs = make([][]float32, len(r.Data))
		for i, d := range r.Data {
			if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
				return nil, fmt.Errorf("decode %s: bad index %d at %d", path, d.Index, i)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%s: %d vectors for %d texts", path, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("%s: empty vector %d", path, i)
		}
	}
	return vecs, nil
}
