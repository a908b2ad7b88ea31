package memfs

// git.go is the store's git layer. With gitrepo.go, changes.go and
// attribfast.go it is one of the files that import go-git (its plumbing
// packages: gitrepo.go says why not the rest). borg reads
// objects with its own reader (the gitobj package), and what that one
// cannot read through git cat-file. borg writes blobs, trees and commits
// itself through gitobj (immutable and content-addressed), and leaves
// git's shared state to git: a ref moves with git update-ref
// (compare-and-swap, reflog), the index is written by git update-index
// for the paths borg committed, and git takes and removes its own locks
// (gitlock.go; docs/git.md). Nothing here calls the worktree's Status
// (slow on large trees, and never needed: borg knows which files it
// wrote).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/memfs/gitcli"
	"github.com/borg-memory/borg/memfs/gitobj"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// defaultBranch is the branch a new store starts on.
const defaultBranch = "refs/heads/main"

// FileChange is one file a plumbing commit writes or deletes. Path is a
// slash-separated path relative to the store's root.
type FileChange struct {
	Path   string
	Data   []byte
	Delete bool
}

// gitRepo is the repository of a store.
type gitRepo struct {
	dir string // the worktree
	// gitDir is the worktree's own git directory (HEAD, the index,
	// MERGE_HEAD); commonDir the repository's (objects, refs, config,
	// info). They differ only in a linked worktree (git worktree add),
	// whose gitDir is <commonDir>/worktrees/<name>.
	gitDir, commonDir string
	objs              *gitobj.Objects // read first, and written to
}

// openGit opens the repository of the worktree dir, after checking that
// borg can read and write its format.
func openGit(dir string) (*gitRepo, error) {
	dirs, err := gitcli.FindDirs(dir)
	if err != nil {
		return nil, err
	}
	gitDir, commonDir := dirs.Git, dirs.Common
	path := filepath.Join(commonDir, "config")
	cfg, err := gitcli.ReadConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the store's git config: %w", err)
	}
	if err := checkRepoFormat(cfg, path); err != nil {
		return nil, err
	}
	if err := checkRepo(dirs, cfg); err != nil {
		return nil, err
	}
	return &gitRepo{dir: dir, gitDir: gitDir, commonDir: commonDir, objs: gitobj.Open(filepath.Join(commonDir, "objects"))}, nil
}

// checkRepoFormat refuses a repository whose config (cfg, read from
// path) declares a format borg's object and ref code does not speak:
// SHA-256 object names, or refs in a reftable. It names the format, before
// anything is written.
func checkRepoFormat(cfg *gitcli.Config, path string) error {
	for _, c := range []struct{ key, ok string }{{"objectFormat", "sha1"}, {"refStorage", "files"}} {
		if v, _ := cfg.Get("extensions", "", c.key); v != "" && !strings.EqualFold(v, c.ok) {
			return fmt.Errorf("%w: the repository has extensions.%s=%s, and borg reads and writes only %s repositories (%s); make the store a new repository with git's defaults (borg init in an empty directory) and push the lessons into it", ErrUnsupportedRepo, c.key, v, c.ok, path)
		}
	}
	return nil
}

func initGit(ctx context.Context, dir string) (*gitRepo, error) {
	if _, err := storeGit(dir).Run(ctx, nil, "init", "-q", "--initial-branch="+plumbing.ReferenceName(defaultBranch).Short()); err != nil {
		return nil, err
	}
	return openGit(dir)
}

// storeGit is the runner for git in dir before a Store exists (init and
// clone): isolated and without prompts.
func storeGit(dir string) Git {
	return Git{Dir: dir, Isolate: true, Env: []string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}}
}

// cloneGit clones remote into dir with the git CLI, as sync talks to the
// remote (the user's credential helpers, ssh configuration, proxies and
// url rewrites apply). An empty remote (nothing pushed yet) is not an
// error: the store is created fresh with the remote as origin. The branch
// checked out is the one the remote's HEAD names when it exists;
// otherwise (a bare repository made by plain `git init --bare` names
// master while the team pushed main) main, master, or the remote's only
// branch.
func cloneGit(ctx context.Context, dir, remote string) (*gitRepo, error) {
	branch, err := remoteBranch(ctx, remote)
	if errors.Is(err, errEmptyRemote) {
		return initWithOrigin(ctx, dir, remote)
	}
	if err != nil {
		return nil, err
	}
	// The files are checked out once the store's own attributes are in
	// place (StoreAttributes): a .gitattributes in the remote's tree never
	// changes how they are written.
	if _, err := storeGit("").Run(ctx, nil, "clone", "-q", "--no-checkout", "--origin", "origin", "--branch", branch.Short(), "--", remote, dir); err != nil {
		return nil, err
	}
	if err := writeStoreAttributes(filepath.Join(dir, ".git")); err != nil {
		return nil, err
	}
	if _, err := storeGit(dir).Run(ctx, nil, "reset", "-q", "--hard", "HEAD"); err != nil {
		return nil, err
	}
	return openGit(dir)
}

