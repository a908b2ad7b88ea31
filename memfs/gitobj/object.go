package gitobj

// object.go encodes and decodes objects: ids, loose object files, packs
// and their indexes, and tree entries.

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"sort"
	"strconv"
	"sync"
)

// Type is an object's type, numbered as a pack numbers it.
type Type byte

// The object types borg reads and writes.
const (
	Commit Type = 1
	Tree   Type = 2
	Blob   Type = 3
)

// String is the type's name in an object header: "commit", "tree" or
// "blob".
func (t Type) String() string {
	switch t {
	case Commit:
		return "commit"
	case Tree:
		return "tree"
	default:
		return "blob"
	}
}

// StoreRawAbove is the size above which a loose object is written in zlib
// stored blocks rather than compressed.
const StoreRawAbove = 64 << 10

// PackAtLeast is the number of new objects from which a Writer writes one
// pack rather than loose objects (git's own fetch.unpackLimit).
const PackAtLeast = 100

// object is one object to write: its type, content and id.
type object struct {
	typ  Type
	data []byte
	id   [20]byte
}

// Header is the header git hashes and stores before an object's
// content: "<type> <size>\x00".
func Header(t Type, n int) []byte {
	return strconv.AppendInt([]byte(t.String()+" "), int64(n), 10)
}

// Hash is the git id of an object of type t with content data.
func Hash(t Type, data []byte) [20]byte {
	h := sha1.New()
	h.Write(Header(t, len(data)))
	h.Write([]byte{0})
	h.Write(data)
	var id [20]byte
	h.Sum(id[:0])
	return id
}

// looseObject is the content of a loose object file: the zlib stream of the
// header and data, stored for a large object, compressed otherwise, at
// zlib's fastest level (a loose object lives until git packs it, which
// compresses it again) by a writer used again: making one costs more
// than compressing a small object with it.
func looseObject(t Type, data []byte) ([]byte, error) {
	hdr := append(Header(t, len(data)), 0)
	if len(data) > StoreRawAbove {
		return zlibStored(hdr, data), nil
	}
	var buf bytes.Buffer
	w := looseWriters.Get().(*zlib.Writer)
	defer looseWriters.Put(w)
	w.Reset(&buf)
	_, _ = w.Write(hdr)
	_, _ = w.Write(data)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var looseWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// zlibStored is a zlib stream of parts in stored (uncompressed) deflate
// blocks: RFC 1950's header and Adler-32 trailer around RFC 1951's
// stored blocks of at most 65,535 bytes.
func zlibStored(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	const maxBlock = 65535
	out := make([]byte, 0, 2+n+5*(n/maxBlock+1)+4)
	out = append(out, 0x78, 0x01)
	sum := adler32.New()
	pi, off := 0, 0
	for left := n; ; {
		k := min(maxBlock, left)
		left -= k
		final := byte(0)
		if left == 0 {
			final = 1
		}
		out = append(out, final, byte(k), byte(k>>8), ^byte(k), ^byte(k>>8))
		for k > 0 {
			p := parts[pi][off:]
			c := min(k, len(p))
			out = append(out, p[:c]...)
			_, _ = sum.Write(p[:c])
			k, off = k-c, off+c
			if off == len(parts[pi]) {
				pi, off = pi+1, 0
			}
		}
		if final == 1 {
			break
		}
	}
	return binary.BigEndian.AppendUint32(out, sum.Sum32())
}

// readLooseBytes is readLoose of a whole loose object file z. A large
// object borg stored uncompressed (zlibStored) is unpacked in place, its
// blocks moved together and their Adler-32 checked, with no copy through
// a decompressor; anything else goes through readLoose. It may reuse z.
func readLooseBytes(z []byte, t Type) ([]byte, error) {
	if !storedOnly(z) {
		return readLoose(bytes.NewReader(z), t)
	}
	data := unstore(z)
	if len(z) < 4 || binary.BigEndian.Uint32(z[len(z)-4:]) != adler32.Checksum(data) {
		return nil, errors.New("corrupt object: bad Adler-32")
	}
	nul := bytes.IndexByte(data[:min(len(data), 32)], 0)
	if nul < 0 {
		return nil, errors.New("corrupt object header")
	}
	typ, sz, err := parseLooseHeader(data[:nul])
	if typ != t.String() {
		return nil, fmt.Errorf("object is a %q, not a %s", typ, t.String())
	}
	if err != nil || sz != len(data)-nul-1 {
		return nil, errors.New("corrupt object size")
	}
	return data[nul+1:], nil
}

// storedOnly reports whether z is a well-formed zlib stream of stored
// deflate blocks only (what zlibStored writes) and its Adler-32 trailer.
func storedOnly(z []byte) bool {
	if len(z) < 2+5+4 || z[0] != 0x78 || z[1] != 0x01 {
		return false
	}
	for i := 2; ; {
		if i+5 > len(z) || z[i]&^1 != 0 || z[i+3] != ^z[i+1] || z[i+4] != ^z[i+2] {
			return false // a compressed block, or a bad header
		}
		k := int(z[i+1]) | int(z[i+2])<<8
		if i += 5 + k; i > len(z) {
			return false
		}
		if z[i-5-k] == 1 {
			return i+4 == len(z)
		}
	}
}

// unstore moves the stored blocks' content of z (storedOnly) together at
// its start and returns it.
func unstore(z []byte) []byte {
	out := 0
	for _, b := range blocksOf(z) {
		out += copy(z[out:], b)
	}
	return z[:out]
}

// blocksOf is the contents of the stored blocks of z (storedOnly).
func blocksOf(z []byte) [][]byte {
	var out [][]byte
	for i := 2; ; {
		k := int(z[i+1]) | int(z[i+2])<<8
		if k > 0 {
			out = append(out, z[i+5:i+5+k])
		}
		if z[i] == 1 {
			return out
		}
		i += 5 + k
	}
}

// StoredBlocks is the contents of the stored blocks of z, a loose object
// file (its header included, its Adler-32 unchecked), for a caller that
// compares or reads them in place; ok is false when z is not written in
// stored blocks only (a compressed object).
func StoredBlocks(z []byte) (blocks [][]byte, ok bool) {
	if !storedOnly(z) {
		return nil, false
	}
	return blocksOf(z), true
}

// LooseContent reads a loose object file's content (its header included)
// from z, the mapped file: the stored blocks of an object borg wrote
// uncompressed in place, anything else through zlib.
func LooseContent(z []byte) (io.Reader, error) {
	if !storedOnly(z) {
		return zlib.NewReader(bytes.NewReader(z))
	}
	blocks := blocksOf(z)
	rs := make([]io.Reader, len(blocks))
	for i, b := range blocks {
		rs[i] = bytes.NewReader(b)
	}
	return io.MultiReader(rs...), nil
}

// readLoose parses a loose object file's content (zlib data) as an object
// of type t and returns its content.
func readLoose(r io.Reader, t Type) ([]byte, error) {
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer func() { _ = zr.Close() }()
	typ, sz, err := readLooseHeader(zr)
	if typ != t.String() {
		return nil, fmt.Errorf("object is a %q, not a %s", typ, t.String())
	}
	if err != nil {
		return nil, err
	}
	data := make([]byte, sz)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, fmt.Errorf("read object: %w", err)
	}
	return data, nil
}

