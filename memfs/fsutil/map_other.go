//go:build !unix

package fsutil

import "os"

// Map reads the file whole where memory maps are not available.
func Map(path string) ([]byte, func(), error) {
	data, err := os.ReadFile(path)
	return data, func() {}, err
}
