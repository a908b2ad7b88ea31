package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// The vector sidecar file (.borg/index/vectors.bin), little-endian:
//
//	magic "BORGVEC1" | u32 format | u32 dim | u32 count
//	u32 len + embedder id | u32 len + embedder corpus state
//	(count+1) × u32: where each row's key starts in the keys that follow,
//	ascending from 0; the last is the keys' length (format 2; format 1 has
//	no table)
//	count × (u16 len + lesson id, u16 len + content hash), ids strictly increasing
//	zero padding to a multiple of 4 | u32 CRC-32 (IEEE) of all before
//	dim × count float32 (column-major: all rows' first component, then all
//	rows' second, …)
//	count × dim float16 (row-major: each row's vector, rounded to half
//	precision, for MMR's pairwise similarities)
//
// The checksum covers the header and keys, not the vectors, so a process
// can map the file and read only the columns its queries touch; the file is
// replaced by rename, never rewritten in place, and its exact length is
// checked. The key offsets let a reader find a row's id and hash without
// decoding the 100,000 keys of a big store (a hook asks for a few rows'
// vectors, for MMR, and the hash of the lessons it re-embeds); they are
// decoded whole only when something needs them all (fileKeys).
//
// A file whose magic, format, embedder id, dim or checksum does not match is
// ignored whole and rebuilt: vectors of two embedders never mix.
const (
	sidecarMagic  = "BORGVEC4"
	sidecarFormat = 2
	// sidecarFormatNoOffsets is the format before the key offsets: still
	// read (its keys decoded at once), rewritten in sidecarFormat at the
	// next merge.
	sidecarFormatNoOffsets = 1
	sidecarName            = "vectors.bin"
	maxSidecarID           = 1 << 12
	maxSidecarBlob         = 1 << 30
	// maxSidecarDim bounds the dimension a sidecar's header may claim
	// where no embedder vouches for it (vectorShape): models' vectors are
	// a few thousand long.
	maxSidecarDim = 1 << 16
)

// vectorStore holds one embedder's vectors column-major (cols[c][row]),
// each row keyed by lesson id and the content hash it was embedded from.
// Column-major makes the brute-force scan an axpy per query component, and
// a sparse query (the n-gram embedder's, a few words) touches only its
// non-zero columns.
type vectorStore struct {
	embedderID string
	dim        int
	state      []byte
	// ids and hashes key the rows; a store read from a file of the
	// current format leaves them in it (file) until keys is called.
	ids    []string
	hashes []string
	file   *fileKeys
	// pos maps ids to rows once the store changes; a store as decoded has
	// its ids in order and finds them by binary search instead, so a query
	// does not build a map of every lesson.
	pos  map[string]int
	cols [][]float32
	// rows is the decoded file's row-major half-precision copy (nil once
	// the store changes): fetching one vector reads one page of it rather
	// than one page per column.
	rows    []byte
	release func() // unmaps the file the columns alias, if any
	// dead marks the rows a delta tombstoned (vecseg.go); nil: none.
	dead    []bool
	ndead   int
	headSum uint32 // the decoded file's header checksum (the base id)
	// head is the decoded file's header and keys, which headSum covers,
	// until verify has checked them (nil: checked, or not from a file).
	head []byte
}

func newVectorStore(embedderID string, dim int) *vectorStore {
	return &vectorStore{embedderID: embedderID, dim: dim, pos: make(map[string]int), cols: make([][]float32, dim)}
}

func (s *vectorStore) len() int {
	if s.file != nil {
		return s.file.n
	}
	return len(s.ids)
}

// fileKeys are the keys of a sidecar read in place: rows' entries found
// through the file's offsets. Its methods never fail on corrupt bytes (a
// row whose entry is out of bounds reads as ""): the keys' checksum is
// checked only by a sync that reads them whole (vectorStore.verify).
type fileKeys struct {
	n         int
	keys, off []byte // the entries; n+1 u32 offsets into keys
}

