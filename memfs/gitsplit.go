package memfs

// gitsplit.go reads and writes git's split index (git's
// Documentation/technical/index-format.txt, the "link" extension, and
// split-index.txt). A split index is two files: .git/sharedindex.<sha>, a
// whole index named by its own checksum, and .git/index, which names it and
// holds only what differs: entries that replace shared ones (stored with
// empty names, in the order of the replace bitmap), entries added, and a
// bitmap of the shared entries deleted (EWAH-compressed bitmaps). A commit
// into a store of 100,000 lessons then writes the few entries it changed
// instead of a 10 MB index: git's index of the whole store is rewritten
// only when the changes outgrow a hundredth of it.
//
// borg splits an index once it has splitIndexAtLeast entries, unless
// core.splitIndex is false; git (2.39 here) keeps a split index split when
// it writes it, and reads it in every command. Every reader of the index in
// borg goes through readFlatIndex or patchSplit, so a split index git wrote
// (core.splitIndex=true) reads as well as borg's.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// splitIndexAtLeast is the number of entries from which borg's commits
// split the index (a variable so tests can split small indexes).
var splitIndexAtLeast = 2000

// reshareAtLeast is the least number of changed entries (replaced, added,
// deleted) the split index holds before a commit writes a new shared
// index; above it, a hundredth of the shared index's entries (1,000 at
// 100,000 lessons: a split index of about 100 KB, and one 10 MB write per
// thousand commits).
const reshareAtLeast = 64

// sharedIndexExpire is how old a shared index no index names must be
// before borg removes it, git's default (splitIndex.sharedIndexExpire): a
// git process may still be reading one it named a moment ago.
const sharedIndexExpire = 14 * 24 * time.Hour

// splitIndex is the content of a split index file.
type splitIndex struct {
	version   uint32
	base      [20]byte
	repl      [][]byte // the replacing entries, names stripped, in position order
	added     [][]byte // the added entries, sorted by name
	del, pos  []int    // the deleted positions, and the replaced ones (sorted)
	sharedLen int      // entries in the shared index, once read
}

// indexLink returns the link extension's payload of the index data, and
// false when data is not an index with one (a whole index, or one borg
// cannot read: the callers then go their usual way). It does not check the
// checksum: parseSplit and patchIndex do.
func indexLink(data []byte) ([]byte, bool) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, false
	}
	version := binary.BigEndian.Uint32(data[4:])
	count := int(binary.BigEndian.Uint32(data[8:]))
	end := len(data) - 20
	if version != 2 && version != 3 || count > (end-12)/62 {
		return nil, false
	}
	i := 12
	for range count {
		_, size, ok := indexEntryAt(data, i, end, version)
		if !ok {
			return nil, false
		}
		i += size
	}
	for i+8 <= end {
		n := int(binary.BigEndian.Uint32(data[i+4:]))
		if n > end-i-8 {
			return nil, false
		}
		if string(data[i:i+4]) == "link" {
			return data[i+8 : i+8+n], true
		}
		i += 8 + n
	}
	return nil, false
}

// indexHeader checks an index's signature, version (2 or 3) and checksum.
func indexHeader(data []byte) (version uint32, count int, ok bool) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return 0, 0, false
	}
	version = binary.BigEndian.Uint32(data[4:])
	if version != 2 && version != 3 {
		return 0, 0, false
	}
	end := len(data) - 20
	if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
		return 0, 0, false
	}
	count = int(binary.BigEndian.Uint32(data[8:]))
	if count > (end-12)/62 {
		return 0, 0, false
	}
	return version, count, true
}

// parseSplit parses a split index file (indexHeader and indexLink hold).
// Other extensions (optional caches) are dropped, as patchIndex drops them.
func parseSplit(data []byte) (*splitIndex, bool) {
	version, count, ok := indexHeader(data)
	if !ok {
		return nil, false
	}
	link, ok := indexLink(data)
	if !ok || len(link) < 20 {
		return nil, false
	}
	si := &splitIndex{version: version}
	copy(si.base[:], link)
	if len(link) > 20 {
		del, n, err := ewahDecode(link[20:])
		if err != nil {
			return nil, false
		}
		pos, m, err := ewahDecode(link[20+n:])
		if err != nil || 20+n+m != len(link) {
			return nil, false
		}
		si.del, si.pos = del, pos
	}
	if len(si.pos) > count {
		return nil, false
	}
	end, i := len(data)-20, 12
	for k := range count {
		name, size, ok := indexEntryAt(data, i, end, version)
		if !ok || (k < len(si.pos)) != (len(name) == 0) {
			return nil, false // a replacing entry with a name, or an added one without
		}
		if k < len(si.pos) {
			si.repl = append(si.repl, data[i:i+size])
		} else {
			si.added = append(si.added, data[i:i+size])
		}
		i += size
	}
	return si, true
}

