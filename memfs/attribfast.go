package memfs

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/borg-memory/borg/memfs/fsutil"
	"github.com/borg-memory/borg/memfs/gitobj"
)

// attribfast.go finds the lines a few new commits added to the log without
// git log -p. A log file only grows: a commit that appends to it has a blob
// that is its parent's blob followed by the new lines, and git's diff of
// the two (what gitAddedLines parses) is exactly those lines. Diffing two
// versions of a large log costs git a diff over both; checking that one is
// the prefix of the other costs one pass over the new blob, here, in
// process.
//
// The check: the parent's blob id is SHA-1("blob <n>\0" + its n bytes), so
// the new blob's first n bytes hashed under that header give the parent's
// id exactly when they are the parent's bytes (the parent blob is never
// read, only its size). Forging a match needs a SHA-1 collision between the
// parent blob and the new prefix under the same header, an identical-prefix
// attack whose crafted blocks git's and go-git's collision detection
// (sha1dc, sha1cd) reject when the parent blob is received or written: a
// forger cannot get such a parent into the repository. crypto/sha1 is used
// for the pass itself, as it is faster than sha1cd. When both
// blobs are loose objects in stored blocks (borg committed the file, and
// the commit before it), the first n bytes are compared with the parent's
// bytes instead, both files mapped, and nothing is hashed.
//
// Anything else goes to git log -p: a merge or a root commit, a chain of
// more than fastAttribMax commits or one that does not reach the last
// refresh, a file that is not a plain blob, a blob that is not a loose
// object (a packed one may be deltified: resolving it costs what git's diff
// does), or a new blob the old one is not a prefix of (a rewrite).

// fastAttribMax is the most commits the fast path walks, fastAttribBytes
// the most bytes of new lines it holds (git log -p streams them).
const (
	fastAttribMax   = 16
	fastAttribBytes = 64 << 20
)

// fastAttribUsed counts the refreshes the fast path served (tests).
var fastAttribUsed atomic.Int64

// attribSlowOnly makes every refresh ask git (tests compare the paths).
var attribSlowOnly = false

// errSlowPath: the fast path does not apply; ask git.
var errSlowPath = errors.New("attribution: not a plain append")

// fastAdded returns, as gitAddedLines(from..head) would pass them, the
// lines the commits after from up to head added to the log files; an
// error (errSlowPath, or one reading an object) when it cannot tell
// cheaply: ask git then.
func (s *Store) fastAdded(from, head string) ([]addedLine, error) {
	if !isHash(from) || !isHash(head) || s.git == nil {
		return nil, errSlowPath
	}
	var chain []chainCommit
	for at := plumbing.NewHash(head); at.String() != from; {
		if len(chain) == fastAttribMax {
			return nil, errSlowPath
		}
		c, err := s.git.readCommit(at)
		if err != nil || len(c.Parents) != 1 {
			return nil, errSlowPath
		}
		chain = append(chain, chainCommit{at, c})
		at = c.Parents[0]
	}
	var out []addedLine
	held := 0
	for i := len(chain) - 1; i >= 0; i-- {
		lines, err := s.commitAppends(chain[i])
		if err != nil {
			return nil, err
		}
		for _, a := range lines {
			if held += len(a.Line) + 1; held > fastAttribBytes {
				return nil, errSlowPath
			}
		}
		out = append(out, lines...)
	}
	return out, nil
}

// chainCommit is a commit of the chain fastAdded walks, and its id.
type chainCommit struct {
	id plumbing.Hash
	gitCommit
}

// treeEntry is an entry of a tree object.
type treeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// treeEntries is the entries of tree h, in the tree's order.
func (s *Store) treeEntries(h plumbing.Hash) ([]treeEntry, error) {
	raw, err := s.git.readObject(gitobj.Tree, h)
	if err != nil {
		return nil, err
	}
	var out []treeEntry
	for i := 0; i < len(raw); {
		e, err := gitobj.NextTreeEntry(raw, i)
		if err != nil {
			return nil, err
		}
		i = e.End
		out = append(out, treeEntry{Name: string(e.Name), Mode: filemode.FileMode(e.Mode), Hash: e.ID})
	}
	return out, nil
}

// logEntries is the log/ tree of a commit's tree: nil without one.
func (s *Store) logEntries(tree plumbing.Hash) (map[string]treeEntry, []treeEntry, error) {
	root, err := s.treeEntries(tree)
	if err != nil {
		return nil, nil, errSlowPath
	}
	for _, e := range root {
		if e.Name != LogDir {
			continue
		}
		if e.Mode != filemode.Dir {
			return nil, nil, errSlowPath
		}
		entries, err := s.treeEntries(e.Hash)
		if err != nil {
			return nil, nil, errSlowPath
		}
		m := make(map[string]treeEntry, len(entries))
		for _, te := range entries {
			m[te.Name] = te
		}
		return m, entries, nil
	}
	return nil, nil, nil
}

