package fsutil

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Two opens of one lock file exclude each other within a process as they
// do across processes (flock and LockFileEx lock an open file, not a
// process), so one process can test the lock.
func TestLockPath(t *testing.T) {
	if !lockSupported {
		t.Skip("no advisory lock on " + runtime.GOOS)
	}
	p := filepath.Join(t.TempDir(), "lock")
	release, err := LockPath(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
		if _, err := LockPath(p, wait); !errors.Is(err, ErrLocked) {
			t.Fatalf("wait %v on a held lock: err = %v, want ErrLocked", wait, err)
		}
	}
	// A waiter without bound gets the lock once it is released.
	got := make(chan error, 1)
	go func() {
		unlock, err := LockPath(p, -1)
		if err == nil {
			unlock()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Fatalf("unbounded wait: %v", err)
	}
	unlock, err := LockPath(p, 0)
	if err != nil {
		t.Fatalf("free lock: %v", err)
	}
	unlock()
}

func TestLockPathMissingDir(t *testing.T) {
	_, err := LockPath(filepath.Join(t.TempDir(), "no", "such", "lock"), 0)
	if err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want an open error", err)
	}
}
