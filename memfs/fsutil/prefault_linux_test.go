package fsutil

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// TestPrefaultMapsThePages: after Prefault, reading every page of the
// range takes (next to) no page fault on this thread, where reading a part
// mapped afresh without it takes one per few pages (a kernel without
// MADV_POPULATE_READ skips).
func TestPrefaultMapsThePages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	faults := func(b []byte) int64 {
		var before, after syscall.Rusage
		_ = syscall.Getrusage(1, &before) // RUSAGE_THREAD
		sum := 0
		for i := 0; i < len(b); i += os.Getpagesize() {
			sum += int(b[i])
		}
		_ = syscall.Getrusage(1, &after)
		if sum == 0 {
			t.Fatal("read nothing")
		}
		return after.Minflt - before.Minflt
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
	third := len(data) / 3
	fresh := faults(data[:third])
	if fresh == 0 {
		t.Fatalf("reading %d pages mapped afresh took no fault: the test cannot tell", third/page)
	}
	// A stray fault or two of the thread's own (a preemption signal's
	// stack, say) may land in the window; a read that the prefault did not
	// map takes as many as the fresh one.
	Prefault(data[third : 2*third])
	if n := faults(data[third : 2*third]); n > fresh/8 {
		t.Errorf("reading the prefaulted pages took %d faults, reading as many mapped afresh %d", n, fresh)
	}
}
