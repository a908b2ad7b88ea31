//go:build !unix

package memfs

import (
	"os"
)

func statIDs(os.FileInfo) (dev, ino, uid, gid uint32) { return 0, 0, 0, 0 }

// pidAlive cannot tell here: every pid counts as running, so only the write
// lock (or the age of a lock) proves a lock stale.
func pidAlive(int) bool { return true }

// ownerNote names dir's owner where the system says (not here).
func ownerNote(string) string { return "" }

// storeOwner cannot tell here: every store counts as this user's.
func storeOwner(string) (owner, me int, foreign bool) { return 0, 0, false }
