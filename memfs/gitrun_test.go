package memfs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestGitRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	g := Git{Dir: dir, Isolate: true, Env: []string{"LC_ALL=C"}}
	if _, err := g.Run(t.Context(), nil, "init", "-q", "-b", "trunk"); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	tests := []struct {
		name string
		g    Git
		args []string
		want string // stdout, or the error's text when wantErr
		err  bool
	}{
		{"line", g, []string{"symbolic-ref", "HEAD"}, "refs/heads/trunk\n", false},
		{"capped", Git{Dir: dir, Isolate: true, MaxOut: 5}, []string{"symbolic-ref", "HEAD"}, "refs/", false},
		// GIT_DIR set by a calling git hook must not move an isolated git.
		{"isolated", Git{Dir: dir, Isolate: true, Env: nil}, []string{"rev-parse", "--absolute-git-dir"}, "", false},
		// Without Isolate, git is the caller's: GIT_DIR wins.
		{"not isolated", Git{Dir: dir}, []string{"symbolic-ref", "HEAD"}, "git symbolic-ref: not a git repository", true},
		{"error names the command", g, []string{"rev-parse", "--verify", "-q", "nope"}, "git rev-parse:", true},
	}
	t.Setenv("GIT_DIR", other)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.g.Run(t.Context(), nil, tc.args...)
			if tc.err {
				var ge *GitError
				if !errors.As(err, &ge) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("err = %v, want a *GitError starting %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "isolated" {
				if !strings.HasPrefix(strings.TrimSpace(string(out)), dir) {
					t.Fatalf("isolated git ran in %q, want %s/.git", out, dir)
				}
				return
			}
			if string(out) != tc.want {
				t.Fatalf("stdout = %q, want %q", out, tc.want)
			}
		})
	}
	if ref, err := g.HeadBranch(t.Context()); err != nil || ref != "refs/heads/trunk" {
		t.Fatalf("HeadBranch = %q, %v", ref, err)
	}
}

// TestGitRunCancelLeavesNoLock: a git stopped by its context's cancel
// removes the lock it holds (it is sent a signal it catches).
func TestGitRunCancelLeavesNoLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no signal git catches")
	}
	s := newTestStore(t)
	lock := filepath.Join(s.Dir(), ".git", "index.lock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// git update-index --stdin holds index.lock while it reads its stdin,
	// which stays open (a pipe git reads directly: Run has no copy to wait
	// for).
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close(); _ = stdin.Close() }()
	done := make(chan error, 1)
	go func() {
		_, err := s.GitCLI().Run(ctx, stdin, "update-index", "--add", "-z", "--stdin")
		done <- err
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(lock); err == nil {
			break
		}
		if i == 1000 {
			t.Fatal("git never took index.lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // past the instant git registers it
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled git reported success")
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock after the cancel: %v", err)
	}
}
