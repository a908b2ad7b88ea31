package tmpfstest

import (
	"os"
	"syscall"
)

// shm is where Linux mounts its shared-memory tmpfs.
const shm = "/dev/shm"

// minFree is the room /dev/shm must have before a suite's temporary files
// go there: a container's default of 64 MiB would fill, and a test failing
// for want of space fails for nothing it tests.
const minFree = 2 << 30

// tmpfsMagic is TMPFS_MAGIC, the f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// Use points TMPDIR at a new folder on /dev/shm, for the test process and
// every process it starts, when TMPDIR is not set already and /dev/shm is a
// tmpfs with room; it returns what removes the folder (nothing to do when
// it changed nothing). Call it first in TestMain.
func Use() (cleanup func()) {
	none := func() {}
	if os.Getenv("TMPDIR") != "" {
		return none // the caller's choice stands
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minFree {
		return none
	}
	dir, err := os.MkdirTemp(shm, "borg-test-")
	if err != nil {
		return none
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		_ = os.Remove(dir)
		return none
	}
	return func() {
		_ = os.Unsetenv("TMPDIR")
		_ = os.RemoveAll(dir)
	}
}