// entry is row i's id and hash.
func (k *fileKeys) entry(i int) (id, hash string) {
	a, b := binary.LittleEndian.Uint32(k.off[4*i:]), binary.LittleEndian.Uint32(k.off[4*i+4:])
	if a > b || uint64(b) > uint64(len(k.keys)) {
		return "", ""
	}
	r := &sliceReader{b: k.keys[a:b]}
	idb, hb := r.blob16(), r.blob16()
	if r.err != nil || r.off != len(r.b) {
		return "", ""
	}
	return aliasString(idb), aliasString(hb)
}

// idAt is row i's id.
func (k *fileKeys) idAt(i int) string {
	id, _ := k.entry(i)
	return id
}

// keys decodes every row's id and hash (once): for the callers that walk
// or change the rows.
func (s *vectorStore) keys() {
	k := s.file
	if k == nil {
		return
	}
	s.file = nil
	s.ids, s.hashes = make([]string, k.n), make([]string, k.n)
	for i := range k.n {
		s.ids[i], s.hashes[i] = k.entry(i)
	}
}

// idAt is row i's id.
func (s *vectorStore) idAt(i int) string {
	if s.file != nil {
		return s.file.idAt(i)
	}
	return s.ids[i]
}

// find is the row of id.
func (s *vectorStore) find(id string) (int, bool) {
	var i int
	var ok bool
	switch {
	case s.pos != nil:
		i, ok = s.pos[id]
	case s.file != nil:
		i = sort.Search(s.file.n, func(r int) bool { return s.idAt(r) >= id })
		ok = i < s.file.n && s.idAt(i) == id
	default:
		i, ok = slices.BinarySearch(s.ids, id)
	}
	return i, ok && !s.isDead(i)
}

// mutable builds pos before the rows change order.
func (s *vectorStore) mutable() {
	s.keys()
	s.rows = nil
	if s.pos == nil {
		s.pos = make(map[string]int, len(s.ids))
		for i, id := range s.ids {
			s.pos[id] = i
		}
	}
}

// hash returns the content hash the id's vector was made from.
func (s *vectorStore) hash(id string) (string, bool) {
	i, ok := s.find(id)
	if !ok {
		return "", false
	}
	if s.file != nil {
		_, h := s.file.entry(i)
		return h, true
	}
	return s.hashes[i], true
}

// vector returns the id's vector rounded to half precision (so it reads the
// same from the file's rows as from the columns), or nil.
func (s *vectorStore) vector(id string) []float32 {
	i, ok := s.find(id)
	if !ok {
		return nil
	}
	v := make([]float32, s.dim)
	if row := 2 * i * s.dim; s.rows != nil && row+2*s.dim <= len(s.rows) {
		for c := range v {
			v[c] = halfToFloat(binary.LittleEndian.Uint16(s.rows[row+2*c:]))
		}
		return v
	}
	for c, col := range s.cols {
		v[c] = halfToFloat(floatToHalf(col[i]))
	}
	return v
}

// put sets the id's vector and hash, appending a row when new.
func (s *vectorStore) put(id, hash string, v []float32) {
	s.mutable()
	if i, ok := s.pos[id]; ok {
		for c, col := range s.cols {
			col[i] = v[c]
		}
		s.hashes[i] = hash
		return
	}
	s.pos[id] = len(s.ids)
	s.ids = append(s.ids, id)
	s.hashes = append(s.hashes, hash)
	s.growCols(1)
	for c := range s.cols {
		s.cols[c] = append(s.cols[c], v[c])
	}
}

