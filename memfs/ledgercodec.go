package memfs

// ledgercodec.go is a compact binary form of domain.Ledger for the cache:
// strings interned in one table, numbers as varints. It decodes several
// times faster than gob, which matters because a query loads the whole
// ledger. It knows the Ledger's fields; when domain.Ledger's shape differs
// from the one it knows (a field added or changed), ledgerCodecFits is false
// and no cache is written (a test fails first), so a change in domain
// never loses data.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"sync"

	"github.com/borg-memory/borg/domain"
)

const ledgerMagic = "BLG2"

// ledgerCodecFits reports whether domain.Ledger has exactly the fields this
// codec writes (checked once, when a cache is first read or written: not
// at start-up, which every hook pays).
var ledgerCodecFits = sync.OnceValue(func() bool { return ledgerShapeMismatch() == "" })

// ledgerShapeMismatch names the first type of domain.Ledger whose fields
// differ from the ones this codec writes, with both lists ("" when they
// all match).
func ledgerShapeMismatch() string {
	markShape := []string{"MS int64", "ID string", "Kind domain.EventKind", "Session string", "Repo string", "Author string", "W float64"}
	regretShape := []string{"Session string", "Lesson string", "W float64"}
	eventShape := []string{"ID string", "MS int64", "Kind domain.EventKind", "Session string", "Lesson string",
		"Repo string", "Author string", "W float64", "Src string", "Dst string", "SrcV string", "DstV string"}
	ledgerShape := []string{
		"Sessions map[string]domain.Mark", "Created map[string]domain.Mark",
		"Results map[string]map[string]domain.Mark", "Tested map[string]map[string]bool",
		"Asked map[string]map[string]bool", "Corrections map[string]map[int64]bool",
		"Regrets map[string]domain.RegretMark", "Passings map[string]domain.Event",
	}
	shape := func(t reflect.Type) []string {
		var out []string
		for i := 0; i < t.NumField(); i++ {
			out = append(out, t.Field(i).Name+" "+t.Field(i).Type.String())
		}
		return out
	}
	for _, c := range []struct {
		t     reflect.Type
		known []string
	}{
		{reflect.TypeFor[domain.Mark](), markShape},
		{reflect.TypeFor[domain.RegretMark](), regretShape},
		{reflect.TypeFor[domain.Event](), eventShape},
		{reflect.TypeFor[domain.Ledger](), ledgerShape},
	} {
		if got := shape(c.t); !reflect.DeepEqual(got, c.known) {
			return fmt.Sprintf("%s has fields %q, the codec knows %q", c.t, got, c.known)
		}
	}
	return ""
}

// ledgerWriter encodes a ledger: first the string table, then the maps
// with each string as its index in the table.
type ledgerWriter struct {
	ids  map[string]uint64
	strs []string
	body []byte
}

func (w *ledgerWriter) str(s string) {
	id, ok := w.ids[s]
	if !ok {
		id = uint64(len(w.strs))
		w.ids[s] = id
		w.strs = append(w.strs, s)
	}
	w.uint(id)
}

func (w *ledgerWriter) uint(n uint64) { w.body = binary.AppendUvarint(w.body, n) }

func (w *ledgerWriter) mark(m domain.Mark) {
	w.body = binary.AppendVarint(w.body, m.MS)
	w.str(m.ID)
	w.str(string(m.Kind))
	w.str(m.Session)
	w.str(m.Repo)
	w.str(m.Author)
	w.float(m.W)
}

func (w *ledgerWriter) float(f float64) {
	w.body = binary.LittleEndian.AppendUint64(w.body, math.Float64bits(f))
}

func (w *ledgerWriter) flag(b bool) {
	if b {
		w.body = append(w.body, 1)
	} else {
		w.body = append(w.body, 0)
	}
}

// sortedKeys makes the encoding deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (w *ledgerWriter) pairs(m map[string]map[string]bool) {
	w.uint(uint64(len(m)))
	for _, a := range sortedKeys(m) {
		w.str(a)
		w.uint(uint64(len(m[a])))
		for _, b := range sortedKeys(m[a]) {
			w.str(b)
			w.flag(m[a][b])
		}
	}
}

