package main

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// bagServer is an OpenAI-compatible embeddings endpoint whose vectors are
// hashed bags of words: deterministic, and close for texts sharing words.
func bagServer(t *testing.T, dim int) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		calls.Add(1)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float32, dim)
			for _, w := range strings.Fields(strings.ToLower(text)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(w, ".,;:")))
				v[h.Sum32()%uint32(dim)]++
			}
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// useBagServer points this test's borg at srv (a bagServer of dimension
// 64) as an OpenAI-compatible embedder.
func useBagServer(t *testing.T, srv *httptest.Server) {
	t.Setenv("BORG_EMBEDDER", "openai")
	t.Setenv("BORG_EMBEDDER_URL", srv.URL)
	t.Setenv("BORG_EMBEDDER_MODEL", "bag-64")
	t.Setenv("BORG_EMBEDDER_DIM", "64")
}

// TestConfiguredEmbedder: BORG_EMBEDDER=openai makes recall and reindex
// embed through the endpoint; the sidecar records which embedder made its
// vectors, so switching models rebuilds them rather than mixing; a wrong
// configuration names the variable to fix.
func TestConfiguredEmbedder(t *testing.T) {
	vars := adversarialStore(t)
	srv, calls := bagServer(t, 64)
	t.Setenv("BORG_EMBEDDER", "openai")
	t.Setenv("BORG_EMBEDDER_URL", srv.URL)
	t.Setenv("BORG_EMBEDDER_MODEL", "bag-64")
	code, stdout, stderr := inProcess(t, vars, "", "recall", "--json", "migrations before integration tests")
	if code != 0 || !strings.Contains(stdout, "run-migrations-before-integration-tests") {
		t.Fatalf("recall through the endpoint: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if calls.Load() == 0 {
		t.Fatal("the endpoint was never called")
	}
	sidecar, err := os.ReadFile(filepath.Join(vars["BORG_STORE"], ".borg", "index", "vectors.bin"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(vars["BORG_STORE"], ".borg", "index", "*"))
		t.Fatalf("no sidecar: %v (index holds %v)", err, matches)
	}
	if !strings.Contains(string(sidecar), "bag-64") {
		t.Errorf("the sidecar does not name its embedder's model")
	}
	// Another model: its vectors replace the old ones.
	t.Setenv("BORG_EMBEDDER_MODEL", "bag-64-v2")
	before := calls.Load()
	if code, _, stderr := inProcess(t, vars, "", "recall", "migrations"); code != 0 {
		t.Fatalf("recall after switching models: %s", stderr)
	}
	if calls.Load() == before {
		t.Error("switching models reused the old vectors")
	}
	if sidecar, _ := os.ReadFile(filepath.Join(vars["BORG_STORE"], ".borg", "index", "vectors.bin")); !strings.Contains(string(sidecar), "bag-64-v2") {
		t.Error("the sidecar still holds the old model's vectors")
	}
	for _, tc := range []struct{ key, val, want string }{
		{"BORG_EMBEDDER", "bert", "use ngram (the default), openai"},
		{"BORG_EMBEDDER_URL", "", "needs BORG_EMBEDDER_URL"},
		{"BORG_EMBEDDER_DIM", "-3", "BORG_EMBEDDER_DIM"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			t.Setenv(tc.key, tc.val)
			code, _, stderr := inProcess(t, vars, "", "recall", "migrations")
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s=%q: exit %d, %q", tc.key, tc.val, code, stderr)
			}
		})
	}
}

