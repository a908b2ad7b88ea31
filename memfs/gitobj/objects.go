package gitobj

import (
	"bufio"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Objects is a repository's object directory (.git/objects; in a linked
// worktree, the common git directory's): its loose objects and its packs.
// It is safe for concurrent use.
type Objects struct {
	dir   string
	packs *packSet
}

// Open is the object directory dir (<git dir>/objects). Nothing is read
// until an object is: the packs are listed when first needed.
func Open(dir string) *Objects {
	return &Objects{dir: dir, packs: newPackSet(filepath.Join(dir, "pack"))}
}

// LoosePath is where the loose object id lives, whether or not it does.
func (o *Objects) LoosePath(id [20]byte) string {
	s := hex.EncodeToString(id[:])
	return filepath.Join(o.dir, s[:2], s[2:])
}

// Read returns the content of object id, of type t: read from its loose
// file when it has one (borg wrote it: the common case, and an object
// over StoreRawAbove is in stored blocks, read without inflating), else
// from a pack. found is false when neither holds it, or only a pack this
// package cannot read does (an index of another version), for the caller
// to read it another way; an object of another type is an error.
func (o *Objects) Read(t Type, id [20]byte) (data []byte, found bool, err error) {
	if z, err := os.ReadFile(o.LoosePath(id)); err == nil {
		data, err := readLooseBytes(z, t)
		if err != nil {
			return nil, false, fmt.Errorf("read object %x: %w", id, err)
		}
		return data, true, nil
	}
	typ, data, found, err := o.packs.read(id)
	switch {
	case err != nil:
		return nil, false, err
	case found && typ != t:
		return nil, false, fmt.Errorf("read object %x: a %s, not a %s", id, typ, t)
	}
	return data, found, nil
}

// freshen reports whether id is a loose object or in a pack (the packs
// listed when first asked: one made since is not seen, and the object is
// written again), and marks the file that holds it as just written (its modification
// time), as git does for an object it would write but finds: an object
// that was unreachable, and is about to be reachable again, must not look
// old to a git gc pruning beside borg before the ref that reaches it moves.
func (o *Objects) freshen(id [20]byte) bool {
	now := time.Now()
	if p := o.LoosePath(id); fileExists(p) {
		_ = os.Chtimes(p, now, now) // at worst, as before: a gc's grace period
		return true
	}
	if name, ok := o.packs.holder(id); ok {
		_ = os.Chtimes(filepath.Join(o.packs.dir, name+".pack"), now, now)
		return true
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Size returns the size of object id's content, of whatever type, read
// from its loose file's header or from its pack entry without inflating
// the object; found is false as Read reports it.
func (o *Objects) Size(id [20]byte) (size int64, found bool, err error) {
	f, err := os.Open(o.LoosePath(id))
	if err == nil {
		defer func() { _ = f.Close() }()
		zr, err := zlib.NewReader(bufio.NewReaderSize(f, 512))
		if err != nil {
			return 0, false, fmt.Errorf("read object %x: %w", id, err)
		}
		_, n, err := readLooseHeader(zr)
		if err != nil {
			return 0, false, fmt.Errorf("read object %x: %w", id, err)
		}
		return int64(n), true, nil
	}
	n, found, err := o.packs.size(id)
	return int64(n), found, err
}
