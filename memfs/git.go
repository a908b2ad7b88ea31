package memfs

// git.go is the only file that imports go-git. It keeps to plumbing: blobs,
// trees and commits are written as objects, refs are moved by
// compare-and-swap under git's own lock-file protocol, and the index is
// rewritten only for the paths borg committed. Nothing here calls the
// worktree's Status (slow on large trees, and never needed: borg knows which
// files it wrote).

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
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// defaultBranch is the branch a new store starts on.
const defaultBranch = "refs/heads/main"

// lockWait bounds how long borg waits for another process's git lock.
const lockWait = 10 * time.Second

// FileChange is one file a plumbing commit writes or deletes. Path is a
// slash-separated path relative to the store's root.
type FileChange struct {
	Path   string
	Data   []byte
	Delete bool
}

// gitRepo wraps the go-git repository of a store.
type gitRepo struct {
	r      *git.Repository
	gitDir string
}

func openGit(dir string) (*gitRepo, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	return wrapGit(r)
}

func initGit(dir string) (*gitRepo, error) {
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: defaultBranch},
	})
	if err != nil {
		return nil, err
	}
	return wrapGit(r)
}

// cloneGit clones remote into dir. An empty remote (nothing pushed yet) is
// not an error: the store is created fresh with the remote as origin.
func cloneGit(ctx context.Context, dir, remote string) (*gitRepo, error) {
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: remote})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		_ = os.RemoveAll(filepath.Join(dir, ".git"))
		g, err := initGit(dir)
		if err != nil {
			return nil, err
		}
		if _, err := g.r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remote}}); err != nil {
			return nil, err
		}
		return g, nil
	}
	if err != nil {
		return nil, err
	}
	return wrapGit(r)
}

func wrapGit(r *git.Repository) (*gitRepo, error) {
	fs, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return nil, errors.New("store repository is not on disk")
	}
	return &gitRepo{r: r, gitDir: fs.Filesystem().Root()}, nil
}

// hasCommits reports whether HEAD points at a commit.
func (g *gitRepo) hasCommits() bool {
	_, err := g.r.Head()
	return err == nil
}

// headBranch is the branch HEAD names (refs/heads/main on a new store).
func (g *gitRepo) headBranch() (plumbing.ReferenceName, error) {
	ref, err := g.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", errors.New("HEAD is detached; check out a branch in the store")
	}
	return ref.Target(), nil
}

// refHash is the commit a ref names, or the zero hash when it does not exist.
func (g *gitRepo) refHash(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := g.r.Reference(name, true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// ResolveRef returns the commit hash (40 hex) that a ref or revision names:
// "HEAD", "main", "refs/heads/borg/sleep/2026-11-30", a hash. It returns an
// error wrapping ErrNotFound when nothing has that name.
func (s *Store) ResolveRef(name string) (string, error) {
	h, err := s.git.r.ResolveRevision(plumbing.Revision(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", fmt.Errorf("resolve %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", name, err)
	}
	return h.String(), nil
}

// treeAt is the root tree of the commit rev names.
func (s *Store) treeAt(rev string) (*object.Tree, error) {
	h, err := s.ResolveRef(rev)
	if err != nil {
		return nil, err
	}
	c, err := s.git.r.CommitObject(plumbing.NewHash(h))
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c.Tree()
}

// ReadFileAt returns the bytes of path (slash-separated, from the store's
// root) in the commit rev names, without touching the worktree. It returns an
// error wrapping ErrNotFound when the file is not in that commit.
func (s *Store) ReadFileAt(rev, p string) ([]byte, error) {
	t, err := s.treeAt(rev)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
	}
	f, err := t.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, rev, err)
	}
	defer func() { _ = rd.Close() }()
	return io.ReadAll(rd)
}

