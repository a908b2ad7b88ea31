package domain

import (
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
)

// summaryMagic starts an encoded Summary; it changes with the layout.
const summaryMagic = "BSM6"

// ErrSummaryCorrupt is returned by ParseSummary for bytes AppendBinary did
// not write (and by AppendBinary for a parsed summary found corrupt since).
var ErrSummaryCorrupt = errors.New("corrupt summary")

// errSummaryTooLarge is returned by AppendBinary for a summary whose ids or
// records pass the 4 GiB its offsets can address.
var errSummaryTooLarge = errors.New("summary too large to encode")

type sumWriter struct{ b []byte }

func (w *sumWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *sumWriter) int(n int64)   { w.b = binary.AppendVarint(w.b, n) }
func (w *sumWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// offsets reserves a table of n+1 little-endian u32 offsets (the first, 0,
// stays) and returns its position.
func (w *sumWriter) offsets(n int) int {
	at := len(w.b)
	w.b = append(w.b, make([]byte, 4*(n+1))...)
	return at
}

// setOffset sets entry i of the table at tab to the bytes written since
// start; false when they overflow it.
func (w *sumWriter) setOffset(tab, i, start int) bool {
	n := len(w.b) - start
	if uint64(n) > math.MaxUint32 {
		return false
	}
	binary.LittleEndian.PutUint32(w.b[tab+4*i:], uint32(n))
	return true
}

func appendMark(w *sumWriter, m Mark) {
	w.int(m.MS)
	w.str(m.ID)
	w.str(string(m.Kind))
	w.str(m.Session)
	w.str(m.Repo)
	w.str(m.Author)
}

// appendRecord appends a lesson's record (lessonTable.decode reads it):
// its counts, regret credit, creation, repo and author tallies and uses.
// mark is scratch space.
func appendRecord(w *sumWriter, ls *lessonSum, mark *sumWriter) {
	for _, n := range []int{ls.changed, ls.ignored, ls.corrected, ls.vetoed, ls.tested, ls.asked, ls.vouched} {
		w.int(int64(n))
	}
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(ls.regretted))
	if ls.hasCreated {
		w.b = append(w.b, 1)
		w.int(int64(ls.createdPos))
		raw := ls.createdRaw
		if raw == nil {
			mark.b = mark.b[:0]
			appendMark(mark, *ls.created)
			raw = mark.b
		}
		w.uint(uint64(len(raw)))
		w.b = append(w.b, raw...)
	} else {
		w.b = append(w.b, 0)
	}
	for _, t := range []tally{ls.repos, ls.authors} {
		w.uint(uint64(len(t)))
		for _, c := range t {
			w.uint(uint64(c.v))
			w.uint(uint64(c.n))
			w.uint(uint64(c.milli))
		}
	}
	uses := ls.uses
	if ls.unsorted {
		uses = slices.Sorted(slices.Values(uses))
	}
	w.uint(uint64(len(uses)))
	prev := int32(-1)
	for _, p := range uses {
		w.uint(uint64(p - prev))
		prev = p
	}
}

