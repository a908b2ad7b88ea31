//go:build unix

package fsutil

import (
	"os"
	"syscall"
)

// Map maps the file at path privately and returns its bytes and the
// function that unmaps them. A reader pays only for the pages it touches,
// not for copying the file. The mapping is copy-on-write (a write to the
// bytes never reaches the file) and outlives the file's replacement by a
// rename, which is how borg replaces every file it maps. An empty file, or
// one the system will not map, is read whole instead.
func Map(path string) ([]byte, func(), error) {
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
	if size == 0 || size > 1<<40 || size != int64(int(size)) {
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
