package index

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedData locates ../shared/data relative to the repository root found
// from the working directory, or skips the test.
func sharedData(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("skipping: repository root not found, so ../shared/data is absent")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(data, "beir")); err != nil {
		t.Skipf("skipping: evaluation data %s is absent", data)
	}
	return data
}

func TestScoreQuery(t *testing.T) {
	cases := []struct {
		name   string
		ranked []string
		rel    map[string]int
		want   metricSum
	}{
		{"perfect", []string{"a", "b"}, map[string]int{"a": 1, "b": 1}, metricSum{n: 1, ndcg: 1, rec10: 1, rec100: 1, mrr: 1}},
		{"second place", []string{"x", "a"}, map[string]int{"a": 1}, metricSum{n: 1, ndcg: 1 / math.Log2(3), rec10: 1, rec100: 1, mrr: 0.5}},
		{"graded order", []string{"b", "a"}, map[string]int{"a": 2, "b": 1},
			metricSum{n: 1, ndcg: (1 + 2/math.Log2(3)) / (2 + 1/math.Log2(3)), rec10: 1, rec100: 1, mrr: 1}},
		{"beyond ten", append(make([]string, 10), "a"), map[string]int{"a": 1, "b": 1}, metricSum{n: 1, rec100: 0.5}},
		{"zero grade is not relevant", []string{"a"}, map[string]int{"a": 0, "b": 1}, metricSum{n: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := scoreQuery(tc.ranked, tc.rel)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
			if got.n != tc.want.n || !near(got.ndcg, tc.want.ndcg) || !near(got.rec10, tc.want.rec10) ||
				!near(got.rec100, tc.want.rec100) || !near(got.mrr, tc.want.mrr) {
				t.Fatalf("scoreQuery = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSplitGist(t *testing.T) {
	cases := []struct{ title, text, gist, body string }{
		{"T", "First one. Second one.", "First one.", "Second one."},
		{"T", "No break here", "No break here", ""},
		{"T", "", "T", ""},
		{"T", "Version 2.5 is out! Upgrade.", "Version 2.5 is out!", "Upgrade."},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			g, b := splitGist(tc.title, tc.text)
			if g != tc.gist || b != tc.body {
				t.Fatalf("splitGist(%q) = %q, %q", tc.text, g, b)
			}
		})
	}
}

// TestEvalRetrieval runs the harness on two small LoCoMo folders and checks
// the report's shape and bounds; the figures themselves are in BENCHMARKS.md.
func TestEvalRetrieval(t *testing.T) {
	data := sharedData(t)
	dirs := []string{filepath.Join(data, "beir", "locomo-conv-1"), filepath.Join(data, "beir", "cranfield")}
	var progress strings.Builder
	rep, err := EvalRetrieval(context.Background(), dirs, EvalOptions{}, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Folders) != 2 || rep.Folders[0].Name != "locomo-conv-1" || rep.Folders[1].Name != "cranfield" {
		t.Fatalf("folders %+v", rep.Folders)
	}
	if rep.All.Queries != rep.Folders[0].Queries+rep.Folders[1].Queries || rep.Folders[0].Queries == 0 {
		t.Fatalf("queries %d vs %+v", rep.All.Queries, rep.Folders)
	}
	for _, m := range []EvalMetrics{rep.All, rep.Folders[0].EvalMetrics, rep.Folders[1].EvalMetrics} {
		for _, v := range []float64{m.NDCG10, m.Recall10, m.Recall100, m.MRR10} {
			if !(v > 0 && v <= 1) {
				t.Fatalf("figure out of (0,1]: %+v", m)
			}
		}
		if m.Recall100 < m.Recall10 {
			t.Fatalf("recall@100 below recall@10: %+v", m)
		}
	}
	if len(rep.Folders[0].Categories) == 0 || len(rep.Folders[1].Categories) != 0 {
		t.Fatalf("categories: locomo %v, cranfield %v", rep.Folders[0].Categories, rep.Folders[1].Categories)
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Folders []map[string]any `json:"folders"`
		All     map[string]any   `json:"all"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "queries", "ndcg10", "recall10", "recall100", "mrr10"} {
		if _, ok := shape.Folders[0][k]; !ok {
			t.Fatalf("folder JSON lacks %q: %s", k, raw)
		}
	}
	for _, k := range []string{"queries", "ndcg10", "recall10", "recall100", "mrr10"} {
		if _, ok := shape.All[k]; !ok {
			t.Fatalf("all JSON lacks %q: %s", k, raw)
		}
	}
	if !strings.Contains(progress.String(), "locomo-conv-1:") {
		t.Fatalf("no progress lines: %q", progress.String())
	}
	t.Run("arms off", func(t *testing.T) {
		lex, err := EvalRetrieval(context.Background(), dirs[:1], EvalOptions{Arms: ArmWeights{Lexical: 1}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lex.Arms != "lexical=1" || lex.All.Queries != rep.Folders[0].Queries {
			t.Fatalf("lexical-only report %+v", lex)
		}
	})
	t.Run("a folder's figures do not depend on its batch", func(t *testing.T) {
		// Each folder gets a fresh embedder from the factory: the n-gram
		// embedder fits its IDF to the first corpus it indexes and keeps it.
		opts := EvalOptions{NewEmbedder: func() (Embedder, error) { return NewNGramEmbedder(NGramOptions{}), nil }}
		// Two corpora of about one size: an embedder fitted on the first
		// would see no reason to refit on the second.
		alone, err := EvalRetrieval(context.Background(), dirs[:1], opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := EvalRetrieval(context.Background(), []string{filepath.Join(data, "beir", "locomo-conv-0"), dirs[0]}, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if alone.Folders[0].EvalMetrics != batch.Folders[1].EvalMetrics {
			t.Fatalf("locomo-conv-1 alone %+v, after locomo-conv-0 in one batch %+v", alone.Folders[0].EvalMetrics, batch.Folders[1].EvalMetrics)
		}
	})
	t.Run("missing folder", func(t *testing.T) {
		if _, err := EvalRetrieval(context.Background(), []string{t.TempDir()}, EvalOptions{}, nil); err == nil {
			t.Fatal("no error for a folder without corpus.jsonl")
		}
	})
}

// TestEvalSharedSets prints the evaluation report over every shared set,
// the figures of BENCHMARKS.md. It runs only with BORG_EVAL=1 (about a
// minute); knobs: BORG_ARMS (as ParseArms reads it), BORG_NOMMR=1,
// BORG_BAR=fraction, BORG_DIM=dim,minN,maxN (+ BORG_NOIDF=1).
func TestEvalSharedSets(t *testing.T) {
	if os.Getenv("BORG_EVAL") == "" {
		t.Skip("set BORG_EVAL=1 to evaluate on every shared set")
	}
	data := sharedData(t)
	sets := []string{"scifact", "cranfield", "locomo-conv-0", "locomo-conv-1", "locomo-conv-2", "locomo-conv-3", "locomo-conv-4", "locomo-conv-5"}
	var dirs []string
	for _, s := range sets {
		dirs = append(dirs, filepath.Join(data, "beir", s))
	}
	arms, err := ParseArms(os.Getenv("BORG_ARMS"))
	if err != nil {
		t.Fatal(err)
	}
	opts := EvalOptions{Arms: arms}
	if d := os.Getenv("BORG_DIM"); d != "" {
		var dim, minN, maxN int
		fmt.Sscanf(d, "%d,%d,%d", &dim, &minN, &maxN)
		opts.NewEmbedder = func() (Embedder, error) {
			return NewNGramEmbedder(NGramOptions{Dim: dim, MinN: minN, MaxN: maxN, NoIDF: os.Getenv("BORG_NOIDF") != ""}), nil
		}
	}
	fmt.Sscanf(os.Getenv("BORG_BAR"), "%g", &opts.Bar)
	fmt.Sscanf(os.Getenv("BORG_BM25"), "%g,%g", &bm25K1, &bm25B)
	if os.Getenv("BORG_NOMMR") != "" {
		opts.MMRLambda = 1
	}
	rep, err := EvalRetrieval(context.Background(), dirs, opts, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var locomo metricSum
	for _, f := range rep.Folders {
		t.Logf("%-15s n=%3d ndcg10 %.4f r10 %.4f r100 %.4f mrr10 %.4f", f.Name, f.Queries, f.NDCG10, f.Recall10, f.Recall100, f.MRR10)
		if strings.HasPrefix(f.Name, "locomo") {
			n := float64(f.Queries)
			locomo.add(metricSum{n: f.Queries, ndcg: f.NDCG10 * n, rec10: f.Recall10 * n, rec100: f.Recall100 * n, mrr: f.MRR10 * n})
		}
	}
	lm := locomo.metrics()
	t.Logf("locomo (micro) n=%d ndcg10 %.4f r10 %.4f r100 %.4f mrr10 %.4f", lm.Queries, lm.NDCG10, lm.Recall10, lm.Recall100, lm.MRR10)
	b, _ := json.Marshal(rep)
	t.Logf("json %s", b)
}
