package gitobj

// pack.go reads objects out of git's pack files. An index is mapped and
// searched in place, by its fan-out table and a binary search of its
// sorted names, rather than read whole into a map of its offsets (as
// go-git does on its first read of a packed object); the object is read at
// its offset, a delta applied to its base. What it cannot read (an index
// of another version, an object it does not find) it reports not found,
// for the caller to read another way.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// Pack object types (gitformat-pack).
const (
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

// maxDeltaDepth bounds a delta chain (git's default --depth is 50): a
// corrupt pack whose deltas point in a circle ends with an error.
const maxDeltaDepth = 4096

// packFile is one pack: its mapped version-2 index and the open pack.
type packFile struct {
	name  string // pack-<sum>, without the extension
	idx   []byte
	unmap func()
	n     int // objects
	pack  *os.File
}

// packSet is the packs of a repository, listed when first needed and
// again when an object is not found in them (a fetch or gc made new ones).
type packSet struct {
	dir   string // .git/objects/pack
	mu    sync.Mutex
	packs []*packFile
}

func newPackSet(dir string) *packSet {
	return &packSet{dir: dir}
}

// read returns the content and type of object h, and found false when no
// pack this reader can read holds it.
func (ps *packSet) read(h [20]byte) (typ Type, data []byte, found bool, err error) {
	found, err = ps.at(h, func(p *packFile, off int64) (err error) {
		typ, data, err = ps.readAt(p, off, 0)
		return err
	})
	if !found || err != nil {
		return 0, nil, found, err
	}
	return typ, data, true, nil
}

// holder is the name of the pack that holds h, listing the packs when
// first asked (not again: a writer asks this of every object it would
// write).
func (ps *packSet) holder(h [20]byte) (string, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.packs == nil {
		ps.relist()
	}
	for _, p := range ps.packs {
		if _, ok := p.find(h); ok {
			return p.name, true
		}
	}
	return "", false
}

// at calls f, under the set's lock, with the pack that holds h and h's
// offset in it, listing the packs again once when none does (a pack made
// since the last listing); found is false when none holds it, and f's
// error names h and the pack.
func (ps *packSet) at(h [20]byte, f func(p *packFile, off int64) error) (found bool, err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for round := 0; round < 2; round++ {
		if round == 1 || ps.packs == nil {
			if !ps.relist() {
				return false, nil
			}
		}
		for _, p := range ps.packs {
			if off, ok := p.find(h); ok {
				if err := f(p, off); err != nil {
					return false, fmt.Errorf("read %s from %s: %w", hexID(h), p.name, err)
				}
				return true, nil
			}
		}
	}
	return false, nil
}

// relist opens the packs that appeared since the last listing and drops
// those that are gone; it reports whether the list changed.
func (ps *packSet) relist() bool {
	names, _ := filepath.Glob(filepath.Join(ps.dir, "pack-*.idx"))
	sort.Strings(names)
	old := map[string]*packFile{}
	for _, p := range ps.packs {
		old[p.name] = p
	}
	changed := ps.packs == nil
	var next []*packFile
	for _, idx := range names {
		name := strings.TrimSuffix(filepath.Base(idx), ".idx")
		if p := old[name]; p != nil {
			next = append(next, p)
			delete(old, name)
			continue
		}
		if p, err := openPack(ps.dir, name); err == nil {
			next = append(next, p)
			changed = true
		}
	}
	for _, p := range old {
		p.close() // gone from the directory
		changed = true
	}
	if next == nil {
		next = []*packFile{}
	}
	ps.packs = next
	return changed
}

// close closes every pack.
func (ps *packSet) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.packs {
		p.close()
	}
	ps.packs = nil
}

// openPack maps dir/name.idx (version 2 only) and opens its pack.
func openPack(dir, name string) (*packFile, error) {
	idx, unmap, err := fsutil.Map(filepath.Join(dir, name+".idx"))
	if err != nil {
		return nil, err
	}
	const head = 8 + 256*4
	if len(idx) < head+40 || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		unmap()
		return nil, errors.New("not a version 2 pack index")
	}
	n := int(binary.BigEndian.Uint32(idx[head-4 : head]))
	if len(idx) < head+n*28+40 {
		unmap()
		return nil, errors.New("pack index too short")
	}
	pack, err := os.Open(filepath.Join(dir, name+".pack"))
	if err != nil {
		unmap()
		return nil, err
	}
	return &packFile{name: name, idx: idx, unmap: unmap, n: n, pack: pack}, nil
}

