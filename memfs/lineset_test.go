package memfs

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLineSet checks the set against a map: the first commit to put a
// key keeps it, every key is found, absent keys are not, and the records
// come out sorted, whatever the set's starting size (growth included) and
// however crowded the keys' homes are.
func TestLineSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	uniform := func() lineKey {
		var k lineKey
		binary.BigEndian.PutUint64(k[:8], r.Uint64())
		binary.BigEndian.PutUint64(k[8:], r.Uint64())
		return k
	}
	// Keys whose first eight bytes are one of a handful of values: every
	// key has one of a few homes, and the runs are long.
	crowded := func() lineKey {
		var k lineKey
		binary.BigEndian.PutUint64(k[:8], uint64(r.IntN(4))<<62)
		binary.BigEndian.PutUint64(k[8:], r.Uint64())
		return k
	}
	// Keys at the very end of the key space: their runs spill past the
	// home range.
	last := func() lineKey {
		var k lineKey
		binary.BigEndian.PutUint64(k[:8], ^uint64(0))
		binary.BigEndian.PutUint64(k[8:], r.Uint64())
		return k
	}
	for _, tc := range []struct {
		name   string
		sized  int
		puts   int
		newKey func() lineKey
	}{
		{"empty", 0, 0, uniform},
		{"presized", 50_000, 50_000, uniform},
		{"grows from nothing", 0, 50_000, uniform},
		{"undersized", 1_000, 30_000, uniform},
		{"crowded homes", 0, 3_000, crowded},
		{"spills past the end", 100, 500, last},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := newLineSet(tc.sized)
			want := map[lineKey]uint32{}
			var keys []lineKey
			for i := range tc.puts {
				k := tc.newKey()
				if len(keys) > 0 && r.IntN(4) == 0 {
					k = keys[r.IntN(len(keys))] // a line added again, later
				}
				keys = append(keys, k)
				c := uint32(i)
				putLine(set, k, c)
				if _, ok := want[k]; !ok {
					want[k] = c
				}
			}
			if set.len() != len(want) {
				t.Fatalf("len %d, want %d", set.len(), len(want))
			}
			for k, c := range want {
				if got, ok := set.get(k); !ok || got != c {
					t.Fatalf("get(%x) = %d, %v; want %d", k, got, ok, c)
				}
			}
			for range 1000 {
				k := tc.newKey()
				if _, ok := want[k]; !ok {
					if _, ok := set.get(k); ok {
						t.Fatalf("get(%x) found a key never put", k)
					}
				}
			}
			recs := set.records()
			if len(recs) != attribRecord*len(want) {
				t.Fatalf("%d bytes of records, want %d", len(recs), attribRecord*len(want))
			}
			sorted := make([]lineKey, 0, len(want))
			for k := range want {
				sorted = append(sorted, k)
			}
			slices.SortFunc(sorted, func(a, b lineKey) int { return bytes.Compare(a[:], b[:]) })
			for i, k := range sorted {
				rec := recs[i*attribRecord:]
				if !bytes.Equal(rec[:16], k[:]) || binary.LittleEndian.Uint32(rec[16:]) != want[k] {
					t.Fatalf("record %d is %x, want %x under %d", i, rec[:attribRecord], k, want[k])
				}
			}
			var streamed bytes.Buffer
			if err := set.writeRecords(&streamed); err != nil || !bytes.Equal(streamed.Bytes(), recs) {
				t.Fatalf("writeRecords differs from records (%v)", err)
			}
		})
	}
}

// putLine puts k under c unless the set holds it, as a refresh does.
func putLine(set *lineSet, k lineKey, c uint32) {
	if pos, found := set.find(k); !found {
		set.insertAt(pos, k, c)
	}
}

// BenchmarkLineSet is a walk from scratch at a million lines: every line
// put once, then looked up once (labelling), against a map doing the same.
func BenchmarkLineSet(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]lineKey, n)
	for i := range keys {
		binary.BigEndian.PutUint64(keys[i][:8], r.Uint64())
		binary.BigEndian.PutUint64(keys[i][8:], r.Uint64())
	}
	b.Run("set", func(b *testing.B) {
		for b.Loop() {
			set := newLineSet(n)
			for i, k := range keys {
				putLine(set, k, uint32(i))
			}
			for _, k := range keys {
				if _, ok := set.get(k); !ok {
					b.Fatal("lost")
				}
			}
			_ = set.records()
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			m := make(map[lineKey]uint32, n)
			for i, k := range keys {
				if _, ok := m[k]; !ok {
					m[k] = uint32(i)
				}
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					b.Fatal("lost")
				}
			}
			recs := make([]lineRec, 0, len(m))
			for k, c := range m {
				recs = append(recs, lineRec{k, c})
			}
			slices.SortFunc(recs, func(a, b lineRec) int { return bytes.Compare(a.k[:], b.k[:]) })
		}
	})
}
