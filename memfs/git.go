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

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
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
	packs  *packSet // read before go-git (gitpack.go); nil: go-git only
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
// not an error: the store is created fresh with the remote as origin. The
// branch checked out is the one the remote's HEAD names when it exists;
// otherwise (a bare repository made by plain `git init --bare` names master
// while the team pushed main) main, master, or the remote's only branch.
func cloneGit(ctx context.Context, dir, remote string) (*gitRepo, error) {
	branch, err := remoteBranch(ctx, remote)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return initWithOrigin(dir, remote)
	}
	if err != nil {
		return nil, err
	}
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: remote, ReferenceName: branch})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		_ = os.RemoveAll(filepath.Join(dir, ".git"))
		return initWithOrigin(dir, remote)
	}
	if err != nil {
		return nil, err
	}
	return wrapGit(r)
}

// initWithOrigin creates a fresh store repository whose origin is remote.
func initWithOrigin(dir, remote string) (*gitRepo, error) {
	g, err := initGit(dir)
	if err != nil {
		return nil, err
	}
	if _, err := g.r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remote}}); err != nil {
		return nil, err
	}
	return g, nil
}

// remoteBranch picks the branch to clone from the remote's advertised refs
// (see cloneGit); it returns transport.ErrEmptyRemoteRepository when the
// remote has no branch at all.
func remoteBranch(ctx context.Context, remote string) (plumbing.ReferenceName, error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{remote}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{})
	if err != nil {
		return "", err
	}
	return pickBranch(refs)
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
		return "", transport.ErrEmptyRemoteRepository
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