func (p *packFile) close() {
	_ = p.pack.Close()
	p.unmap()
}

// find returns the offset of h in the pack: the fan-out table bounds the
// names that start with h's first byte, a binary search finds it among
// them.
func (p *packFile) find(h [20]byte) (int64, bool) {
	const fan = 8
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(p.idx[fan+4*(int(h[0])-1):]))
	}
	hi := int(binary.BigEndian.Uint32(p.idx[fan+4*int(h[0]):]))
	if hi > p.n || lo > hi {
		return 0, false // a corrupt fan-out table
	}
	names := fan + 256*4
	i := lo + sort.Search(hi-lo, func(k int) bool {
		at := names + 20*(lo+k)
		return bytes.Compare(p.idx[at:at+20], h[:]) >= 0
	})
	if i >= hi || !bytes.Equal(p.idx[names+20*i:names+20*i+20], h[:]) {
		return 0, false
	}
	offsets := names + 24*p.n // past the names and their CRC-32s
	off := binary.BigEndian.Uint32(p.idx[offsets+4*i:])
	if off&0x80000000 == 0 {
		return int64(off), true
	}
	large := offsets + 4*p.n + 8*int(off&0x7fffffff)
	if large+8 > len(p.idx) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p.idx[large:])), true
}

// entry is the header of a pack entry: its type (a delta's own), the
// size of its (inflated) data, where that data starts, and a delta's base,
// by offset in the same pack (baseOff > 0) or by id.
type entry struct {
	typ     Type
	size    uint64
	dataOff int64
	baseOff int64
	baseID  [20]byte
}

// entryAt reads the header of the entry at off in p.
func entryAt(p *packFile, off int64) (entry, error) {
	var hdr [32]byte
	n, err := p.pack.ReadAt(hdr[:], off)
	if err != nil && !errors.Is(err, io.EOF) {
		return entry{}, err
	}
	b := hdr[:n]
	if len(b) == 0 {
		return entry{}, errors.New("offset past the pack's end")
	}
	e := entry{typ: Type(b[0] >> 4 & 7), size: uint64(b[0] & 15)}
	i, shift := 1, 4
	for c := b[0]; c&0x80 != 0; shift += 7 {
		if i >= len(b) || shift > 56 {
			return entry{}, errors.New("corrupt object header")
		}
		c = b[i]
		e.size |= uint64(c&0x7f) << shift
		i++
	}
	switch e.typ {
	case Commit, Tree, Blob, packTag:
	case packOfsDelta:
		if i >= len(b) {
			return entry{}, errors.New("corrupt delta offset")
		}
		c := b[i]
		back := uint64(c & 0x7f)
		for i++; c&0x80 != 0; i++ {
			if i >= len(b) {
				return entry{}, errors.New("corrupt delta offset")
			}
			c = b[i]
			back = (back+1)<<7 | uint64(c&0x7f)
		}
		if back == 0 || back > uint64(off) {
			return entry{}, errors.New("corrupt delta offset")
		}
		e.baseOff = off - int64(back)
	case packRefDelta:
		if i+20 > len(b) {
			return entry{}, errors.New("corrupt delta base")
		}
		copy(e.baseID[:], b[i:i+20])
		i += 20
	default:
		return entry{}, fmt.Errorf("unknown object type %d", e.typ)
	}
	e.dataOff = off + int64(i)
	return e, nil
}

