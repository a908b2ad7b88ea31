package domain

import (
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"math"
	"slices"
)

// The ledger's binary form, which a cache stores so that a query folds in
// only the lines appended since: the string table, then each map with its
// keys ascending (so equal ledgers built in one order encode alike), every
// string as its table index and numbers as varints. A mark is its ms, a
// flags byte (bit 0: a hex event id, 8 bytes, follows instead of a string
// index; bit 1: a credit follows; bits 2-4: the kind's code) and its three
// strings. Regrets and passings, which are few, carry their strings inline.

const ledgerMagic = "BLG3"

// ErrLedgerCodec is the error of ParseLedger on bytes WriteLedger did not
// write.
var ErrLedgerCodec = errors.New("corrupt ledger encoding")

// appendLedger appends l's binary form to b (WriteLedger, in memory).
func appendLedger(b []byte, l *Ledger) []byte {
	w := ledgerWriter{b: b}
	w.ledger(l)
	return w.b
}

// WriteLedger writes l's binary form to out a chunk at a time: a big
// team's ledger encodes to tens of megabytes, which need not be in memory
// at once.
func WriteLedger(out io.Writer, l *Ledger) error {
	w := ledgerWriter{out: out}
	w.ledger(l)
	w.flush(0)
	return w.err
}

func (w *ledgerWriter) ledger(l *Ledger) {
	l.init()
	w.b = append(w.b, ledgerMagic...)
	w.uint(uint64(len(l.strs.strs) - 1))
	for _, s := range l.strs.strs[1:] {
		w.str(s)
	}
	w.uint(uint64(l.sessions.len()))
	l.sessions.each(func(k uint32, m mark) {
		w.uint(uint64(k))
		w.mark(m)
	})
	keys := slices.Sorted(maps.Keys(l.created))
	w.uint(uint64(len(keys)))
	for _, k := range keys {
		w.uint(uint64(k))
		w.mark(l.created[k])
	}
	nstrs := len(l.strs.strs)
	w.uint(uint64(len(l.results)))
	eachPairSorted(l.results, nstrs, func(p pair) {
		w.pair(p)
		w.mark(l.results[p])
	})
	for _, set := range []map[pair]struct{}{l.tested, l.asked} {
		w.uint(uint64(len(set)))
		eachPairSorted(set, nstrs, w.pair)
	}
	sessions := slices.Sorted(maps.Keys(l.corrections))
	w.uint(uint64(len(sessions)))
	for _, s := range sessions {
		w.uint(uint64(s))
		times := l.corrections[s]
		w.uint(uint64(len(times)))
		for _, t := range times {
			w.int(t)
		}
	}
	ids := slices.Sorted(maps.Keys(l.regrets))
	w.uint(uint64(len(ids)))
	for _, id := range ids {
		r := l.regrets[id]
		w.str(id)
		w.str(r.Session)
		w.str(r.Lesson)
		w.float(r.W)
	}
	ids = slices.Sorted(maps.Keys(l.passings))
	w.uint(uint64(len(ids)))
	for _, id := range ids {
		e := l.passings[id]
		w.str(id)
		w.str(e.ID)
		w.int(e.MS)
		for _, v := range []string{string(e.Kind), e.Session, e.Lesson, e.Repo, e.Author} {
			w.str(v)
		}
		w.float(e.W)
		for _, v := range []string{e.Src, e.Dst, e.SrcV, e.DstV} {
			w.str(v)
		}
	}
}

// eachPairSorted calls fn with m's keys in comparePairs order, sorting
// the pairs of one range of session ids at a time: a big team's map holds
// millions of pairs, whose sorted copy need not exist whole while the
// summary is built beside the write.
func eachPairSorted[V any](m map[pair]V, nstrs int, fn func(pair)) {
	parts := 1
	if len(m) >= pairPartAt {
		parts = pairParts
	}
	keys := make([]pair, 0, len(m)/parts+len(m)/(4*parts))
	for i := range parts {
		lo, hi := uint64(i*nstrs/parts), uint64((i+1)*nstrs/parts)
		if i == parts-1 {
			hi = math.MaxUint64 // every pair is written, whatever its ids
		}
		keys = keys[:0]
		for p := range m {
			if s := uint64(p.s); s >= lo && s < hi {
				keys = append(keys, p)
			}
		}
		slices.SortFunc(keys, comparePairs)
		for _, p := range keys {
			fn(p)
		}
	}
}

