package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/borg-memory/borg/memfs/gitcli"
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
// (case-sensitive), or "" outside a repository. A linked worktree (git
// worktree add) is its main worktree's repository, and takes that tag.
func RepoTag(root string) string {
	if root == "" {
		return ""
	}
	if main := mainWorktree(root); main != "" {
		return filepath.Base(main)
	}
	return filepath.Base(root)
}

// mainWorktree is the main worktree of the linked worktree at root, read
// from its .git file ("gitdir: <main>/.git/worktrees/<name>") without
// starting git; "" when root is no linked worktree (its .git a directory),
// or a submodule's or a bare repository's, which name no main worktree.
func mainWorktree(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "" // a directory: root is the main worktree
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	wt := filepath.Dir(filepath.Clean(dir))
	if filepath.Base(wt) != "worktrees" || filepath.Base(filepath.Dir(wt)) != ".git" {
		return ""
	}
	return filepath.Dir(filepath.Dir(wt))
}

// userGit is git in the user's project: not isolated (the project and its
// environment are the user's own), never taking optional locks (a hook must
// not block the user's git), its output capped at maxDiff.
func userGit(dir string) gitcli.Git {
	return gitcli.Git{Dir: dir, Env: []string{"GIT_OPTIONAL_LOCKS=0"}, MaxOut: maxDiff}
}

// git runs git args in the user's project at dir and returns its stdout
// (at most maxDiff bytes of it).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := userGit(dir).Run(ctx, nil, args...)
	return string(out), err
}

// Snapshot names the work tree's current state as a git object without
// touching the index, the work tree or any ref: `git stash create` when
// there are changes, else HEAD, else the empty tree. git stash create
// refreshes the index it reads and writes it back under index.lock, so it
// runs over a private copy of the project's index (GIT_INDEX_FILE).
func Snapshot(ctx context.Context, root string) string {
	if root == "" {
		return ""
	}
	if out, err := stashCreate(ctx, root); err == nil && out != "" {
		return out
	}
	if out, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD"); err == nil && strings.TrimSpace(out) != "" {
		return strings.TrimSpace(out)
	}
	if ctx.Err() != nil {
		// git was stopped, not answered: the empty tree would make the
		// whole repository the session's work. Nothing is known yet.
		return ""
	}
	return emptyTree
}

// stashCreate is `git stash create` in root over a copy of its index,
// made in the system's temp directory and removed after; an error when
// there is no index to copy (a repository without a commit has none).
func stashCreate(ctx context.Context, root string) (string, error) {
	src, err := os.Open(indexPath(root))
	if err != nil {
		return "", err
	}
	defer func() { _ = src.Close() }()
	tmp, err := os.CreateTemp("", "borg-index-*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	g := userGit(root)
	g.Env = append(g.Env, "GIT_INDEX_FILE="+tmp.Name())
	out, err := g.Run(ctx, nil, "stash", "create")
	return strings.TrimSpace(string(out)), err
}

// indexPath is the index git reads in the work tree at root: the one
// GIT_INDEX_FILE names, else the index in the worktree's own git directory
// (gitcli.FindDirs: .git, or where a .git file points).
func indexPath(root string) string {
	if p := os.Getenv("GIT_INDEX_FILE"); p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		return p
	}
	dirs, err := gitcli.FindDirs(root)
	if err != nil {
		return filepath.Join(root, ".git", "index") // opened and failed on by the caller
	}
	return filepath.Join(dirs.Git, "index")
}

// Untracked records the untracked, unignored files of a work tree at one
// moment, so that DiffSince can tell the agent's work from what was there
// before: path → size and modification time, then, for a small text file, a
// newline and its content. A nil Untracked is no record: every untracked
// file counts.
type Untracked map[string]string

// Bounds on an Untracked: the files it records (a work tree with more
// records untrackedMany, and DiffSince then leaves untracked files out
// altogether), and the content it keeps, per file and in all (a changed
// file whose content was not kept is left out too: which of its lines are
// new cannot be told).
const (
	maxUntracked     = 500
	maxUntrackedText = 16 << 10
	maxUntrackedAll  = 64 << 10
	untrackedMany    = "\x00many"
)

