package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepoTagOfAWorktree: a linked worktree takes its main worktree's tag,
// so a lesson learned with --reach repo in one reaches sessions in the
// other; a plain repository and a submodule keep their own directory's.
func TestRepoTagOfAWorktree(t *testing.T) {
	parent := t.TempDir()
	main := filepath.Join(parent, "payments")
	if err := os.Mkdir(main, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, main, "init", "-q", "-b", "main")
	gitRun(t, main, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(parent, "payments-wt")
	gitRun(t, main, "worktree", "add", "-q", wt)
	for _, tt := range []struct{ dir, want string }{
		{main, "payments"},
		{wt, "payments"},
		{filepath.Join(wt, "sub", "dir"), "payments"},
		{t.TempDir(), ""},
	} {
		if err := os.MkdirAll(tt.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := RepoTag(RepoRoot(tt.dir)); got != tt.want {
			t.Errorf("RepoTag(RepoRoot(%s)) = %q, want %q", tt.dir, got, tt.want)
		}
	}
	// A submodule's .git file names .git/modules/<name>: no main worktree.
	sub := filepath.Join(parent, "vendored")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../payments/.git/modules/vendored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RepoTag(sub); got != "vendored" {
		t.Errorf("RepoTag of a submodule = %q, want vendored", got)
	}
}