// growCols makes room for n more rows in every column, all in one new
// block when any column lacks it (with room for a quarter more rows, at
// least 8): a column grown by append alone is dim allocations a row, and
// a hook puts its few rows into a delta whose columns are the file's
// (no room after them).
func (s *vectorStore) growCols(n int) {
	short := false
	for _, col := range s.cols {
		if cap(col)-len(col) < n {
			short = true
			break
		}
	}
	if !short || len(s.cols) == 0 {
		return
	}
	rows := len(s.cols[0])
	c := rows + max(n, rows/4, 8)
	block := make([]float32, len(s.cols)*c)
	for i, col := range s.cols {
		// Full slice expressions: appending to one column never overwrites the next.
		s.cols[i] = append(block[i*c:i*c:(i+1)*c], col...)
	}
}

// putRows is put of each of ids with its hash and vector. Rows new to
// the store are appended column by column (a row at a time wrote one value
// into each of dim columns).
func (s *vectorStore) putRows(ids, hashes []string, vecs [][]float32) {
	s.mutable()
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := s.pos[id]; ok || seen[id] {
			for i, id := range ids {
				s.put(id, hashes[i], vecs[i])
			}
			return
		}
		seen[id] = true
	}
	for i, id := range ids {
		s.pos[id] = len(s.ids)
		s.ids = append(s.ids, id)
		s.hashes = append(s.hashes, hashes[i])
	}
	s.growCols(len(vecs))
	for c := range s.cols {
		col := s.cols[c]
		for _, v := range vecs {
			col = append(col, v[c])
		}
		s.cols[c] = col
	}
}

// reserve makes room for n more rows, so that putting them does not grow
// every column by doubling (a rebuild of 100,000 lessons copied its 200 MB
// of columns over and over: a second of CPU).
func (s *vectorStore) reserve(n int) {
	s.mutable()
	s.ids, s.hashes = slices.Grow(s.ids, n), slices.Grow(s.hashes, n)
	s.growCols(n)
}

// remove deletes the id's row by moving the last row into its place.
func (s *vectorStore) remove(id string) {
	s.mutable()
	i, ok := s.pos[id]
	if !ok {
		return
	}
	last := len(s.ids) - 1
	if i != last {
		s.ids[i], s.hashes[i] = s.ids[last], s.hashes[last]
		for _, col := range s.cols {
			col[i] = col[last]
		}
		s.pos[s.ids[i]] = i
	}
	delete(s.pos, id)
	s.ids, s.hashes = s.ids[:last], s.hashes[:last]
	for c := range s.cols {
		s.cols[c] = s.cols[c][:last]
	}
}

// reset drops every row (a corpus refit re-embeds everything).
func (s *vectorStore) reset() {
	s.ids, s.hashes, s.rows, s.file, s.head = nil, nil, nil, nil, nil
	s.cols = make([][]float32, s.dim)
	s.pos = make(map[string]int)
}

// scored is one lesson with an arm's score.
type scored struct {
	id    string
	score float64
}

// search returns the n rows most similar to q (a normalised vector) by dot
// product, best first, skipping rows allow rejects and rows of cosine ≤ 0. Rows are normalised at
// embedding time, so the dot product is the cosine. The scan is brute
// force, one axpy per non-zero query component, split over two goroutines
// on large stores; allow is asked only about rows that would enter the
// current top n.
func (s *vectorStore) search(q []float32, n int, allow func(id string) bool) []scored {
	rows := s.len()
	if n <= 0 || len(q) != s.dim || rows == 0 {
		return nil
	}
	scores := make([]float32, rows)
	fill := func(lo, hi int) {
		out := scores[lo:hi]
		for c, qc := range q {
			if qc == 0 {
				continue
			}
			axpy(out, qc, s.cols[c][lo:hi])
		}
	}
	if rows*s.dim >= parallelDotWork {
		var wg sync.WaitGroup
		half := rows / 2
		wg.Add(1)
		go func() { defer wg.Done(); fill(0, half) }()
		fill(half, rows)
		wg.Wait()
	} else {
		fill(0, rows)
	}
	// Rows sharing something with the query (a non-finite score never
	// ranks), by score, then id; reach is asked of the best only.
	var cands []int
	for r, sc := range scores {
		if sc > 0 && !math.IsInf(float64(sc), 0) && !s.isDead(r) {
			cands = append(cands, r)
		}
	}
	better := func(a, b int) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return s.idAt(a) < s.idAt(b)
	}
	var keep func(int) bool
	if allow != nil {
		keep = func(r int) bool { return allow(s.idAt(r)) }
	}
	top := bestKept(cands, n, better, keep)
	out := make([]scored, len(top))
	for i, r := range top {
		out[i] = scored{id: s.idAt(r), score: float64(scores[r])}
	}
	return out
}

