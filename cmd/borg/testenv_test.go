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

// storeGetenv is the whole environment of an in-process borg on the store
// at dir: the store, no placebos, a test git identity, nothing of the
// machine's.
func storeGetenv(dir string) func(string) string {
	return func(k string) string {
		switch k {
		case "BORG_STORE":
			return dir
		case "BORG_PLACEBO_RATE":
			return "0"
		case "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME":
			return "t"
		case "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL":
			return "t@example.com"
		}
		return ""
	}
}