// AppendBinary appends the summary's encoding to b. The layout: the values
// as varints; the lessons as a table of offsets into their ids and one into
// their records (each record varints), so that ParseSummary decodes neither;
// then the evidence block, the clock's columns and the key table at fixed
// widths, which ParseSummary reads in place. It decodes every lesson of a
// parsed summary, and returns ErrSummaryCorrupt when one is corrupt.
func (s *Summary) AppendBinary(b []byte) ([]byte, error) {
	defer runtime.KeepAlive(s) // see ParseSummary
	// The encoding is about as large as what it was parsed from: sized once,
	// the buffer is not copied over and over as it grows.
	b = slices.Grow(b, len(s.keys)+s.table.size()+keyRecord*len(s.more)+64*len(s.fresh)+
		16*s.clockMS.len()+len(s.evidence)+4096)
	if !s.loadAll() {
		return nil, ErrSummaryCorrupt
	}
	if _, ok := s.refreshRegrets(Weights{RegretMax: s.regretMax}); !ok {
		return nil, ErrSummaryCorrupt
	}
	w := &sumWriter{b: append(b, summaryMagic...)}
	w.uint(uint64(len(s.vals)))
	for _, v := range s.vals {
		w.str(v)
	}
	w.str(s.last)
	w.int(s.freeMS)
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(s.regretMax))

	lessons := make([]*lessonSum, 0, len(s.lessons)+len(s.fresh))
	lessons = append(lessons, s.lessons...)
	for _, ls := range s.fresh {
		lessons = append(lessons, ls)
	}
	slices.SortFunc(lessons, func(a, b *lessonSum) int { return strings.Compare(a.id, b.id) })
	w.uint(uint64(len(lessons)))
	tab, start := w.offsets(len(lessons)), len(w.b)
	for i, ls := range lessons {
		w.b = append(w.b, ls.id...)
		if !w.setOffset(tab, i+1, start) {
			return nil, errSummaryTooLarge
		}
	}
	tab, start = w.offsets(len(lessons)), len(w.b)
	var mark sumWriter
	for i, ls := range lessons {
		appendRecord(w, ls, &mark)
		if !w.setOffset(tab, i+1, start) {
			return nil, errSummaryTooLarge
		}
	}

	if s.evidence != nil {
		w.uint(uint64(len(s.evidence)))
		w.b = append(w.b, s.evidence...)
	} else {
		var ev sumWriter
		ev.uint(uint64(len(s.regrets)))
		for _, id := range slices.Sorted(maps.Keys(s.regrets)) {
			r := s.regrets[id]
			ev.str(id)
			ev.str(r.Session)
			ev.str(r.Lesson)
			ev.b = binary.LittleEndian.AppendUint64(ev.b, math.Float64bits(r.W))
		}
		ev.uint(uint64(len(s.corrections)))
		for _, session := range slices.Sorted(maps.Keys(s.corrections)) {
			times := slices.Sorted(maps.Keys(s.corrections[session]))
			ev.str(session)
			ev.uint(uint64(len(times)))
			for _, t := range times {
				ev.int(t)
			}
		}
		w.uint(uint64(len(ev.b)))
		w.b = append(w.b, ev.b...)
	}

	n := s.clockMS.len()
	w.uint(uint64(n))
	for i := 0; i < n; i++ {
		w.b = binary.LittleEndian.AppendUint64(w.b, uint64(s.clockMS.at(i)))
	}
	for _, c := range []*col32{&s.clockRepo, &s.clockBy} {
		for i := 0; i < n; i++ {
			w.b = binary.LittleEndian.AppendUint32(w.b, c.at(i))
		}
	}

	// The key table merged with the keys added since, which win.
	more := make([]keyRec, 0, len(s.more))
	for k, v := range s.more {
		more = append(more, keyRec{k, v})
	}
	slices.SortFunc(more, func(a, b keyRec) int { return compareKeys(a.k, b.k) })
	// Each added key's place is found by binary search and the run of old
	// keys before it copied whole (a few added keys among a million).
	nb := s.keys.len()
	at := make([]int, len(more))
	count := nb
	for j, i := 0, 0; j < len(more); j++ {
		i = s.keys.search(more[j].k, i)
		at[j] = i
		if i >= nb || s.keys.key(i) != more[j].k {
			count++
		}
	}
	w.uint(uint64(count))
	i := 0
	for j, r := range more {
		w.b = append(w.b, s.keys[i*keyRecord:at[j]*keyRecord]...)
		i = at[j]
		if i < nb && s.keys.key(i) == r.k {
			i++
		}
		w.b = appendKeyRecord(w.b, r.k, r.v)
	}
	w.b = append(w.b, s.keys[i*keyRecord:]...)

	// The lesson → lesson passings, by id.
	w.uint(uint64(len(s.passings)))
	for _, id := range slices.Sorted(maps.Keys(s.passings)) {
		e := s.passings[id]
		w.str(id)
		w.int(e.MS)
		w.str(e.Session)
		w.str(e.Src)
		w.str(e.SrcV)
		w.str(e.Dst)
		w.str(e.DstV)
	}
	return w.b, nil
}

type sumReader struct {
	b   []byte
	i   int
	err error
}

func (r *sumReader) fail() { r.err = ErrSummaryCorrupt }

func (r *sumReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b[r.i:])
	if k <= 0 {
		r.fail()
		return 0
	}
	r.i += k
	return n
}