// A map of at least pairPartAt pairs is written in pairParts ranges.
const (
	pairPartAt = 1 << 16
	pairParts  = 8
)

func comparePairs(a, b pair) int {
	if a.s != b.s {
		if a.s < b.s {
			return -1
		}
		return 1
	}
	switch {
	case a.l < b.l:
		return -1
	case a.l > b.l:
		return 1
	}
	return 0
}

// ledgerWriter encodes into b and, with out, hands b to out whenever it
// holds a chunk.
type ledgerWriter struct {
	b   []byte
	out io.Writer
	err error
}

const ledgerChunk = 1 << 20

// flush hands b to out once it holds at least min bytes.
func (w *ledgerWriter) flush(min int) {
	if w.out == nil || len(w.b) < min {
		return
	}
	if w.err == nil {
		_, w.err = w.out.Write(w.b)
	}
	w.b = w.b[:0]
}

func (w *ledgerWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *ledgerWriter) int(n int64)   { w.b = binary.AppendVarint(w.b, n) }
func (w *ledgerWriter) float(f float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
}
func (w *ledgerWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
	w.flush(ledgerChunk)
}
func (w *ledgerWriter) pair(p pair) {
	w.uint(uint64(p.s))
	w.uint(uint64(p.l))
	w.flush(ledgerChunk)
}

const (
	markHexID = 1 << iota
	markHasW
	markKindShift = iota
)

func (w *ledgerWriter) mark(m mark) {
	w.int(m.ms)
	flags := m.kind << markKindShift
	if m.hexID {
		flags |= markHexID
	}
	if m.w != 0 {
		flags |= markHasW
	}
	w.b = append(w.b, flags)
	if m.hexID {
		w.b = binary.LittleEndian.AppendUint64(w.b, m.id)
	} else {
		w.uint(m.id)
	}
	w.uint(uint64(m.session))
	w.uint(uint64(m.repo))
	w.uint(uint64(m.author))
	if m.w != 0 {
		w.float(m.w)
	}
	w.flush(ledgerChunk)
}

