package memfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/borg-memory/borg/domain"
)

// The log summary's binary format (codec BSM7), the body of
// .borg/cache/summary.bin: a domain.Summary taken apart (Summary.Parts),
// and read back in place (domain.FromParts over a lessonTable) so that a
// hook's parse decodes no lesson it does not ask for.

// summaryMagic starts an encoded summary; it changes with the layout.
const summaryMagic = "BSM7"

// ErrSummaryCorrupt is returned by ParseSummary for bytes WriteSummary did
// not write (and by WriteSummary for a parsed summary found corrupt since).
var ErrSummaryCorrupt = errors.New("corrupt summary")

// errSummaryTooLarge is returned by WriteSummary for a summary whose ids or
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

func appendMark(w *sumWriter, m domain.Mark) {
	w.int(m.MS)
	w.str(m.ID)
	w.str(string(m.Kind))
	w.str(m.Session)
	w.str(m.Repo)
	w.str(m.Author)
}

// lessonRef is a lesson to encode: p.Kept[i]'s record of the source as it
// is (kept), or p.Lessons[i].
type lessonRef struct {
	kept bool
	i    int
}

// lessonOrder merges p's kept and decoded lessons by id, and checks what
// Parts checks when it decodes every lesson: the ids strictly ascending and
// each kept record whole (decoded into a scratch record, and dropped). A
// kept record that does not decode, or two lessons out of order, make the
// summary corrupt, as they would make Parts say.
func lessonOrder(p domain.SummaryParts, t *lessonTable) ([]lessonRef, bool) {
	order := make([]lessonRef, 0, len(p.Kept)+len(p.Lessons))
	var prev []byte
	add := func(ref lessonRef, id []byte) bool {
		if len(order) > 0 && bytes.Compare(prev, id) >= 0 {
			return false
		}
		order, prev = append(order, ref), id
		return true
	}
	var scratch domain.SummaryRecord
	k, j := 0, 0
	for k < len(p.Kept) || j < len(p.Lessons) {
		var kid []byte
		if k < len(p.Kept) {
			if kid = t.ID(p.Kept[k]); kid == nil {
				return nil, false
			}
		}
		if k < len(p.Kept) && (j == len(p.Lessons) || string(kid) < p.Lessons[j].ID) {
			scratch = domain.SummaryRecord{}
			if !t.Record(p.Kept[k], &scratch) || !add(lessonRef{kept: true, i: p.Kept[k]}, kid) {
				return nil, false
			}
			k++
			continue
		}
		if !add(lessonRef{i: j}, []byte(p.Lessons[j].ID)) {
			return nil, false
		}
		j++
	}
	return order, true
}

// appendRecord appends a lesson's record (lessonTable.Record reads it):
// its counts, regret credit, creation, repo and author tallies and uses.
// mark is scratch space.
func appendRecord(w *sumWriter, r *domain.SummaryRecord, mark *sumWriter) {
	for _, n := range []int{r.Changed, r.Ignored, r.Corrected, r.Vetoed, r.Tested, r.Asked, r.Vouched} {
		w.int(int64(n))
	}
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(r.Regretted))
	if r.HasCreated {
		w.b = append(w.b, 1)
		w.int(int64(r.CreatedPos))
		raw := r.CreatedRaw
		if raw == nil {
			mark.b = mark.b[:0]
			appendMark(mark, *r.Created)
			raw = mark.b
		}
		w.uint(uint64(len(raw)))
		w.b = append(w.b, raw...)
	} else {
		w.b = append(w.b, 0)
	}
	for _, t := range [][]domain.ValCount{r.Repos, r.Authors} {
		w.uint(uint64(len(t)))
		for _, c := range t {
			w.uint(uint64(c.V))
			w.uint(uint64(c.N))
			w.uint(uint64(c.Milli))
		}
	}
	w.uint(uint64(len(r.Uses)))
	prev := int32(-1)
	for _, p := range r.Uses {
		w.uint(uint64(p - prev))
		prev = p
	}
}

