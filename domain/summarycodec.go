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
const summaryMagic = "BSM2"

// ErrSummaryCorrupt is returned by ParseSummary for bytes AppendBinary did
// not write.
var ErrSummaryCorrupt = errors.New("corrupt summary")

type sumWriter struct{ b []byte }

func (w *sumWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *sumWriter) int(n int64)   { w.b = binary.AppendVarint(w.b, n) }
func (w *sumWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func appendMark(w *sumWriter, m Mark) {
	w.int(m.MS)
	w.str(m.ID)
	w.str(string(m.Kind))
	w.str(m.Session)
	w.str(m.Repo)
	w.str(m.Author)
}

// AppendBinary appends the summary's encoding to b. The layout: the values
// and lessons as varints, then the clock's columns and the key table at fixed
// widths, which ParseSummary reads in place.
func (s *Summary) AppendBinary(b []byte) ([]byte, error) {
	defer runtime.KeepAlive(s) // see ParseSummary
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
	total := 0
	for i := range s.lessons {
		lessons = append(lessons, &s.lessons[i])
	}
	for _, ls := range s.fresh {
		lessons = append(lessons, ls)
	}
	slices.SortFunc(lessons, func(a, b *lessonSum) int { return strings.Compare(a.id, b.id) })
	for _, ls := range lessons {
		total += len(ls.uses)
	}
	w.uint(uint64(len(lessons)))
	w.uint(uint64(total))
	// The ids as one block, read back as one string.
	var ids sumWriter
	tallies := 0
	for _, ls := range lessons {
		ids.str(ls.id)
		tallies += len(ls.repos) + len(ls.authors)
	}
	w.uint(uint64(len(ids.b)))
	w.b = append(w.b, ids.b...)
	w.uint(uint64(tallies))
	var mark sumWriter
	for _, ls := range lessons {
		for _, n := range []int{ls.changed, ls.ignored, ls.corrected, ls.vetoed, ls.tested, ls.asked} {
			w.int(int64(n))
		}
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(ls.regretted))
		if ls.hasCreated {
			w.b = append(w.b, 1)
			w.int(int64(ls.createdPos))
			raw := ls.createdRaw
			if raw == nil {
				mark.b = mark.b[:0]
				appendMark(&mark, *ls.created)
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
	nb := s.keys.len()
	count := nb
	for i, j := 0, 0; j < len(more); j++ {
		for i < nb && compareKeys(s.keys.key(i), more[j].k) < 0 {
			i++
		}
		if i >= nb || s.keys.key(i) != more[j].k {
			count++
		}
	}
	w.uint(uint64(count))
	i := 0
	for _, r := range more {
		for i < nb && compareKeys(s.keys.key(i), r.k) < 0 {
			w.b = append(w.b, s.keys[i*keyRecord:(i+1)*keyRecord]...)
			i++
		}
		if i < nb && s.keys.key(i) == r.k {
			i++
		}
		w.b = appendKeyRecord(w.b, r.k, r.v)
	}
	w.b = append(w.b, s.keys[i*keyRecord:]...)
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
// referring to data (its clock and key table are read in place), so data must
// neither change nor go away while the summary is reachable; every method
// that reads data keeps the summary alive until it returns, so a caller may
// release data when the summary is collected (runtime.AddCleanup).
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
	valid := func(v uint64) uint32 {
		if v >= uint64(len(s.vals)) {
			r.fail()
			return 0
		}
		return uint32(v)
	}
	s.last = r.str()
	s.freeMS = r.int()
	s.regretMax = r.float()

	nl := r.count(1)
	total := r.count(1)
	s.lessons = make([]lessonSum, nl)
	uses := make([]int32, 0, total)
	ids := &sumReader{b: r.bytes(r.count(1))}
	all := string(ids.b)
	for i := range s.lessons {
		n := ids.count(1)
		if ids.err != nil {
			r.fail()
			break
		}
		s.lessons[i].id = all[ids.i : ids.i+n]
		ids.i += n
		if i > 0 && s.lessons[i-1].id >= s.lessons[i].id {
			r.fail()
		}
	}
	if ids.i != len(ids.b) {
		r.fail()
	}
	counts := make([]valCount, 0, r.count(2))
	for i := range s.lessons {
		ls := &s.lessons[i]
		ls.idx = int32(i)
		ls.changed, ls.ignored, ls.corrected = int(r.int()), int(r.int()), int(r.int())
		ls.vetoed, ls.tested, ls.asked = int(r.int()), int(r.int()), int(r.int())
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
		for _, t := range []*tally{&ls.repos, &ls.authors} {
			k := r.count(2)
			start := len(counts)
			for range k {
				v, n := valid(r.uint()), r.uint()
				if v == 0 || n == 0 || n > math.MaxInt32 {
					r.fail()
				}
				counts = append(counts, valCount{v, int32(n)})
			}
			if k > 0 {
				*t = tally(counts[start:len(counts):len(counts)])
			}
		}
		nu := r.count(1)
		if len(uses)+nu > total {
			r.fail()
		}
		if r.err != nil {
			break
		}
		start := len(uses)
		prev := int64(-1)
		for range nu {
			prev += int64(r.uint())
			if prev < -1 || prev > math.MaxInt32 {
				r.fail()
			}
			uses = append(uses, int32(prev))
		}
		ls.uses = uses[start:len(uses):len(uses)]
	}

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
	if r.err == nil && r.i != len(r.b) {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
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
