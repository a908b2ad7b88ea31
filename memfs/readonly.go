package memfs

import (
	"errors"
	"fmt"
	"strings"
)

// gitWriteRefused says what a failed git command that writes into the
// store ran into on this machine, from git's stderr: the disk is full, or
// the store cannot be written by this user. It returns "" for anything
// else (a remote that is unreachable or refused, a conflict).
func gitWriteRefused(err error) string {
	var ge *GitError
	if !errors.As(err, &ge) {
		return ""
	}
	switch s := ge.Stderr; {
	case strings.Contains(s, "No space left on device"), strings.Contains(s, "Disk quota exceeded"):
		return "full"
	case strings.Contains(s, "Read-only file system"), strings.Contains(s, "insufficient permission"),
		strings.Contains(s, "unable to create temporary file"), strings.Contains(s, ".lock': Permission denied"),
		strings.Contains(s, "unable to create") && strings.Contains(s, "Permission denied"):
		return "read-only"
	}
	return ""
}

// writeRefusal explains err, a write into store dir that failed, when the
// disk is full or the store cannot be written by this user, naming what
// to do; other errors are returned as they are. what says what was being
// done ("fetch", "take the sync lock").
func writeRefusal(dir, what string, err error) error {
	switch {
	case DiskFull(err) || gitWriteRefused(err) == "full":
		return fmt.Errorf("%s: the disk holding the store %s is full (%v): free space on it and run the command again; nothing was changed", what, dir, err)
	case ReadOnly(err) || gitWriteRefused(err) == "read-only":
		return fmt.Errorf("%s: this user cannot write the store %s (%v)%s: run the command as the store's owner, or give this user write access; reading commands (recall, list, show, doctor) work as they are", what, dir, err, ownerNote(dir))
	}
	return nil
}
