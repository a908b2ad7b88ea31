package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

func TestTune(t *testing.T) {
	if os.Getenv("BORG_TUNE") == "" {
		t.Skip("set BORG_TUNE=1 to run the tuning sweep")
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
	if w := os.Getenv("BORG_LEXW"); w != "" {
		var a, ti, g, b, tg float64
		fmt.Sscanf(w, "%g,%g,%g,%g,%g", &a, &ti, &g, &b, &tg)
		for i, v := range []float64{a, ti, g, b, tg} {
			lexFields[i].weight = v
		}
	}
	opts := EvalOptions{Arms: arms}
	if d := os.Getenv("BORG_DIM"); d != "" {
		var dim, minN, maxN int
		fmt.Sscanf(d, "%d,%d,%d", &dim, &minN, &maxN)
		opts.Embedder = NewNGramEmbedder(NGramOptions{Dim: dim, MinN: minN, MaxN: maxN, NoIDF: os.Getenv("BORG_NOIDF") != ""})
	}
	fmt.Sscanf(os.Getenv("BORG_BAR"), "%g", &opts.Bar)
	if os.Getenv("BORG_NOMMR") != "" {
		opts.MMRLambda = 1
	}
	rep, err := EvalRetrieval(context.Background(), dirs, opts, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Folders {
		t.Logf("%-15s n=%3d ndcg10 %.4f r10 %.4f r100 %.4f mrr10 %.4f", f.Name, f.Queries, f.NDCG10, f.Recall10, f.Recall100, f.MRR10)
	}
	b, _ := json.Marshal(rep.All)
	t.Logf("all %s", b)
}
