package gitcli

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// TestGitErrorNamesWhatGitListed: git's error line says what went wrong,
// and, where git lists what it is about (the files a merge would
// overwrite), the list and git's advice come with it.
func TestGitErrorNamesWhatGitListed(t *testing.T) {
	for _, tt := range []struct{ name, stderr, want string }{
		{"one line", "fatal: not a git repository\n", "git merge: not a git repository"},
		{"a list", "error: Your local changes to the following files would be overwritten by merge:\n\tlessons/ab/x.html\n\tlessons/cd/y.html\nPlease commit your changes or stash them before you merge.\nAborting\n",
			"git merge: Your local changes to the following files would be overwritten by merge: lessons/ab/x.html, lessons/cd/y.html (Please commit your changes or stash them before you merge.)"},
		{"a long list", "error: The following untracked working tree files would be overwritten by merge:\n\ta\n\tb\n\tc\n\td\n\te\n\tf\n\tg\nAborting\n",
			"git merge: The following untracked working tree files would be overwritten by merge: a, b, c, d, e and 2 more"},
		{"nothing", "", "git merge: exit status 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := &GitError{Args: []string{"merge"}, Err: errors.New("exit status 1"), Stderr: tt.stderr}
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestRunReturnsWhenStopped: git stopped by its context returns though a
// process it started (here a transport's command, as a remote helper or
// ssh would be) lives on holding its output. The command sleeps for a
// minute; the bound is half that, far from the moment a stopped git takes.
func TestRunReturnsWhenStopped(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Git{Dir: t.TempDir()}.Run(ctx, nil, "-c", "protocol.ext.allow=always", "ls-remote", "ext::sh -c sleep% 60")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a stopped git gave no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run waited for what git started")
	}
}
