package memfs

import (
	"errors"
	"runtime"
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
	var after atomic.Int32
	var failed atomic.Bool
	err := perCore(100000, func() func(int) error {
		return func(i int) error {
			if failed.Load() {
				after.Add(1)
			}
			if i == 10 {
				failed.Store(true)
				return boom
			}
			return nil
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	// Another worker may have taken its next index as the error fell: one
	// per worker at most.
	if a := after.Load(); int(a) >= runtime.GOMAXPROCS(0) {
		t.Fatalf("%d indexes worked after the error", a)
	}
}
