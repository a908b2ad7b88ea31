//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// lockWait blocks until f's lock is taken.
func lockBlocking(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// tryLock takes f's lock if it is free; busy when another holder has it.
func lockTry(f *os.File) (busy bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return true, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

func lockRelease(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

func isInterrupted(err error) bool { return errors.Is(err, syscall.EINTR) }

// lockSupported: LockFile excludes other holders on this system.
const lockSupported = true
