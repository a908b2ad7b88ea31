// Package gitcli is borg's one runner of the git CLI: every package that
// runs git (the store's sync and recovery, sleep's merge, the hooks' diffs
// in the user's project, install's hook configuration) goes through Git,
// so that the environment git sees, how its errors read and how its output
// is bounded are decided once. It depends on nothing of the store, so a
// package that only runs git does not pull in the store's git engine.
package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Git is one way of running the git CLI: where, with what environment and
// with which limits. The zero value runs git in the current directory with
// the process's environment.
type Git struct {
	// Dir is the repository or work tree git runs in (git -C Dir); empty
	// runs it in the current directory.
	Dir string
	// Isolate drops the variables that point git at another repository
	// (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and friends, set when borg
	// runs inside a git hook or alias), so that git acts on Dir whatever
	// called borg, and turns off every setting that runs a program or
	// changes file content (storeHardening). The store's git is always
	// isolated; git in the user's project is not (it is the user's own).
	Isolate bool
	// Env holds KEY=VALUE entries added to the environment (later entries
	// win over the process's).
	Env []string
	// MaxOut caps the stdout Run keeps (0: no cap); the rest is read and
	// dropped, so a huge diff costs no memory.
	MaxOut int
	// DieWithParent kills git when borg dies (on Linux), for commands
	// whose work is worthless once borg is gone and that take no lock (a
	// diff borg reads). A git that writes the store is not killed: it
	// holds the store's write lock (Keep) and finishes.
	DieWithParent bool
	// Keep holds files git keeps open (as fds 3, 4, … where the OS
	// passes them; not on Windows): the store's write lock, so that a
	// git outliving a killed borg keeps the store locked until it ends.
	Keep []*os.File
}

// GitError is a git command that failed: its arguments, how it exited and
// what it wrote to stderr.
type GitError struct {
	Args   []string
	Err    error
	Stderr string
}

func (e *GitError) Error() string {
	msg := firstLine(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	name := "git"
	if len(e.Args) > 0 {
		name += " " + e.Args[0]
	}
	if lock := LockInStderr(e.Stderr); lock != "" {
		return fmt.Sprintf("%s: %s (%s)", name, msg, LockFix(lock))
	}
	return fmt.Sprintf("%s: %s", name, msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// firstLine is the first non-empty line of s without git's "fatal: " or
// "error: " prefix.
func firstLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: "} {
			l = strings.TrimPrefix(l, p)
		}
		if l == "" {
			continue
		}
		if strings.HasSuffix(l, ":") {
			// A list follows ("…would be overwritten by merge:", then
			// the files, indented, then git's advice): the line alone
			// names nothing.
			return l + " " + listAfter(lines[i+1:])
		}
		return l
	}
	return ""
}

// listAfter is the indented lines that open lines (the files git lists),
// the first few joined, and the line of advice after them.
func listAfter(lines []string) string {
	var items []string
	n := 0
	advice := ""
	for _, l := range lines {
		if l == "" {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			if n++; n <= 5 {
				items = append(items, strings.TrimSpace(l))
			}
			continue
		}
		if a := strings.TrimSpace(strings.TrimPrefix(l, "hint: ")); a != "Aborting" {
			advice = a
		}
		break
	}
	out := strings.Join(items, ", ")
	if n > 5 {
		out += fmt.Sprintf(" and %d more", n-5)
	}
	if advice != "" {
		out += " (" + advice + ")"
	}
	return out
}

// waitDelay bounds how long a git command's wait lasts once git has exited
// or been stopped, for the processes it started to close its output.
const waitDelay = 2 * time.Second

