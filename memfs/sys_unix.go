//go:build unix

package memfs

import (
	"errors"
	"os"
	"syscall"
)

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

// pidAlive reports whether a process with this pid runs (one of another
// user's counts: signalling it is refused, not unknown).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