// cloneFix is what to do about a clone of remote that failed with err, as
// a clause to append to the error ("" when git's message says it all): a
// refused clone says it was refused and how to check access, a local
// repository another user owns says how git lets it be read, and a full
// disk says so.
func cloneFix(remote string, err error) string {
	var ge *GitError
	if !errors.As(err, &ge) {
		return ""
	}
	switch st := ge.Stderr; {
	case strings.Contains(st, "dubious ownership"):
		return fmt.Sprintf(" (git refuses a repository another user owns: ask its owner to share it, or trust it with git config --global --add safe.directory %s)", remote)
	case strings.Contains(st, "No space left on device"), strings.Contains(st, "Disk quota exceeded"):
		return " (the disk is full: free space and run borg init again)"
	case strings.Contains(st, "Could not read from remote repository"), strings.Contains(st, "Authentication failed"),
		strings.Contains(st, "Permission denied"), strings.Contains(st, "not found"), strings.Contains(st, "terminal prompts disabled"),
		strings.Contains(st, "does not appear to be a git repository"), strings.Contains(st, "returned error: 403"):
		return fmt.Sprintf(" (the remote refused the clone or does not exist: check the URL and your access with git ls-remote %s, then run borg init again)", remote)
	}
	return ""
}

// errEmptyRemote: the remote has no branch.
var errEmptyRemote = errors.New("the remote has no branch")

// initWithOrigin creates a fresh store repository whose origin is remote.
func initWithOrigin(ctx context.Context, dir, remote string) (*gitRepo, error) {
	g, err := initGit(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := storeGit(dir).Run(ctx, nil, "remote", "add", "origin", remote); err != nil {
		return nil, err
	}
	return g, nil
}

// remoteBranch picks the branch to clone from the remote's advertised refs
// (git ls-remote; see cloneGit); it returns errEmptyRemote when the remote
// has no branch at all.
func remoteBranch(ctx context.Context, remote string) (plumbing.ReferenceName, error) {
	out, err := storeGit("").Run(ctx, nil, "ls-remote", "--symref", "--", remote, "HEAD", "refs/heads/*")
	if err != nil {
		return "", err
	}
	return pickBranch(parseLsRemote(out))
}

// parseLsRemote reads git ls-remote --symref's lines ("<id>\t<ref>", and
// "ref: <target>\tHEAD" for a symbolic HEAD).
func parseLsRemote(out []byte) []*plumbing.Reference {
	var refs []*plumbing.Reference
	for _, line := range strings.Split(string(out), "\n") {
		val, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if target, sym := strings.CutPrefix(val, "ref: "); sym {
			refs = append(refs, plumbing.NewSymbolicReference(plumbing.ReferenceName(name), plumbing.ReferenceName(target)))
			continue
		}
		refs = append(refs, plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(val)))
	}
	return refs
}

// pickBranch is remoteBranch's choice among refs.
func pickBranch(refs []*plumbing.Reference) (plumbing.ReferenceName, error) {
	branches := map[plumbing.ReferenceName]bool{}
	var head plumbing.ReferenceName
	for _, ref := range refs {
		switch {
		case ref.Name() == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference:
			head = ref.Target()
		case ref.Name().IsBranch():
			branches[ref.Name()] = true
		}
	}
	if len(branches) == 0 {
		return "", errEmptyRemote
	}
	for _, b := range []plumbing.ReferenceName{head, plumbing.NewBranchReferenceName("main"), plumbing.NewBranchReferenceName("master")} {
		if b != "" && branches[b] {
			return b, nil
		}
	}
	// Sleep branches (borg/sleep/<date>) are reviews, not the store.
	var names []string
	for b := range branches {
		if !strings.HasPrefix(b.Short(), "borg/") {
			names = append(names, b.Short())
		}
	}
	if len(names) == 1 {
		return plumbing.NewBranchReferenceName(names[0]), nil
	}
	sort.Strings(names)
	what := "no existing branch"
	if head != "" {
		what = head.Short() + ", which does not exist"
	}
	return "", fmt.Errorf("the remote's HEAD names %s, and it has no main or master branch but %d others (%s): set its HEAD to the store's branch (git symbolic-ref HEAD refs/heads/NAME in the remote)", what, len(names), strings.Join(names, ", "))
}

// dirs are the repository's git directories, for gitcli's ref reader.
func (g *gitRepo) dirs() gitcli.Dirs { return gitcli.Dirs{Git: g.gitDir, Common: g.commonDir} }

