//go:build linux

package fsutil

import (
	"os"
	"syscall"
	"unsafe"
)

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map the range's
// pages in one call, reading those not cached, as read faults would.
const madvPopulateRead = 22

// Prefault maps in the pages of b, a part of what Map returned, before a
// reader walks all of it (a checksum over a section, say): one call maps
// them all where touching them would fault once per few pages, and a
// fault is dear in a short-lived process. It is a hint: an older kernel,
// or bytes Map read into memory, make it do nothing.
func Prefault(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	end := start + uintptr(len(b))
	start &^= page - 1
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateRead)
}
