//go:build !unix

package index

import "os"

// readMapped reads the whole file where memory maps are not available.
func readMapped(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}
