//go:build !unix

package memfs

import (
	"os"
)

func statIDs(os.FileInfo) (dev, ino, uid, gid uint32) { return 0, 0, 0, 0 }

// pidAlive cannot tell here: every pid counts as running, so only the write
// lock (or the age of a lock) proves a lock stale.
func pidAlive(int) bool { return true }
