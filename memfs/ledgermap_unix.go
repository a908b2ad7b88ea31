//go:build unix

package memfs

import (
	"os"
	"syscall"
)

// mapFile maps a cache file read-only and returns its bytes and the function
// that unmaps them; the bytes must never be written. The mapping outlives the
// file's replacement (a rename over it).
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 || size != int64(int(size)) {
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