// readLooseHeader reads a loose object's header from its inflated content
// r, up to its NUL, and parses it (parseLooseHeader).
func readLooseHeader(r io.Reader) (typ string, size int, err error) {
	var hdr [32]byte
	n := 0
	for {
		if n == len(hdr) {
			return "", 0, errors.New("corrupt object header")
		}
		if _, err := io.ReadFull(r, hdr[n:n+1]); err != nil {
			return "", 0, fmt.Errorf("corrupt object header: %w", err)
		}
		if hdr[n] == 0 {
			return parseLooseHeader(hdr[:n])
		}
		n++
	}
}

// parseLooseHeader parses a loose object's header h, "<type> <size>"
// before its NUL. typ is set whatever err says, for the caller's message.
func parseLooseHeader(h []byte) (typ string, size int, err error) {
	t, s, ok := bytes.Cut(h, []byte(" "))
	size, err = strconv.Atoi(string(s))
	if !ok || err != nil || size < 0 {
		return string(t), 0, errors.New("corrupt object size")
	}
	return string(t), size, nil
}

// encodePack renders objs as a version 2 pack of whole (undeltified)
// objects, each compressed at zlib's fastest level, and its version 2
// index (.idx), so that neither has to be parsed back to be indexed. It
// returns both and the pack's checksum, which names them.
func encodePack(objs []object) (pack, idx []byte, sum [20]byte, err error) {
	var buf bytes.Buffer
	buf.WriteString("PACK")
	_ = binary.Write(&buf, binary.BigEndian, uint32(2))
	_ = binary.Write(&buf, binary.BigEndian, uint32(len(objs)))
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	offsets := make([]uint64, len(objs))
	crcs := make([]uint32, len(objs))
	for i, o := range objs {
		offsets[i] = uint64(buf.Len())
		// Header: type and size, 4 bits of size in the first byte then 7
		// per byte, the high bit saying more follow.
		sz := uint64(len(o.data))
		c := byte(o.typ)<<4 | byte(sz&0x0f)
		sz >>= 4
		for sz != 0 {
			buf.WriteByte(c | 0x80)
			c = byte(sz & 0x7f)
			sz >>= 7
		}
		buf.WriteByte(c)
		zw.Reset(&buf)
		if _, err := zw.Write(o.data); err != nil {
			return nil, nil, sum, err
		}
		if err := zw.Close(); err != nil {
			return nil, nil, sum, err
		}
		crcs[i] = crc32.ChecksumIEEE(buf.Bytes()[offsets[i]:])
	}
	sum = sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), packIndex(objs, offsets, crcs, sum), sum, nil
}

