package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestTuneGC: a reindex's collector settings are put back after it, and
// its heap limit follows a live heap that nears it, a quarter above it (an
// eighth once a build from the whole log tuned it).
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(limit)

	const base = 8 << 20
	restore := tuneGC(base)
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Errorf("limit during the reindex = %d; want %d", got, base)
	}
	hold := make([]byte, 32<<20) // live: more than half the limit
	for i := range hold {
		hold[i] = byte(i)
	}
	// The watcher's cleanup runs on the runtime's cleanup goroutine after
	// a collection, not within it: collect and yield until it has run
	// (bounded by collections, not by time, so a slow machine only loops
	// longer).
	raisedTo := func(want int64) bool {
		for range 1000 {
			runtime.GC()
			runtime.Gosched()
			if debug.SetMemoryLimit(-1) >= want {
				return true
			}
		}
		return false
	}
	n := int64(len(hold))
	if !raisedTo(n + n/4) {
		t.Errorf("limit = %d after collections with %d bytes live; want a quarter above that or more", debug.SetMemoryLimit(-1), n)
	}
	runtime.KeepAlive(hold)
	restore()

	// A build lowers a limit above buildHeapLimit to it, and keeps an
	// eighth of headroom from then on.
	restore = tuneGC(2 * buildHeapLimit)
	buildGC()
	if got := debug.SetMemoryLimit(-1); got != buildHeapLimit {
		t.Errorf("limit in a build = %d; want %d", got, buildHeapLimit)
	}
	gcTune.Lock()
	headroom := gcTune.headroom
	gcTune.Unlock()
	if headroom != 8 {
		t.Errorf("headroom in a build = 1/%d of the live heap; want 1/8", headroom)
	}
	// The build's end puts back the limit and the headroom it found.
	endBuildGC()
	gcTune.Lock()
	headroom = gcTune.headroom
	gcTune.Unlock()
	if got := debug.SetMemoryLimit(-1); got < 2*buildHeapLimit || headroom != 4 {
		t.Errorf("after the build: limit %d, headroom 1/%d; want %d or more and 1/4", got, headroom, 2*buildHeapLimit)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC after the reindex = %d; want 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("limit after the reindex = %d; want %d", got, limit)
	}
}
