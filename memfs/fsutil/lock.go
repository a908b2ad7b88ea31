package fsutil

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrLocked reports that another process holds a lock LockFile or LockPath
// gave up waiting for.
var ErrLocked = errors.New("locked by another process")

// lockPoll is how often a bounded wait for a lock tries again.
const lockPoll = 5 * time.Millisecond

// LockFile takes an exclusive advisory lock on the open file f: at once
// when it is free, else trying again until wait has passed (ErrLocked),
// or for as long as it takes when wait is negative. It is borg's one lock:
// the log's appends, the index's writer, a session's state.
//
// On unix it is flock(2); on windows LockFileEx on one byte far past any
// file's end (so readers and appenders of the file itself are never
// blocked); where neither exists it does not lock (see lock_other.go).
func LockFile(f *os.File, wait time.Duration) error {
	if wait < 0 {
		for {
			err := lockBlocking(f)
			if !isInterrupted(err) {
				return err
			}
		}
	}
	deadline := time.Now().Add(wait)
	for {
		busy, err := lockTry(f)
		if err != nil {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if !busy {
			return nil
		}
		if !time.Now().Before(deadline) {
			return ErrLocked
		}
		time.Sleep(min(lockPoll, time.Until(deadline)+time.Millisecond))
	}
}

// UnlockFile releases LockFile's lock on f.
func UnlockFile(f *os.File) error { return lockRelease(f) }

// LockPath opens (creating it if missing) the lock file at path and takes
// its lock as LockFile does. The returned function releases the lock and
// closes the file.
func LockPath(path string, wait time.Duration) (func(), error) {
	_, unlock, err := LockPathFile(path, wait)
	return unlock, err
}

// LockPathFile is LockPath that also returns the locked file.
func LockPathFile(path string, wait time.Duration) (*os.File, func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := LockFile(f, wait); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, func() {
		_ = lockRelease(f)
		_ = f.Close()
	}, nil
}
