package memfs

import (
	"bytes"
	"encoding/gob"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestLedgerCodecKnowsLedgerShape fails, rather than letting the cache
// go unwritten unnoticed, when domain.Ledger or a type in it changes.
func TestLedgerCodecKnowsLedgerShape(t *testing.T) {
	if m := ledgerShapeMismatch(); m != "" {
		t.Fatalf("%s: update the shapes in ledgerShapeMismatch and the encoder and decoder in memfs/ledgercodec.go (and bump ledgerMagic), or no ledger cache is written", m)
	}
}

func TestCacheCodec(t *testing.T) {
	l := domain.NewLedger()
	for _, e := range randomEvents(rand.New(rand.NewPCG(5, 5)), "node-a", 300) {
		l.Add(e)
	}
	if !ledgerCodecFits() {
		t.Fatal("domain.Ledger changed shape: teach ledgercodec.go the new fields (no cache is written until then)")
	}
	c := &ledgerCache{Version: ledgerCacheVersion, Files: map[string]foldedFile{"log/n-a.jsonl": {Offset: 10, Head: "h", Tail: "t"}}, Ledger: l}
	data, err := encodeCache(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCache(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Codec != codecCompact || !reflect.DeepEqual(got.Files, c.Files) || !reflect.DeepEqual(got.Ledger, l) {
		t.Fatalf("cache round trip differs")
	}
}

func TestLedgerCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := map[string]*domain.Ledger{"empty": domain.NewLedger()}
	l := domain.NewLedger()
	for _, e := range randomEvents(r, "node-a", 400) {
		l.Add(e)
	}
	for _, e := range randomEvents(r, "node-b", 400) {
		l.Add(e)
	}
	if len(l.Passings) == 0 || len(l.Regrets) == 0 || len(l.Corrections) == 0 {
		t.Fatal("the sample ledger misses a field")
	}
	cases["two nodes"] = l
	for name, l := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := encodeLedger(&buf, l); err != nil {
				t.Fatal(err)
			}
			got, err := decodeLedger(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, l) {
				t.Fatalf("round trip differs")
			}
			var again bytes.Buffer
			if err := encodeLedger(&again, got); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Fatalf("encoding is not deterministic")
			}
			// Every truncation is refused, never a panic or a wrong ledger.
			for i := 0; i < buf.Len(); i += 1 + buf.Len()/200 {
				if _, err := decodeLedger(buf.Bytes()[:i]); err == nil {
					t.Fatalf("truncation at %d accepted", i)
				}
			}
		})
	}
}

func FuzzDecodeLedger(f *testing.F) {
	var buf bytes.Buffer
	l := domain.NewLedger()
	for _, e := range randomEvents(rand.New(rand.NewPCG(1, 1)), "n", 30) {
		l.Add(e)
	}
	_ = encodeLedger(&buf, l)
	f.Add(buf.Bytes())
	f.Add([]byte(ledgerMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeLedger(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := encodeLedger(&out, got); err != nil {
			t.Fatal(err)
		}
		back, err := decodeLedger(out.Bytes())
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("re-encoded ledger does not round trip: %v", err)
		}
	})
}

func BenchmarkLedgerDecode(b *testing.B) {
	s := newTestStore(b)
	writeBenchLog(b, s, benchLogLines)
	l, err := s.LoadLedger()
	if err != nil {
		b.Fatal(err)
	}
	var compact, g bytes.Buffer
	if err := encodeLedger(&compact, l); err != nil {
		b.Fatal(err)
	}
	if err := gob.NewEncoder(&g).Encode(l); err != nil {
		b.Fatal(err)
	}
	b.Run("compact", func(b *testing.B) {
		b.SetBytes(int64(compact.Len()))
		for b.Loop() {
			if _, err := decodeLedger(compact.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gob", func(b *testing.B) {
		b.SetBytes(int64(g.Len()))
		for b.Loop() {
			var out domain.Ledger
			if err := gob.NewDecoder(bytes.NewReader(g.Bytes())).Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A weight that is not finite cannot come from the log (domain.Ledger maps
// one to a finite value), so the decoder refuses it as corruption: accepted,
// it would not even round trip, since NaN equals nothing.
func TestLedgerCodecRefusesNonFiniteWeights(t *testing.T) {
	for name, w := range map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1), "-Inf": math.Inf(-1)} {
		t.Run(name, func(t *testing.T) {
			l := domain.NewLedger()
			l.Regrets["e1"] = domain.RegretMark{Session: "s", Lesson: "a", W: w}
			var buf bytes.Buffer
			if err := encodeLedger(&buf, l); err != nil {
				t.Fatal(err)
			}
			if _, err := decodeLedger(buf.Bytes()); err == nil {
				t.Fatalf("a %s weight was decoded", name)
			}
		})
	}
}