// encodeLedger writes l in the codec's form.
func encodeLedger(out io.Writer, l *domain.Ledger) error {
	w := &ledgerWriter{ids: map[string]uint64{}}
	for _, m := range []map[string]domain.Mark{l.Sessions, l.Created} {
		w.uint(uint64(len(m)))
		for _, k := range sortedKeys(m) {
			w.str(k)
			w.mark(m[k])
		}
	}
	w.uint(uint64(len(l.Results)))
	for _, s := range sortedKeys(l.Results) {
		w.str(s)
		inner := l.Results[s]
		w.uint(uint64(len(inner)))
		for _, k := range sortedKeys(inner) {
			w.str(k)
			w.mark(inner[k])
		}
	}
	w.pairs(l.Tested)
	w.pairs(l.Asked)
	w.uint(uint64(len(l.Corrections)))
	for _, s := range sortedKeys(l.Corrections) {
		w.str(s)
		times := make([]int64, 0, len(l.Corrections[s]))
		for t := range l.Corrections[s] {
			times = append(times, t)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		w.uint(uint64(len(times)))
		for _, t := range times {
			w.body = binary.AppendVarint(w.body, t)
			w.flag(l.Corrections[s][t])
		}
	}
	w.uint(uint64(len(l.Regrets)))
	for _, id := range sortedKeys(l.Regrets) {
		r := l.Regrets[id]
		w.str(id)
		w.str(r.Session)
		w.str(r.Lesson)
		w.float(r.W)
	}
	w.uint(uint64(len(l.Passings)))
	for _, id := range sortedKeys(l.Passings) {
		e := l.Passings[id]
		w.str(id)
		w.str(e.ID)
		w.body = binary.AppendVarint(w.body, e.MS)
		for _, v := range []string{string(e.Kind), e.Session, e.Lesson, e.Repo, e.Author} {
			w.str(v)
		}
		w.float(e.W)
		for _, v := range []string{e.Src, e.Dst, e.SrcV, e.DstV} {
			w.str(v)
		}
	}

	bw := bufio.NewWriter(out)
	head := []byte(ledgerMagic)
	head = binary.AppendUvarint(head, uint64(len(w.strs)))
	if _, err := bw.Write(head); err != nil {
		return err
	}
	var buf []byte
	for _, s := range w.strs {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		buf = append(buf, s...)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if _, err := bw.Write(w.body); err != nil {
		return err
	}
	return bw.Flush()
}

var errLedgerCodec = errors.New("corrupt ledger cache")

// ledgerReader decodes what encodeLedger wrote; any inconsistency is
// errLedgerCodec (the cache is then rebuilt).
type ledgerReader struct {
	b    []byte
	i    int
	strs []string
	err  error
}

func (r *ledgerReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b[r.i:])
	if k <= 0 {
		r.err = errLedgerCodec
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
		r.err = errLedgerCodec
		return 0
	}
	r.i += k
	return n
}

// count reads a length, refusing one larger than the bytes left could hold.
func (r *ledgerReader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)-r.i) {
		r.err = errLedgerCodec
		return 0
	}
	return int(n)
}

func (r *ledgerReader) str() string {
	id := r.uint()
	if r.err != nil {
		return ""
	}
	if id >= uint64(len(r.strs)) {
		r.err = errLedgerCodec
		return ""
	}
	return r.strs[id]
}

func (r *ledgerReader) float() float64 {
	if r.err != nil || r.i+8 > len(r.b) {
		r.err = errLedgerCodec
		return 0
	}
	r.i += 8
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.i-8:]))
	// Weights come from JSON numbers, which are always finite: a NaN or an
	// infinity is a corrupt cache, and would poison every sum it joins.
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.err = errLedgerCodec
		return 0
	}
	return f
}

func (r *ledgerReader) flag() bool {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errLedgerCodec
		return false
	}
	r.i++
	return r.b[r.i-1] == 1
}

func (r *ledgerReader) mark() domain.Mark {
	return domain.Mark{MS: r.int(), ID: r.str(), Kind: domain.EventKind(r.str()), Session: r.str(), Repo: r.str(), Author: r.str(), W: r.float()}
}

func (r *ledgerReader) pairs() map[string]map[string]bool {
	n := r.count()
	m := make(map[string]map[string]bool, n)
	for range n {
		a := r.str()
		k := r.count()
		inner := make(map[string]bool, k)
		for range k {
			b := r.str()
			inner[b] = r.flag()
		}
		m[a] = inner
	}
	return m
}

// decodeLedger reads a ledger encodeLedger wrote.
func decodeLedger(data []byte) (*domain.Ledger, error) {
	if len(data) < len(ledgerMagic) || string(data[:len(ledgerMagic)]) != ledgerMagic {
		return nil, errLedgerCodec
	}
	r := &ledgerReader{b: data, i: len(ledgerMagic)}
	n := r.count()
	r.strs = make([]string, 0, n)
	for range n {
		k := r.count()
		if r.err != nil {
			return nil, r.err
		}
		r.strs = append(r.strs, string(r.b[r.i:r.i+k]))
		r.i += k
	}
	l := domain.NewLedger()
	for _, m := range []map[string]domain.Mark{l.Sessions, l.Created} {
		for range r.count() {
			k := r.str()
			m[k] = r.mark()
		}
	}
	for range r.count() {
		s := r.str()
		k := r.count()
		inner := make(map[string]domain.Mark, k)
		for range k {
			lesson := r.str()
			inner[lesson] = r.mark()
		}
		l.Results[s] = inner
	}
	l.Tested = r.pairs()
	l.Asked = r.pairs()
	for range r.count() {
		s := r.str()
		k := r.count()
		times := make(map[int64]bool, k)
		for range k {
			t := r.int()
			times[t] = r.flag()
		}
		l.Corrections[s] = times
	}
	for range r.count() {
		id, session, lesson := r.str(), r.str(), r.str()
		l.Regrets[id] = domain.RegretMark{Session: session, Lesson: lesson, W: r.float()}
	}
	for range r.count() {
		key := r.str()
		e := domain.Event{ID: r.str(), MS: r.int()}
		e.Kind, e.Session, e.Lesson, e.Repo, e.Author = domain.EventKind(r.str()), r.str(), r.str(), r.str(), r.str()
		e.W = r.float()
		e.Src, e.Dst, e.SrcV, e.DstV = r.str(), r.str(), r.str(), r.str()
		l.Passings[key] = e
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.i != len(r.b) {
		return nil, errLedgerCodec
	}
	return l, nil
}