// parallelDotWork is the number of multiply-adds above which search splits
// the scan over two goroutines.
const parallelDotWork = 1 << 20

// axpy adds a·x to y, unrolled by four.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// errSidecarMismatch reports a sidecar written by another embedder, dim or
// format: the caller starts empty and re-embeds.
var errSidecarMismatch = errors.New("vector sidecar does not match the embedder")

// loadSidecar reads the sidecar at path. A missing file yields an empty
// store; a file of another embedder id, dim or format yields an empty store
// and errSidecarMismatch; a torn or corrupt file yields an empty store and
// its error. The caller rebuilds in every case but success.
func loadSidecar(path, embedderID string, dim int) (*vectorStore, error) {
	empty := newVectorStore(embedderID, dim)
	raw, release, err := fsutil.Map(path)
	if errors.Is(err, os.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return empty, fmt.Errorf("read vector sidecar: %w", err)
	}
	s, err := decodeSidecar(raw, embedderID, dim)
	if err != nil {
		release()
		return empty, err
	}
	s.release = release
	return s, nil
}

// close releases the store's file mapping; the store is empty afterwards.
func (s *vectorStore) close() {
	if s.release != nil {
		s.reset()
		s.release()
		s.release = nil
	}
}

func decodeSidecar(raw []byte, embedderID string, dim int) (*vectorStore, error) {
	if len(raw) < len(sidecarMagic)+16 || string(raw[:len(sidecarMagic)]) != sidecarMagic {
		return nil, fmt.Errorf("decode vector sidecar: %w (bad magic)", errSidecarMismatch)
	}
	body := raw
	r := &sliceReader{b: body, off: len(sidecarMagic)}
	format, fdim, count := r.u32(), r.u32(), r.u32()
	gotID := string(r.blob32(maxSidecarID))
	if r.err == nil && (format != sidecarFormat && format != sidecarFormatNoOffsets || gotID != embedderID || int(fdim) != dim) {
		return nil, fmt.Errorf("decode vector sidecar (format %d, embedder %q, dim %d): %w",
			format, gotID, fdim, errSidecarMismatch)
	}
	state := r.blob32(maxSidecarBlob)
	s := newVectorStore(embedderID, dim)
	if len(state) > 0 {
		s.state = state // aliases raw, like the columns
	}
	if r.err != nil {
		return nil, errors.New("decode vector sidecar: truncated header")
	}
	if uint64(count)*uint64(dim)*4 > uint64(len(body)) || uint64(count)*4 > uint64(len(body)) {
		return nil, errors.New("decode vector sidecar: count exceeds file")
	}
	s.pos = nil
	if format == sidecarFormatNoOffsets {
		s.ids = make([]string, 0, count)
		s.hashes = make([]string, 0, count)
		for i := 0; i < int(count) && r.err == nil; i++ {
			id, h := aliasString(r.blob16()), aliasString(r.blob16())
			if i > 0 && s.ids[i-1] >= id {
				return nil, fmt.Errorf("decode vector sidecar: id %q out of order", id)
			}
			s.ids = append(s.ids, id)
			s.hashes = append(s.hashes, h)
		}
		r.off = (r.off + 3) &^ 3
	} else {
		// The keys stay in the file, found by their offsets; each entry
		// is checked when read (fileKeys.entry). The offsets' and the
		// ids' order are the writer's: verify checks both, with the
		// checksum that covers them.
		if uint64(count+1)*4 > uint64(len(body)) {
			return nil, errors.New("decode vector sidecar: count exceeds file")
		}
		k := &fileKeys{n: int(count), off: r.take(4 * (int(count) + 1))}
		if r.err == nil {
			k.keys = r.take(int(binary.LittleEndian.Uint32(k.off[4*count:])))
		}
		r.off = (r.off + 3) &^ 3
		s.file = k
	}
	headerEnd := r.off
	sum := r.u32()
	if r.err != nil {
		return nil, errors.New("decode vector sidecar: truncated")
	}
	// The keys' checksum and order are left to verify: a hook's sync of
	// one changed lesson looks up a few keys, where checking them reads
	// every page of them (about 200 at 10,000 lessons).
	s.headSum, s.head = sum, body[:headerEnd]
	n := int(count) * dim
	if r.off+6*n != len(body) {
		return nil, errors.New("decode vector sidecar: truncated")
	}
	block := floatsLE(body[r.off : r.off+4*n])
	s.rows = body[r.off+4*n:]
	for c := range s.cols {
		// Full slice expressions: appending to one column never overwrites the next.
		s.cols[c] = block[c*int(count) : (c+1)*int(count) : (c+1)*int(count)]
	}
	return s, nil
}

