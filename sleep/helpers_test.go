package sleep

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/borg-memory/borg/memfs"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureDate is the night the golden tests sleep for.
var fixtureDate = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// isolateGit pins everything a commit id depends on besides content: the
// identity (no global or system git config) and the environment the git CLI
// sees.
func isolateGit(t testing.TB) func(string) string {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "borg", "GIT_AUTHOR_EMAIL": "borg@example.com",
		"GIT_COMMITTER_NAME": "borg", "GIT_COMMITTER_EMAIL": "borg@example.com",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return func(k string) string { return env[k] }
}

// newFixtureStore makes a store in a temp dir holding testdata/fixture.txtar,
// committed at a fixed time.
func newFixtureStore(t testing.TB) *memfs.Store {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "fixture.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	return newStoreWith(t, ar.Files)
}

func newStoreWith(t testing.TB, files []txtar.File) *memfs.Store {
	t.Helper()
	getenv := isolateGit(t)
	clock := func() time.Time { return time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC) }
	dir := filepath.Join(t.TempDir(), "store")
	st, err := memfs.Init(context.Background(), dir, "", memfs.WithEnv(getenv), memfs.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, f.Name)
	}
	slices.Sort(paths)
	if _, err := st.Commit("fixture", paths...); err != nil {
		t.Fatal(err)
	}
	return st
}

// gitOut runs the git CLI in the store and returns its output.
func gitOut(t testing.TB, st *memfs.Store, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", st.Dir()}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkGolden compares got with testdata/golden/name, rewriting it with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./sleep -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./sleep -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// wordEmbedder is a small embedder owned by these tests, so the goldens pin
// sleep's behaviour rather than the index's current embedder: lowercased
// words hashed (FNV-1a) into dim buckets, counted, L2-normalised.
type wordEmbedder struct{ dim int }

func (e wordEmbedder) ID() string { return fmt.Sprintf("test-words-d%d", e.dim) }
func (e wordEmbedder) Dim() int   { return e.dim }
func (e wordEmbedder) Embed(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			v[h.Sum32()%uint32(e.dim)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for k := range v {
				v[k] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}

// newCommits counts the commits a run wrote (not resumed ones).
func newCommits(r Result) int {
	n := 0
	for _, c := range r.Commits {
		if !c.Resumed {
			n++
		}
	}
	return n
}
