//go:build !unix

package index

import "os"

// fileID is 0 where inodes are not known (size and time tell instead).
func fileID(os.FileInfo) uint64 { return 0 }
