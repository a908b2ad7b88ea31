package domain

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// codecSample is a ledger with every kind of entry: marks with hex event
// ids and with others, credits, corrections, regrets and passings.
func codecSample(seed uint64, n int) *Ledger {
	r := rand.New(rand.NewPCG(seed, seed))
	l := NewLedger()
	for i, e := range randomEvents(r, n) {
		if i%2 == 0 {
			e = e.WithID()
		}
		l.Add(e)
	}
	for i := range 3 {
		l.Add(Event{Kind: KindPassing, MS: int64(i), Session: "s1", Src: "lesson-1", SrcV: "v1", Dst: "lesson-2", DstV: "v2"})
	}
	return l
}

func TestLedgerCodecRoundTrip(t *testing.T) {
	sample := codecSample(11, 800)
	if len(sample.passings) == 0 || len(sample.regrets) == 0 || len(sample.corrections) == 0 || len(sample.tested) == 0 {
		t.Fatal("the sample ledger misses a field")
	}
	hex, other := false, false
	for _, m := range sample.results {
		hex, other = hex || m.hexID, other || !m.hexID
	}
	if !hex || !other {
		t.Fatal("the sample ledger lacks hex or other event ids")
	}
	for name, l := range map[string]*Ledger{"empty": NewLedger(), "zero": {}, "sample": sample} {
		t.Run(name, func(t *testing.T) {
			data := appendLedger(nil, l)
			got, err := ParseLedger(data)
			if err != nil {
				t.Fatal(err)
			}
			l.init()
			if !reflect.DeepEqual(got, l) {
				t.Fatalf("round trip differs")
			}
			if again := appendLedger(nil, got); !bytes.Equal(again, data) {
				t.Fatalf("encoding is not deterministic")
			}
			var streamed bytes.Buffer
			if err := WriteLedger(&streamed, l); err != nil || !bytes.Equal(streamed.Bytes(), data) {
				t.Fatalf("WriteLedger wrote %d bytes (%v), appendLedger %d", streamed.Len(), err, len(data))
			}
			// Every truncation is refused, never a panic or a wrong ledger.
			for i := 0; i < len(data); i += 1 + len(data)/300 {
				if _, err := ParseLedger(data[:i]); err == nil {
					t.Fatalf("truncation at %d accepted", i)
				}
			}
		})
	}
}

// Two ledgers of the same events in different orders derive the same
// memories after a round trip, though their string tables differ.
func TestLedgerCodecOrderInsensitive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	events := randomEvents(r, 600)
	a, b := NewLedger(), NewLedger()
	for _, e := range events {
		a.Add(e)
	}
	for _, i := range r.Perm(len(events)) {
		b.Add(events[i])
	}
	pa, err := ParseLedger(appendLedger(nil, a))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := ParseLedger(appendLedger(nil, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, session := range []string{"", "s1", "s5"} {
		if x, y := pa.Memories(propLessons(), session, DefaultWeights), pb.Memories(propLessons(), session, DefaultWeights); !reflect.DeepEqual(x, y) {
			t.Fatalf("session %q: memories differ after a round trip\n%+v\n%+v", session, x, y)
		}
	}
}

func FuzzParseLedger(f *testing.F) {
	f.Add(appendLedger(nil, codecSample(1, 40)))
	f.Add([]byte(ledgerMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseLedger(data)
		if err != nil {
			return
		}
		back, err := ParseLedger(appendLedger(nil, got))
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("re-encoded ledger does not round trip: %v", err)
		}
		// A parsed ledger serves every query without a panic.
		got.Memories(propLessons(), "s1", DefaultWeights)
		got.StartSummary().Finish()
	})
}