// ParseLedger reads what WriteLedger wrote; anything else is
// ErrLedgerCodec.
func ParseLedger(data []byte) (*Ledger, error) {
	if len(data) < len(ledgerMagic) || string(data[:len(ledgerMagic)]) != ledgerMagic {
		return nil, ErrLedgerCodec
	}
	r := &ledgerReader{b: data, i: len(ledgerMagic)}
	l := NewLedger()
	n := r.count()
	l.strs.reserve(n)
	for range n {
		s := r.str()
		if r.err != nil || s == "" {
			return nil, ErrLedgerCodec
		}
		id, free := l.strs.find(s)
		if id != 0 {
			return nil, ErrLedgerCodec // a string twice
		}
		l.strs.add(s, free)
	}
	r.nstrs = uint64(len(l.strs.strs))
	for range r.count() {
		k := r.ref()
		if _, dup := l.sessions.get(k); dup || k == 0 {
			return nil, ErrLedgerCodec
		}
		m := r.mark()
		if markKinds[m.kind] != KindSession || m.session != k {
			return nil, ErrLedgerCodec
		}
		l.sessions.set(k, m)
	}
	for range r.count() {
		k := r.ref()
		if _, dup := l.created[k]; dup || k == 0 {
			return nil, ErrLedgerCodec
		}
		m := r.mark()
		if markKinds[m.kind] != KindCreated {
			return nil, ErrLedgerCodec
		}
		l.created[k] = m
	}
	for range r.count() {
		p := r.pair()
		if _, dup := l.results[p]; dup || p.s == 0 || p.l == 0 {
			return nil, ErrLedgerCodec
		}
		m := r.mark()
		if resultStrength(markKinds[m.kind]) == 0 || m.session != p.s {
			return nil, ErrLedgerCodec
		}
		l.results[p] = m
	}
	for _, set := range []map[pair]struct{}{l.tested, l.asked} {
		k := r.count()
		for range k {
			set[r.pair()] = struct{}{}
		}
		if len(set) != k {
			return nil, ErrLedgerCodec
		}
	}
	for range r.count() {
		s := r.ref()
		k := r.count()
		times := make([]int64, k)
		for i := range times {
			times[i] = r.int()
			if i > 0 && times[i] <= times[i-1] {
				return nil, ErrLedgerCodec
			}
		}
		if _, dup := l.corrections[s]; dup || k == 0 {
			return nil, ErrLedgerCodec
		}
		l.corrections[s] = times
	}
	for range r.count() {
		id, session, lesson := r.str(), r.str(), r.str()
		if _, dup := l.regrets[id]; dup {
			return nil, ErrLedgerCodec
		}
		l.regrets[id] = RegretMark{Session: session, Lesson: lesson, W: r.float()}
	}
	for range r.count() {
		key := r.str()
		e := Event{ID: r.str(), MS: r.int()}
		e.Kind, e.Session, e.Lesson, e.Repo, e.Author = EventKind(r.str()), r.str(), r.str(), r.str(), r.str()
		e.W = r.float()
		e.Src, e.Dst, e.SrcV, e.DstV = r.str(), r.str(), r.str(), r.str()
		if _, dup := l.passings[key]; dup {
			return nil, ErrLedgerCodec
		}
		l.passings[key] = e
	}
	if r.err != nil || r.i != len(r.b) {
		return nil, ErrLedgerCodec
	}
	return l, nil
}

// ledgerReader decodes; its first inconsistency sticks in err.
type ledgerReader struct {
	b     []byte
	i     int
	nstrs uint64
	err   error
}

func (r *ledgerReader) fail() { r.err = ErrLedgerCodec }

func (r *ledgerReader) uint() uint64 {
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

func (r *ledgerReader) int() int64 {
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

// count reads a length, refusing one larger than the bytes left could hold.
func (r *ledgerReader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)-r.i) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *ledgerReader) str() string {
	k := r.count()
	if r.err != nil {
		return ""
	}
	r.i += k
	return string(r.b[r.i-k : r.i])
}

// ref reads a string index, refusing one past the table.
func (r *ledgerReader) ref() uint32 {
	id := r.uint()
	if id >= r.nstrs {
		r.fail()
		return 0
	}
	return uint32(id)
}

func (r *ledgerReader) pair() pair { return pair{r.ref(), r.ref()} }

func (r *ledgerReader) float() float64 {
	if r.err != nil || r.i+8 > len(r.b) {
		r.fail()
		return 0
	}
	r.i += 8
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.i-8:]))
	// The ledger keeps only finite weights (finiteW): a NaN or an infinity
	// is a corrupt encoding, and would poison every sum it joins.
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail()
		return 0
	}
	return f
}

func (r *ledgerReader) mark() mark {
	m := mark{ms: r.int()}
	if r.err != nil || r.i >= len(r.b) {
		r.fail()
		return m
	}
	flags := r.b[r.i]
	r.i++
	kind := flags >> markKindShift
	if int(kind) >= len(markKinds) || flags&^(markHexID|markHasW|0x7<<markKindShift) != 0 {
		r.fail()
		return m
	}
	m.kind = kind
	if flags&markHexID != 0 {
		if r.i+8 > len(r.b) {
			r.fail()
			return m
		}
		m.id, m.hexID = binary.LittleEndian.Uint64(r.b[r.i:]), true
		r.i += 8
	} else {
		m.id = uint64(r.ref())
	}
	m.session, m.repo, m.author = r.ref(), r.ref(), r.ref()
	if flags&markHasW != 0 {
		if m.w = r.float(); m.w == 0 {
			r.fail() // a zero credit is written as none
		}
	}
	return m
}
