package memfs

// gitcli.go runs the git CLI in the store, for what go-git cannot do well:
// talking to a remote as the user's git does (their credential helpers,
// ssh configuration, proxies, url rewrites), and 3-way merges that update
// the worktree and the index.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// gitError is a failed git command: its arguments, exit error and stderr.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := firstLine(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.args[0], msg)
}

func (e *gitError) Unwrap() error { return e.err }

// firstLine is the first non-empty line of s without git's "fatal: " or
// "error: " prefix.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: "} {
			l = strings.TrimPrefix(l, p)
		}
		if l != "" {
			return l
		}
	}
	return ""
}

// runGit runs git in the store's worktree and returns its stdout. It never
// prompts (a hook or a cron job has no one to answer: credentials come from
// the user's helpers and agents), and reads git's messages in the C locale.
// Its commits carry the identity borg's own commits do (signatures).
func (s *Store) runGit(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	author, committer := s.signatures(s.now())
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", s.dir}, args...)...)
	cmd.Stdin = stdin
	dieWithParent(cmd)
	cmd.Env = append(storeEnviron(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_MERGE_AUTOEDIT=no",
		"GIT_AUTHOR_NAME="+author.Name, "GIT_AUTHOR_EMAIL="+author.Email,
		"GIT_COMMITTER_NAME="+committer.Name, "GIT_COMMITTER_EMAIL="+committer.Email)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), &gitError{args: args, err: err, stderr: errb.String()}
	}
	return out.Bytes(), nil
}

// storeEnviron is the environment without the variables that point git at
// another repository (set when borg runs inside a git hook or alias): git
// run here acts on the store, whatever called borg.
func storeEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return env
}
