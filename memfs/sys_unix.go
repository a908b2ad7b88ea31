//go:build unix

package memfs

import (
	"errors"
	"fmt"
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

// ownerNote names the owner of dir when it is not this process's user:
// " (it belongs to uid 1000, and this is uid 0)", or "".
func ownerNote(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return ""
	}
	return fmt.Sprintf(" (it belongs to uid %d, and this is uid %d)", st.Uid, os.Geteuid())
}

// storeOwner is the owner of dir and this process's effective user, and
// whether they differ.
func storeOwner(dir string) (owner, me int, foreign bool) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	me = os.Geteuid()
	return int(st.Uid), me, int(st.Uid) != me
}
