//go:build windows

package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows locks byte ranges, and a locked range refuses other processes'
// reads and writes. borg locks one byte at the far end of the 64-bit range,
// which no file reaches, so the lock excludes only other lockers.
const (
	lockOffLow  = 0xFFFFFFFE
	lockOffHigh = 0x7FFFFFFF
)

func lockRange(f *os.File, flags uint32) error {
	ol := windows.Overlapped{Offset: lockOffLow, OffsetHigh: lockOffHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

func lockBlocking(f *os.File) error { return lockRange(f, 0) }

func lockTry(f *os.File) (busy bool, err error) {
	err = lockRange(f, windows.LOCKFILE_FAIL_IMMEDIATELY)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return true, nil
	}
	return false, err
}

func lockRelease(f *os.File) error {
	ol := windows.Overlapped{Offset: lockOffLow, OffsetHigh: lockOffHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

func isInterrupted(error) bool { return false }

// lockSupported: LockFile excludes other holders on this system.
const lockSupported = true