// entryName is the name of a whole index entry (indexEntryAt checked it).
func entryName(e []byte) []byte {
	fixed := 62
	flags := binary.BigEndian.Uint16(e[60:])
	if flags&0x4000 != 0 {
		fixed = 64
	}
	n := int(flags & 0xFFF)
	if n == 0xFFF {
		n = bytes.IndexByte(e[fixed:], 0)
	}
	return e[fixed : fixed+n]
}

// withName is the replacing entry e (name stripped) given name.
func withName(e []byte, name []byte) []byte {
	fixed := 62
	if binary.BigEndian.Uint16(e[60:])&0x4000 != 0 {
		fixed = 64
	}
	out := make([]byte, (fixed+len(name)+8)&^7)
	copy(out, e[:fixed])
	flags := binary.BigEndian.Uint16(e[60:])&^0xFFF | uint16(min(len(name), 0xFFF))
	binary.BigEndian.PutUint16(out[60:], flags)
	copy(out[fixed:], name)
	return out
}

// walkShared calls fn with the position and name of each entry of the
// shared index data, whose checksum must be base; it reports false for a
// shared index it cannot read or that is not sorted as git sorts. Its
// checksum is checked only when verify is set (it is the file's name, and
// git checks it on every read).
func walkShared(data []byte, base [20]byte, verify bool, fn func(pos int, name, entry []byte)) (int, bool) {
	if len(data) < 12+20 || !bytes.Equal(data[len(data)-20:], base[:]) || string(data[:4]) != "DIRC" {
		return 0, false
	}
	version := binary.BigEndian.Uint32(data[4:])
	count := int(binary.BigEndian.Uint32(data[8:]))
	end := len(data) - 20
	if version != 2 && version != 3 || count > (end-12)/62 {
		return 0, false
	}
	if verify {
		if sum := sha1.Sum(data[:end]); sum != base {
			return 0, false
		}
	}
	var prev []byte
	i := 12
	for k := range count {
		name, size, ok := indexEntryAt(data, i, end, version)
		if !ok || bytes.Compare(name, prev) <= 0 && k > 0 {
			return 0, false
		}
		fn(k, name, data[i:i+size])
		prev = name
		i += size
	}
	return count, true
}

