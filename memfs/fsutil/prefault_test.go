package fsutil

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPrefault: prefaulting any part of a mapped file, or of memory that is
// not a mapping, or nothing, leaves the bytes as they were.
func TestPrefault(t *testing.T) {
	want := bytes.Repeat([]byte("borg prefault "), 5000) // several pages
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	for _, r := range [][2]int{{0, len(data)}, {1, 2}, {4095, 4097}, {5000, len(data) - 3}, {len(data) - 1, len(data)}, {7, 7}} {
		Prefault(data[r[0]:r[1]])
	}
	Prefault(nil)
	heap := append([]byte(nil), want...)
	Prefault(heap[100:9000])
	if !bytes.Equal(data, want) || !bytes.Equal(heap, want) {
		t.Fatal("bytes changed")
	}
}
