//go:build unix

package index

import (
	"os"
	"syscall"
)

// fileID is the file's inode: a file replaced by rename has another.
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
