package gitcli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Git{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=" + os.DevNull}}.Run(context.Background(), nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestReadRefMatchesGit: every ref the reader resolves, it resolves as
// git rev-parse does, through loose refs, packed-refs, symbolic refs and
// a linked worktree's own HEAD; what git does not know is ErrNoRef.
func TestReadRefMatchesGit(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	gitT(t, "", "init", "-q", "-b", "main", repo)
	d, err := FindDirs(repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadRef("HEAD"); !errors.Is(err, ErrNoRef) {
		t.Fatalf("HEAD of an empty repository: %v, want ErrNoRef", err)
	}
	if target, err := d.SymbolicTarget("HEAD"); err != nil || target != "refs/heads/main" {
		t.Fatalf("SymbolicTarget(HEAD) = %q, %v", target, err)
	}
	gitT(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	gitT(t, repo, "branch", "packed")
	gitT(t, repo, "tag", "v1")
	gitT(t, repo, "pack-refs", "--all")
	gitT(t, repo, "commit", "-q", "--allow-empty", "-m", "two") // main is loose again, over its packed copy
	gitT(t, repo, "symbolic-ref", "refs/heads/alias", "refs/heads/packed")
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, repo, "worktree", "add", "-q", "--detach", wt, "HEAD~1")
	wd, err := FindDirs(wt)
	if err != nil {
		t.Fatal(err)
	}
	if wd.Common != d.Common || wd.Git == d.Git {
		t.Fatalf("worktree dirs %+v, repository's %+v", wd, d)
	}
	tests := []struct {
		dirs Dirs
		dir  string
		ref  string
	}{
		{d, repo, "HEAD"},
		{d, repo, "refs/heads/main"},
		{d, repo, "refs/heads/packed"},
		{d, repo, "refs/tags/v1"},
		{d, repo, "refs/heads/alias"},
		{wd, wt, "HEAD"},
		{wd, wt, "refs/heads/main"},
	}
	for _, tt := range tests {
		want := gitT(t, tt.dir, "rev-parse", tt.ref)
		if got, err := tt.dirs.ReadRef(tt.ref); err != nil || got != want {
			t.Errorf("%s in %s: %q, %v; git says %q", tt.ref, tt.dir, got, err, want)
		}
	}
	if target, err := wd.SymbolicTarget("HEAD"); err != nil || target != "" {
		t.Errorf("a detached HEAD names %q, %v", target, err)
	}
	for _, ref := range []string{"refs/heads/nope", "refs/tags/v2"} {
		if _, err := d.ReadRef(ref); !errors.Is(err, ErrNoRef) {
			t.Errorf("%s: %v, want ErrNoRef", ref, err)
		}
	}
	for _, ref := range []string{"", "../config", "refs/../../x", "/etc/passwd", `refs\heads`} {
		if _, err := d.ReadRef(ref); err == nil || errors.Is(err, ErrNoRef) {
			t.Errorf("%q: %v, want a refusal", ref, err)
		}
	}
}
