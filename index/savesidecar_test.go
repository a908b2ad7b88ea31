package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refEncode is the sidecar encoding save streamed before, kept as its
// specification: the whole file written through w in order.
func refEncode(s *vectorStore, w io.Writer) error {
	s.keys()
	var hdr bytes.Buffer
	hdr.WriteString(sidecarMagic)
	le := binary.LittleEndian
	hdr.Write(le.AppendUint32(nil, sidecarFormat))
	hdr.Write(le.AppendUint32(nil, uint32(s.dim)))
	hdr.Write(le.AppendUint32(nil, uint32(len(s.ids))))
	hdr.Write(le.AppendUint32(nil, uint32(len(s.embedderID))))
	hdr.WriteString(s.embedderID)
	hdr.Write(le.AppendUint32(nil, uint32(len(s.state))))
	hdr.Write(s.state)
	// Rows go out in id order (decode checks it and finds ids by binary
	// search).
	perm := make([]int, len(s.ids))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return strings.Compare(s.ids[a], s.ids[b]) })
	var keys bytes.Buffer
	offsets := []byte(nil)
	for _, i := range perm {
		id := s.ids[i]
		if len(id) > math.MaxUint16 || len(s.hashes[i]) > math.MaxUint16 {
			return fmt.Errorf("encode vector sidecar: id %q too long", id)
		}
		offsets = le.AppendUint32(offsets, uint32(keys.Len()))
		keys.Write(le.AppendUint16(nil, uint16(len(id))))
		keys.WriteString(id)
		keys.Write(le.AppendUint16(nil, uint16(len(s.hashes[i]))))
		keys.WriteString(s.hashes[i])
	}
	hdr.Write(le.AppendUint32(offsets, uint32(keys.Len())))
	hdr.Write(keys.Bytes())
	for hdr.Len()%4 != 0 {
		hdr.WriteByte(0)
	}
	hdr.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(hdr.Bytes())))
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	// The columns, then the rows, in id order, a block at a time: one write
	// per block, and the rows transposed in tiles so that both the columns
	// read and the rows written stay in cache.
	vals := make([]float32, len(perm))
	buf := make([]byte, 4*len(perm))
	for _, col := range s.cols {
		for k, i := range perm {
			vals[k] = col[i]
		}
		if _, err := w.Write(floatBytesLE(vals, buf)); err != nil {
			return err
		}
	}
	const tile = 64
	half := make([]uint16, tile*s.dim)
	out := make([]byte, 0, 2*len(half))
	for lo := 0; lo < len(perm); lo += tile {
		rows := perm[lo:min(lo+tile, len(perm))]
		for c, col := range s.cols {
			for k, i := range rows {
				// floatToHalf, its common case written out (too large to inline).
				b := math.Float32bits(col[i])
				if a := b & 0x7fffffff; a >= 0x38800000 && a < 0x47800000 {
					half[k*s.dim+c] = uint16(b>>16)&0x8000 | uint16((a+0xfff+(a>>13&1)-0x38000000)>>13)
				} else {
					half[k*s.dim+c] = floatToHalfRare(b)
				}
			}
		}
		out = out[:0]
		for _, h := range half[:len(rows)*s.dim] {
			out = le.AppendUint16(out, h)
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// TestSaveSameAsReference: the streamed sidecar, written at offsets from
// both cores, is refEncode's file byte for byte: rows in id order or not,
// removed rows, no rows, a row count that fills no tile, values that round
// to infinity, zero or a subnormal half, and NaN.
func TestSaveSameAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	odd := []float32{0, float32(math.Copysign(0, -1)), 1e-6, -3e-5, 7e-8, 65519, 70000, -1e9,
		float32(math.Inf(1)), float32(math.NaN()), 6.1e-5, 1}
	build := func(rows, dim int, shuffled bool) *vectorStore {
		s := newVectorStore("emb-x", dim)
		s.state = []byte("corpus state")
		order := make([]int, rows)
		for i := range order {
			order[i] = i
		}
		if shuffled {
			rng.Shuffle(rows, func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, i := range order {
			v := make([]float32, dim)
			for c := range v {
				if rng.IntN(10) == 0 {
					v[c] = odd[rng.IntN(len(odd))]
				} else {
					v[c] = float32(rng.NormFloat64())
				}
			}
			s.put(fmt.Sprintf("lesson-%05d", i), fmt.Sprintf("h%x", rng.Uint32()), v)
		}
		if shuffled && rows > 10 {
			for range rows / 10 {
				s.remove(fmt.Sprintf("lesson-%05d", rng.IntN(rows)))
			}
		}
		return s
	}
	cases := []struct {
		name           string
		rows, dim      int
		shuffled, full bool
	}{
		{"empty", 0, 8, false, false},
		{"one", 1, 3, false, false},
		{"sorted", 1337, 40, false, false},
		{"shuffled", 1337, 40, true, false},
		{"sorted-512", 700, 512, false, false},
		{"shuffled-512", 700, 512, true, false},
		{"decoded", 300, 16, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := build(tc.rows, tc.dim, tc.shuffled)
			path := filepath.Join(t.TempDir(), sidecarName)
			if tc.full {
				// A store as decoded from a file, then changed: its
				// columns alias the mapping.
				if err := s.save(path); err != nil {
					t.Fatal(err)
				}
				var err error
				if s, err = loadSidecar(path, "emb-x", tc.dim); err != nil {
					t.Fatal(err)
				}
				defer s.close()
				s.put("lesson-00000a", "new", make([]float32, tc.dim))
				path = filepath.Join(t.TempDir(), sidecarName)
			}
			var want bytes.Buffer
			if err := refEncode(s, &want); err != nil {
				t.Fatal(err)
			}
			if err := s.save(path); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				at := 0
				for at < min(len(got), want.Len()) && got[at] == want.Bytes()[at] {
					at++
				}
				t.Fatalf("saved %d bytes, the reference %d; first difference at %d", len(got), want.Len(), at)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Fatalf("the directory holds %d files after save, want the sidecar alone", len(entries))
			}
		})
	}
}

// TestSidecarKeysInPlace: a sidecar read from its file finds a row's id,
// hash and vector through the key offsets, as the store it was saved from
// does, without decoding the keys; ids before, between and after the rows
// are not found; decoding the keys whole gives the same rows.
func TestSidecarKeysInPlace(t *testing.T) {
	s := newVectorStore("emb", 2)
	for i := range 300 {
		s.put(fmt.Sprintf("lesson-%04d", 2*i+1), fmt.Sprintf("hash-%d", i), []float32{float32(i), 1})
	}
	path := filepath.Join(t.TempDir(), sidecarName)
	if err := s.save(path); err != nil {
		t.Fatal(err)
	}
	got, err := loadSidecar(path, "emb", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer got.close()
	if got.file == nil || got.ids != nil {
		t.Fatal("the keys were decoded on load")
	}
	if got.len() != s.len() {
		t.Fatalf("%d rows, want %d", got.len(), s.len())
	}
	for i := range 300 {
		id := fmt.Sprintf("lesson-%04d", 2*i+1)
		if h, ok := got.hash(id); !ok || h != fmt.Sprintf("hash-%d", i) {
			t.Fatalf("hash(%s) = %q, %v", id, h, ok)
		}
		if v := got.vector(id); len(v) != 2 || v[1] != 1 {
			t.Fatalf("vector(%s) = %v", id, v)
		}
		if _, ok := got.find(fmt.Sprintf("lesson-%04d", 2*i)); ok {
			t.Fatalf("found lesson-%04d, which has no row", 2*i)
		}
	}
	for _, absent := range []string{"", "a", "lesson-9999", "zz"} {
		if _, ok := got.find(absent); ok {
			t.Fatalf("found %q", absent)
		}
	}
	if got.file == nil {
		t.Fatal("a lookup decoded the keys")
	}
	got.keys()
	if got.file != nil || !slices.Equal(got.ids, s.ids) || !slices.Equal(got.hashes, s.hashes) {
		t.Fatal("the keys decoded whole differ from the saved store's")
	}
}

// TestSidecarFormatWithoutOffsets: a sidecar of the format before the key
// offsets still reads, its keys decoded at once; the next save writes the
// current format.
func TestSidecarFormatWithoutOffsets(t *testing.T) {
	s := newVectorStore("emb", 2)
	s.state = []byte("st")
	for i := range 50 {
		s.put(fmt.Sprintf("l-%03d", i), fmt.Sprintf("h%d", i), []float32{1, float32(i)})
	}
	path := filepath.Join(t.TempDir(), sidecarName)
	if err := s.save(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The same file in format 1: no offset table, the padding and the
	// checksum again.
	le := binary.LittleEndian
	table, keys, sum := sidecarLayout(raw)
	old := append([]byte(nil), raw[:table]...)
	le.PutUint32(old[len(sidecarMagic):], sidecarFormatNoOffsets)
	old = append(old, raw[keys:keys+int(le.Uint32(raw[keys-4:]))]...)
	for len(old)%4 != 0 {
		old = append(old, 0)
	}
	old = le.AppendUint32(old, crc32.ChecksumIEEE(old))
	old = append(old, raw[sum+4:]...)
	got, err := decodeSidecar(old, "emb", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.file != nil || !slices.Equal(got.ids, s.ids) || !slices.Equal(got.hashes, s.hashes) {
		t.Fatal("a format 1 sidecar read other keys")
	}
	if v := got.vector("l-007"); len(v) != 2 || v[1] != 7 {
		t.Fatalf("vector(l-007) = %v", v)
	}
	// Offsets that go back read as no key until the keys are checked,
	// which refuses them.
	bad := append([]byte(nil), raw...)
	le.PutUint32(bad[table+4:], 1<<20)
	got, err = decodeSidecar(bad, "emb", 2)
	if err != nil {
		t.Fatal(err)
	}
	if id := got.idAt(0); id != "" {
		t.Fatalf("row 0 with a bad offset reads %q", id)
	}
	if err := got.verify(); err == nil {
		t.Fatal("verified a sidecar whose key offsets go back")
	}
	// The same with its checksum made to match: the order is still checked.
	_, _, sum = sidecarLayout(bad)
	le.PutUint32(bad[sum:], crc32.ChecksumIEEE(bad[:sum]))
	if got, err = decodeSidecar(bad, "emb", 2); err != nil {
		t.Fatal(err)
	}
	if err := got.verify(); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("verify of offsets that go back, checksum matching: %v", err)
	}
}

// sidecarLayout reads where a format 2 sidecar's parts start: the key
// offset table, the keys, and the checksum after the keys' padding.
func sidecarLayout(raw []byte) (table, keys, sum int) {
	le := binary.LittleEndian
	table = len(sidecarMagic) + 12
	table += 4 + int(le.Uint32(raw[table:])) // the embedder id
	table += 4 + int(le.Uint32(raw[table:])) // the corpus state
	keys = table + 4*(int(le.Uint32(raw[len(sidecarMagic)+8:]))+1)
	sum = (keys + int(le.Uint32(raw[keys-4:])) + 3) &^ 3
	return table, keys, sum
}

// TestVerifyChecksVectorOrder: a hook trusts the order of the sidecar's
// keys, which it reads in place; borg doctor (Verify) checks it, even in a
// file whose checksum was made to match.
func TestVerifyChecksVectorOrder(t *testing.T) {
	dir := t.TempDir()
	writeCorpusIndex(t, dir)
	path := filepath.Join(dir, sidecarName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Index(raw, []byte("docker-layer-cache")) // the first id
	if first < 0 {
		t.Fatal("no docker-layer-cache key in the sidecar")
	}
	raw[first] = 'z' // now after every other id
	_, _, sum := sidecarLayout(raw)
	binary.LittleEndian.PutUint32(raw[sum:], crc32.ChecksumIEEE(raw[:sum]))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, NewNGramEmbedder(NGramOptions{})); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Verify of a sidecar out of order: %v", err)
	}
}

// TestVectorColumnsGrowApart: rows put one at a time, in batches and after
// a reserve, into a store whose columns share one block each time they
// grow, read back as put: growing one column never writes into the next.
func TestVectorColumnsGrowApart(t *testing.T) {
	const dim = 5
	s := newVectorStore("test", dim)
	want := map[string][]float32{}
	row := func(i int) []float32 {
		v := make([]float32, dim)
		for c := range v {
			v[c] = float32(i*dim + c)
		}
		return v
	}
	id := func(i int) string { return fmt.Sprintf("l%04d", i) }
	for i := range 300 {
		switch {
		case i%50 == 7:
			s.reserve(3)
			fallthrough
		case i%3 == 0:
			s.put(id(i), "h", row(i))
		default:
			s.putRows([]string{id(i)}, []string{"h"}, [][]float32{row(i)})
		}
		want[id(i)] = row(i)
		if i%37 == 0 { // an existing row rewritten in place
			s.put(id(i/2), "h2", row(i/2+1000))
			want[id(i/2)] = row(i/2 + 1000)
		}
	}
	for k, v := range want {
		i, ok := s.find(k)
		if !ok {
			t.Fatalf("%s: not found", k)
		}
		for c := range dim {
			if got := s.cols[c][i]; got != v[c] {
				t.Fatalf("%s column %d: %v, want %v", k, c, got, v[c])
			}
		}
	}
}