// ListAt returns the files directly inside dir (slash-separated, "" for the
// root) in the commit rev names, as sorted slash paths from the store's root
// ("lessons/a.html"). A missing directory lists nothing.
func (s *Store) ListAt(rev, dir string) ([]string, error) {
	t, err := s.treeAt(rev)
	if err != nil {
		return nil, fmt.Errorf("list %s at %s: %w", dir, rev, err)
	}
	dir = strings.Trim(dir, "/")
	if dir != "" {
		t, err = t.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s at %s: %w", dir, rev, err)
		}
	}
	var out []string
	for _, e := range t.Entries {
		if e.Mode.IsFile() {
			out = append(out, path.Join(dir, e.Name))
		}
	}
	sort.Strings(out)
	return out, nil
}

// File is one file read from a commit.
type File struct {
	Path string // slash path from the store's root
	Data []byte
}

// ReadDirAt returns every file directly inside dir in the commit rev names,
// with its bytes, sorted by path, resolving the commit and the tree once
// (ReadFileAt per file would walk them again for each). A missing directory
// reads as nothing.
func (s *Store) ReadDirAt(rev, dir string) ([]File, error) {
	t, err := s.treeAt(rev)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
	}
	dir = strings.Trim(dir, "/")
	if dir != "" {
		t, err = t.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
		}
	}
	var out []File
	for _, e := range t.Entries {
		if !e.Mode.IsFile() {
			continue
		}
		blob, err := s.git.r.BlobObject(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", path.Join(dir, e.Name), rev, err)
		}
		rd, err := blob.Reader()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rd)
		_ = rd.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join(dir, e.Name), Data: data})
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
	h, err := s.commitOnRef(name, hashOf(expectedOld), hashOf(parent), changes, msg, when)
	if err != nil {
		return "", fmt.Errorf("commit on %s: %w", name, err)
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
	var base *object.Tree
	var parents []plumbing.Hash
	if !parent.IsZero() {
		pc, err := s.git.r.CommitObject(parent)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read parent %s: %w", parent, err)
		}
		if base, err = pc.Tree(); err != nil {
			return plumbing.ZeroHash, err
		}
		parents = []plumbing.Hash{parent}
	}
	treeHash, _, err := s.git.writeTree(base, changes)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if base != nil && treeHash == base.Hash {
		return plumbing.ZeroHash, ErrNoChanges
	}
	author, committer := s.signatures(when)
	c := &object.Commit{
		Author: author, Committer: committer, Message: msg,
		TreeHash: treeHash, ParentHashes: parents,
	}
	obj := s.git.r.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := s.git.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write commit: %w", err)
	}
	if err := s.git.casRef(name, old, h); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

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

// writeTree writes base with changes applied (paths relative to this tree)
// and returns the tree's hash and its entry count. An emptied subtree is
// dropped, as git has no empty directories.
func (g *gitRepo) writeTree(base *object.Tree, changes []FileChange) (plumbing.Hash, int, error) {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	sub := map[string][]FileChange{}
	for _, c := range changes {
		head, rest, nested := strings.Cut(c.Path, "/")
		if nested {
			c.Path = rest
			sub[head] = append(sub[head], c)
			continue
		}
		if c.Delete {
			delete(entries, head)
			continue
		}
		h, err := g.writeBlob(c.Data)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		mode := filemode.Regular
		if old, ok := entries[head]; ok && old.Mode == filemode.Executable {
			mode = filemode.Executable
		}
		entries[head] = object.TreeEntry{Name: head, Mode: mode, Hash: h}
	}
	for name, cs := range sub {
		var subBase *object.Tree
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			t, err := g.r.TreeObject(e.Hash)
			if err != nil {
				return plumbing.ZeroHash, 0, fmt.Errorf("read tree %s: %w", name, err)
			}
			subBase = t
		}
		h, n, err := g.writeTree(subBase, cs)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		if n == 0 {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
	}
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	// git orders a tree's entries by name, a directory's name read with a
	// trailing slash.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	obj := g.r.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	h, err := g.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, 0, fmt.Errorf("write tree: %w", err)
	}
	return h, len(t.Entries), nil
}

func (g *gitRepo) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := g.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := g.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	return h, nil
}

