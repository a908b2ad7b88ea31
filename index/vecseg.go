package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// The vector sidecar is segmented as the catalog is (segment.go): an
// immutable base (vectors.bin) plus a delta (vectors.delta) of the lessons
// embedded since, and the base rows they replaced or that were deleted. The
// delta names its base (the base header's checksum and row count) and is
// read first, so a reader sees a committed state without a manifest.
//
// The n-gram embedder's corpus IDF (embed.go) is the base's: a delta's
// vectors are embedded with the weights the base was fitted with, exactly
// as new lessons were before segments, until the corpus drifts past
// refitDrift and a sync refits and writes a new base of every vector.
//
// vectors.delta, little-endian:
//
//	magic "BORGVDL1" | u32 format | u64 base id | u32 dim | u32 tombstones
//	| u32 count | tombstones × u32 base rows, increasing
//	| count × (u16 len + lesson id, u16 len + content hash), ids increasing
//	| zero padding to a multiple of 4 | u32 CRC-32 (IEEE) of all before
//	| count × dim float32, row-major | u32 CRC-32 (IEEE) of the rows
//
// (The rows' checksum is format 2: the delta is written without an fsync,
// see deltaWrite, and its rows are copied into every later delta.)
const (
	vecDeltaMagic  = "BORGVDL1"
	vecDeltaFormat = 2
	vecDeltaName   = "vectors.delta"
)

// vecView is the vector arm as queries see it: the base store minus its
// dead rows, plus the delta store (in memory, small).
type vecView struct {
	base  *vectorStore
	delta *vectorStore
	dim   int
}

func newVecView(base *vectorStore) *vecView {
	return &vecView{base: base, delta: newVectorStore(base.embedderID, base.dim), dim: base.dim}
}

func (v *vecView) len() int { return v.base.live() + v.delta.len() }

func (v *vecView) hash(id string) (string, bool) {
	if h, ok := v.delta.hash(id); ok {
		return h, true
	}
	return v.base.hash(id)
}

func (v *vecView) vector(id string) []float32 {
	if _, ok := v.delta.find(id); ok {
		return v.delta.vector(id)
	}
	return v.base.vector(id)
}

// join returns the hash of each of ids (sorted; "" when it has no
// vector) and the live rows whose id is not among ids. A decoded base is
// merged with ids in order (its rows are sorted); a changed one is asked
// by its map.
func (v *vecView) join(ids []string) (hashes, gone []string) {
	hashes = make([]string, len(ids))
	b := v.base
	b.keys()
	if b.pos == nil {
		k := 0
		for i, id := range ids {
			for k < len(b.ids) && b.ids[k] < id {
				if !b.isDead(k) {
					gone = append(gone, b.ids[k])
				}
				k++
			}
			if k < len(b.ids) && b.ids[k] == id {
				if !b.isDead(k) {
					hashes[i] = b.hashes[k]
				}
				k++
			}
		}
		for ; k < len(b.ids); k++ {
			if !b.isDead(k) {
				gone = append(gone, b.ids[k])
			}
		}
	} else {
		in := make(map[string]bool, len(ids))
		for i, id := range ids {
			in[id] = true
			if h, ok := b.hash(id); ok {
				hashes[i] = h
			}
		}
		for r, id := range b.ids {
			if !b.isDead(r) && !in[id] {
				gone = append(gone, id)
			}
		}
	}
	for r, id := range v.delta.ids {
		i, ok := slices.BinarySearch(ids, id)
		if ok {
			hashes[i] = v.delta.hashes[r]
		} else {
			gone = append(gone, id)
		}
	}
	return hashes, gone
}

// ids lists the live rows' lesson ids.
func (v *vecView) ids() []string {
	out := make([]string, 0, v.len())
	v.base.keys()
	for i, id := range v.base.ids {
		if !v.base.isDead(i) {
			out = append(out, id)
		}
	}
	return append(out, v.delta.ids...)
}