// appendEvidence appends the regrets and corrections block
// (lessonTable.Evidence reads it).
func appendEvidence(w *sumWriter, regrets map[string]domain.RegretMark, corrections map[string]map[int64]bool) {
	w.uint(uint64(len(regrets)))
	for _, id := range slices.Sorted(maps.Keys(regrets)) {
		r := regrets[id]
		w.str(id)
		w.str(r.Session)
		w.str(r.Lesson)
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(r.W))
	}
	w.uint(uint64(len(corrections)))
	for _, session := range slices.Sorted(maps.Keys(corrections)) {
		times := slices.Sorted(maps.Keys(corrections[session]))
		w.str(session)
		w.uint(uint64(len(times)))
		for _, t := range times {
			w.int(t)
		}
	}
}

// WriteSummary writes the summary's encoding to w. The layout: the values
// as varints; the lessons as a table of offsets into their ids and one into
// their records (each record varints), so that ParseSummary decodes neither;
// then the evidence block, the clock's columns, the key table and its
// fence (domain.SummaryParts.KeyFence, with a checksum) at fixed widths,
// which ParseSummary reads in place. A lesson of a parsed summary
// that was never decoded is written as its record was read (checked, not
// kept decoded: domain.Summary.PartsKeeping), and ErrSummaryCorrupt says
// one is corrupt or the ids are out of order. The
// key table, most of a big team's summary, goes to w as it is, not copied
// into the encoding.
func WriteSummary(w io.Writer, s *domain.Summary) error {
	pre, keys, post, err := encodeSummary(s)
	if err != nil {
		return err
	}
	for _, b := range [][]byte{pre, keys, post} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// encodeSummary is WriteSummary's encoding in three parts: what comes
// before the key table, the key table, and what follows it.
func encodeSummary(s *domain.Summary) (pre, keys, post []byte, _ error) {
	p, ok := s.PartsKeeping()
	t, _ := p.Source.(*lessonTable)
	if ok && len(p.Kept) > 0 && t == nil {
		p, ok = s.Parts() // a source this codec cannot copy from
	}
	if !ok {
		return nil, nil, nil, ErrSummaryCorrupt
	}
	order, ok := lessonOrder(p, t)
	if !ok && len(p.Kept) > 0 {
		// A corrupt record or id order among those it would copy: the
		// summary decodes and checks every lesson itself, so that it
		// knows it is corrupt too (Fold reports it, and its caller
		// rebuilds it from the ledger).
		if p, ok = s.Parts(); ok {
			order, ok = lessonOrder(p, t)
		}
	}
	if !ok {
		return nil, nil, nil, ErrSummaryCorrupt
	}
	b := []byte(nil)
	// The encoding is about as large as what it was parsed from: sized once,
	// the buffer is not copied over and over as it grows.
	size := len(p.ClockMS) + len(p.ClockRepo) + len(p.ClockBy) + len(p.EvidenceRaw) + 4096
	if t != nil {
		size += len(t.idOff) + len(t.ids) + len(t.recOff) + len(t.recs)
	} else {
		size += 64 * len(p.Lessons)
	}
	w := &sumWriter{b: append(slices.Grow(b, size), summaryMagic...)}
	w.uint(uint64(len(p.Vals)))
	for _, v := range p.Vals {
		w.str(v)
	}
	w.str(p.Last)
	w.int(p.FreeMS)
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(p.RegretMax))

	w.uint(uint64(len(order)))
	tab, start := w.offsets(len(order)), len(w.b)
	for i, o := range order {
		if o.kept {
			w.b = append(w.b, t.ID(o.i)...)
		} else {
			w.b = append(w.b, p.Lessons[o.i].ID...)
		}
		if !w.setOffset(tab, i+1, start) {
			return nil, nil, nil, errSummaryTooLarge
		}
	}
	tab, start = w.offsets(len(order)), len(w.b)
	var mark sumWriter
	for i, o := range order {
		if o.kept {
			rec, _ := span(t.recOff, t.recs, o.i) // checked by lessonOrder
			w.b = append(w.b, rec...)
		} else {
			appendRecord(w, &p.Lessons[o.i], &mark)
		}
		if !w.setOffset(tab, i+1, start) {
			return nil, nil, nil, errSummaryTooLarge
		}
	}

	if p.EvidenceRaw != nil {
		w.uint(uint64(len(p.EvidenceRaw)))
		w.b = append(w.b, p.EvidenceRaw...)
	} else {
		var ev sumWriter
		appendEvidence(&ev, p.Regrets, p.Corrections)
		w.uint(uint64(len(ev.b)))
		w.b = append(w.b, ev.b...)
	}

	w.uint(uint64(len(p.ClockMS) / 8))
	w.b = append(append(append(w.b, p.ClockMS...), p.ClockRepo...), p.ClockBy...)
	w.uint(uint64(len(p.Keys) / domain.SummaryKeyRecord))
	pre = w.b

	w = &sumWriter{}
	w.uint(uint64(len(p.KeyFence) / 8))
	w.b = append(w.b, p.KeyFence...)
	w.b = binary.LittleEndian.AppendUint32(w.b, crc32.ChecksumIEEE(p.KeyFence))
	w.uint(uint64(len(p.Passings)))
	for _, e := range p.Passings {
		w.str(e.ID)
		w.int(e.MS)
		w.str(e.Session)
		w.str(e.Src)
		w.str(e.SrcV)
		w.str(e.Dst)
		w.str(e.DstV)
	}
	return pre, p.Keys, w.b, nil
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
	// Every weight the summary holds is finite (the ledger maps the log's
	// onto finite values): anything else is corruption.
	f := math.Float64frombits(binary.LittleEndian.Uint64(b))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail()
		return 0
	}
	return f
}

