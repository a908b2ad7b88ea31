package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/borg-memory/borg/index"
)

// TestProductPathBeatsItsLexicalArm: on the path users meet (a store built
// by borg learn's code, queried as borg recall queries it), the whole
// pipeline ranks at least as well as its own lexical arm, on a fresh store
// (only created events) and after a replayed log. It runs on the smallest
// shared LoCoMo conversation and skips where ../shared/data is absent. The
// figures are deterministic: the same data give the same nDCG@10.
func TestProductPathBeatsItsLexicalArm(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "shared", "data", "beir", "locomo-conv-1")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("skipping: %s is absent", dir)
	}
	e := &env{in: nil, out: io.Discard, err: io.Discard, getenv: func(string) string { return "" }, now: time.Now}
	lexical, err := index.ParseArms("lexical")
	if err != nil {
		t.Fatal(err)
	}
	ndcg := func(t *testing.T, arms index.ArmWeights, replay bool) float64 {
		opts := index.EvalOptions{Arms: arms, Replay: replay, Path: "product"}
		opts.Build = productBuilder(e, arms, io.Discard, false, false, false)
		rep, err := index.EvalRetrieval(context.Background(), []string{dir}, opts, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return rep.All.NDCG10
	}
	for _, replay := range []bool{false, true} {
		name := map[bool]string{false: "cold", true: "replayed log"}[replay]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			all, lex := ndcg(t, index.ArmWeights{}, replay), ndcg(t, lexical, replay)
			t.Logf("nDCG@10: pipeline %.4f, lexical arm %.4f", all, lex)
			if all < lex {
				t.Fatalf("the pipeline (nDCG@10 %.4f) ranks below its lexical arm (%.4f) on the product path", all, lex)
			}
		})
	}
}