// errSidecarChecksum reports a sidecar whose keys do not match their
// checksum.
var errSidecarChecksum = errors.New("vector sidecar: checksum mismatch")

// verify checks the keys of a store read from a file against their
// checksum, once. The sidecar is written whole, synced and renamed, and
// never changed in place, and every read of its keys is bounds-checked, so
// a sync of a change set and a search trust it unchecked, as they do the
// catalog's base (Index.verified); a sync that reads every key (from a
// listing, or a merge into a new base) and borg doctor check it first.
func (s *vectorStore) verify() error {
	if s.head == nil {
		return nil
	}
	fsutil.Prefault(s.head) // the checksum reads every page of the keys
	if crc32.ChecksumIEEE(s.head) != s.headSum {
		return errSidecarChecksum
	}
	if k := s.file; k != nil {
		prev := uint32(0)
		for i := range k.n + 1 {
			o := binary.LittleEndian.Uint32(k.off[4*i:])
			if (i == 0 && o != 0) || o < prev {
				return errors.New("vector sidecar: key offsets out of order")
			}
			prev = o
		}
	}
	if s.pos == nil {
		// The rows are as the file holds them (decoded or not): in order.
		for i := range s.len() {
			if id := s.idAt(i); id == "" || (i > 0 && s.idAt(i-1) >= id) {
				return fmt.Errorf("vector sidecar: id %q out of order", id)
			}
		}
	}
	s.head = nil
	return nil
}