// ParseSummary reads a summary WriteSummary wrote. The summary keeps
// referring to data (its clock, key table and lesson table are read in
// place), so data must neither change nor go away while the summary is
// reachable (see domain.FromParts).
//
// It reads no lesson: each lesson's record is decoded when first asked for,
// so parsing costs the same however many lessons there are. ParseSummary
// checks the layout (every section's bounds); a record, and the order of the
// ids, is checked when decoded.
func ParseSummary(data []byte) (*domain.Summary, error) {
	s, _, err := parseSummary(data)
	return s, err
}

// parseSummary is ParseSummary, with the lesson table the summary reads.
func parseSummary(data []byte) (*domain.Summary, *lessonTable, error) {
	if len(data) < len(summaryMagic) || string(data[:len(summaryMagic)]) != summaryMagic {
		return nil, nil, ErrSummaryCorrupt
	}
	r := &sumReader{b: data, i: len(summaryMagic)}
	var p domain.SummaryParts
	nv := r.count(1)
	p.Vals = make([]string, 0, nv)
	for range nv {
		p.Vals = append(p.Vals, r.str())
	}
	p.Last = r.str()
	p.FreeMS = r.int()
	p.RegretMax = r.float()

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
	t := &lessonTable{n: nl, nvals: uint64(len(p.Vals))}
	t.idOff, t.ids = blob()
	t.recOff, t.recs = blob()
	p.Source = t

	p.EvidenceRaw = r.bytes(r.count(1))
	if len(p.EvidenceRaw) == 0 {
		r.fail() // an empty block still holds its two counts
	}

	n := r.count(16)
	p.ClockMS = r.bytes(8 * n)
	p.ClockRepo = r.bytes(4 * n)
	p.ClockBy = r.bytes(4 * n)
	p.Keys = r.bytes(domain.SummaryKeyRecord * r.count(domain.SummaryKeyRecord))
	// The fence is read in place, and its checksum kept the fence from
	// sending lookups to the wrong records (domain.FromParts checks that it
	// fits the table at its ends).
	p.KeyFence = r.bytes(8 * r.count(8))
	if sum := r.bytes(4); sum != nil && binary.LittleEndian.Uint32(sum) != crc32.ChecksumIEEE(p.KeyFence) {
		r.fail()
	}
	np := r.count(7)
	p.Passings = make([]domain.Event, 0, np)
	for range np {
		p.Passings = append(p.Passings, domain.Event{Kind: domain.KindPassing, ID: r.str(), MS: r.int(), Session: r.str(),
			Src: r.str(), SrcV: r.str(), Dst: r.str(), DstV: r.str()})
	}
	if r.err == nil && r.i != len(r.b) {
		r.fail()
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	s, ok := domain.FromParts(p)
	if !ok {
		return nil, nil, ErrSummaryCorrupt
	}
	return s, t, nil
}

// lessonTable is the lessons section of an encoded summary, read in place
// (a domain.SummarySource): each lesson's id and record are spans of a
// blob, found by index in a table of offsets (count+1 little-endian u32,
// the first 0, each at least the one before: checked when read).
type lessonTable struct {
	n            int
	idOff, ids   []byte
	recOff, recs []byte
	// nvals is how many values the records may refer to.
	nvals uint64
	// The decoded lessons' uses and tallies are cut from these, a block at
	// a time.
	uses   []int32
	counts []domain.ValCount
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

func (t *lessonTable) Len() int { return t.n }

// ID is lesson i's id, undecoded (nil when its span is corrupt).
func (t *lessonTable) ID(i int) []byte {
	b, _ := span(t.idOff, t.ids, i)
	return b
}

// Record fills rec, the zero record, with lesson i's record; false when it
// or the lesson's id is corrupt.
func (t *lessonTable) Record(i int, rec *domain.SummaryRecord) bool {
	_, ok := span(t.idOff, t.ids, i)
	b, ok2 := span(t.recOff, t.recs, i)
	if !ok || !ok2 {
		return false
	}
	r := &sumReader{b: b}
	rec.Changed, rec.Ignored, rec.Corrected = int(r.int()), int(r.int()), int(r.int())
	rec.Vetoed, rec.Tested, rec.Asked = int(r.int()), int(r.int()), int(r.int())
	rec.Vouched = int(r.int())
	if rec.Vouched < 0 || rec.Vouched > 1000*rec.Changed {
		r.fail()
	}
	rec.Regretted = r.float()
	switch r.byte() {
	case 0:
	case 1:
		rec.HasCreated = true
		p := r.int()
		if p < -1 || p > math.MaxInt32 {
			r.fail()
		}
		rec.CreatedPos = int32(p)
		rec.CreatedRaw = r.bytes(r.count(1))
	default:
		r.fail()
	}
	for _, tl := range []*[]domain.ValCount{&rec.Repos, &rec.Authors} {
		counts := cut(&t.counts, r.count(3), 2048)
		for k := range counts {
			v, n, milli := r.uint(), r.uint(), r.uint()
			if v == 0 || v >= t.nvals || n == 0 || n > math.MaxInt32 || milli > math.MaxInt32 {
				r.fail()
			}
			counts[k] = domain.ValCount{V: uint32(v), N: int32(n), Milli: int32(milli)}
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
	rec.Uses = uses
	return r.err == nil && r.i == len(r.b)
}

// Evidence decodes the regrets and corrections block.
func (t *lessonTable) Evidence(data []byte) (map[string]domain.RegretMark, map[string]map[int64]bool, bool) {
	r := &sumReader{b: data}
	regrets := map[string]domain.RegretMark{}
	for range r.count(11) {
		id, session, lesson := r.str(), r.str(), r.str()
		regrets[id] = domain.RegretMark{Session: session, Lesson: lesson, W: r.float()}
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
	if r.err != nil || r.i != len(r.b) {
		return nil, nil, false
	}
	return regrets, corrections, true
}

// Mark decodes a lesson's created mark.
func (t *lessonTable) Mark(raw []byte) (domain.Mark, bool) {
	r := &sumReader{b: raw}
	m := domain.Mark{MS: r.int(), ID: r.str(), Kind: domain.EventKind(r.str()), Session: r.str(), Repo: r.str(), Author: r.str()}
	return m, r.err == nil && r.i == len(r.b)
}