// A weight that is not finite cannot come from the log (the ledger maps
// one to a finite value), so the decoder refuses it as corruption:
// accepted, it would not even round trip, since NaN equals nothing.
func TestLedgerCodecRefusesNonFiniteWeights(t *testing.T) {
	for name, w := range map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1), "-Inf": math.Inf(-1)} {
		t.Run(name, func(t *testing.T) {
			l := NewLedger()
			l.regrets["e1"] = RegretMark{Session: "s", Lesson: "a", W: w}
			if _, err := ParseLedger(appendLedger(nil, l)); err == nil {
				t.Fatalf("a %s weight was decoded", name)
			}
			l = NewLedger()
			l.Add(Event{Kind: KindChanged, Session: "s", Lesson: "a", W: 0.5})
			for p, m := range l.results {
				m.w = w
				l.results[p] = m
			}
			if _, err := ParseLedger(appendLedger(nil, l)); err == nil {
				t.Fatalf("a %s credit was decoded", name)
			}
		})
	}
}

// chunks records the writes it is handed.
type chunks struct {
	bytes.Buffer
	n int
}

func (c *chunks) Write(p []byte) (int, error) { c.n++; return c.Buffer.Write(p) }

func TestWriteLedgerInChunks(t *testing.T) {
	l := NewLedger()
	for i := range 100000 {
		s := fmt.Sprintf("s-%06d", i)
		l.Add(Event{MS: int64(i), Kind: KindSession, Session: s, Repo: "api", Author: "e-1"}.WithID())
		l.Add(Event{MS: int64(i), Kind: KindChanged, Session: s, Lesson: fmt.Sprintf("lesson-%d", i%50)}.WithID())
	}
	want := appendLedger(nil, l)
	var c chunks
	if err := WriteLedger(&c, l); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Bytes(), want) || c.n < 2 || len(want) < 2*ledgerChunk {
		t.Fatalf("%d bytes in %d writes, want %d bytes in several", c.Len(), c.n, len(want))
	}
}

// TestStrtab: every string gets one id, found again by string or by
// bytes, through growth and a reservation, and "" is always id 0.
func TestStrtab(t *testing.T) {
	for _, reserve := range []int{0, 10, 50_000} {
		var tab strtab
		tab.init()
		tab.reserve(reserve)
		want := map[string]uint32{"": 0}
		r := rand.New(rand.NewPCG(9, uint64(reserve)))
		for i := range 40_000 {
			s := fmt.Sprintf("s-%x", r.IntN(30_000))
			if i%7 == 0 {
				s = strings.Repeat("x", r.IntN(3)) // "", "x", "xx"
			}
			var id uint32
			if i%2 == 0 {
				id = tab.id(s)
			} else {
				id, _ = tab.lookup(tab.bytes([]byte(s)))
			}
			if w, ok := want[s]; ok && w != id {
				t.Fatalf("%q: id %d, then %d", s, w, id)
			}
			want[s] = id
		}
		if len(tab.strs) != len(want) {
			t.Fatalf("%d strings, want %d", len(tab.strs), len(want))
		}
		for s, id := range want {
			if got, ok := tab.lookup(s); !ok || got != id || tab.strs[id] != s {
				t.Fatalf("lookup(%q) = %d, %v; want %d", s, got, ok, id)
			}
		}
		if _, ok := tab.lookup("never-added"); ok {
			t.Fatal("found a string never added")
		}
	}
}

// TestEachPairSorted: a map written a range of sessions at a time comes
// out in the order of one sort, every pair once, ids past the table's
// size included.
func TestEachPairSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 10, pairPartAt + 5000} {
		const nstrs = 50_000
		m := map[pair]struct{}{}
		for len(m) < n {
			m[pair{uint32(r.IntN(nstrs + 10)), uint32(r.IntN(nstrs))}] = struct{}{}
		}
		var got []pair
		eachPairSorted(m, nstrs, func(p pair) { got = append(got, p) })
		want := make([]pair, 0, len(m))
		for p := range m {
			want = append(want, p)
		}
		slices.SortFunc(want, comparePairs)
		if !slices.Equal(got, want) {
			t.Fatalf("%d pairs: %d written, out of order or lost", n, len(got))
		}
	}
}