// floatsLE views little-endian float32 bytes as []float32 without copying
// when the machine is little-endian and b is aligned (the file's vector
// block is padded to 4 bytes and os.ReadFile's buffer is word-aligned), and
// decodes them into a new slice otherwise. The view aliases b, which the
// caller must never modify afterwards.
func floatsLE(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if nativeLittleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// aliasString views b as a string without copying; b must never change.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// save writes the sidecar atomically (writeFileAtomic), streamed into the
// file rather than built in memory first: a rebuild of 100,000 lessons
// allocated, faulted in and copied a 300 MB buffer for it. The columns go
// out as they are when the rows are in id order (a rebuild's), and the
// half-precision rows are converted on both cores, each part written at
// its offset.
func (s *vectorStore) save(path string) error {
	hdr, perm, err := s.encodeHeader()
	if err == nil {
		err = fsutil.WriteFileAtomicFunc(path, 0o644, func(f *os.File) error { return s.writeBody(f, hdr, perm) })
	}
	if err != nil {
		return fmt.Errorf("save vector sidecar: %w (delete %s to rebuild it)", err, filepath.Dir(path))
	}
	return nil
}

// encodeHeader is the file up to the vectors: magic, counts, embedder,
// state, keys in id order, padding and checksum. perm lists the rows in id
// order, nil when they are in it already.
func (s *vectorStore) encodeHeader() (hdr []byte, perm []int, err error) {
	s.keys()
	size := 68 + len(s.embedderID) + len(s.state) + 8*len(s.ids)
	for i, id := range s.ids {
		size += len(id) + len(s.hashes[i])
	}
	le := binary.LittleEndian
	hdr = make([]byte, 0, size)
	hdr = append(hdr, sidecarMagic...)
	hdr = le.AppendUint32(hdr, sidecarFormat)
	hdr = le.AppendUint32(hdr, uint32(s.dim))
	hdr = le.AppendUint32(hdr, uint32(len(s.ids)))
	hdr = le.AppendUint32(hdr, uint32(len(s.embedderID)))
	hdr = append(hdr, s.embedderID...)
	hdr = le.AppendUint32(hdr, uint32(len(s.state)))
	hdr = append(hdr, s.state...)
	// Rows go out in id order (decode checks it and finds ids by binary
	// search).
	if !slices.IsSorted(s.ids) {
		perm = make([]int, len(s.ids))
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, func(a, b int) int { return strings.Compare(s.ids[a], s.ids[b]) })
	}
	// The keys' offsets, then the keys.
	table := len(hdr)
	hdr = append(hdr, make([]byte, 4*(len(s.ids)+1))...)
	keysAt := len(hdr)
	for k := range s.ids {
		i := k
		if perm != nil {
			i = perm[k]
		}
		id := s.ids[i]
		if len(id) > math.MaxUint16 || len(s.hashes[i]) > math.MaxUint16 {
			return nil, nil, fmt.Errorf("encode vector sidecar: id %q too long", id)
		}
		le.PutUint32(hdr[table+4*k:], uint32(len(hdr)-keysAt))
		hdr = le.AppendUint16(hdr, uint16(len(id)))
		hdr = append(hdr, id...)
		hdr = le.AppendUint16(hdr, uint16(len(s.hashes[i])))
		hdr = append(hdr, s.hashes[i]...)
	}
	if len(hdr)-keysAt > math.MaxUint32 {
		return nil, nil, errors.New("encode vector sidecar: keys over 4 GiB")
	}
	le.PutUint32(hdr[table+4*len(s.ids):], uint32(len(hdr)-keysAt))
	for len(hdr)%4 != 0 {
		hdr = append(hdr, 0)
	}
	return le.AppendUint32(hdr, crc32.ChecksumIEEE(hdr)), perm, nil
}

