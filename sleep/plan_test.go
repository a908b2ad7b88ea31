package sleep

import "testing"

// TestFileCount: a phase's file count reads as English.
func TestFileCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 files", 1: "1 file", 2: "2 files", 11: "11 files"} {
		if got := FileCount(n); got != want {
			t.Errorf("FileCount(%d) = %q, want %q", n, got, want)
		}
	}
}