// TestEmbedderDownSaysSo: when the endpoint that embedded the lessons stops
// answering, recall still answers from the words and says on stderr that
// meaning played no part.
func TestEmbedderDownSaysSo(t *testing.T) {
	vars := adversarialStore(t)
	srv, _ := bagServer(t, 64)
	useBagServer(t, srv)
	if code, stdout, stderr := inProcess(t, vars, "", "recall", "migrations before integration tests"); code != 0 || strings.Contains(stderr, "embedder") {
		t.Fatalf("recall with the endpoint up: exit %d\n%s\n%s", code, stdout, stderr)
	}
	srv.Close()
	code, stdout, stderr := inProcess(t, vars, "", "recall", "migrations before integration tests")
	if code != 0 || !strings.Contains(stdout, "run-migrations-before-integration-tests") {
		t.Fatalf("recall with the endpoint down: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "meaning played no part in this search") {
		t.Errorf("recall with the endpoint down says nothing of it: %q", stderr)
	}
}

// TestHookDefersEmbedding: a hook that finds a new lesson indexes its words
// but never calls the embedder endpoint (its search has no vector arm, and
// the endpoint must not run on the agent's clock), not even to ask its
// dimension; the next recall embeds the lesson, and no more than that,
// before it searches with meaning.
func TestHookDefersEmbedding(t *testing.T) {
	for _, dim := range []string{"64", ""} {
		t.Run("BORG_EMBEDDER_DIM="+dim, func(t *testing.T) {
			vars := adversarialStore(t)
			srv, calls := bagServer(t, 64)
			useBagServer(t, srv)
			t.Setenv("BORG_EMBEDDER_DIM", dim)
			// Without a dimension every process asks it once.
			probe := int64(0)
			if dim == "" {
				probe = 1
			}
			if code, stdout, stderr := inProcess(t, vars, "", "recall", "migrations before integration tests"); code != 0 {
				t.Fatalf("recall: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if code, _, stderr := inProcess(t, vars, "", "learn", "Payments gateway retries need jitter between attempts"); code != 0 {
				t.Fatalf("learn: exit %d\n%s", code, stderr)
			}
			before := calls.Load()
			stop := `{"session_id":"defer-1","hook_event_name":"Stop","stop_hook_active":false,"cwd":"` + t.TempDir() +
				`","last_assistant_message":"I added retries with jitter to the payments gateway client."}`
			code, stdout, stderr := inProcess(t, vars, stop, "hook", "stop")
			if code != 0 || !strings.Contains(stdout, "payments-gateway-retries") {
				t.Fatalf("the Stop after the learn: exit %d, %q %q; want the new lesson asked", code, stdout, stderr)
			}
			if n := calls.Load() - before; n != 0 {
				t.Fatalf("the Stop called the embedder endpoint %d time(s)", n)
			}
			// show reads no vector: it leaves the catch-up to recall.
			id := regexp.MustCompile(`payments-gateway-retries[a-z0-9-]*`).FindString(stdout)
			if code, out, stderr := inProcess(t, vars, "", "show", id); code != 0 || !strings.Contains(out, id) || calls.Load() != before {
				t.Fatalf("show %s: exit %d, %d endpoint call(s)\n%s\n%s", id, code, calls.Load()-before, out, stderr)
			}
			code, stdout, stderr = inProcess(t, vars, "", "recall", "payments gateway jitter")
			if code != 0 || !strings.Contains(stdout, "payments-gateway-retries") || strings.Contains(stderr, "embedder") {
				t.Fatalf("recall after the Stop: exit %d\n%s\n%s", code, stdout, stderr)
			}
			// One call embeds the lesson the Stop left without a vector,
			// one the query.
			if n := calls.Load() - before; n != 2+probe {
				t.Errorf("recall after the Stop called the endpoint %d time(s), want %d", n, 2+probe)
			}
			before = calls.Load()
			if code, _, stderr := inProcess(t, vars, "", "recall", "payments gateway jitter"); code != 0 || calls.Load()-before != 1+probe {
				t.Errorf("a second recall: exit %d, %d endpoint call(s), want the query's alone (%s)", code, calls.Load()-before, stderr)
			}
			// A Stop that asks several lessons orders them by MMR, over the
			// vectors the sidecar already holds: it asks the endpoint
			// nothing either, not even its dimension.
			for _, gist := range []string{"Payments gateway retries need a cap on attempts", "Payments gateway retries need backoff between attempts"} {
				if code, _, stderr := inProcess(t, vars, "", "learn", gist); code != 0 {
					t.Fatalf("learn: exit %d\n%s", code, stderr)
				}
			}
			if code, _, stderr := inProcess(t, vars, "", "recall", "payments gateway retries"); code != 0 {
				t.Fatalf("recall: exit %d\n%s", code, stderr)
			}
			before = calls.Load()
			several := `{"session_id":"defer-2","hook_event_name":"Stop","stop_hook_active":false,"cwd":"` + t.TempDir() +
				`","last_assistant_message":"I added retries with jitter and backoff between attempts, and a cap on attempts, to the payments gateway client."}`
			code, out, stderr := inProcess(t, vars, several, "hook", "stop")
			if n := strings.Count(out, "payments-gateway-retries"); code != 0 || n < 3 {
				t.Fatalf("the Stop asking several lessons: exit %d, %d asked, %q %q; want three", code, n, out, stderr)
			}
			if n := calls.Load() - before; n != 0 {
				t.Fatalf("the Stop asking several lessons called the embedder endpoint %d time(s)", n)
			}
		})
	}
}