// packIndex is the version 2 .idx of a pack: the ids sorted with a fan-out
// table by first byte, each one's CRC-32 and offset (large offsets in a
// table of their own), the pack's checksum and the index's.
func packIndex(objs []object, offsets []uint64, crcs []uint32, packSum [20]byte) []byte {
	order := make([]int, len(objs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bytes.Compare(objs[order[a]].id[:], objs[order[b]].id[:]) < 0 })
	be := binary.BigEndian
	out := make([]byte, 0, 8+256*4+len(objs)*28+40)
	out = append(out, 0xff, 't', 'O', 'c', 0, 0, 0, 2)
	var fan [256]uint32
	for _, o := range objs {
		fan[o.id[0]]++
	}
	total := uint32(0)
	for _, n := range fan {
		total += n
		out = be.AppendUint32(out, total)
	}
	for _, i := range order {
		out = append(out, objs[i].id[:]...)
	}
	for _, i := range order {
		out = be.AppendUint32(out, crcs[i])
	}
	var large []uint64
	for _, i := range order {
		if offsets[i] < 1<<31 {
			out = be.AppendUint32(out, uint32(offsets[i]))
			continue
		}
		out = be.AppendUint32(out, 1<<31|uint32(len(large)))
		large = append(large, offsets[i])
	}
	for _, off := range large {
		out = be.AppendUint64(out, off)
	}
	out = append(out, packSum[:]...)
	idxSum := sha1.Sum(out)
	return append(out, idxSum[:]...)
}

// TreeEntry is one entry of a tree object, pointing into the tree's
// bytes: "<octal mode> <name>\x00<20-byte id>" at Start up to End.
type TreeEntry struct {
	Mode       uint32
	Name       []byte
	ID         [20]byte
	Start, End int
}

// IsDir reports whether the entry is a subtree.
func (e TreeEntry) IsDir() bool { return e.Mode == modeDir }

// Tree entry modes: a subtree, a regular file and an executable one.
const (
	modeDir        = 0o40000
	modeRegular    = 0o100644
	modeExecutable = 0o100755
)

// NextTreeEntry parses the entry of tree b at offset i; the next entry
// starts at its End.
func NextTreeEntry(b []byte, i int) (TreeEntry, error) {
	sp := bytes.IndexByte(b[i:], ' ')
	if sp < 0 {
		return TreeEntry{}, errors.New("corrupt tree")
	}
	var mode uint32
	for _, c := range b[i : i+sp] {
		if c < '0' || c > '7' {
			return TreeEntry{}, errors.New("corrupt tree mode")
		}
		mode = mode<<3 | uint32(c-'0')
	}
	nul := bytes.IndexByte(b[i+sp+1:], 0)
	if nul < 0 || i+sp+1+nul+1+20 > len(b) {
		return TreeEntry{}, errors.New("corrupt tree")
	}
	nameEnd := i + sp + 1 + nul
	e := TreeEntry{Mode: mode, Name: b[i+sp+1 : nameEnd], Start: i, End: nameEnd + 21}
	copy(e.ID[:], b[nameEnd+1:e.End])
	return e, nil
}

// compareTreeKeys orders tree entries as git does: by name, a
// directory's name compared as if it ended in a slash.
func compareTreeKeys(a []byte, aDir bool, b []byte, bDir bool) int {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	ka, kb := keyByte(a, n, aDir), keyByte(b, n, bDir)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return len(a) - len(b) // both ended (same name and kind): equal
}

// keyByte is the byte of a name's sort key at n (the name's length or
// less): past the name, a slash for a directory, else 0 (the end).
func keyByte(name []byte, n int, dir bool) int {
	if n < len(name) {
		return int(name[n])
	}
	if dir {
		return '/'
	}
	return 0
}

// appendTreeEntry appends a tree entry's encoding to out.
func appendTreeEntry(out []byte, mode uint32, name string, id [20]byte) []byte {
	out = strconv.AppendUint(out, uint64(mode), 8)
	out = append(out, ' ')
	out = append(out, name...)
	out = append(out, 0)
	return append(out, id[:]...)
}
