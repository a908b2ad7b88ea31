package index

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestGroupPostingsMatchesStableSort holds groupPostings to what it
// replaced: every new posting sorted stably by term (so by ordinal within a
// term).
func TestGroupPostingsMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "a", "ab", "abc"}
	docs := make([]catalogDoc, 500)
	for i := range docs {
		if rng.IntN(4) == 0 {
			docs[i].from = i + 1 // kept from a base: not in the new postings
		}
		var ts []string
		for range rng.IntN(8) {
			ts = append(ts, words[rng.IntN(len(words))])
		}
		docs[i].terms[fieldAll] = countTerms(ts)
	}
	var want []newPosting
	for i, d := range docs {
		if d.from == 0 {
			for _, tf := range d.terms[fieldAll].terms {
				want = append(want, newPosting{tf.term, uint32(i), tf.tf})
			}
		}
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].term < want[j].term })
	got, terms, bytes := groupPostings(docs, fieldAll)
	if !slices.Equal(got, want) {
		t.Fatalf("groupPostings differs from a stable sort:\n got %v\nwant %v", got[:min(10, len(got))], want[:min(10, len(want))])
	}
	distinct := map[string]bool{}
	wantBytes := 0
	for _, p := range want {
		if !distinct[p.term] {
			distinct[p.term] = true
			wantBytes += len(p.term)
		}
	}
	if terms != len(distinct) || bytes != wantBytes {
		t.Fatalf("groupPostings counts %d terms of %d bytes, want %d of %d", terms, bytes, len(distinct), wantBytes)
	}
	if got, _, _ := groupPostings(docs, fieldTitle); got != nil {
		t.Fatalf("a field without terms: got %v, want none", got)
	}
}

// TestTermCacheSameTerms: the cached analysis gives analyze's terms.
func TestTermCacheSameTerms(t *testing.T) {
	c := newTermCache()
	texts := []string{"Running the migrations before tests, the runner's flaky RUNS",
		"Ünïcode wörds and 日本語 text; possessives: the team's, users' ", "", "a an the",
		strings.Repeat("x", 120) + " long words dropped", "retried retries retrying Retry"}
	for _, ls := range newLessonGen(3, 500).lessons(50) {
		texts = append(texts, ls.Title, ls.Body)
	}
	for range 2 { // cold, then warm
		for _, text := range texts {
			if got, want := c.analyze(text), analyze(text); !slices.Equal(got, want) {
				t.Fatalf("termCache.analyze(%q) = %q, want %q", text, got, want)
			}
		}
	}
}

// TestBuildSameAsSerial: a build with its per-lesson work spread over
// goroutines (analysis, screen, embedding, and the catalog beside the
// sidecar) writes the files a build on one goroutine writes, byte for byte.
func TestBuildSameAsSerial(t *testing.T) {
	ls := newLessonGen(9, 3000).lessons(1500)
	screen := func(l domain.Lesson) string {
		if strings.Contains(l.Body, "deploy") {
			return "flagged: " + l.ID
		}
		return ""
	}
	build := func(serial bool) string {
		serialForTest = serial
		defer func() { serialForTest = false }()
		dir := t.TempDir()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{Screen: screen, ScreenID: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(ls); err != nil {
			t.Fatal(err)
		}
		ix.Close()
		return dir
	}
	a, b := build(false), build(true)
	for _, name := range []string{catalogName, sidecarName} {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs between a parallel build and a serial one", name)
		}
	}
}