// Command is the exec.Cmd for git args under g's settings, for a caller
// that streams its output or gives it stdin (Run covers the rest).
func (g Git) Command(ctx context.Context, args ...string) *exec.Cmd {
	full := args
	if g.Dir != "" {
		full = append([]string{"-C", g.Dir}, args...)
	}
	if g.Isolate {
		full = append(storeHardening(), full...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cancelGently(cmd)
	// A git stopped by its context returns within waitDelay even when a
	// process it started (a remote helper, ssh) lives on holding its
	// output: a sync's --timeout is a bound, not a hope.
	cmd.WaitDelay = waitDelay
	env := os.Environ()
	if g.Isolate {
		env = append(isolatedEnviron(env), "GIT_ATTR_NOSYSTEM=1")
	}
	cmd.Env = hugeMalloc(append(env, g.Env...), g.Dir, args)
	if g.DieWithParent {
		dieWithParent(cmd)
	}
	if runtime.GOOS != "windows" {
		cmd.ExtraFiles = g.Keep
	}
	return cmd
}

// Run runs git args with stdin (nil: none) and returns its stdout. A
// failure is a *GitError carrying stderr; the stdout read so far is
// returned beside it.
func (g Git) Run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := g.Command(ctx, args...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if g.MaxOut > 0 {
		cmd.Stdout = &capWriter{w: &out, n: g.MaxOut}
	}
	if err := cmd.Run(); err != nil && !(errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil && cmd.ProcessState.Success()) {
		// (git that exited 0, leaving a process that holds its output,
		// succeeded: what it wrote before it exited is read.)
		return out.Bytes(), &GitError{Args: args, Err: err, Stderr: errb.String()}
	}
	return out.Bytes(), nil
}

// Line runs git args and returns its stdout without surrounding space:
// for commands that print one value (rev-parse, symbolic-ref, config).
func (g Git) Line(ctx context.Context, args ...string) (string, error) {
	out, err := g.Run(ctx, nil, args...)
	return strings.TrimSpace(string(out)), err
}

// HeadBranch is the full ref name HEAD points at in g.Dir (refs/heads/…);
// an error when HEAD is detached.
func (g Git) HeadBranch(ctx context.Context) (string, error) {
	ref, err := g.Line(ctx, "symbolic-ref", "-q", "HEAD")
	if err != nil || ref == "" {
		if err == nil {
			err = fmt.Errorf("HEAD is detached")
		}
		return "", fmt.Errorf("read HEAD in %s: %w (check out a branch: git -C %s switch main)", g.Dir, err, g.Dir)
	}
	return ref, nil
}

// capWriter keeps the first n bytes written to it and drops the rest,
// always reporting the whole write as done (git must not see a broken
// pipe).
type capWriter struct {
	w io.Writer
	n int
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.n > 0 {
		k := min(len(p), c.n)
		if _, err := c.w.Write(p[:k]); err != nil {
			return 0, err
		}
		c.n -= k
	}
	return len(p), nil
}

// isolatedEnviron is env without the variables that point git at another
// repository.
func isolatedEnviron(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX",
			"GIT_EXTERNAL_DIFF", "GIT_ATTR_SOURCE":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// storeHardening is the configuration every git command in a store runs
// with, given as -c options, which win over every config file (the
// user's, the system's and the store's own): a store's content comes from
// teammates' pushes, and no push may make borg run a program or read a
// lesson other than as git stores it. Hooks are off (a relative
// core.hooksPath in the user's config would otherwise run scripts
// committed into the store), and so are the file-system monitor,
// submodules and the ext transport, line-ending conversion and the user's
// global attributes file. The attributes a committed .gitattributes could
// set (filters, working-tree encodings, textconv and merge drivers) are
// overridden by the store's .git/info/attributes (StoreAttributes), which
// no push can change.
func storeHardening() []string {
	return []string{
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "core.attributesFile=" + os.DevNull,
		"-c", "core.autocrlf=false",
		"-c", "core.eol=lf",
		"-c", "core.safecrlf=false",
		"-c", "submodule.recurse=false",
		"-c", "fetch.recurseSubmodules=false",
		"-c", "protocol.ext.allow=never",
	}
}

// LockFix is the fix for the git lock p that stays.
func LockFix(p string) string {
	return fmt.Sprintf("if no git process is running in the store (an editor left open by git commit, git rebase -i), remove it: rm %s", p)
}

// LockInStderr is the lock file git's message in stderr says exists ("Unable
// to create '…/index.lock': File exists."), or "".
func LockInStderr(stderr string) string {
	const marker = ".lock': File exists"
	i := strings.Index(stderr, marker)
	if i < 0 {
		return ""
	}
	start := strings.LastIndexByte(stderr[:i], '\'')
	if start < 0 {
		return ""
	}
	return stderr[start+1 : i+len(".lock")]
}

// IsObjectName reports whether h is a full git object name in lower-case
// hex: SHA-1's 40 digits or SHA-256's 64.
func IsObjectName(h string) bool {
	if len(h) != 40 && len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