// writeBody writes hdr, then the columns, then the rows, in id order (perm,
// or the rows' own order when nil), each part at its offset in f.
func (s *vectorStore) writeBody(f io.WriterAt, hdr []byte, perm []int) error {
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return err
	}
	n := len(s.ids)
	row := func(k int) int {
		if perm != nil {
			return perm[k]
		}
		return k
	}
	colsAt := int64(len(hdr))
	rowsAt := colsAt + 4*int64(n)*int64(s.dim)
	var errs [parallelParts]error
	// The columns, one write each.
	var vals [parallelParts][]float32
	var bufs [parallelParts][]byte
	parallel(s.dim, func(part, lo, hi int) {
		for c := lo; c < hi && errs[part] == nil; c++ {
			col := s.cols[c][:n]
			if perm != nil {
				if vals[part] == nil {
					vals[part] = make([]float32, n)
				}
				for k := range vals[part] {
					vals[part][k] = col[perm[k]]
				}
				col = vals[part]
			}
			if !nativeLittleEndian && bufs[part] == nil {
				bufs[part] = make([]byte, 4*n)
			}
			_, errs[part] = f.WriteAt(floatBytesLE(col, bufs[part]), colsAt+4*int64(n)*int64(c))
		}
	})
	// The rows, a block of them per write, transposed in tiles so that
	// both the columns read and the rows written stay in cache.
	const tile, block = 64, 512
	var halves [parallelParts][]uint16
	var outs [parallelParts][]byte
	parallel((n+block-1)/block, func(part, lo, hi int) {
		if halves[part] == nil {
			halves[part], outs[part] = make([]uint16, tile*s.dim), make([]byte, 0, 2*block*s.dim)
		}
		half := halves[part]
		for b := lo; b < hi && errs[part] == nil; b++ {
			out := outs[part][:0]
			for t := b * block; t < min((b+1)*block, n); t += tile {
				rows := min(tile, n-t)
				for c, col := range s.cols {
					for k := range rows {
						// floatToHalf, its common case written out (too large to inline).
						bits := math.Float32bits(col[row(t+k)])
						if a := bits & 0x7fffffff; a >= 0x38800000 && a < 0x47800000 {
							half[k*s.dim+c] = uint16(bits>>16)&0x8000 | uint16((a+0xfff+(a>>13&1)-0x38000000)>>13)
						} else {
							half[k*s.dim+c] = floatToHalfRare(bits)
						}
					}
				}
				for _, h := range half[:rows*s.dim] {
					out = binary.LittleEndian.AppendUint16(out, h)
				}
			}
			_, errs[part] = f.WriteAt(out, rowsAt+2*int64(b)*block*int64(s.dim))
		}
	})
	return errors.Join(errs[:]...)
}

// floatBytesLE is vals as little-endian bytes: a view of them on a
// little-endian machine, else encoded into buf (4 bytes per value).
func floatBytesLE(vals []float32, buf []byte) []byte {
	if len(vals) == 0 {
		return nil
	}
	if nativeLittleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), 4*len(vals))
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return buf[:4*len(vals)]
}

// floatToHalf rounds f to the nearest IEEE 754 half-precision value (ties
// to even; overflow to infinity, NaN kept). The common case, a normal half
// (2^-14 ≤ |f| < 2^16), is handled inline: rebias the exponent and round
// the dropped 13 bits (a carry into the exponent is still right, up to
// infinity).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	if abs := b & 0x7fffffff; abs >= 0x38800000 && abs < 0x47800000 {
		return uint16(b>>16)&0x8000 | uint16((abs+0xfff+(abs>>13&1)-0x38000000)>>13)
	}
	return floatToHalfRare(b)
}

// floatToHalfRare is floatToHalf outside the normal halves: NaN, values
// too large (infinity), and zero or subnormal halves.
func floatToHalfRare(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	switch abs := b & 0x7fffffff; {
	case abs > 0x7f800000:
		return sign | 0x7e00 // NaN
	case abs >= 0x47800000:
		return sign | 0x7c00 // infinity
	}
	exp := int(b>>23&0xff) - 127 + 15 // ≤ 0 here
	if exp < -10 {
		return sign // rounds to zero
	}
	man := b&0x7fffff | 0x800000
	shift := uint32(14 - exp)
	half := man >> shift
	rem := man & (1<<shift - 1)
	if mid := uint32(1) << (shift - 1); rem > mid || (rem == mid && half&1 == 1) {
		half++
	}
	return sign | uint16(half)
}

// halfToFloat widens an IEEE 754 half-precision value exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(man) / (1 << 24) // subnormal: man × 2^-24
		if sign != 0 {
			return -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// sliceReader reads little-endian fields, latching the first overrun.
type sliceReader struct {
	b   []byte
	off int
	err error
}

func (r *sliceReader) take(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *sliceReader) u32() uint32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

func (r *sliceReader) blob32(limit int) []byte {
	n := r.u32()
	if int64(n) > int64(limit) {
		r.err = errors.New("field too long")
		return nil
	}
	return r.take(int(n))
}

func (r *sliceReader) blob16() []byte {
	p := r.take(2)
	if p == nil {
		return nil
	}
	return r.take(int(binary.LittleEndian.Uint16(p)))
}