// casRef moves ref from old to new under git's lock-file protocol
// (<ref>.lock created exclusively, written, renamed over the ref), the one
// the git CLI honours. go-git's own reference update truncates and rewrites
// the ref file in place, so a process killed between the two leaves an empty
// ref: that is why this is done by hand.
func (g *gitRepo) casRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	refPath := filepath.Join(g.gitDir, filepath.FromSlash(name.String()))
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return err
	}
	lock, err := createLock(refPath + ".lock")
	if err != nil {
		return err
	}
	defer lock.abort()
	cur, err := g.refHash(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, short(cur), short(old))
	}
	if _, err := lock.f.WriteString(new.String() + "\n"); err != nil {
		return err
	}
	return lock.commit(refPath)
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// lockFile is a git-style lock: path.lock created exclusively, renamed over
// path to commit, removed to abort.
type lockFile struct {
	path string
	f    *os.File
	done bool
}

// createLock creates path exclusively, waiting up to lockWait while another
// process holds it.
func createLock(p string) (*lockFile, error) {
	deadline := time.Now().Add(lockWait)
	delay := time.Millisecond
	for {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return &lockFile{path: p, f: f}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held by another process; if none is running, remove it", p)
		}
		time.Sleep(delay)
		delay = min(delay*2, 50*time.Millisecond)
	}
}

// commit syncs the lock's content and renames it over target.
func (l *lockFile) commit(target string) error {
	if err := l.f.Sync(); err != nil {
		return err
	}
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.path, target); err != nil {
		return err
	}
	l.done = true
	return syncDir(filepath.Dir(target))
}

// abort removes the lock unless it was committed.
func (l *lockFile) abort() {
	if l.done {
		return
	}
	_ = l.f.Close()
	_ = os.Remove(l.path)
	l.done = true
}

// Commit commits the given paths (slash-separated, from the store's root) as
// they are on disk, on the branch HEAD names: a path missing on disk is
// deleted. Only those paths are read, staged and written to the git index;
// the rest of the worktree is never scanned. It returns the new commit's
// hash, or the current one when the paths are already committed as they are.
func (s *Store) Commit(msg string, paths ...string) (string, error) {
	h, err := s.commit(msg, paths)
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	return h, nil
}

func (s *Store) commit(msg string, paths []string) (string, error) {
	// Holding index.lock serialises borg's commits with each other and
	// with the git CLI's, as git does.
	idxPath := filepath.Join(s.git.gitDir, "index")
	lock, err := createLock(idxPath + ".lock")
	if err != nil {
		return "", err
	}
	defer lock.abort()
	branch, err := s.git.headBranch()
	if err != nil {
		return "", err
	}
	cur, err := s.git.refHash(branch)
	if err != nil {
		return "", err
	}
	changes := make([]FileChange, 0, len(paths))
	infos := map[string]os.FileInfo{}
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return "", err
		}
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if errors.Is(err, os.ErrNotExist) {
			changes = append(changes, FileChange{Path: p, Delete: true})
			continue
		}
		if err != nil {
			return "", err
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file", p)
		}
		data, err := readForCommit(full, strings.HasPrefix(p, LogDir+"/"))
		if err != nil {
			return "", err
		}
		infos[p] = fi
		changes = append(changes, FileChange{Path: p, Data: data})
	}
	h, err := s.commitOnRef(branch, cur, cur, changes, msg, s.now())
	if errors.Is(err, ErrNoChanges) {
		h, err = cur, nil
	}
	if err != nil {
		return "", err
	}
	if err := s.stage(lock, idxPath, h, changes, infos); err != nil {
		return "", err
	}
	return h.String(), nil
}

