package fsutil

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// TestPrefaultMapsThePages: after Prefault, every page of the range is
// mapped in this process (its page-table entry present, as
// /proc/self/pagemap says), where pages mapped afresh without it are not
// (a kernel without MADV_POPULATE_READ skips). Read from the page table,
// not by counting the faults of a read: how many pages one fault maps
// depends on the file system's folios, and under the race detector a read
// faults in its shadow memory too.
func TestPrefaultMapsThePages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	page := os.Getpagesize()
	last := data[len(data)-page:] // the kernel's support, asked of a page no check reads
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&last[0])), uintptr(page), madvPopulateRead); e == syscall.EINVAL {
		t.Skip("no MADV_POPULATE_READ in this kernel")
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip("no /proc/self/pagemap:", err)
	}
	defer pagemap.Close()
	// present counts the pages of b whose page-table entry is present.
	present := func(b []byte) int {
		first := uintptr(unsafe.Pointer(&b[0])) / uintptr(page)
		n := len(b) / page
		entries := make([]byte, 8*n)
		if _, err := pagemap.ReadAt(entries, int64(first)*8); err != nil {
			t.Fatal(err)
		}
		count := 0
		for i := range n {
			if binary.LittleEndian.Uint64(entries[8*i:])&(1<<63) != 0 {
				count++
			}
		}
		return count
	}
	third := data[len(data)/3 : 2*len(data)/3]
	pages := len(third) / page
	if before := present(third); before == pages {
		t.Skipf("all %d pages were mapped before Prefault: the test cannot tell", pages)
	}
	Prefault(third)
	if after := present(third); after != pages {
		t.Errorf("after Prefault %d of the range's %d pages are mapped", after, pages)
	}
}
