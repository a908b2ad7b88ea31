package gitcli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Reading refs from git's files, without starting git: a hook that asks
// "what is HEAD?" on every call must not pay for a process, nor for opening
// a repository library. Refs are only read here; git writes them.

// ErrNoRef is returned when a ref does not exist (a branch without
// commits, say).
var ErrNoRef = errors.New("no such ref")

// Dirs are the git directories of a worktree: Git is its own (HEAD, the
// index, the per-worktree refs), Common the repository's (objects, refs,
// packed-refs, config). They are one directory outside linked worktrees.
type Dirs struct{ Git, Common string }

// FindDirs finds the git directories of the worktree at root: root/.git,
// or where the file root/.git points ("gitdir: …": a linked worktree or a
// submodule), and the common directory its commondir file names.
func FindDirs(root string) (Dirs, error) {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		return Dirs{}, err
	}
	git := dotGit
	if !fi.IsDir() {
		data, err := os.ReadFile(dotGit)
		if err != nil {
			return Dirs{}, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
		if !ok {
			return Dirs{}, fmt.Errorf("%s is a file without a gitdir: line; point it at the repository's git directory", dotGit)
		}
		git = relTo(root, strings.TrimSpace(p))
	}
	common := git
	if data, err := os.ReadFile(filepath.Join(git, "commondir")); err == nil {
		common = relTo(git, strings.TrimSpace(string(data)))
	}
	return Dirs{Git: filepath.Clean(git), Common: filepath.Clean(common)}, nil
}

// relTo is p, made absolute from base when it is relative.
func relTo(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, filepath.FromSlash(p))
}

// perWorktree reports whether ref lives in a worktree's own directory:
// HEAD and the other pseudo-refs, and refs/worktree, refs/bisect and
// refs/rewritten (git's worktree.c).
func perWorktree(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") {
		return true
	}
	for _, p := range []string{"refs/worktree/", "refs/bisect/", "refs/rewritten/"} {
		if strings.HasPrefix(ref, p) {
			return true
		}
	}
	return false
}

// ReadRef returns the object name ref resolves to ("HEAD", "refs/heads/main"),
// following symbolic refs, from the loose ref files and packed-refs. It
// returns ErrNoRef when the ref, or the branch a symbolic ref names, does
// not exist; any other error means the files do not say (a format this
// reader does not know) and the caller asks git.
func (d Dirs) ReadRef(ref string) (string, error) {
	for range 5 { // git follows at most 5 levels of symbolic refs
		if !validRefName(ref) {
			return "", fmt.Errorf("read ref %q: not a ref name", ref)
		}
		dir := d.Common
		if perWorktree(ref) {
			dir = d.Git
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref)))
		if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(b)) == 0) {
			return d.packedRef(ref)
		}
		if err != nil {
			return "", fmt.Errorf("read ref %s: %w", ref, err)
		}
		v := strings.TrimSpace(string(b))
		if target, ok := strings.CutPrefix(v, "ref: "); ok {
			ref = strings.TrimSpace(target)
			continue
		}
		if !IsObjectName(v) {
			return "", fmt.Errorf("read ref %s: %q is not an object name", ref, v)
		}
		return v, nil
	}
	return "", fmt.Errorf("read ref %s: symbolic refs nested too deep", ref)
}

// SymbolicTarget is the ref a symbolic ref names (HEAD → refs/heads/main),
// or "" when ref holds an object name (a detached HEAD).
func (d Dirs) SymbolicTarget(ref string) (string, error) {
	if !validRefName(ref) {
		return "", fmt.Errorf("read ref %q: not a ref name", ref)
	}
	dir := d.Common
	if perWorktree(ref) {
		dir = d.Git
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref)))
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", ref, err)
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok {
		return "", nil
	}
	return strings.TrimSpace(target), nil
}

// packedRef looks ref up in packed-refs.
func (d Dirs) packedRef(ref string) (string, error) {
	f, err := os.Open(filepath.Join(d.Common, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoRef
	}
	if err != nil {
		return "", fmt.Errorf("read packed-refs: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		id, name, ok := strings.Cut(line, " ")
		if ok && name == ref && IsObjectName(id) {
			return id, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read packed-refs: %w", err)
	}
	return "", ErrNoRef
}

// validRefName refuses what cannot be a ref file under a git directory:
// an empty name, an absolute or escaping path, a backslash.
func validRefName(ref string) bool {
	if ref == "" || strings.HasPrefix(ref, "/") || strings.Contains(ref, "\\") || strings.ContainsRune(ref, 0) {
		return false
	}
	for _, part := range strings.Split(ref, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}
