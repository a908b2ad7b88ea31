package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// testGit runs git args in dir through memfs.Git (the project's one git
// runner), with the process's environment and then env (later entries win),
// and returns its stdout. A failure fails the test with git's whole stderr.
// It is the tests' one way to run git; a caller that must go on after a
// failure (a retried push, a checkout that may not be one) calls memfs.Git
// itself.
func testGit(tb testing.TB, dir string, env []string, args ...string) string {
	tb.Helper()
	out, err := memfs.Git{Dir: dir, Env: env}.Run(context.Background(), nil, args...)
	if err != nil {
		stderr := ""
		if ge, ok := errors.AsType[*memfs.GitError](err); ok {
			stderr = ge.Stderr
		}
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return string(out)
}
