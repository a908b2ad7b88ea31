//go:build !linux

package fsutil

// Prefault does nothing where the kernel has no call to map a range's
// pages in at once: the reader's faults map them.
func Prefault(b []byte) {}
