package memfs

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestPerCore: every index is worked once, each worker is made once, and
// after an error no further index is handed out and the error comes back.
func TestPerCore(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		seen := make([]atomic.Int32, n)
		var workers atomic.Int32
		err := perCore(n, func() func(int) error {
			workers.Add(1)
			return func(i int) error { seen[i].Add(1); return nil }
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d worked %d times", n, i, c)
			}
		}
		if w := workers.Load(); n > 0 && (w < 1 || int(w) > n) {
			t.Fatalf("n=%d: %d workers", n, w)
		}
	}
	boom := errors.New("boom")
	// One worker: the error stops it, so exactly the indexes up to the
	// failing one are worked.
	var worked atomic.Int32
	err := inWorkers(1, 100000, func() func(int) error {
		return func(i int) error {
			worked.Add(1)
			if i == 10 {
				return boom
			}
			return nil
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("one worker: err = %v, want boom", err)
	}
	if w := worked.Load(); w != 11 {
		t.Fatalf("one worker: %d indexes worked, want 11", w)
	}
	// Several workers: how far the others get before they see the flag is
	// the scheduler's business; the error comes back, no index is worked
	// twice, and the call returns.
	seen := make([]atomic.Int32, 100000)
	err = inWorkers(4, len(seen), func() func(int) error {
		return func(i int) error {
			if seen[i].Add(1) > 1 {
				t.Errorf("index %d worked twice", i)
			}
			if i == 10 {
				return boom
			}
			return nil
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("four workers: err = %v, want boom", err)
	}
}
