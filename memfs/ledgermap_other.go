//go:build !unix

package memfs

import "os"

// mapFile reads a cache file whole where mmap(2) does not exist.
func mapFile(path string) ([]byte, func(), error) {
	data, err := os.ReadFile(path)
	return data, func() {}, err
}
