//go:build unix

package memfs

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive advisory lock on f, waiting for it.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// funlock releases flock's lock.
func funlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// statIDs returns the stat fields git keeps in an index entry besides the
// times and the size (ctime is left out: its field differs between the
// unixes, and git only rehashes the file when it does not match).
func statIDs(fi os.FileInfo) (dev, ino, uid, gid uint32) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0
	}
	return uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
}
