package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// tracer prints, with `borg recall --trace`, how long each step of a recall
// took: the figures BENCHMARKS.md breaks a recall's time into. A nil tracer
// prints nothing. Package initialisation, before any of this runs, is shown
// by the Go runtime itself: GODEBUG=inittrace=1 borg version.
type tracer struct {
	mu sync.Mutex
	w  io.Writer
	t0 time.Time
}

func newTracer(w io.Writer) *tracer { return &tracer{w: w, t0: time.Now()} }

// step reports that what has ended, at the time since the command started
// and, when since is not zero, how long it took.
func (t *tracer) step(what string, since time.Time) {
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if since.IsZero() {
		fmt.Fprintf(t.w, "trace %7.2f ms  %s\n", ms(now.Sub(t.t0)), what)
		return
	}
	fmt.Fprintf(t.w, "trace %7.2f ms  %s (%.2f ms)\n", ms(now.Sub(t.t0)), what, ms(now.Sub(since)))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