// UntrackedNow records the work tree's untracked files.
func UntrackedNow(ctx context.Context, root string) Untracked {
	out := Untracked{}
	kept := 0
	for _, name := range untrackedNames(ctx, root) {
		if len(out) == maxUntracked {
			return Untracked{untrackedMany: ""}
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		v := fileStamp(p)
		if data, err := readSmall(p, min(maxUntrackedText, maxUntrackedAll-kept)); err == nil && bytes.IndexByte(data, 0) < 0 {
			v += "\n" + string(data)
			kept += len(data)
		}
		out[name] = v
	}
	return out
}

func untrackedNames(ctx context.Context, root string) []string {
	list, err := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil || list == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(list, "\x00"), "\x00")
}

func fileStamp(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// DiffSince is the work since ref: commits and uncommitted changes to
// tracked files (git diff), then the untracked, unignored text files as
// added lines: all of a file that is new since base, and the lines of a
// file base recorded that it did not hold (an agent's new files are work
// too, and git diff never shows them), capped at maxDiff bytes in all.
func DiffSince(ctx context.Context, root, ref string, base Untracked) string {
	return startDiff(ctx, root, ref, base)()
}

// startDiff starts DiffSince's git processes and returns what waits for
// them and reads the work: a hook starts them before it warms the index, so
// that git's two processes are forked and running before the warm-up's
// goroutines take the CPU (on two cores they compete for it).
func startDiff(ctx context.Context, root, ref string, base Untracked) func() string {
	if root == "" || ref == "" {
		return func() string { return "" }
	}
	// git diff-index, the plumbing under git diff, with git diff's rename
	// detection: git diff itself takes index.lock to refresh the index
	// when a file's content matches ref but its stat data there is stale
	// (uncommitted changes from before the session, which ref holds), and
	// rewrites the index when that refresh finds a file rewritten
	// unchanged (git ignores GIT_OPTIONAL_LOCKS there); a hook must not
	// lock the user's index nor change it. The plumbing also runs no
	// textconv program of the user's. It starts first: it is the longer of
	// the two.
	diff := make(chan string, 1)
	go func() {
		out, _ := git(ctx, root, "diff-index", "-p", "-M", "--no-color", "--no-ext-diff", ref)
		diff <- out
	}()
	// The untracked files are listed while git diff runs: a hook pays for
	// one git process's time, not two.
	_, many := base[untrackedMany]
	names := make(chan []string, 1)
	if !many {
		go func() { names <- untrackedNames(ctx, root) }()
	}
	return func() string {
		out := <-diff
		if many {
			return out
		}
		return withUntracked(root, out, <-names, base)
	}
}

// withUntracked is the diff out followed by the untracked files' lines
// (untracked: their names) that base did not hold, capped at maxDiff.
func withUntracked(root, out string, untracked []string, base Untracked) string {
	if len(out) >= maxDiff {
		return out
	}
	var b strings.Builder
	b.WriteString(out)
	for _, name := range untracked {
		if b.Len() >= maxDiff {
			break
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		var had map[string]bool // the lines the file held before
		if v, ok := base[name]; ok {
			stamp, text, kept := strings.Cut(v, "\n")
			if stamp == fileStamp(p) || !kept {
				continue // there before: unchanged, or its old lines unknown
			}
			had = map[string]bool{}
			for _, line := range strings.Split(text, "\n") {
				had[line] = true
			}
		}
		data, err := readSmall(p, maxDiff-b.Len())
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue // unreadable, too large or binary
		}
		from := "/dev/null"
		if had != nil {
			from = "a/" + name
		}
		var added []string
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" && !had[line] {
				added = append(added, line)
			}
		}
		// One hunk of the lines the file gained, so that a reader counts
		// them off its header (eachDiffLine): a line that reads "++ x" is
		// text, not a file's name.
		fmt.Fprintf(&b, "--- %s\n+++ b/%s\n@@ -0,0 +1,%d @@\n", from, name, len(added))
		for _, line := range added {
			b.WriteString("+" + line + "\n")
		}
	}
	s := b.String()
	if len(s) > maxDiff {
		s = s[:maxDiff]
	}
	return s
}

// readSmall reads a regular file of at most n bytes; an error for anything
// else (a file that grew past n while read included).
func readSmall(path string, n int) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > int64(n) {
		return nil, os.ErrInvalid
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(n)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > n {
		return nil, os.ErrInvalid
	}
	return data, nil
}