// readAt reads the object at off in p, resolving deltas (depth is the
// chain's length so far).
func (ps *packSet) readAt(p *packFile, off int64, depth int) (Type, []byte, error) {
	if depth > maxDeltaDepth {
		return 0, nil, errors.New("delta chain too deep")
	}
	e, err := entryAt(p, off)
	if err != nil {
		return 0, nil, err
	}
	data, err := inflateAt(p.pack, e.dataOff, e.size)
	if err != nil || (e.typ != packOfsDelta && e.typ != packRefDelta) {
		return e.typ, data, err
	}
	bp, boff := p, e.baseOff
	if e.typ == packRefDelta {
		bp = nil
		for _, q := range ps.packs {
			if o, ok := q.find(e.baseID); ok {
				bp, boff = q, o
				break
			}
		}
		if bp == nil {
			return 0, nil, fmt.Errorf("delta base %s is not in a pack", hexID(e.baseID))
		}
	}
	bt, base, err := ps.readAt(bp, boff, depth+1)
	if err != nil {
		return 0, nil, err
	}
	data, err = applyDelta(base, data)
	return bt, data, err
}

// size returns the size of object h's content and found false when no
// pack this reader can read holds it: a whole object's size from its
// header, a delta's from the result size the delta declares.
func (ps *packSet) size(h [20]byte) (n uint64, found bool, err error) {
	found, err = ps.at(h, func(p *packFile, off int64) error {
		e, err := entryAt(p, off)
		if err != nil {
			return err
		}
		if e.typ != packOfsDelta && e.typ != packRefDelta {
			n = e.size
			return nil
		}
		delta, err := inflateAt(p.pack, e.dataOff, e.size)
		if err != nil {
			return err
		}
		_, rest, ok := deltaSize(delta) // the base's size, then the result's
		if ok {
			n, _, ok = deltaSize(rest)
		}
		if !ok {
			return errors.New("corrupt delta size")
		}
		return nil
	})
	if !found || err != nil {
		return 0, found, err
	}
	return n, true, nil
}

// inflaters keeps zlib readers for reuse: a decompressor's window and
// tables are some 40 KB, and sleep's snapshot of a packed store reads
// every lesson's blob.
var inflaters sync.Pool

// inflateAt decompresses the zlib stream at off in f, which holds size
// bytes.
func inflateAt(f *os.File, off int64, size uint64) ([]byte, error) {
	if size > 1<<34 {
		return nil, errors.New("object too large")
	}
	src := bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), 4096)
	var zr io.ReadCloser
	if pooled, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := pooled.(zlib.Resetter).Reset(src, nil); err != nil {
			return nil, err
		}
		zr = pooled
	} else {
		var err error
		if zr, err = zlib.NewReader(src); err != nil {
			return nil, err
		}
	}
	defer inflaters.Put(zr)
	if size <= 64<<20 {
		data := make([]byte, size)
		if _, err := io.ReadFull(zr, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	// Grown as it inflates past 64 MB: a corrupt size must not allocate
	// gigabytes up front.
	var buf bytes.Buffer
	buf.Grow(int(min(size, 64<<20)))
	if _, err := io.CopyN(&buf, zr, int64(size)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// applyDelta builds an object from base and a git delta: the two sizes,
// then copies out of base and inserts of new bytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	src, delta, ok := deltaSize(delta)
	if !ok || src != uint64(len(base)) {
		return nil, errors.New("delta does not fit its base")
	}
	dst, delta, ok := deltaSize(delta)
	if !ok || dst > 1<<34 {
		return nil, errors.New("corrupt delta size")
	}
	// Sized to what the delta declares, up to a bound: a corrupt size
	// must not allocate gigabytes before the instructions disagree.
	out := make([]byte, 0, min(dst, 64<<20))
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for bit := 0; bit < 7; bit++ {
				if op&(1<<bit) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errors.New("truncated delta")
				}
				if bit < 4 {
					off |= uint64(delta[0]) << (8 * bit)
				} else {
					n |= uint64(delta[0]) << (8 * (bit - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errors.New("delta copies out of range")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) || uint64(len(out))+uint64(op) > dst {
				return nil, errors.New("truncated delta")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("reserved delta instruction")
		}
	}
	if uint64(len(out)) != dst {
		return nil, errors.New("delta result has the wrong size")
	}
	return out, nil
}

// deltaSize reads a delta's size varint off the front of d.
func deltaSize(d []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, 0; i < len(d) && shift < 64; i, shift = i+1, shift+7 {
		v |= uint64(d[i]&0x7f) << shift
		if d[i]&0x80 == 0 {
			return v, d[i+1:], true
		}
	}
	return 0, nil, false
}

func hexID(h [20]byte) string { return fmt.Sprintf("%x", h) }