// search is vectorStore.search over both stores: the best n by score, then
// id, as one store of the same rows would rank them.
//
// The base's ids alias its file mapping: the hits' ids are copies, since
// they leave the index (a Query.UsefulFunc may keep them).
func (v *vecView) search(q []float32, n int, allow func(id string) bool) []scored {
	out := v.base.search(q, n, allow)
	for i := range out {
		out[i].id = strings.Clone(out[i].id)
	}
	if v.delta.len() == 0 {
		return out
	}
	out = append(out, v.delta.search(q, n, allow)...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out[:min(n, len(out))]
}

func (v *vecView) close() {
	v.base.close()
	v.delta = newVectorStore(v.base.embedderID, v.dim)
}

// baseID names a decoded base sidecar.
func (s *vectorStore) baseID() uint64 { return uint64(s.headSum)<<32 | uint64(s.len()) }

// deadRows lists the tombstoned rows.
func (s *vectorStore) deadRows() []int {
	var out []int
	for r, d := range s.dead {
		if d {
			out = append(out, r)
		}
	}
	return out
}

func (s *vectorStore) isDead(row int) bool { return s.dead != nil && s.dead[row] }

// live is the number of rows not tombstoned.
func (s *vectorStore) live() int { return s.len() - s.ndead }

// fold makes s a mutable store of its live rows plus delta's (a merge).
func (s *vectorStore) fold(delta *vectorStore) {
	s.keys()
	if s.ndead > 0 {
		var gone []string
		for i, id := range s.ids {
			if s.dead[i] {
				gone = append(gone, id)
			}
		}
		s.dead, s.ndead = nil, 0
		for _, id := range gone {
			s.remove(id)
		}
	}
	s.dead, s.ndead = nil, 0
	for i, id := range delta.ids {
		v := make([]float32, s.dim)
		for c, col := range delta.cols {
			v[c] = col[i]
		}
		s.put(id, delta.hashes[i], v)
	}
}

// errVecDelta reports a vector delta that is torn or corrupt: the lessons
// it held have no vectors until a sync embeds them again.
var errVecDelta = errors.New("vector delta corrupt")

// loadVecView reads the sidecar segments in dir, the delta first. A delta
// written over another base is ignored (the base holds everything it did:
// a merge's leftover). A corrupt one is ignored too, and reported with
// errVecDelta beside the view of the base alone, so the caller knows the
// vectors are incomplete.
func loadVecView(dir, embedderID string, dim int) (*vecView, error) {
	// The delta is mapped, not read: decodeVecDelta copies what it keeps,
	// and a copy would fault in fresh memory for every page of it.
	draw, release, err := fsutil.Map(filepath.Join(dir, vecDeltaName))
	if err == nil {
		defer release()
	}
	base, berr := loadSidecar(filepath.Join(dir, sidecarName), embedderID, dim)
	v := newVecView(base)
	if berr != nil || err != nil {
		return v, berr
	}
	delta, dead, err := decodeVecDelta(draw, base)
	switch {
	case errors.Is(err, errVecOtherBase):
		return v, nil
	case err != nil:
		return v, fmt.Errorf("%s: %w: %w", filepath.Join(dir, vecDeltaName), errVecDelta, err)
	}
	base.setDead(dead)
	v.delta = delta
	return v, nil
}

// errVecOtherBase reports a vector delta written over another sidecar.
var errVecOtherBase = errors.New("decode vector delta: another base")

func (s *vectorStore) setDead(rows []int) {
	s.dead, s.ndead = nil, len(rows)
	if len(rows) > 0 {
		s.dead = make([]bool, s.len())
		for _, r := range rows {
			s.dead[r] = true
		}
	}
}

func decodeVecDelta(raw []byte, base *vectorStore) (*vectorStore, []int, error) {
	r := &sliceReader{b: raw}
	if string(r.take(len(vecDeltaMagic))) != vecDeltaMagic || r.u32() != vecDeltaFormat {
		return nil, nil, errors.New("decode vector delta: bad magic or format")
	}
	id, dim, nt, count := r.u64(), int(r.u32()), int(r.u32()), int(r.u32())
	if r.err != nil || dim != base.dim || nt > base.len() || uint64(count)*uint64(dim)*4 > uint64(len(raw)) {
		return nil, nil, errors.New("decode vector delta: bad header")
	}
	if id != base.baseID() {
		return nil, nil, errVecOtherBase
	}
	dead := r.ords(nt, base.len())
	d := newVectorStore(base.embedderID, dim)
	ids, hashes := make([]string, 0, count), make([]string, 0, count)
	for i := 0; i < count && r.err == nil; i++ {
		id, h := string(r.blob16()), string(r.blob16())
		if i > 0 && ids[i-1] >= id {
			return nil, nil, errors.New("decode vector delta: ids out of order")
		}
		ids, hashes = append(ids, id), append(hashes, h)
	}
	r.off = (r.off + 3) &^ 3
	end := r.off
	sum := r.u32()
	if r.err != nil || crc32.ChecksumIEEE(raw[:end]) != sum || len(raw)-r.off != 4*count*dim+4 ||
		crc32.ChecksumIEEE(raw[r.off:len(raw)-4]) != binary.LittleEndian.Uint32(raw[len(raw)-4:]) {
		return nil, nil, errors.New("decode vector delta: checksum mismatch or truncated")
	}
	// One block for the rows, with room for the few a hook's sync adds.
	d.reserve(count + 8)
	vec := make([]float32, dim)
	for i := range ids {
		for c := range vec {
			vec[c] = math.Float32frombits(binary.LittleEndian.Uint32(raw[r.off+4*(i*dim+c):]))
		}
		d.put(ids[i], hashes[i], vec)
	}
	return d, dead, nil
}

// encodeVecDelta builds the delta file of d over base with dead base rows.
func encodeVecDelta(base, d *vectorStore, dead []int) ([]byte, error) {
	d.keys()
	le := binary.LittleEndian
	// Sized to its bound: grown by appending, a hook's delta was copied
	// over and over into fresh memory.
	size := len(vecDeltaMagic) + 24 + 4*len(dead) + 3 + 4 + 4*d.len()*len(d.cols) + 4
	for i := range d.ids {
		size += 4 + len(d.ids[i]) + len(d.hashes[i])
	}
	out := make([]byte, 0, size)
	out = append(out, vecDeltaMagic...)
	out = le.AppendUint32(out, vecDeltaFormat)
	out = le.AppendUint64(out, base.baseID())
	out = le.AppendUint32(out, uint32(base.dim))
	out = le.AppendUint32(out, uint32(len(dead)))
	out = le.AppendUint32(out, uint32(d.len()))
	for _, r := range dead {
		out = le.AppendUint32(out, uint32(r))
	}
	perm := make([]int, d.len())
	for i := range perm {
		perm[i] = i
	}
	sort.Slice(perm, func(a, b int) bool { return d.ids[perm[a]] < d.ids[perm[b]] })
	for _, i := range perm {
		if len(d.ids[i]) > math.MaxUint16 || len(d.hashes[i]) > math.MaxUint16 {
			return nil, errors.New("encode vector delta: id too long")
		}
		out = le.AppendUint16(out, uint16(len(d.ids[i])))
		out = append(out, d.ids[i]...)
		out = le.AppendUint16(out, uint16(len(d.hashes[i])))
		out = append(out, d.hashes[i]...)
	}
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	out = le.AppendUint32(out, crc32.ChecksumIEEE(out))
	rows := len(out)
	for _, i := range perm {
		for _, col := range d.cols {
			out = le.AppendUint32(out, math.Float32bits(col[i]))
		}
	}
	return le.AppendUint32(out, crc32.ChecksumIEEE(out[rows:])), nil
}