// hasCommits reports whether HEAD points at a commit.
func (g *gitRepo) hasCommits() bool {
	_, err := g.dirs().ReadRef("HEAD")
	return err == nil
}

// headBranch is the branch HEAD names (refs/heads/main on a new store).
func (g *gitRepo) headBranch() (plumbing.ReferenceName, error) {
	target, err := g.dirs().SymbolicTarget("HEAD")
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if target == "" {
		return "", errors.New("HEAD is detached; check out a branch in the store")
	}
	return plumbing.ReferenceName(target), nil
}

// refHash is the commit a ref names, or the zero hash when it does not exist.
func (g *gitRepo) refHash(name plumbing.ReferenceName) (plumbing.Hash, error) {
	h, err := g.dirs().ReadRef(name.String())
	if errors.Is(err, gitcli.ErrNoRef) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(h), nil
}

// ResolveRef returns the commit hash (40 hex) that a ref or revision names:
// "HEAD", "main", "refs/heads/borg/sleep/2026-11-30", a hash. It returns an
// error wrapping ErrNotFound when nothing has that name.
func (s *Store) ResolveRef(name string) (string, error) {
	if name == "HEAD" || (strings.HasPrefix(name, "refs/") && !strings.ContainsAny(name, "~^:?*[\\ @{")) {
		// A ref by its full name: read from git's files.
		h, err := s.git.dirs().ReadRef(name)
		if errors.Is(err, gitcli.ErrNoRef) {
			return "", fmt.Errorf("resolve %s: %w", name, ErrNotFound)
		}
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", name, err)
		}
		return h, nil
	}
	// A branch name, a hash or any other revision git accepts.
	h, err := s.resolveRevision(name)
	if errors.Is(err, ErrNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", fmt.Errorf("resolve %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", name, err)
	}
	return h.String(), nil
}

// ReadFileAt returns the bytes of path (slash-separated, from the store's
// root) in the commit rev names, without touching the worktree. It returns an
// error wrapping ErrNotFound when the file is not in that commit.
func (s *Store) ReadFileAt(rev, p string) ([]byte, error) {
	dir, name := path.Split(p)
	if name == "" || strings.Contains(p, "//") || strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, ErrNotFound)
	}
	raw, _, err := s.rawDirAt(rev, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
	}
	for i := 0; i < len(raw); {
		e, err := gitobj.NextTreeEntry(raw, i)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
		}
		i = e.End
		if string(e.Name) != name {
			continue
		}
		if !isFileMode(e.Mode) {
			break // a directory or a submodule
		}
		data, err := s.git.readObject(gitobj.Blob, e.ID)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("read %s at %s: %w", p, rev, ErrNotFound)
}

// rawDirAt returns the raw tree of directory dir (slash-separated, "" for
// the root) of the commit rev names, walking only the trees on its path,
// and dir trimmed of slashes. A missing directory is a nil tree and a nil
// error.
func (s *Store) rawDirAt(rev, dir string) ([]byte, string, error) {
	dir = strings.Trim(dir, "/")
	h, err := s.ResolveRef(rev)
	if err != nil {
		return nil, dir, err
	}
	tree, err := s.git.commitTree(plumbing.NewHash(h))
	if err != nil {
		return nil, dir, fmt.Errorf("read commit %s: %w", h, err)
	}
	raw, err := s.git.readObject(gitobj.Tree, tree)
	if err != nil || dir == "" {
		return raw, dir, err
	}
	for _, name := range strings.Split(dir, "/") {
		var sub []byte
		for i := 0; i < len(raw); {
			e, err := gitobj.NextTreeEntry(raw, i)
			if err != nil {
				return nil, dir, err
			}
			if e.IsDir() && string(e.Name) == name {
				if sub, err = s.git.readObject(gitobj.Tree, e.ID); err != nil {
					return nil, dir, err
				}
				break
			}
			i = e.End
		}
		if sub == nil {
			return nil, dir, nil // no such directory
		}
		raw = sub
	}
	return raw, dir, nil
}

// isFileMode reports whether a tree entry's mode is a file's (regular,
// executable, or a symlink), as go-git's FileMode.IsFile does.
func isFileMode(m uint32) bool {
	return filemode.FileMode(m).IsFile()
}

// listAt returns the files under dir (slash-separated, "" for the root),
// in its subdirectories too, in the commit rev names, as sorted slash paths
// from the store's root ("lessons/3f/a.html"). A missing directory lists
// nothing.
func (s *Store) listAt(rev, dir string) ([]string, error) {
	raw, dir, err := s.rawDirAt(rev, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s at %s: %w", dir, rev, err)
	}
	var out []string
	err = s.git.walkTree(raw, dir, func(p string, _ gitobj.TreeEntry) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s at %s: %w", dir, rev, err)
	}
	sort.Strings(out)
	return out, nil
}