func wrapGit(r *git.Repository) (*gitRepo, error) {
	fs, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return nil, errors.New("store repository is not on disk")
	}
	root := fs.Filesystem().Root()
	return &gitRepo{r: r, gitDir: root, packs: newPackSet(root)}, nil
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
	raw, err := s.git.readObject(plumbing.TreeObject, tree)
	if err != nil || dir == "" {
		return raw, dir, err
	}
	for _, name := range strings.Split(dir, "/") {
		var sub []byte
		for i := 0; i < len(raw); {
			e, err := nextTreeEntry(raw, i)
			if err != nil {
				return nil, dir, err
			}
			if e.isDir() && string(e.name) == name {
				if sub, err = s.git.readObject(plumbing.TreeObject, e.id); err != nil {
					return nil, dir, err
				}
				break
			}
			i = e.end
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
	err = s.git.walkTree(raw, dir, func(p string, _ treeEntry) error {
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
func (g *gitRepo) walkTree(raw []byte, dir string, fn func(p string, e treeEntry) error) error {
	for i := 0; i < len(raw); {
		e, err := nextTreeEntry(raw, i)
		if err != nil {
			return err
		}
		i = e.end
		p := path.Join(dir, string(e.name))
		switch {
		case e.isDir():
			sub, err := g.readObject(plumbing.TreeObject, e.id)
			if err != nil {
				return fmt.Errorf("read tree %s: %w", p, err)
			}
			if err := g.walkTree(sub, p, fn); err != nil {
				return err
			}
		case isFileMode(e.mode):
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
	// A storage of its own that keeps the pack files open for the whole
	// directory: the store's reopens a pack for every object it reads
	// from it.
	st := filesystem.NewStorageWithOptions(osfs.New(s.git.gitDir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	defer func() { _ = st.Close() }()
	g := &gitRepo{r: &git.Repository{Storer: st}, gitDir: s.git.gitDir, packs: s.git.packs}
	var out []File
	err = g.walkTree(raw, dir, func(p string, e treeEntry) error {
		data, err := g.readObject(plumbing.BlobObject, plumbing.Hash(e.id))
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
	h, err := s.commitOnRef(name, hashOf(expectedOld), hashOf(parent), changes, msg, when, nil)
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

func (s *Store) commitOnRef(name plumbing.ReferenceName, old, parent plumbing.Hash, changes []FileChange, msg string, when time.Time, written map[string]object.TreeEntry) (plumbing.Hash, error) {
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
	w := newObjWriter(s.git)
	treeHash, _, err := s.git.writeTree(w, base, changes, "", written)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !base.IsZero() && treeHash == base {
		return plumbing.ZeroHash, ErrNoChanges
	}
	author, committer := s.signatures(when)
	c := &object.Commit{
		Author: author, Committer: committer, Message: msg,
		TreeHash: treeHash, ParentHashes: parents,
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h := w.add(objCommit, data)
	if err := w.flush(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := s.casRef(name, old, h); err != nil {
		return plumbing.ZeroHash, err
	}
	s.recordChanges(name, parent, h, changes)
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

// writeTree writes the tree base (zero hash: an empty tree) with changes
// applied (paths relative to this tree) through w and returns the tree's
// hash and its entry count. An emptied subtree is dropped, as git has no
// empty directories. Each file written is recorded in written under its
// full path (prefix is the path of this tree, "" at the root). It edits the
// tree's raw bytes, copying the entries it does not change as they are and
// allocating nothing per unchanged entry: lessons/ holds one entry per
// lesson, 100,000 in a large store, and a commit changes a few.
func (g *gitRepo) writeTree(w *objWriter, base plumbing.Hash, changes []FileChange, prefix string, written map[string]object.TreeEntry) (plumbing.Hash, int, error) {
	var raw []byte
	if !base.IsZero() {
		var err error
		if raw, err = g.readObject(plumbing.TreeObject, base); err != nil {
			return plumbing.ZeroHash, 0, fmt.Errorf("read tree %s: %w", prefix, err)
		}
	}
	// next holds the entries that change, by name: a new entry, or a
	// deletion (del); sub the changes inside each subdirectory.
	next := map[string]*treeChange{}
	sub := map[string][]FileChange{}
	for _, c := range changes {
		head, rest, nested := strings.Cut(c.Path, "/")
		ch := next[head]
		if ch == nil {
			ch = &treeChange{}
			next[head] = ch
		}
		if nested {
			c.Path = rest
			sub[head] = append(sub[head], c)
			continue
		}
		ch.file, ch.change = true, c
	}
	starts, err := scanTree(raw, next)
	if err != nil {
		return plumbing.ZeroHash, 0, fmt.Errorf("read tree %s: %w", prefix, err)
	}
	for name, ch := range next {
		if err := g.applyChange(w, name, ch, sub[name], prefix, written); err != nil {
			return plumbing.ZeroHash, 0, err
		}
	}
	out, n := mergeTree(raw, starts, next)
	return w.add(objTree, out), n, nil
}

// scanTree checks the tree raw, returns the offset of each of its entries
// and records in next the old entry of each changed name. It is the one
// pass over a tree of 100,000 entries a commit makes: each entry is found
// by its NUL and its mode checked in place, and only the few changed
// names are parsed whole.
func scanTree(raw []byte, next map[string]*treeChange) ([]int, error) {
	// An entry takes at least 28 bytes ("100644 x\x00" and its id); a
	// lesson's about 80.
	starts := make([]int, 0, len(raw)/64+1)
	names := make([]string, 0, len(next))
	for n := range next {
		names = append(names, n)
	}
	for i := 0; i < len(raw); {
		nul := bytes.IndexByte(raw[i:], 0)
		if nul < 0 || i+nul+21 > len(raw) {
			return nil, errors.New("corrupt tree")
		}
		head := raw[i : i+nul]
		sp := bytes.IndexByte(head, ' ')
		if sp < 0 {
			return nil, errors.New("corrupt tree")
		}
		for _, c := range head[:sp] {
			if c < '0' || c > '7' {
				return nil, errors.New("corrupt tree mode")
			}
		}
		name := head[sp+1:]
		var ch *treeChange
		if len(names) > 8 {
			ch = next[string(name)]
		} else {
			for _, n := range names {
				if len(n) == len(name) && n == string(name) {
					ch = next[n]
				}
			}
		}
		if ch != nil {
			e, err := nextTreeEntry(raw, i)
			if err != nil {
				return nil, err
			}
			ch.old, ch.hadOld = e, true
		}
		starts = append(starts, i)
		i += nul + 21
	}
	return starts, nil
}

// treeChange is what a commit does to one name of a tree: the old entry
// (hadOld) and the new one (mode, id), or del.
type treeChange struct {
	file   bool // change is a change of the file of this name
	change FileChange
	old    treeEntry
	hadOld bool
	del    bool
	mode   uint32
	id     [20]byte
}

// applyChange works out the new entry of name: a file's blob, or the
// subdirectory's tree written with its changes cs.
// A name with both (a directory emptied and a file written in its place,
// or back) is the file when the directory ends up empty.
func (g *gitRepo) applyChange(w *objWriter, name string, ch *treeChange, cs []FileChange, prefix string, written map[string]object.TreeEntry) error {
	if len(cs) > 0 {
		subBase := plumbing.ZeroHash
		if ch.hadOld && ch.old.isDir() {
			subBase = ch.old.id
		}
		h, n, err := g.writeTree(w, subBase, cs, prefix+name+"/", written)
		if err != nil {
			return err
		}
		if n > 0 {
			if ch.file && !ch.change.Delete {
				return fmt.Errorf("bad path %q: both a file and a directory", prefix+name)
			}
			ch.mode, ch.id = uint32(filemode.Dir), h
			return nil
		}
	}
	if !ch.file || ch.change.Delete {
		ch.del = true
		return nil
	}
	h := w.add(objBlob, ch.change.Data)
	mode := filemode.Regular
	if ch.hadOld && ch.old.mode == uint32(filemode.Executable) {
		mode = filemode.Executable
	}
	ch.mode, ch.id = uint32(mode), h
	if written != nil {
		written[prefix+name] = object.TreeEntry{Name: name, Mode: mode, Hash: h}
	}
	return nil
}

// mergeTree is the tree raw (its entries at starts, as scanTree found them)
// with the changes in next applied: the old entries in order, changed ones
// replaced or dropped, new ones inserted in git's order. It returns the new
// tree's content and entry count. The unchanged runs between edits are
// copied whole, and a new name's place is found by binary search, so its
// cost is a copy of the tree.
func mergeTree(raw []byte, starts []int, next map[string]*treeChange) ([]byte, int) {
	// An edit replaces raw[at:skip] (empty for an insertion) with emit.
	type edit struct {
		at, skip int
		insert   bool
		name     string
		dir      bool
		emit     []byte
	}
	var edits []edit
	n := len(starts)
	for name, ch := range next {
		dir := ch.mode == uint32(filemode.Dir)
		var entry []byte
		if !ch.del {
			entry = appendTreeEntry(nil, ch.mode, name, ch.id)
		}
		// A name that changes kind (a file becoming a directory or back)
		// changes its sort key: it is dropped where it was and added anew.
		moved := ch.hadOld && !ch.del && ch.old.isDir() != dir
		switch {
		case ch.hadOld && (ch.del || moved):
			edits = append(edits, edit{at: ch.old.start, skip: ch.old.end, name: name, dir: ch.old.isDir()})
			n--
		case ch.hadOld:
			edits = append(edits, edit{at: ch.old.start, skip: ch.old.end, name: name, dir: dir, emit: entry})
		}
		if !ch.del && (!ch.hadOld || moved) {
			// The first old entry that sorts after the new name.
			k := sort.Search(len(starts), func(i int) bool {
				e, _ := nextTreeEntry(raw, starts[i]) // scanTree checked it
				return compareTreeKeys(e.name, e.isDir(), []byte(name), dir) > 0
			})
			at := len(raw)
			if k < len(starts) {
				at = starts[k]
			}
			edits = append(edits, edit{at: at, skip: at, insert: true, name: name, dir: dir, emit: entry})
			n++
		}
	}
	sort.Slice(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.insert != b.insert {
			return a.insert // what goes before the entry at this offset
		}
		return compareTreeKeys([]byte(a.name), a.dir, []byte(b.name), b.dir) < 0
	})
	// The exact size, so the tree (5 MB at 100,000 lessons) is allocated
	// once and never grown.
	size, cur := len(raw), 0
	for _, e := range edits {
		size += len(e.emit) - (max(cur, e.skip) - max(cur, e.at))
		cur = max(cur, e.skip)
	}
	out := make([]byte, 0, size)
	cur = 0
	for _, e := range edits {
		out = append(out, raw[cur:e.at]...)
		out = append(out, e.emit...)
		cur = max(cur, e.skip)
	}
	return append(out, raw[cur:]...), n
}

// readObject returns the content of an object of type t: read from its
// loose file when it has one (borg wrote it: the common case, and large
// trees are stored uncompressed), else from a pack (gitpack.go), else
// through go-git (an object the pack reader cannot read).
func (g *gitRepo) readObject(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	if z, err := os.ReadFile(g.loosePath(h)); err == nil {
		data, err := readLooseBytes(z, packType(t))
		if err != nil {
			return nil, fmt.Errorf("read object %s: %w", h, err)
		}
		return data, nil
	}
	if g.packs != nil {
		typ, data, found, err := g.packs.read(h)
		switch {
		case err != nil:
			return nil, err
		case found && typ != packType(t):
			return nil, fmt.Errorf("read object %s: a %s, not a %s", h, objTypeName(typ), objTypeName(packType(t)))
		case found:
			return data, nil
		}
	}
	return g.readStored(t, h)
}

// commitTree is the tree of commit h, read as readObject reads (go-git's
// CommitObject would load every pack's index to find a packed one).
func (g *gitRepo) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	raw, err := g.readObject(plumbing.CommitObject, h)
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

// readStored reads an object through go-git, which looks in the packs'
// indexes (in memory) before the loose objects: the order for blobs, which
// are packed once fetched or gc'd.
func (g *gitRepo) readStored(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	obj, err := g.r.Storer.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rd.Close() }()
	return io.ReadAll(rd)
}

// loosePath is where the loose object h lives.
func (g *gitRepo) loosePath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(g.gitDir, "objects", s[:2], s[2:])
}

func packType(t plumbing.ObjectType) byte {
	switch t {
	case plumbing.CommitObject:
		return objCommit
	case plumbing.TreeObject:
		return objTree
	default:
		return objBlob
	}
}

// blobHash is the object id of a blob with data, without writing it.
func (g *gitRepo) blobHash(data []byte) (plumbing.Hash, error) {
	return plumbing.Hash(objectID(objBlob, data)), nil
}

// objWriter collects the objects of one commit and writes them at flush:
// as loose objects, or as one pack when there are many (a pack of
// thousands of lessons is one file to write instead of thousands).
type objWriter struct {
	g    *gitRepo
	objs []gitObject
	seen map[[20]byte]bool
}

func newObjWriter(g *gitRepo) *objWriter {
	return &objWriter{g: g, seen: map[[20]byte]bool{}}
}

// add queues an object and returns its id.
func (w *objWriter) add(t byte, data []byte) plumbing.Hash {
	id := objectID(t, data)
	if !w.seen[id] {
		w.seen[id] = true
		w.objs = append(w.objs, gitObject{typ: t, data: data, id: id})
	}
	return plumbing.Hash(id)
}

// flush writes the queued objects. Loose objects already present are
// left as they are.
func (w *objWriter) flush() error {
	if len(w.objs) >= packAtLeast {
		// Only the objects the store lacks: a commit that moves or
		// re-adds many files (doctor --fix's move into the buckets)
		// would otherwise pack every blob a second time.
		kept := w.objs[:0]
		for _, o := range w.objs {
			if _, err := os.Stat(w.g.loosePath(plumbing.Hash(o.id))); err == nil {
				continue
			}
			if w.g.packs != nil && w.g.packs.has(o.id) {
				continue
			}
			kept = append(kept, o)
		}
		w.objs = kept
	}
	if len(w.objs) >= packAtLeast {
		return w.writePack()
	}
	for _, o := range w.objs {
		p := w.g.loosePath(plumbing.Hash(o.id))
		if _, err := os.Stat(p); err == nil {
			continue
		}
		data, err := looseObject(o.typ, o.data)
		if err != nil {
			return fmt.Errorf("write %s %x: %w", objTypeName(o.typ), o.id, err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write %s %x: %w", objTypeName(o.typ), o.id, err)
		}
		// Unsynced, as go-git and git (by default) write loose objects:
		// the ref that makes them reachable moves after, synced.
		if err := WriteFileAtomic(p, data, 0o444, TempDir(filepath.Join(w.g.gitDir, "objects")), NoSync()); err != nil {
			return err
		}
	}
	w.objs = w.objs[:0]
	return nil
}

// writePack writes the queued objects as one pack and its index (the
// pack first: git uses a pack once its index is there), then has go-git
// reload its list of packs so this process reads them.
func (w *objWriter) writePack() error {
	pack, idx, sum, err := encodePack(w.objs)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	dir := filepath.Join(w.g.gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	base := filepath.Join(dir, fmt.Sprintf("pack-%x", sum))
	if err := WriteFileAtomic(base+".pack", pack, 0o444); err != nil {
		return err
	}
	if err := WriteFileAtomic(base+".idx", idx, 0o444); err != nil {
		return err
	}
	if fs, ok := w.g.r.Storer.(*filesystem.Storage); ok {
		fs.Reindex()
	}
	w.objs = w.objs[:0]
	return nil
}

// casRef moves ref from old to new under git's lock-file protocol
// (<ref>.lock created exclusively, the new value renamed over the ref), the
// one the git CLI honours; see gitlock.go for how a kill at any point is
// recovered. go-git's own reference update truncates and rewrites the ref
// file in place, so a process killed between the two leaves an empty ref:
// that is why this is done by hand. The caller holds the write lock.
func (s *Store) casRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	refPath := filepath.Join(s.git.gitDir, filepath.FromSlash(name.String()))
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return err
	}
	lock, err := s.createLock(refPath + ".lock")
	if err != nil {
		return err
	}
	defer lock.abort()
	cur, err := s.git.refHash(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, short(cur), short(old))
	}
	return lock.commit(refPath, []byte(new.String()+"\n"))
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// checkRefName refuses a ref name git would refuse.
func checkRefName(name string) error { return plumbing.ReferenceName(name).Validate() }

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

// commit is Commit's work; the caller holds the write lock.
func (s *Store) commit(msg string, paths []string) (string, error) {
	// Holding index.lock serialises borg's commits with the git CLI's,
	// as git does.
	idxPath := filepath.Join(s.git.gitDir, "index")
	lock, err := s.createLock(idxPath + ".lock")
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
	written := map[string]object.TreeEntry{}
	h, err := s.commitOnRef(branch, cur, cur, changes, msg, s.now(), written)
	if errors.Is(err, ErrNoChanges) {
		h, err = cur, nil
	}
	if err != nil {
		return "", err
	}
	if err := s.stage(lock, idxPath, written, changes, infos); err != nil {
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
	if err := LockFile(f, -1); err != nil {
		return nil, err
	}
	defer func() { _ = UnlockFile(f) }()
	return io.ReadAll(f)
}

// stage rewrites the git index so the committed paths match the commit: an
// entry per written file (its blob and mode in written), none for a deleted
// one. Other entries are kept.
// The index is patched in place when it can be (patchIndex); otherwise it
// goes through go-git's decoder and encoder.
func (s *Store) stage(lock *lockFile, idxPath string, written map[string]object.TreeEntry, changes []FileChange, infos map[string]os.FileInfo) error {
	var set []indexEntry
	var del []string
	for _, ch := range changes {
		if ch.Delete {
			del = append(del, ch.Path)
			continue
		}
		te, ok := written[ch.Path]
		if !ok {
			// Unchanged (no commit was needed): the blob is the file's.
			h, err := s.git.blobHash(ch.Data)
			if err != nil {
				return err
			}
			te = object.TreeEntry{Name: path.Base(ch.Path), Mode: filemode.Regular, Hash: h}
		}
		set = append(set, statEntry(ch.Path, te.Hash, te.Mode, infos[ch.Path]))
	}
	return writeIndex(lock, idxPath, set, del, s.splitIndexConfig())
}

// statEntry is the index entry of a file with this blob and mode, with the
// stat data of fi (nil: none, so git re-reads the file before trusting it).
func statEntry(name string, h plumbing.Hash, mode filemode.FileMode, fi os.FileInfo) indexEntry {
	e := indexEntry{name: name, hash: h, mode: uint32(mode), mtime: time.Unix(0, 0)}
	if fi != nil {
		e.dev, e.ino, e.uid, e.gid = statIDs(fi)
		e.size, e.mtime = uint32(fi.Size()), fi.ModTime()
	}
	return e
}

// writeIndex rewrites the git index with the entries set replaced or added
// and the paths del removed, under lock (index.lock). The index is patched
// in place when it can be (patchIndex); otherwise it goes through go-git's
// decoder and encoder. It is renamed in without fsync, as git writes it:
// it is about 10 MB at 100,000 lessons (an fsync of that costs 50-130 ms
// here), it is a cache of HEAD's tree for these paths, and the rename
// still makes a kill leave the old index or the new one.
//
// A split index (gitsplit.go) is patched as one: only its own small file is
// rewritten, until its changes outgrow the shared index, when a new shared
// index is written. A whole index of splitIndexAtLeast entries is split.
// split is core.splitIndex: 1 true, 0 false (borg then writes a whole
// index), -1 unset.
func writeIndex(lock *lockFile, idxPath string, set []indexEntry, del []string, split int) error {
	data, err := os.ReadFile(idxPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if link, ok := indexLink(data); ok && len(link) >= 20 {
		var base [20]byte
		copy(base[:], link)
		sp := sharedIndexPath(filepath.Dir(idxPath), base)
		// Mapped, not read: it is 10 MB at 100,000 lessons, and a shared
		// index is never written in place (a new one gets a new name).
		shared, unmap, err := mapFile(sp)
		if err != nil {
			return fmt.Errorf("read git index: its shared index: %w (%s)", err, splitIndexFix)
		}
		defer unmap()
		if split != 0 {
			if out, changed, ok := patchSplit(data, shared, set, del); ok {
				if changed <= max(reshareAtLeast, sharedCount(shared)/100) {
					// Freshened as git does, so no git expires it while
					// an index names it.
					now := time.Now()
					_ = os.Chtimes(sp, now, now)
					return commitIndex(lock, idxPath, out)
				}
				flat, err := flattenSplit(out, shared)
				if err != nil {
					return fmt.Errorf("read git index: %w (%s)", err, splitIndexFix)
				}
				return writeSplit(lock, idxPath, flat)
			}
		}
		if data, err = flattenSplit(data, shared); err != nil {
			return fmt.Errorf("read git index: %w (%s)", err, splitIndexFix)
		}
	}
	if patched, ok := patchIndex(data, set, del); ok {
		if split == 1 || split < 0 && sharedCount(patched) >= splitIndexAtLeast {
			return writeSplit(lock, idxPath, patched)
		}
		return commitIndex(lock, idxPath, patched)
	}
	idx := &index.Index{Version: 2}
	if len(data) > 0 {
		if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
			return fmt.Errorf("read git index: %w", err)
		}
	}
	drop := map[string]bool{}
	for _, p := range del {
		drop[p] = true
	}
	for _, e := range set {
		drop[e.name] = true
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for _, e := range set {
		idx.Entries = append(idx.Entries, &index.Entry{
			Name: e.name, Hash: e.hash, Mode: filemode.FileMode(e.mode), Size: e.size,
			ModifiedAt: e.mtime, Dev: e.dev, Inode: e.ino, UID: e.uid, GID: e.gid,
		})
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	// The cache-tree extension would describe the old trees: drop it.
	idx.Cache = nil
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return fmt.Errorf("write git index: %w", err)
	}
	return commitIndex(lock, idxPath, buf.Bytes())
}

// commitIndex renames data in as the git index (see writeIndex).
func commitIndex(lock *lockFile, idxPath string, data []byte) error {
	if err := lock.commit(idxPath, data, NoSync()); err != nil {
		return fmt.Errorf("write git index: %w", err)
	}
	return nil
}

// writeSplit writes flat, a whole index without extensions, as a shared
// index and the git index as a split index naming it.
func writeSplit(lock *lockFile, idxPath string, flat []byte) error {
	_, split, err := writeShared(filepath.Dir(idxPath), flat)
	if err != nil {
		return err
	}
	return commitIndex(lock, idxPath, split)
}

// splitIndexConfig is core.splitIndex: 1 true, 0 false, -1 unset (or a
// value git would not read as a boolean either).
func (s *Store) splitIndexConfig() int {
	cfg, err := s.git.r.Config()
	if err != nil || !cfg.Raw.Section("core").HasOption("splitIndex") {
		return -1
	}
	switch strings.ToLower(cfg.Raw.Section("core").Option("splitIndex")) {
	case "true", "yes", "on", "1", "":
		return 1
	case "false", "no", "off", "0":
		return 0
	}
	return -1
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

// IndexMismatches compares the git index with HEAD's tree under lessons/,
// archive/ and log/, every entry (doctor's scan: it reads the whole index
// and tree, which no hook or commit does). A git commit made from an index
// that disagrees would commit the difference, deletions included.
func (s *Store) IndexMismatches() ([]IndexMismatch, error) {
	head := map[string]plumbing.Hash{}
	if s.git.hasCommits() {
		t, err := s.treeAt("HEAD")
		if err != nil {
			return nil, err
		}
		for _, d := range indexedDirs {
			sub, err := t.Tree(d)
			if errors.Is(err, object.ErrDirectoryNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read %s at HEAD: %w", d, err)
			}
			err = sub.Files().ForEach(func(f *object.File) error {
				head[d+"/"+f.Name] = f.Hash
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("read %s at HEAD: %w", d, err)
			}
		}
	}
	// Read by hand: go-git's decoder cannot read a split index.
	data, err := readFlatIndex(filepath.Join(s.git.gitDir, "index"))
	if err != nil {
		return nil, fmt.Errorf("read git index: %w", err)
	}
	idx := &index.Index{Version: 2}
	if len(data) > 0 {
		if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
			return nil, fmt.Errorf("read git index: %w", err)
		}
	}
	var out []IndexMismatch
	seen := map[string]bool{}
	for _, e := range idx.Entries {
		if !inIndexedDirs(e.Name) {
			continue
		}
		seen[e.Name] = true
		h, ok := head[e.Name]
		switch {
		case !ok:
			out = append(out, IndexMismatch{Path: e.Name, Index: e.Hash.String()})
		case h != e.Hash || e.Stage != 0: // stage 0: not conflicted
			out = append(out, IndexMismatch{Path: e.Name, Index: e.Hash.String(), Head: h.String()})
		}
	}
	for p, h := range head {
		if !seen[p] {
			out = append(out, IndexMismatch{Path: p, Head: h.String()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ResetIndex makes the git index match HEAD for paths (under the write
// lock, after recovering a dead writer): an entry with HEAD's blob for a
// path in HEAD, none for a path that is not. The worktree is not touched;
// a file on disk that differs from HEAD shows as modified, not staged.
func (s *Store) ResetIndex(paths []string) error {
	unlock, err := s.lockWrites()
	if err != nil {
		return fmt.Errorf("reset git index: %w", err)
	}
	defer unlock()
	idxPath := filepath.Join(s.git.gitDir, "index")
	lock, err := s.createLock(idxPath + ".lock")
	if err != nil {
		return fmt.Errorf("reset git index: %w", err)
	}
	defer lock.abort()
	var t *object.Tree
	if s.git.hasCommits() {
		if t, err = s.treeAt("HEAD"); err != nil {
			return fmt.Errorf("reset git index: %w", err)
		}
	}
	var set []indexEntry
	var del []string
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return fmt.Errorf("reset git index: %w", err)
		}
		var te *object.TreeEntry
		if t != nil {
			if te, err = t.FindEntry(p); err != nil && !errors.Is(err, object.ErrEntryNotFound) && !errors.Is(err, object.ErrDirectoryNotFound) {
				return fmt.Errorf("reset git index: %w", err)
			}
		}
		if te == nil || !te.Mode.IsFile() {
			del = append(del, p)
			continue
		}
		// The file's stat data only when it holds HEAD's blob; otherwise
		// none, so git compares its content.
		var fi os.FileInfo
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		if data, err := os.ReadFile(full); err == nil {
			if h, _ := s.git.blobHash(data); h == te.Hash {
				fi, _ = os.Lstat(full)
			}
		}
		set = append(set, statEntry(p, te.Hash, te.Mode, fi))
	}
	if err := writeIndex(lock, idxPath, set, del, s.splitIndexConfig()); err != nil {
		return fmt.Errorf("reset git index: %w", err)
	}
	return nil
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
	// EnableDotGitCommonDir: in a linked worktree, the repository's own
	// config lives in the common git directory. (go-git does not follow
	// include/includeIf, so an email set only through them is not seen:
	// set BORG_ENGINEER then.)
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
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

// RootCommitMS is the author time of the store's first commit (unix ms),
// 0 when unknown: no shared log line can honestly be older than the store.
func (s *Store) RootCommitMS() int64 {
	h, err := s.git.r.Head()
	if err != nil {
		return 0
	}
	c, err := s.git.r.CommitObject(h.Hash())
	for err == nil && c.NumParents() > 0 {
		c, err = c.Parent(0)
	}
	if err != nil {
		return 0
	}
	return c.Author.When.UnixMilli()
}
