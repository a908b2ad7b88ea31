package memfs

// gitindex.go patches git's index file in place for the few paths a commit
// touched, instead of decoding and re-encoding every entry (go-git's
// encoder costs tens of milliseconds per commit on a store of ten thousand
// lessons). It handles whole indexes of versions 2 and 3; a split index is
// patched by patchSplit (gitsplit.go); for anything else it reports false
// and the caller uses go-git's codec.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"sort"
	"time"
)

// indexEntry is what the patcher writes for one staged file.
type indexEntry struct {
	name  string
	hash  [20]byte
	mode  uint32
	size  uint32
	mtime time.Time
	dev   uint32
	ino   uint32
	uid   uint32
	gid   uint32
}

// encode renders e as a version 2 index entry (62 bytes, the name, then
// NUL padding to a multiple of 8 with at least one NUL).
func (e indexEntry) encode() []byte {
	n := len(e.name)
	size := (62 + n + 8) &^ 7
	b := make([]byte, size)
	be := binary.BigEndian
	// ctime is left zero: git only compares it to decide whether to
	// rehash the file, and the content matches.
	be.PutUint32(b[8:], uint32(e.mtime.Unix()))
	be.PutUint32(b[12:], uint32(e.mtime.Nanosecond()))
	be.PutUint32(b[16:], e.dev)
	be.PutUint32(b[20:], e.ino)
	be.PutUint32(b[24:], e.mode)
	be.PutUint32(b[28:], e.uid)
	be.PutUint32(b[32:], e.gid)
	be.PutUint32(b[36:], e.size)
	copy(b[40:60], e.hash[:])
	flags := min(n, 0xFFF)
	be.PutUint16(b[60:], uint16(flags))
	copy(b[62:], e.name)
	return b
}

// patchIndex returns data with the entries named in set replaced by their
// new form and those in del removed (every stage of each), optional
// extensions dropped (they cache what the patch changed), and a new
// checksum. It reports false when it cannot patch this index safely. It
// streams the old entries into the new index in one pass, allocating
// nothing per entry: the index of a store of 100,000 lessons is about 10 MB
// and a commit changes a few entries.
func patchIndex(data []byte, set []indexEntry, del []string) ([]byte, bool) {
	const header, trailer = 12, 20
	if len(data) < header+trailer || string(data[:4]) != "DIRC" {
		return nil, false
	}
	be := binary.BigEndian
	version := be.Uint32(data[4:])
	if version != 2 && version != 3 {
		return nil, false
	}
	count := int(be.Uint32(data[8:]))
	end := len(data) - trailer
	if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
		return nil, false
	}
	if count > (end-header)/62 {
		return nil, false
	}
	// The new entries, sorted, one per name (the last given wins), and
	// every name whose old entries go.
	drop := map[string]bool{}
	for _, n := range del {
		drop[n] = true
	}
	byName := map[string]indexEntry{}
	for _, e := range set {
		drop[e.name] = true
		byName[e.name] = e
	}
	adds := make([]indexEntry, 0, len(byName))
	for _, e := range byName {
		adds = append(adds, e)
	}
	sort.Slice(adds, func(a, b int) bool { return adds[a].name < adds[b].name })

	out := make([]byte, header, len(data)+len(adds)*128)
	copy(out, data[:8])
	kept, k := 0, 0
	var prev []byte
	i := header
	for range count {
		name, size, ok := indexEntryAt(data, i, end, version)
		if !ok || bytes.Compare(name, prev) < 0 {
			return nil, false // malformed, or not sorted as git sorts
		}
		prev = name
		for k < len(adds) && adds[k].name < string(name) {
			out = append(out, adds[k].encode()...)
			k++
		}
		if !drop[string(name)] {
			out = append(out, data[i:i+size]...)
			kept++
		}
		i += size
	}
	for ; k < len(adds); k++ {
		out = append(out, adds[k].encode()...)
	}
	// Extensions: lowercase signatures are required ones (a split index)
	// this patcher does not understand.
	for i < end {
		if i+8 > end {
			return nil, false
		}
		sig := data[i : i+4]
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, false
		}
		i += 8 + int(be.Uint32(data[i+4:]))
	}
	if i != end {
		return nil, false
	}
	be.PutUint32(out[8:], uint32(kept+len(adds)))
	sum := sha1.Sum(out)
	return append(out, sum[:]...), true
}

// indexEntryAt parses the index entry at offset i (entries end at end): its
// name and its size in bytes. It reports false for an entry it cannot
// patch: malformed, an extended flag in version 2, or a conflicted entry
// (stage 1-3), which it leaves to go-git.
func indexEntryAt(data []byte, i, end int, version uint32) ([]byte, int, bool) {
	if i+62 > end {
		return nil, 0, false
	}
	flags := binary.BigEndian.Uint16(data[i+60:])
	fixed := 62
	if flags&0x4000 != 0 {
		if version < 3 {
			return nil, 0, false
		}
		fixed = 64
	}
	if flags&0x3000 != 0 {
		return nil, 0, false
	}
	nameLen := int(flags & 0xFFF)
	if nameLen == 0xFFF {
		k := bytes.IndexByte(data[i+fixed:end], 0)
		if k < 0 {
			return nil, 0, false
		}
		nameLen = k
	}
	size := (fixed + nameLen + 8) &^ 7
	if i+fixed+nameLen > end || i+size > end {
		return nil, 0, false
	}
	return data[i+fixed : i+fixed+nameLen], size, true
}