// readForCommit reads a file to commit. A log file is read under its
// append lock, so a line being appended is never committed half-written.
func readForCommit(p string, isLog bool) ([]byte, error) {
	if !isLog {
		return os.ReadFile(p)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if err := flock(f); err != nil {
		return nil, err
	}
	defer func() { _ = funlock(f) }()
	return io.ReadAll(f)
}

// stage rewrites the git index so the committed paths match commit h: an
// entry per written file, none for a deleted one. Other entries are kept.
// The index is patched in place when it can be (patchIndex); otherwise it
// goes through go-git's decoder and encoder.
func (s *Store) stage(lock *lockFile, idxPath string, h plumbing.Hash, changes []FileChange, infos map[string]os.FileInfo) error {
	c, err := s.git.r.CommitObject(h)
	if err != nil {
		return err
	}
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	type staged struct {
		te *object.TreeEntry
		fi os.FileInfo
	}
	entries := map[string]staged{}
	var set []indexEntry
	var del []string
	for _, ch := range changes {
		if ch.Delete {
			del = append(del, ch.Path)
			continue
		}
		te, err := tree.FindEntry(ch.Path)
		if err != nil {
			return fmt.Errorf("find %s in commit: %w", ch.Path, err)
		}
		fi := infos[ch.Path]
		entries[ch.Path] = staged{te, fi}
		dev, ino, uid, gid := statIDs(fi)
		set = append(set, indexEntry{
			name: ch.Path, hash: te.Hash, mode: uint32(te.Mode), size: uint32(fi.Size()),
			mtime: fi.ModTime(), dev: dev, ino: ino, uid: uid, gid: gid,
		})
	}
	data, err := os.ReadFile(idxPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if patched, ok := patchIndex(data, set, del); ok {
		if _, err := lock.f.Write(patched); err != nil {
			return fmt.Errorf("write git index: %w", err)
		}
		return lock.commit(idxPath)
	}
	idx := &index.Index{Version: 2}
	if len(data) > 0 {
		if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
			return fmt.Errorf("read git index: %w", err)
		}
	}
	for _, ch := range changes {
		kept := idx.Entries[:0]
		for _, e := range idx.Entries {
			if e.Name != ch.Path {
				kept = append(kept, e)
			}
		}
		idx.Entries = kept
		st, ok := entries[ch.Path]
		if !ok {
			continue
		}
		dev, ino, uid, gid := statIDs(st.fi)
		idx.Entries = append(idx.Entries, &index.Entry{
			Name: ch.Path, Hash: st.te.Hash, Mode: st.te.Mode, Size: uint32(st.fi.Size()),
			ModifiedAt: st.fi.ModTime(), Dev: dev, Inode: ino, UID: uid, GID: gid,
		})
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	// The cache-tree extension would describe the old trees: drop it.
	idx.Cache = nil
	if err := index.NewEncoder(lock.f).Encode(idx); err != nil {
		return fmt.Errorf("write git index: %w", err)
	}
	return lock.commit(idxPath)
}

// signatures returns the author and committer for a commit at when: from
// GIT_AUTHOR_* / GIT_COMMITTER_*, else git config user.name and user.email,
// else borg <borg@localhost>.
func (s *Store) signatures(when time.Time) (author, committer object.Signature) {
	name, email := "borg", "borg@localhost"
	if cfg, err := s.git.r.ConfigScoped(config.GlobalScope); err == nil {
		if cfg.User.Name != "" {
			name = cfg.User.Name
		}
		if cfg.User.Email != "" {
			email = cfg.User.Email
		}
	}
	pick := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	author = object.Signature{
		Name:  pick(s.getenv("GIT_AUTHOR_NAME"), name),
		Email: pick(s.getenv("GIT_AUTHOR_EMAIL"), email),
		When:  when,
	}
	committer = object.Signature{
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
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		cfg, err := config.LoadConfig(config.GlobalScope)
		if err != nil {
			return ""
		}
		return cfg.User.Email
	}
	cfg, err := r.ConfigScoped(config.GlobalScope)
	if err != nil {
		return ""
	}
	return cfg.User.Email
}

// GitToplevel is the root of the git worktree that contains dir, or "" when
// dir is in none.
func GitToplevel(dir string) string {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return ""
	}
	wt, err := r.Worktree()
	if err != nil {
		return ""
	}
	return wt.Filesystem.Root()
}