// walkTree calls fn for each file of the tree raw (the tree of dir) and of
// its subtrees, depth first, with its slash path.
func (g *gitRepo) walkTree(raw []byte, dir string, fn func(p string, e gitobj.TreeEntry) error) error {
	for i := 0; i < len(raw); {
		e, err := gitobj.NextTreeEntry(raw, i)
		if err != nil {
			return err
		}
		i = e.End
		p := path.Join(dir, string(e.Name))
		switch {
		case e.IsDir():
			sub, err := g.readObject(gitobj.Tree, e.ID)
			if err != nil {
				return fmt.Errorf("read tree %s: %w", p, err)
			}
			if err := g.walkTree(sub, p, fn); err != nil {
				return err
			}
		case isFileMode(e.Mode):
			if err := fn(p, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// File is one file read from a commit.
type File struct {
	Path string // slash path from the store's root
	Data []byte
}

// ReadDirAt returns every file under dir (its subdirectories too) in the
// commit rev names, with its bytes, sorted by path. It reads the commit and
// the trees on dir's path once and each tree below it in one pass, then
// each blob by its id (ReadFileAt per file would walk the trees again for
// each): sleep reads lessons/ at a revision with it. A missing directory
// reads as nothing.
func (s *Store) ReadDirAt(rev, dir string) ([]File, error) {
	raw, dir, err := s.rawDirAt(rev, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
	}
	g := s.git
	var out []File
	err = g.walkTree(raw, dir, func(p string, e gitobj.TreeEntry) error {
		data, err := g.readObject(gitobj.Blob, e.ID)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		out = append(out, File{Path: p, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// CommitOnRef writes changes as a commit whose parent is parent ("" for a
// root commit) and moves ref to it, without touching the worktree or the git
// index. The ref moves by compare-and-swap: if ref no longer names
// expectedOld ("" meaning the ref must not exist yet) it returns an error
// wrapping ErrRefMoved and the ref keeps its value. When the changes leave
// the parent's tree as it is, it writes nothing and returns ErrNoChanges.
// Commits carry the author from git config or GIT_AUTHOR_*, at time when.
func (s *Store) CommitOnRef(ref, expectedOld, parent string, changes []FileChange, msg string, when time.Time) (string, error) {
	name := plumbing.ReferenceName(ref)
	if !strings.HasPrefix(ref, "refs/") {
		name = plumbing.NewBranchReferenceName(ref)
	}
	if err := name.Validate(); err != nil {
		return "", fmt.Errorf("commit on %s: %w", name, err)
	}
	unlock, err := s.lockWrites()
	if err != nil {
		return "", fmt.Errorf("commit on %s: %w", name, err)
	}
	defer unlock()
	if err := s.writeJournal(journal{PID: os.Getpid(), StartMS: time.Now().UnixMilli(), Message: msg, Ref: name.String()}); err != nil {
		return "", fmt.Errorf("commit on %s: %w", name, err)
	}
	h, err := s.commitOnRef(name, hashOf(expectedOld), hashOf(parent), changes, msg, when)
	if err != nil {
		_ = s.removeJournal() // nothing to finish: the ref moved or it did not
		return "", fmt.Errorf("commit on %s: %w", name, err)
	}
	if err := s.removeJournal(); err != nil {
		return "", err
	}
	return h.String(), nil
}

func hashOf(s string) plumbing.Hash {
	if s == "" {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(s)
}

func (s *Store) commitOnRef(name plumbing.ReferenceName, old, parent plumbing.Hash, changes []FileChange, msg string, when time.Time) (plumbing.Hash, error) {
	if err := name.Validate(); err != nil {
		return plumbing.ZeroHash, err
	}
	for _, c := range changes {
		if err := checkRepoPath(c.Path); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	base := plumbing.ZeroHash
	var parents []plumbing.Hash
	if !parent.IsZero() {
		tree, err := s.git.commitTree(parent)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read parent %s: %w", parent, err)
		}
		base = tree
		parents = []plumbing.Hash{parent}
	}
	w := s.git.objs.NewWriter(s.git.readObject)
	tree, err := w.WriteTree(base, treeChanges(changes))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	treeHash := plumbing.Hash(tree)
	if !base.IsZero() && treeHash == base {
		return plumbing.ZeroHash, ErrNoChanges
	}
	author, committer := s.signatures(when)
	c := &gitCommit{Author: author, Committer: committer, Message: msg, Tree: treeHash, Parents: parents}
	var h plumbing.Hash
	if s.evidence().sign {
		// A signed commit is written by git, which signs it through the
		// user's own setup (evidence.go says why borg signs).
		if err := s.git.flush(w); err != nil {
			return plumbing.ZeroHash, err
		}
		if h, err = s.signedCommit(c); err != nil {
			return plumbing.ZeroHash, err
		}
	} else {
		h = w.Add(gitobj.Commit, c.encode())
		if err := s.git.flush(w); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := s.casRef(name, old, h, msg); err != nil {
		return plumbing.ZeroHash, err
	}
	s.recordChanges(name, parent, h, changes)
	return h, nil
}

// signedCommit has git write c, signed with the user's signing setup
// (user.signingKey, gpg.format), and returns its id. Its tree and parents
// must be written already.
func (s *Store) signedCommit(c *gitCommit) (plumbing.Hash, error) {
	args := []string{"commit-tree", "-S", c.Tree.String()}
	for _, p := range c.Parents {
		args = append(args, "-p", p.String())
	}
	date := func(t time.Time) string { return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700")) }
	g := Git{Dir: s.dir, Isolate: true, Env: []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=" + c.Author.Name, "GIT_AUTHOR_EMAIL=" + c.Author.Email, "GIT_AUTHOR_DATE=" + date(c.Author.When),
		"GIT_COMMITTER_NAME=" + c.Committer.Name, "GIT_COMMITTER_EMAIL=" + c.Committer.Email, "GIT_COMMITTER_DATE=" + date(c.Committer.When)}}
	// A signing program that waits for a passphrase nobody types would
	// hold the store's write lock for ever.
	ctx, cancel := context.WithTimeout(context.Background(), signTimeout)
	defer cancel()
	out, err := g.Run(ctx, strings.NewReader(c.Message), args...)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("sign the commit (borg.evidence is signed, or commit.gpgSign is on): %w; fix git's signing setup (user.signingKey, gpg.format; git commit -S must work in the store), or turn signing off for borg's commits: git config borg.evidence any and commit.gpgSign false", err)
	}
	id := strings.TrimSpace(string(out))
	if !isHash(id) {
		return plumbing.ZeroHash, fmt.Errorf("sign the commit: git commit-tree printed %q", id)
	}
	return plumbing.NewHash(id), nil
}

// signTimeout bounds a signing program (gpg, ssh-keygen) that waits for a
// passphrase or a card.
const signTimeout = 2 * time.Minute

// checkRepoPath refuses paths that would escape the store or write into
// git's or borg's private directories.
func checkRepoPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." ||
		strings.HasPrefix(p, "../") || p == ".." || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return fmt.Errorf("bad path %q", p)
	}
	first, _, _ := strings.Cut(p, "/")
	if strings.EqualFold(first, ".git") || first == ".borg" {
		return fmt.Errorf("bad path %q: inside .git or .borg", p)
	}
	return nil
}

// readObject returns the content of object h, of type t: borg's own
// reader (gitobj) reads it from its loose file or a pack; an object that
// reader cannot read is read through git (readStored).
func (g *gitRepo) readObject(t gitobj.Type, h [20]byte) ([]byte, error) {
	data, found, err := g.objs.Read(t, h)
	if err != nil || found {
		return data, err
	}
	return g.readStored(t, h)
}

// commitTree is the tree of commit h, read as readObject reads (go-git's
// CommitObject would load every pack's index to find a packed one).
func (g *gitRepo) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	raw, err := g.readObject(gitobj.Commit, h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	hexTree, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !IsObjectName(string(hexTree)) {
		return plumbing.ZeroHash, fmt.Errorf("commit %s has no tree line", h)
	}
	return plumbing.NewHash(string(hexTree)), nil
}

// readStored reads object h through git cat-file, for what gitobj leaves:
// an object of an alternate object directory, or of a pack whose index is
// of another version. An object that is missing, or is not a t, is
// plumbing.ErrObjectNotFound.
func (g *gitRepo) readStored(t gitobj.Type, h plumbing.Hash) ([]byte, error) {
	out, err := storeGit(g.dir).Run(context.Background(), strings.NewReader(h.String()+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h, err)
	}
	// "<id> <type> <size>\n<content>\n", or "<id> missing\n".
	head, data, _ := bytes.Cut(out, []byte("\n"))
	f := strings.Fields(string(head))
	if len(f) == 2 && f[1] == "missing" {
		return nil, plumbing.ErrObjectNotFound
	}
	n := -1
	if len(f) == 3 {
		n, _ = strconv.Atoi(f[2])
	}
	if n < 0 || n > len(data) {
		return nil, fmt.Errorf("read object %s: git cat-file printed %q", h, head)
	}
	if f[1] != t.String() {
		return nil, plumbing.ErrObjectNotFound
	}
	return data[:n], nil
}

// loosePath is where the loose object h lives.
func (g *gitRepo) loosePath(h plumbing.Hash) string { return g.objs.LoosePath(h) }

// blobHash is the object id of a blob with data, without writing it.
func (g *gitRepo) blobHash(data []byte) (plumbing.Hash, error) {
	return plumbing.Hash(gitobj.Hash(gitobj.Blob, data)), nil
}

// treeChanges are changes as gitobj writes them.
func treeChanges(changes []FileChange) []gitobj.Change {
	out := make([]gitobj.Change, len(changes))
	for i, c := range changes {
		out[i] = gitobj.Change(c)
	}
	return out
}

// flush writes the objects w holds (gitobj lists the packs again when it
// misses an object, so a new pack is read).
func (g *gitRepo) flush(w *gitobj.Writer) error {
	_, err := w.Flush()
	return err
}

// casRef moves ref from old to new (the zero hash: the ref must not exist)
// with git update-ref, which takes git's lock on the ref, compares, and
// writes the ref and its reflog (and HEAD's, when HEAD names the ref)
// whether the ref is loose or packed and from any worktree. msg is the
// commit's message; its subject goes into the reflog as git commit's does.
// The caller holds the write lock.
func (s *Store) casRef(name plumbing.ReferenceName, old, new plumbing.Hash, msg string) error {
	_, err := s.runGitWaiting(context.Background(), nil, "update-ref", "-m", "commit: "+subjectOf(msg), name.String(), new.String(), old.String())
	if err == nil {
		return nil
	}
	if cur, rerr := s.git.refHash(name); rerr == nil && cur != old {
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, short(cur), short(old))
	}
	return err
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// checkRefName refuses a ref name git would refuse.
func checkRefName(name string) error { return plumbing.ReferenceName(name).Validate() }

// ValidBranchName reports whether git accepts name as a branch's (git
// check-ref-format --branch): refs/heads/<name> is a valid ref name (no
// "..", no space, control character or any of ~^:?*[\, no component
// starting with "." or ending with ".lock", no "@{", no empty component),
// and name is not HEAD and does not start with "-" (git would read it as
// an option).
func ValidBranchName(name string) bool {
	return name != "" && name != "HEAD" && !strings.HasPrefix(name, "-") && checkRefName("refs/heads/"+name) == nil
}

// Commit commits the given paths (slash-separated, from the store's root) as
// they are on disk, on the branch HEAD names: a path missing on disk is
// deleted. Only those paths are read, staged and written to the git index;
// the rest of the worktree is never scanned. It returns the new commit's
// hash, or the current one when the paths are already committed as they are.
//
// It runs under the store's write discipline (writes.go): a kill at any
// point is finished by the next writer. To write the files and commit them
// as one step, use Update.
func (s *Store) Commit(msg string, paths ...string) (string, error) {
	return s.Update(msg, paths, nil)
}

// commit is Commit's work; the caller holds the write lock. The commit's
// objects are written first, then the branch moves (casRef), then the
// paths are staged (stage); the journal (writes.go) finishes a commit
// killed between.
func (s *Store) commit(msg string, paths []string) (string, error) {
	return s.commitStaging(msg, paths, nil)
}

// commitStaging is commit with the paths staged by early, a git
// update-index started before the paths were written (startEarlyStage), or
// by a git run now when early is nil or could not stage them.
func (s *Store) commitStaging(msg string, paths []string, early *earlyStage) (string, error) {
	ctx := context.Background()
	// A git command holding the index waits for it first, as git's own
	// commands would fail on it; the branch must not move under a
	// git commit that is writing its own. (An early stage began only with
	// the index free, and holds it itself.)
	if early == nil {
		if err := s.waitIndexLock(); err != nil {
			return "", err
		}
	}
	fail := func(err error) (string, error) {
		early.abort()
		return "", err
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return fail(err)
	}
	cur, err := s.git.refHash(branch)
	if err != nil {
		return fail(err)
	}
	changes := make([]FileChange, 0, len(paths))
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return fail(err)
		}
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if errors.Is(err, os.ErrNotExist) {
			changes = append(changes, FileChange{Path: p, Delete: true})
			continue
		}
		if err != nil {
			return fail(err)
		}
		if !fi.Mode().IsRegular() {
			return fail(fmt.Errorf("%s is not a regular file", p))
		}
		data, unlock, err := readForCommit(full, strings.HasPrefix(p, LogDir+"/"))
		if err != nil {
			return fail(err)
		}
		// A log file stays locked until it is staged, so git hashes
		// the bytes the commit holds.
		defer unlock()
		changes = append(changes, FileChange{Path: p, Data: data})
	}
	// borg writes the paths' blobs before git is handed the paths: git
	// then finds each and leaves it as borg wrote it (a log file over
	// gitobj.StoreRawAbove stored uncompressed, which attribution compares
	// in place, fastAdded); handed them first, git would race borg and
	// could write its own, compressed.
	blobs := s.git.objs.NewWriter(s.git.readObject)
	for _, c := range changes {
		if !c.Delete {
			blobs.Add(gitobj.Blob, c.Data)
		}
	}
	if err := s.git.flush(blobs); err != nil {
		return fail(err)
	}
	// git stages the paths while borg writes the commit and moves the
	// ref: the two git processes write different files (the index, the
	// ref and its log), and in a big store the index update is the longer
	// one (it reads the whole index).
	staged := make(chan error, 1)
	go func() {
		if early.finish(paths) == nil {
			staged <- nil
			return
		}
		// Not started, or it could not stage them (the index was held
		// when it began): a git run now stages them, waiting for the
		// index as a late stage does.
		staged <- s.stage(ctx, paths)
	}()
	h, err := s.commitOnRef(branch, cur, cur, changes, msg, s.now())
	serr := <-staged
	if errors.Is(err, ErrNoChanges) {
		h, err = cur, nil
	}
	if err != nil {
		if serr == nil {
			// The ref did not move: the index goes back to what HEAD
			// holds for the paths, so that a failed commit leaves nothing
			// staged for a user's own git commit to take (the journal's
			// next writer commits and stages them).
			s.unstage(ctx, paths)
		}
		return "", err
	}
	if serr != nil {
		// The commit is made: only git's index lags behind it.
		return h.String(), &StageError{Commit: h.String(), Err: serr}
	}
	return h.String(), nil
}

// StageError is a commit made whose paths git could not then stage: the
// branch holds them and git's index does not yet, until the next writer
// (whose recovery stages them) or `borg doctor --fix`.
type StageError struct {
	Commit string
	Err    error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("committed %.12s, but git's index was not updated: %v", e.Commit, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// unstage puts the index entries of paths back as HEAD holds them (none
// for a path HEAD lacks), through git; a failure is left to the journal's
// next writer, which stages them again.
func (s *Store) unstage(ctx context.Context, paths []string) {
	in := bytes.NewReader(nulList(paths))
	g := s.GitCLI()
	g.Env = append(g.Env, "GIT_LITERAL_PATHSPECS=1") // a path, not a pattern
	_, _ = g.Run(ctx, in, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul")
}

// readForCommit reads a file to commit. A log file is read under its
// append lock, so a line being appended is never committed half-written;
// the returned function releases it.
func readForCommit(p string, isLog bool) ([]byte, func(), error) {
	if !isLog {
		data, err := os.ReadFile(p)
		return data, func() {}, err
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := LockFile(f, -1); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	release := func() {
		_ = UnlockFile(f)
		_ = f.Close()
	}
	data, err := io.ReadAll(f)
	if err != nil {
		release()
		return nil, nil, err
	}
	return data, release, nil
}

// stage makes the git index hold paths as they are on disk, through git
// update-index: an entry with the file's blob and stat data for each path
// on disk, none for a path that is not. Under the write lock (and a log's
// append lock) the files hold what the commit holds, so the index matches
// HEAD for them, and git writes the index in the repository's own format
// and with its extensions (split index, untracked cache, fsmonitor).
func (s *Store) stage(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if _, err := s.runGitWaiting(ctx, nulList(paths), "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
		return fmt.Errorf("stage %s in the git index: %w", describePaths(paths), err)
	}
	return nil
}

// nulList is paths as git reads them with -z (nulPaths reads them back).
func nulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// describePaths names paths in an error: the first, and how many more.
func describePaths(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more path(s)", paths[0], len(paths)-1)
}

// IndexMismatch is a path where the git index disagrees with HEAD: Index
// or Head is the blob id there, "" when the path is absent from it.
type IndexMismatch struct {
	Path  string `json:"path"`
	Index string `json:"index"`
	Head  string `json:"head"`
}

// indexedDirs are the directories whose index entries must match HEAD.
var indexedDirs = []string{LessonsDir, ArchiveDir, LogDir}

func inIndexedDirs(p string) bool {
	for _, d := range indexedDirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// emptyTree is the id of git's empty tree, which every git knows.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// IndexMismatches compares the git index with HEAD's tree under lessons/,
// archive/ and log/, every entry (doctor's scan: git diff-index reads the
// whole index and tree, which no hook or commit does). A git commit made
// from an index that disagrees would commit the difference, deletions
// included. A conflicted path is a mismatch with neither blob named.
func (s *Store) IndexMismatches() ([]IndexMismatch, error) {
	base := emptyTree
	if s.git.hasCommits() {
		base = "HEAD"
	}
	args := append([]string{"--literal-pathspecs", "diff-index", "--cached", "--raw", "-z", "--no-renames", base, "--"}, indexedDirs...)
	out, err := s.runGit(context.Background(), nil, args...)
	var ge *GitError
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "dubious ownership") {
		// A store of another user's that git refuses to work in: no git
		// commit can be made from its index by this user either.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compare the git index with HEAD: %w", err)
	}
	var mis []IndexMismatch
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		// ":<mode> <mode> <HEAD's blob> <index's blob> <status>", then the path.
		f := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(f) < 5 {
			return nil, fmt.Errorf("compare the git index with HEAD: git diff-index printed %q", fields[i])
		}
		m := IndexMismatch{Path: fields[i+1], Head: f[2], Index: f[3]}
		if strings.Trim(m.Head, "0") == "" {
			m.Head = ""
		}
		if strings.Trim(m.Index, "0") == "" {
			m.Index = ""
		}
		mis = append(mis, m)
	}
	sort.Slice(mis, func(i, j int) bool { return mis[i].Path < mis[j].Path })
	return mis, nil
}

// ResetIndex makes the git index match HEAD for paths (under the write
// lock, after recovering a dead writer), through git reset: an entry with
// HEAD's blob for a path in HEAD, none for a path that is not, then the
// stat data of the files that hold HEAD's blob refreshed (git update-index
// --refresh). The worktree is not touched; a file on disk that differs
// from HEAD shows as modified, not staged.
func (s *Store) ResetIndex(paths []string) error {
	unlock, err := s.lockWrites()
	if err != nil {
		return fmt.Errorf("reset git index: %w", err)
	}
	defer unlock()
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return fmt.Errorf("reset git index: %w", err)
		}
		in.WriteString(p)
		in.WriteByte(0)
	}
	ctx := context.Background()
	if _, err := s.runGitWaiting(ctx, in.Bytes(), "--literal-pathspecs", "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return fmt.Errorf("reset git index: %w", err)
	}
	// -q: a file that differs from HEAD is left as it is, not an error.
	if _, err := s.runGitWaiting(ctx, nil, "update-index", "-q", "--refresh"); err != nil {
		var ge *GitError
		if !errors.As(err, &ge) || strings.TrimSpace(ge.Stderr) != "" {
			return fmt.Errorf("reset git index: %w", err)
		}
	}
	return nil
}

// signatures returns the author and committer for a commit at when: from
// GIT_AUTHOR_* / GIT_COMMITTER_*, else git config user.name and user.email,
// else borg <borg@localhost>.
func (s *Store) signatures(when time.Time) (author, committer signature) {
	name, email := "borg", "borg@localhost"
	cfg, err := gitcli.ReadConfigFile(filepath.Join(s.git.commonDir, "config"))
	if err == nil {
		n, e, err := gitUser(cfg)
		if err == nil && n != "" {
			name = n
		}
		if err == nil && e != "" {
			email = e
		}
	}
	// borg's events name the engineer BORG_ENGINEER says, and a log line
	// counts as its committer's (attribution): borg's own commits carry
	// that engineer too, unless git's identity is set in the environment.
	if eng := strings.TrimSpace(s.getenv("BORG_ENGINEER")); eng != "" {
		email = eng
	}
	pick := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	author = signature{
		Name:  pick(s.getenv("GIT_AUTHOR_NAME"), name),
		Email: pick(s.getenv("GIT_AUTHOR_EMAIL"), email),
		When:  when,
	}
	committer = signature{
		Name:  pick(s.getenv("GIT_COMMITTER_NAME"), name),
		Email: pick(s.getenv("GIT_COMMITTER_EMAIL"), email),
		When:  when,
	}
	return author, committer
}

// GitUserEmail is user.email from the git config of the repository that
// contains dir (its local config merged over the global one), or "" when
// there is none.
func GitUserEmail(dir string) string {
	// In a linked worktree, the repository's own config lives in the
	// common git directory. (include and includeIf are not followed, so
	// an email set only through them is not seen: set BORG_ENGINEER then.)
	var local *gitcli.Config
	r, err := findRepo(dir, true, true)
	if err == nil {
		local, err = repoConfig(r.Dirs)
	}
	if err != nil {
		local = nil // outside a repository that opens: the global config alone
	}
	_, email, err := gitUser(local)
	if err != nil {
		return ""
	}
	return email
}

// GitToplevel is the root of the git worktree that contains dir, or "" when
// dir is in none.
func GitToplevel(dir string) string {
	r, err := findRepo(dir, true, false)
	if err != nil {
		return ""
	}
	if _, err := repoConfig(r.Dirs); err != nil {
		return ""
	}
	return r.root
}

// RootCommitMS is the author time of the store's first commit (unix ms),
// 0 when unknown: no shared log line can honestly be older than the store.
func (s *Store) RootCommitMS() int64 {
	id, err := s.git.dirs().ReadRef("HEAD")
	if err != nil {
		return 0
	}
	h := plumbing.NewHash(id)
	for {
		c, err := s.git.readCommit(h)
		if err != nil {
			return 0
		}
		if len(c.Parents) == 0 {
			return c.Author.When.UnixMilli()
		}
		h = c.Parents[0]
	}
}
