package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/borg-memory/borg/index"
)

// The embedder is chosen by the environment, so every borg process (a
// hook, recall, reindex, eval) uses the same one:
//
//	BORG_EMBEDDER        ngram (default: compiled in, offline), openai or ollama
//	BORG_EMBEDDER_URL    the endpoint's base URL, e.g. http://127.0.0.1:11434
//	BORG_EMBEDDER_MODEL  the model name sent with every request
//	BORG_EMBEDDER_DIM    the model's vector length (optional: asked once otherwise)
//	BORG_EMBEDDER_KEY    a bearer token, when the endpoint wants one
//
// The vector sidecar records the embedder's id (dialect, model, dimension):
// vectors of another embedder are never mixed in; switching rebuilds them.
func configuredEmbedder(getenv func(string) string) (index.Embedder, error) {
	kind := strings.ToLower(strings.TrimSpace(getenv("BORG_EMBEDDER")))
	switch kind {
	case "", "ngram", "default":
		return index.NewNGramEmbedder(index.NGramOptions{}), nil
	case index.APIOpenAI, index.APIOllama:
	default:
		return nil, fmt.Errorf("BORG_EMBEDDER=%q: use ngram (the default), openai (an OpenAI-compatible /v1/embeddings endpoint) or ollama", kind)
	}
	opts := index.HTTPEmbedderOptions{API: kind, URL: getenv("BORG_EMBEDDER_URL"), Model: getenv("BORG_EMBEDDER_MODEL"), Key: getenv("BORG_EMBEDDER_KEY")}
	if opts.URL == "" {
		switch kind {
		case index.APIOllama:
			opts.URL = "http://127.0.0.1:11434"
		default:
			return nil, fmt.Errorf("BORG_EMBEDDER=%s needs BORG_EMBEDDER_URL (the endpoint's base URL, e.g. http://127.0.0.1:8080)", kind)
		}
	}
	if v := getenv("BORG_EMBEDDER_DIM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("BORG_EMBEDDER_DIM=%q: want the model's vector length, e.g. 768", v)
		}
		opts.Dim = n
	}
	emb, err := index.NewHTTPEmbedder(opts)
	if err != nil {
		return nil, fmt.Errorf("BORG_EMBEDDER=%s: %w (set BORG_EMBEDDER_URL and BORG_EMBEDDER_MODEL)", kind, err)
	}
	return emb, nil
}

// newEmbedder is the configured embedder (configuredEmbedder), or, when
// the configuration is wrong, an error that names the variable to fix.
func newEmbedder() (index.Embedder, error) {
	emb, err := configuredEmbedder(os.Getenv)
	if err != nil {
		return nil, fail(exitUsage, "%v", err)
	}
	return emb, nil
}
