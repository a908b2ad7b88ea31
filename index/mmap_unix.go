//go:build unix

package index

import (
	"fmt"
	"os"
	"syscall"
)

// readMapped maps the file at path privately (copy-on-write: writes to the
// slice never reach the file) and returns its bytes and a release function.
// The sidecar is read this way so a process pays only for the pages a query
// touches, not for copying the whole file. Empty files are read normally.
func readMapped(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 || size > 1<<40 || int64(int(size)) != size {
		b, err := os.ReadFile(path)
		return b, func() {}, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}

// fileID is the file's inode: a file replaced by rename has another.
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
