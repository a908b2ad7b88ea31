package hooks

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// emptyTree is git's well-known empty tree: the base of a repo without commits.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// maxDiff bounds how much diff text a hook reads.
const maxDiff = 64 << 10

// RepoRoot finds the git top level containing dir by walking up for .git,
// without starting a git process. "" when dir is not in a repository.
func RepoRoot(dir string) string {
	if dir == "" {
		return ""
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// RepoTag is a repository's tag: the base name of its top level
// (case-sensitive), or "" outside a repository.
func RepoTag(root string) string {
	if root == "" {
		return ""
	}
	return filepath.Base(root)
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: maxDiff}
	err := cmd.Run()
	return out.String(), err
}

// Snapshot names the work tree's current state as a git object without
// touching the index, the work tree or any ref: `git stash create` when
// there are changes, else HEAD, else the empty tree.
func Snapshot(ctx context.Context, root string) string {
	if root == "" {
		return ""
	}
	if out, err := git(ctx, root, "stash", "create"); err == nil && strings.TrimSpace(out) != "" {
		return strings.TrimSpace(out)
	}
	if out, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD"); err == nil && strings.TrimSpace(out) != "" {
		return strings.TrimSpace(out)
	}
	return emptyTree
}

// DiffSince is the work since ref: commits and uncommitted changes to
// tracked files (git diff), then each untracked, unignored text file as an
// added file (an agent's new files are work too, and git diff never shows
// them), capped at maxDiff bytes in all.
func DiffSince(ctx context.Context, root, ref string) string {
	if root == "" || ref == "" {
		return ""
	}
	out, _ := git(ctx, root, "diff", "--no-color", "--no-ext-diff", ref)
	if len(out) >= maxDiff {
		return out
	}
	list, err := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil || list == "" {
		return out
	}
	var b strings.Builder
	b.WriteString(out)
	for _, name := range strings.Split(strings.TrimSuffix(list, "\x00"), "\x00") {
		if b.Len() >= maxDiff {
			break
		}
		data, err := readSmall(filepath.Join(root, filepath.FromSlash(name)), maxDiff-b.Len())
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue // unreadable, too large or binary
		}
		b.WriteString("--- /dev/null\n+++ b/" + name + "\n")
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if line != "" {
				b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
			}
		}
	}
	s := b.String()
	if len(s) > maxDiff {
		s = s[:maxDiff]
	}
	return s
}

// readSmall reads a regular file of at most n bytes; an error for anything
// else.
func readSmall(path string, n int) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > int64(n) {
		return nil, os.ErrInvalid
	}
	return os.ReadFile(path)
}

type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		if len(p) > room {
			l.w.Write(p[:room])
		} else {
			l.w.Write(p)
		}
	}
	return len(p), nil
}
