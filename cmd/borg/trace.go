package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// tracer prints, with `borg recall --trace`, how long each step of a recall
// took: the figures BENCHMARKS.md breaks a recall's time into. A hook, which
// takes no flags and must keep stderr to one line, appends the same to the
// file BORG_TRACE names (hookTracer). A nil tracer
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

// hookTracer is the tracer of a hook run with BORG_TRACE set (a developer's
// switch beside BORG_CPUPROFILE): its steps are appended to that file, the
// hook's stdout and stderr untouched. A file that cannot be opened traces
// nothing: the hook fails open as ever.
func hookTracer(path, verb string) (tr *tracer, done func()) {
	if path == "" {
		return nil, func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, func() {}
	}
	tr = newTracer(f)
	tr.step("hook "+verb+" started", time.Time{})
	return tr, func() {
		tr.step("hook "+verb+" done", time.Time{})
		_ = f.Close()
	}
}
