//go:build !unix

package index

import "os"

// readMapped reads the whole file where memory maps are not available.
func readMapped(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}

// fileID is 0 where inodes are not known (size and time tell instead).
func fileID(os.FileInfo) uint64 { return 0 }
