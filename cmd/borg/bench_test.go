package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLearn runs borg learn in process (no process start): lesson
// write, log append and commit on a store that grows with each run.
func BenchmarkLearn(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "store")
	vars := map[string]string{
		"BORG_STORE": dir, "HOME": b.TempDir(),
		"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
		"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
	}
	var out, errb bytes.Buffer
	e := &env{in: &bytes.Buffer{}, out: &out, err: &errb, getenv: func(k string) string { return vars[k] }, now: time.Now}
	if code := run(context.Background(), []string{"borg", "init"}, e); code != 0 {
		b.Fatalf("init: %s", errb.String())
	}
	i := 0
	for b.Loop() {
		i++
		gist := fmt.Sprintf("Lesson number %d: run the migrations before test suite %d", i, i)
		if code := run(context.Background(), []string{"borg", "learn", gist, "--body", "Why: a benchmark.", "--tag", "bench"}, e); code != 0 {
			b.Fatalf("learn: %s", errb.String())
		}
	}
}
