//go:build unix

package index

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockDir takes the exclusive lock on the file at path (created if
// missing), polling for at most wait while another process holds it; past
// that it returns errIndexBusy. The returned function releases the lock.
func lockDir(path string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock index: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock index: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errIndexBusy
		}
		time.Sleep(10 * time.Millisecond)
	}
}