// commitAppends is the lines commit c added to log/*.jsonl against its
// one parent, when each changed file only grew.
func (s *Store) commitAppends(c chainCommit) ([]addedLine, error) {
	parent, err := s.git.readCommit(c.Parents[0])
	if err != nil {
		return nil, errSlowPath
	}
	if parent.Tree == c.Tree {
		return nil, nil
	}
	before, _, err := s.logEntries(parent.Tree)
	if err != nil {
		return nil, err
	}
	_, after, err := s.logEntries(c.Tree)
	if err != nil {
		return nil, err
	}
	var out []addedLine
	for _, e := range after {
		old, had := before[e.Name]
		if had && old.Hash == e.Hash && old.Mode == e.Mode {
			continue
		}
		if e.Mode == filemode.Dir || had && old.Mode != e.Mode && !(isBlobMode(old.Mode) && isBlobMode(e.Mode)) {
			return nil, errSlowPath // a subtree or a type change
		}
		if !isBlobMode(e.Mode) {
			return nil, errSlowPath
		}
		if !strings.HasSuffix(e.Name, ".jsonl") || had && old.Hash == e.Hash {
			continue // git diffs it, gitAddedLines skips its lines
		}
		var oldID plumbing.Hash
		var oldSize int64
		if had {
			n, found, err := s.git.objs.Size(old.Hash)
			if err != nil || !found {
				return nil, errSlowPath
			}
			oldSize = n
			oldID = old.Hash
		}
		tail, err := s.blobTail(e.Hash, oldID, oldSize)
		if err != nil {
			return nil, err
		}
		a := addedLine{Commit: c.id.String(), Email: c.Author.Email, MS: c.Author.When.Unix() * 1000, File: LogDir + "/" + e.Name}
		for len(tail) > 0 {
			line, rest, _ := bytes.Cut(tail, []byte{'\n'})
			a.Line, tail = line, rest
			out = append(out, a)
		}
	}
	return out, nil
}

func isBlobMode(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

// blobTail returns the bytes of the loose blob h past its first n, after
// checking that those n bytes are the blob oldID (n > 0) and end a line.
func (s *Store) blobTail(h, oldID plumbing.Hash, n int64) ([]byte, error) {
	if n > 0 {
		if tail, ok, err := s.storedTail(h, oldID, n); ok || err != nil {
			return tail, err
		}
	}
	z, unmap, err := fsutil.Map(s.git.loosePath(h))
	if err != nil {
		return nil, errSlowPath // packed: maybe a delta
	}
	defer unmap()
	r, err := gitobj.LooseContent(z)
	if err != nil {
		return nil, errSlowPath
	}
	br := bufio.NewReaderSize(r, 256<<10)
	hdr, err := br.ReadSlice(0)
	if err != nil || !bytes.HasPrefix(hdr, []byte("blob ")) {
		return nil, errSlowPath
	}
	if n > 0 {
		sum := sha1.New()
		sum.Write(gitobj.Header(gitobj.Blob, int(n)))
		sum.Write([]byte{0})
		if _, err := io.CopyN(sum, br, n-1); err != nil {
			return nil, errSlowPath // shorter: not an append
		}
		last, err := br.ReadByte()
		if err != nil || last != '\n' {
			return nil, errSlowPath // the old last line changed
		}
		sum.Write([]byte{last})
		if !bytes.Equal(sum.Sum(nil), oldID[:]) {
			return nil, errSlowPath // rewritten
		}
	}
	tail, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return tail, nil
}

// storedTail is blobTail when both blobs are loose objects in stored
// blocks (borg wrote them: a log file borg committed twice): the first n
// bytes are compared with the old blob's, mapped, which costs less than
// hashing them. ok is false when either is not such an object.
func (s *Store) storedTail(h, oldID plumbing.Hash, n int64) (tail []byte, ok bool, err error) {
	oldZ, unmapOld, err := fsutil.Map(s.git.loosePath(oldID))
	if err != nil {
		return nil, false, nil
	}
	defer unmapOld()
	newZ, unmapNew, err := fsutil.Map(s.git.loosePath(h))
	if err != nil {
		return nil, false, nil
	}
	defer unmapNew()
	oldC, oldStored := gitobj.StoredBlocks(oldZ)
	newC, newStored := gitobj.StoredBlocks(newZ)
	if !oldStored || !newStored {
		return nil, false, nil
	}
	if !skipHeader(&oldC, "blob "+strconv.FormatInt(n, 10)) || !skipHeader(&newC, "blob ") {
		return nil, true, errSlowPath
	}
	var last byte
	for left := n; left > 0; {
		if len(oldC) == 0 || len(newC) == 0 {
			return nil, true, errSlowPath // a size that lied, or shorter
		}
		k := min(int64(len(oldC[0])), int64(len(newC[0])), left)
		if !bytes.Equal(oldC[0][:k], newC[0][:k]) {
			return nil, true, errSlowPath // rewritten
		}
		last = oldC[0][k-1]
		oldC[0], newC[0], left = oldC[0][k:], newC[0][k:], left-k
		if len(oldC[0]) == 0 {
			oldC = oldC[1:]
		}
		if len(newC[0]) == 0 {
			newC = newC[1:]
		}
	}
	if last != '\n' || len(oldC) > 0 {
		return nil, true, errSlowPath
	}
	for _, c := range newC {
		tail = append(tail, c...)
	}
	return tail, true, nil
}

// skipHeader drops an object header ("blob <size>\0") from the front of
// blocks, checking that it starts with prefix (when prefix names the size:
// that it is that header).
func skipHeader(blocks *[][]byte, prefix string) bool {
	var hdr []byte
	for len(*blocks) > 0 && len(hdr) < 32 {
		b := (*blocks)[0]
		if i := bytes.IndexByte(b, 0); i >= 0 {
			hdr = append(hdr, b[:i]...)
			(*blocks)[0] = b[i+1:]
			if len((*blocks)[0]) == 0 {
				*blocks = (*blocks)[1:]
			}
			if strings.HasSuffix(prefix, " ") {
				return strings.HasPrefix(string(hdr), prefix)
			}
			return string(hdr) == prefix
		}
		hdr = append(hdr, b...)
		*blocks = (*blocks)[1:]
	}
	return false
}