// patchSplit is patchIndex for a split index: main is .git/index, shared
// the shared index it names. It returns the new split index and how many
// entries it holds or deletes (when that outgrows the shared index, the
// caller writes a new one); false when it cannot patch these files.
func patchSplit(main, shared []byte, set []indexEntry, del []string) ([]byte, int, bool) {
	si, ok := parseSplit(main)
	if !ok {
		return nil, 0, false
	}
	// The names that change, sorted, and where each sits in the shared
	// index (-1: not there).
	news := map[string]indexEntry{}
	for _, e := range set {
		news[e.name] = e
	}
	names := slices.Clone(del)
	for n := range news {
		names = append(names, n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	at := make([]int, len(names))
	for k := range at {
		at[k] = -1
	}
	k := 0
	n, ok := walkShared(shared, si.base, false, func(pos int, name, _ []byte) {
		for k < len(names) && names[k] < string(name) {
			k++
		}
		if k < len(names) && names[k] == string(name) {
			at[k] = pos
		}
	})
	if !ok {
		return nil, 0, false
	}
	repl := map[int][]byte{}
	for k, p := range si.pos {
		if p >= n {
			return nil, 0, false
		}
		repl[p] = si.repl[k]
	}
	dels := map[int]bool{}
	for _, p := range si.del {
		if p >= n || repl[p] != nil {
			return nil, 0, false
		}
		dels[p] = true
	}
	added := map[string][]byte{}
	for _, e := range si.added {
		added[string(entryName(e))] = e
	}
	for k, name := range names {
		e, isSet := news[name]
		delete(added, name)
		p := at[k]
		switch {
		case p >= 0 && isSet:
			delete(dels, p)
			stripped := e
			stripped.name = ""
			repl[p] = stripped.encode()
		case p >= 0:
			delete(repl, p)
			dels[p] = true
		case isSet:
			added[name] = e.encode()
		}
	}
	out := encodeSplit(si.version, si.base, repl, dels, added)
	return out, len(repl) + len(dels) + len(added), true
}

// encodeSplit renders a split index: the replacing entries in position
// order, the added ones by name, the link extension, the checksum.
func encodeSplit(version uint32, base [20]byte, repl map[int][]byte, dels map[int]bool, added map[string][]byte) []byte {
	pos := make([]int, 0, len(repl))
	for p := range repl {
		pos = append(pos, p)
	}
	slices.Sort(pos)
	delPos := make([]int, 0, len(dels))
	for p := range dels {
		delPos = append(delPos, p)
	}
	slices.Sort(delPos)
	names := make([]string, 0, len(added))
	for n := range added {
		names = append(names, n)
	}
	slices.Sort(names)
	be := binary.BigEndian
	out := make([]byte, 12, 12+64*len(pos)+128*len(names)+128)
	copy(out, "DIRC")
	be.PutUint32(out[4:], version)
	be.PutUint32(out[8:], uint32(len(pos)+len(names)))
	for _, p := range pos {
		out = append(out, repl[p]...)
	}
	for _, n := range names {
		out = append(out, added[n]...)
	}
	link := append(base[:], ewahEncode(delPos)...)
	link = append(link, ewahEncode(pos)...)
	out = append(out, "link"...)
	out = be.AppendUint32(out, uint32(len(link)))
	out = append(out, link...)
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// flattenSplit is the whole index a split index main and its shared index
// make, as git reads them (merge_base_index): version 2 or 3, no
// extensions. Both files' checksums are checked.
func flattenSplit(main, shared []byte) ([]byte, error) {
	si, ok := parseSplit(main)
	if !ok {
		return nil, errors.New("unreadable split index")
	}
	repl := map[int][]byte{}
	for k, p := range si.pos {
		repl[p] = si.repl[k]
	}
	dels := map[int]bool{}
	for _, p := range si.del {
		dels[p] = true
	}
	if len(shared) < 12 {
		return nil, fmt.Errorf("unreadable shared index sharedindex.%x", si.base)
	}
	version := max(si.version, binary.BigEndian.Uint32(shared[4:8]))
	out := make([]byte, 12, len(shared)+len(main))
	copy(out, "DIRC")
	binary.BigEndian.PutUint32(out[4:], version)
	count, a := 0, 0
	addUpTo := func(name []byte) {
		for a < len(si.added) && (name == nil || bytes.Compare(entryName(si.added[a]), name) < 0) {
			out = append(out, si.added[a]...)
			a, count = a+1, count+1
		}
	}
	n, ok := walkShared(shared, si.base, true, func(pos int, name, entry []byte) {
		addUpTo(name)
		if a < len(si.added) && bytes.Equal(entryName(si.added[a]), name) {
			return // an added entry of the same name replaces it (git's add_index_entry)
		}
		switch {
		case dels[pos]:
		case repl[pos] != nil:
			out = append(out, withName(repl[pos], name)...)
			count++
		default:
			out = append(out, entry...)
			count++
		}
	})
	if !ok {
		return nil, fmt.Errorf("unreadable shared index sharedindex.%x", si.base)
	}
	for _, p := range append(slices.Clone(si.pos), si.del...) {
		if p >= n {
			return nil, errors.New("split index names an entry past its shared index")
		}
	}
	addUpTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(count))
	sum := sha1.Sum(out)
	return append(out, sum[:]...), nil
}

// splitIndexFix is what to do about a split index borg cannot read.
const splitIndexFix = "run git update-index --no-split-index in the store; if git cannot read the index either, remove .git/index and run git reset there, which rebuilds it from HEAD"

// sharedIndexPath is where the shared index named base lives.
func sharedIndexPath(gitDir string, base [20]byte) string {
	return filepath.Join(gitDir, "sharedindex."+hex.EncodeToString(base[:]))
}

// readFlatIndex reads the git index at idxPath as one whole index: a
// split one merged with its shared index. A missing index reads as nil.
func readFlatIndex(idxPath string) ([]byte, error) {
	data, err := os.ReadFile(idxPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	link, ok := indexLink(data)
	if !ok {
		return data, nil
	}
	if len(link) < 20 {
		return nil, fmt.Errorf("corrupt link extension in %s", idxPath)
	}
	var base [20]byte
	copy(base[:], link)
	sp := sharedIndexPath(filepath.Dir(idxPath), base)
	shared, err := os.ReadFile(sp)
	if err != nil {
		return nil, fmt.Errorf("read the shared index of %s: %w (%s)", idxPath, err, splitIndexFix)
	}
	flat, err := flattenSplit(data, shared)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (%s)", idxPath, err, splitIndexFix)
	}
	return flat, nil
}

// splitOf is the split index naming flat, a whole index without
// extensions, as its shared index: no entries, empty bitmaps.
func splitOf(flat []byte) (base [20]byte, split []byte) {
	copy(base[:], flat[len(flat)-20:])
	version := binary.BigEndian.Uint32(flat[4:])
	return base, encodeSplit(version, base, nil, nil, nil)
}

// writeShared writes flat (a whole index without extensions) as a shared
// index, synced (an index naming a shared index that a power loss took
// would not read at all), and removes the shared indexes older than
// sharedIndexExpire that are not it.
func writeShared(gitDir string, flat []byte) ([20]byte, []byte, error) {
	base, split := splitOf(flat)
	p := sharedIndexPath(gitDir, base)
	if _, err := os.Stat(p); err != nil {
		if err := WriteFileAtomic(p, flat, 0o644, TempDir(gitDir)); err != nil {
			return base, nil, fmt.Errorf("write shared index: %w", err)
		}
	}
	old, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	for _, q := range old {
		if q == p || strings.Contains(filepath.Base(q), ".tmp") {
			continue
		}
		if fi, err := os.Stat(q); err == nil && time.Since(fi.ModTime()) > sharedIndexExpire {
			_ = os.Remove(q)
		}
	}
	return base, split, nil
}

// sharedCount is the entry count a shared index's header gives.
func sharedCount(shared []byte) int {
	if len(shared) < 12 {
		return 0
	}
	return int(binary.BigEndian.Uint32(shared[8:]))
}

// ewahEncode serialises the set bits pos (sorted, distinct) as git's EWAH
// bitmap (ewah/ewah_io.c): the bit count, the number of 64-bit words, the
// words (running-length words, each followed by its literal words), and
// the position of the last running-length word, all big-endian.
func ewahEncode(pos []int) []byte {
	words := []uint64{0}
	rlw, next := 0, 0
	for i := 0; i < len(pos); {
		w := pos[i] / 64
		var lit uint64
		for ; i < len(pos) && pos[i]/64 == w; i++ {
			lit |= 1 << (pos[i] % 64)
		}
		gap := w - next
		if gap > 0 && words[rlw]>>33 > 0 {
			words = append(words, 0)
			rlw = len(words) - 1
		}
		// A running-length word: bit 0 the running bit (0), bits 1-32
		// the clean words before the literals, bits 33-63 their count.
		words[rlw] |= uint64(gap) << 1
		words[rlw] += 1 << 33
		words = append(words, lit)
		next = w + 1
	}
	bitSize := 0
	if len(pos) > 0 {
		bitSize = pos[len(pos)-1] + 1
	}
	be := binary.BigEndian
	out := make([]byte, 0, 12+8*len(words))
	out = be.AppendUint32(out, uint32(bitSize))
	out = be.AppendUint32(out, uint32(len(words)))
	for _, w := range words {
		out = be.AppendUint64(out, w)
	}
	return be.AppendUint32(out, uint32(rlw))
}

// ewahDecode reads an EWAH bitmap at the start of b: its set bits, sorted,
// and its length in bytes.
func ewahDecode(b []byte) ([]int, int, error) {
	be := binary.BigEndian
	if len(b) < 8 {
		return nil, 0, errors.New("short bitmap")
	}
	nw := int(be.Uint32(b[4:]))
	size := 8 + 8*nw + 4
	if nw > len(b)/8 || size > len(b) {
		return nil, 0, errors.New("short bitmap")
	}
	var pos []int
	at := 0 // the bitmap word the next word stands for
	for i := 0; i < nw; {
		rlw := be.Uint64(b[8+8*i:])
		i++
		run, lit := int(rlw>>1&0xFFFFFFFF), int(rlw>>33)
		if rlw&1 == 1 {
			if run > 1<<16 {
				return nil, 0, errors.New("bitmap too large")
			}
			for k := range run * 64 {
				pos = append(pos, at*64+k)
			}
		}
		at += run
		for range lit {
			if i >= nw {
				return nil, 0, errors.New("corrupt bitmap")
			}
			w := be.Uint64(b[8+8*i:])
			i++
			for w != 0 {
				pos = append(pos, at*64+bits.TrailingZeros64(w))
				w &= w - 1
			}
			at++
		}
	}
	sort.Ints(pos)
	return pos, size, nil
}