func (r *sumReader) int() int64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Varint(r.b[r.i:])
	if k <= 0 {
		r.fail()
		return 0
	}
	r.i += k
	return n
}

// count reads a length of items of at least size bytes each, refusing one the
// bytes left cannot hold.
func (r *sumReader) count(size int) int {
	n := r.uint()
	if r.err == nil && n > uint64((len(r.b)-r.i)/size) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *sumReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.i {
		r.fail()
		return nil
	}
	r.i += n
	return r.b[r.i-n : r.i : r.i]
}

func (r *sumReader) byte() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *sumReader) str() string { return string(r.bytes(r.count(1))) }

func (r *sumReader) float() float64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// ParseSummary reads a summary AppendBinary wrote. The summary keeps
// referring to data (its clock, key table and lesson table are read in
// place), so data must neither change nor go away while the summary is
// reachable; every method that reads data keeps the summary alive until it
// returns, so a caller may release data when the summary is collected
// (runtime.AddCleanup).
//
// It reads no lesson: each lesson's record is decoded when first asked for,
// so parsing costs the same however many lessons there are. ParseSummary
// checks the layout (every section's bounds); a record, and the order of the
// ids, is checked when decoded (see Summary.at and loadAll).
func ParseSummary(data []byte) (*Summary, error) {
	if len(data) < len(summaryMagic) || string(data[:len(summaryMagic)]) != summaryMagic {
		return nil, ErrSummaryCorrupt
	}
	r := &sumReader{b: data, i: len(summaryMagic)}
	s := newSummary()
	nv := r.count(1)
	s.vals = make([]string, 0, nv)
	for range nv {
		s.vals = append(s.vals, r.str())
	}
	if r.err == nil && (len(s.vals) == 0 || s.vals[0] != "") {
		r.fail()
	}
	s.last = r.str()
	s.freeMS = r.int()
	s.regretMax = r.float()

	// The lessons: a table of offsets into their ids, then one into their
	// records, each followed by the blob it indexes.
	nl := r.count(8)
	blob := func() (off, b []byte) {
		off = r.bytes(4 * (nl + 1))
		if off == nil || binary.LittleEndian.Uint32(off) != 0 {
			r.fail()
			return nil, nil
		}
		return off, r.bytes(int(binary.LittleEndian.Uint32(off[4*nl:])))
	}
	t := &lessonTable{nvals: uint64(len(s.vals))}
	t.idOff, t.ids = blob()
	t.recOff, t.recs = blob()

	s.evidence = r.bytes(r.count(1))
	if len(s.evidence) == 0 {
		r.fail() // an empty block still holds its two counts
	}

	n := r.count(16)
	s.clockMS.b = r.bytes(8 * n)
	s.clockRepo.b = r.bytes(4 * n)
	s.clockBy.b = r.bytes(4 * n)
	nk := r.count(keyRecord)
	s.keys = keyTable(r.bytes(keyRecord * nk))
	for range r.count(7) {
		e := Event{Kind: KindPassing, ID: r.str(), MS: r.int(), Session: r.str(), Src: r.str(), SrcV: r.str(), Dst: r.str(), DstV: r.str()}
		if r.err == nil && !lessonPassing(e) {
			r.fail()
		}
		s.passings[e.ID] = e
	}
	if r.err == nil && r.i != len(r.b) {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	s.lessons = make([]*lessonSum, nl)
	s.table = t
	return s, nil
}

// lessonTable is the lessons section of an encoded summary, read in place:
// each lesson's id and record are spans of a blob, found by index in a table
// of offsets (count+1 little-endian u32, the first 0, each at least the one
// before: checked when read).
// size is the table's encoded size (0 for none).
func (t *lessonTable) size() int {
	if t == nil {
		return 0
	}
	return len(t.idOff) + len(t.ids) + len(t.recOff) + len(t.recs)
}

type lessonTable struct {
	idOff, ids   []byte
	recOff, recs []byte
	// nvals is how many values the records may refer to (those parsed; more
	// are added by Fold).
	nvals uint64
	// The decoded lessons, their uses and tallies are cut from these, a
	// block at a time.
	sums   []lessonSum
	uses   []int32
	counts []valCount
}

// span is entry i of a table of offsets into blob; false when the offsets
// are out of order or out of bounds.
func span(off, blob []byte, i int) ([]byte, bool) {
	a, b := binary.LittleEndian.Uint32(off[4*i:]), binary.LittleEndian.Uint32(off[4*i+4:])
	if a > b || uint64(b) > uint64(len(blob)) {
		return nil, false
	}
	return blob[a:b:b], true
}

// cut returns n elements cut from the block *slab, starting a new one (of
// at least block elements) when it has too few left; nil for none.
func cut[T any](slab *[]T, n, block int) []T {
	if n == 0 {
		return nil
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]T, 0, max(n, block))
	}
	k := len(*slab)
	*slab = (*slab)[:k+n]
	return (*slab)[k : k+n : k+n]
}

