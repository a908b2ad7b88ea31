package index

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeSidecar feeds arbitrary bytes to the sidecar decoder: it must
// return a store or an error, never panic, and a decoded store must
// re-encode to a file that decodes to the same rows.
func FuzzDecodeSidecar(f *testing.F) {
	s := newVectorStore("emb", 3)
	s.state = []byte{1, 2, 3}
	s.put("alpha", "h1", []float32{1, 0, 0})
	s.put("beta", "h2", []float32{0, 0.6, 0.8})
	path := filepath.Join(f.TempDir(), sidecarName)
	if err := s.save(path); err != nil {
		f.Fatal(err)
	}
	good, err := loadSidecar(path, "emb", 3)
	if err != nil || good.len() != 2 {
		f.Fatalf("round trip: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(sidecarMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeSidecar(append([]byte(nil), raw...), "emb", 3)
		if err != nil {
			return
		}
		if len(got.cols) != 3 || len(got.pos) != got.len() {
			t.Fatalf("inconsistent store: %d rows, %d columns, %d keys", got.len(), len(got.cols), len(got.pos))
		}
		for _, col := range got.cols {
			if len(col) != got.len() {
				t.Fatalf("column of %d rows in a store of %d", len(col), got.len())
			}
		}
	})
}

// FuzzDecodeCatalog does the same for the catalog decoder.
func FuzzDecodeCatalog(f *testing.F) {
	c := newCatalog()
	c.stamp = "tree"
	c.lessons["a-lesson"] = &lessonInfo{id: "a-lesson", hash: "h", title: "T", reach: "repo:x", lens: []uint32{1, 2, 3, 4, 5}}
	path := filepath.Join(f.TempDir(), catalogName)
	if err := c.write(path); err != nil {
		f.Fatal(err)
	}
	got, ok := readCatalog(path)
	if !ok || got.stamp != "tree" || got.lessons["a-lesson"].repo != "x" {
		f.Fatal("catalog round trip failed")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(catalogMagic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := decodeCatalog(append([]byte(nil), raw...))
		if err != nil {
			return
		}
		for id, li := range c.lessons {
			if li.id != id || len(li.lens) != len(lexFields) {
				t.Fatalf("inconsistent entry %q: %+v", id, li)
			}
		}
	})
}
