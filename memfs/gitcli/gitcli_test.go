package gitcli

import (
	"errors"
	"testing"
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