// id is lesson i's id, undecoded ("" when its span is corrupt).
func (t *lessonTable) id(i int) []byte {
	b, _ := span(t.idOff, t.ids, i)
	return b
}

// decode fills ls, the zero lessonSum, with lesson i's id and record; false
// when either is corrupt.
func (t *lessonTable) decode(ls *lessonSum, i int) bool {
	id, ok := span(t.idOff, t.ids, i)
	ls.id = string(id)
	rec, ok2 := span(t.recOff, t.recs, i)
	if !ok || !ok2 {
		return false
	}
	r := &sumReader{b: rec}
	ls.changed, ls.ignored, ls.corrected = int(r.int()), int(r.int()), int(r.int())
	ls.vetoed, ls.tested, ls.asked = int(r.int()), int(r.int()), int(r.int())
	ls.vouched = int(r.int())
	if ls.vouched < 0 || ls.vouched > 1000*ls.changed {
		r.fail()
	}
	ls.regretted = r.float()
	switch r.byte() {
	case 0:
	case 1:
		ls.hasCreated = true
		p := r.int()
		if p < -1 || p > math.MaxInt32 {
			r.fail()
		}
		ls.createdPos = int32(p)
		ls.createdRaw = r.bytes(r.count(1))
	default:
		r.fail()
	}
	for _, tl := range []*tally{&ls.repos, &ls.authors} {
		counts := cut(&t.counts, r.count(3), 2048)
		for k := range counts {
			v, n, milli := r.uint(), r.uint(), r.uint()
			if v == 0 || v >= t.nvals || n == 0 || n > math.MaxInt32 || milli > math.MaxInt32 {
				r.fail()
			}
			counts[k] = valCount{uint32(v), int32(n), int32(milli)}
		}
		*tl = counts
	}
	uses := cut(&t.uses, r.count(1), 4096)
	prev := int64(-1)
	for k := range uses {
		prev += int64(r.uint())
		if prev < -1 || prev > math.MaxInt32 {
			r.fail()
		}
		uses[k] = int32(prev)
	}
	ls.uses = uses
	return r.err == nil && r.i == len(r.b)
}

// parseEvidence decodes the regrets and corrections block.
func (s *Summary) parseEvidence(data []byte) error {
	r := &sumReader{b: data}
	regrets := map[string]RegretMark{}
	for range r.count(11) {
		id, session, lesson := r.str(), r.str(), r.str()
		regrets[id] = RegretMark{Session: session, Lesson: lesson, W: r.float()}
	}
	corrections := map[string]map[int64]bool{}
	for range r.count(2) {
		session := r.str()
		k := r.count(1)
		times := make(map[int64]bool, k)
		for range k {
			times[r.int()] = true
		}
		corrections[session] = times
	}
	if r.err == nil && r.i != len(r.b) {
		r.fail()
	}
	if r.err != nil {
		return r.err
	}
	s.regrets, s.corrections = regrets, corrections
	return nil
}

// decodeCreated fills created from createdRaw; false when it is corrupt.
func (ls *lessonSum) decodeCreated() bool {
	if ls.createdRaw == nil {
		return true
	}
	r := &sumReader{b: ls.createdRaw}
	m := Mark{MS: r.int(), ID: r.str(), Kind: EventKind(r.str()), Session: r.str(), Repo: r.str(), Author: r.str()}
	if r.err != nil || r.i != len(r.b) {
		return false
	}
	ls.created, ls.createdRaw = &m, nil
	return true
}
