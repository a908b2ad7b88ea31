package gitobj

// tree.go edits trees as bytes.

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Change is one file a commit writes or deletes. Path is a slash path
// relative to the tree WriteTree edits; the caller has checked it (clean,
// relative, no empty element).
type Change struct {
	Path   string
	Data   []byte
	Delete bool
}

// WriteTree queues the tree base (the zero id: an empty tree) with changes
// applied, with the blobs and subtrees it needs, and returns its id. An
// emptied subtree is dropped, as git has no empty directories; a file
// written where a directory is emptied (or back) replaces it. It edits the
// tree's raw bytes, copying the entries it does not change as they are and
// allocating nothing per unchanged entry: lessons/ holds one entry per
// lesson, and a commit changes a few.
func (w *Writer) WriteTree(base [20]byte, changes []Change) ([20]byte, error) {
	id, _, err := w.writeTree(base, changes, "")
	return id, err
}

// writeTree is WriteTree of the tree at prefix ("" at the root; a
// subtree's path and a slash) and also returns its entry count.
func (w *Writer) writeTree(base [20]byte, changes []Change, prefix string) ([20]byte, int, error) {
	var raw []byte
	if base != ([20]byte{}) {
		var err error
		if raw, err = w.read(Tree, base); err != nil {
			return [20]byte{}, 0, fmt.Errorf("read tree %s: %w", prefix, err)
		}
	}
	// next holds the entries that change, by name: a new entry, or a
	// deletion (del); sub the changes inside each subdirectory.
	next := map[string]*treeChange{}
	sub := map[string][]Change{}
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
		return [20]byte{}, 0, fmt.Errorf("read tree %s: %w", prefix, err)
	}
	for name, ch := range next {
		if err := w.applyChange(name, ch, sub[name], prefix); err != nil {
			return [20]byte{}, 0, err
		}
	}
	out, n := mergeTree(raw, starts, next)
	return w.Add(Tree, out), n, nil
}

// scanTree checks the tree raw, returns the offset of each of its entries
// and records in next the old entry of each changed name. It is the one
// pass over a large tree a commit makes: each entry is found
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
			e, err := NextTreeEntry(raw, i)
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
	change Change
	old    TreeEntry
	hadOld bool
	del    bool
	mode   uint32
	id     [20]byte
}

// applyChange works out the new entry of name: a file's blob, or the
// subdirectory's tree written with its changes cs.
// A name with both (a directory emptied and a file written in its place,
// or back) is the file when the directory ends up empty.
func (w *Writer) applyChange(name string, ch *treeChange, cs []Change, prefix string) error {
	if len(cs) > 0 {
		var subBase [20]byte
		if ch.hadOld && ch.old.IsDir() {
			subBase = ch.old.ID
		}
		h, n, err := w.writeTree(subBase, cs, prefix+name+"/")
		if err != nil {
			return err
		}
		if n > 0 {
			if ch.file && !ch.change.Delete {
				return fmt.Errorf("bad path %q: both a file and a directory", prefix+name)
			}
			ch.mode, ch.id = modeDir, h
			return nil
		}
	}
	if !ch.file || ch.change.Delete {
		ch.del = true
		return nil
	}
	h := w.Add(Blob, ch.change.Data)
	mode := uint32(modeRegular)
	if ch.hadOld && ch.old.Mode == modeExecutable {
		mode = modeExecutable
	}
	ch.mode, ch.id = mode, h
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
		dir := ch.mode == modeDir
		var entry []byte
		if !ch.del {
			entry = appendTreeEntry(nil, ch.mode, name, ch.id)
		}
		// A name that changes kind (a file becoming a directory or back)
		// changes its sort key: it is dropped where it was and added anew.
		moved := ch.hadOld && !ch.del && ch.old.IsDir() != dir
		switch {
		case ch.hadOld && (ch.del || moved):
			edits = append(edits, edit{at: ch.old.Start, skip: ch.old.End, name: name, dir: ch.old.IsDir()})
			n--
		case ch.hadOld:
			edits = append(edits, edit{at: ch.old.Start, skip: ch.old.End, name: name, dir: dir, emit: entry})
		}
		if !ch.del && (!ch.hadOld || moved) {
			// The first old entry that sorts after the new name.
			k := sort.Search(len(starts), func(i int) bool {
				e, _ := NextTreeEntry(raw, starts[i]) // scanTree checked it
				return compareTreeKeys(e.Name, e.IsDir(), []byte(name), dir) > 0
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
	// The exact size, so a large tree is allocated once and never grown.
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
