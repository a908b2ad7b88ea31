package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDeadline bounds every hook; past it the hook gives up and stays silent.
const DefaultDeadline = 2 * time.Second

// Handler decides a hook's output. It may return nil (say nothing).
type Handler func(ctx context.Context) (*Output, error)

// CommitGrace is how long past its deadline Run waits for a hook that has
// passed its point of no return (Commit) to answer.
const CommitGrace = time.Second

// A hook's gate is its point of no return: running, then either committing
// (the hook writes what its answer stands on, and Run delivers that answer)
// or given up (Run answered nothing, and the hook must write nothing).
type gate struct{ state atomic.Int32 }

const (
	gateRunning int32 = iota
	gateCommitting
	gateGaveUp
)

type gateKey struct{}

// Commit is called by a hook before it writes what its answer stands on
// (the asked events of an ask it is about to deliver). It reports false when
// Run has given up on the hook, which must then write nothing: an ask the
// agent never sees must not be recorded. Once it has reported true, Run
// waits for the hook's answer and delivers it, up to CommitGrace past the
// deadline. Outside Run it reports whether ctx is still live.
func Commit(ctx context.Context) bool {
	g, ok := ctx.Value(gateKey{}).(*gate)
	if !ok {
		return ctx.Err() == nil
	}
	return g.state.CompareAndSwap(gateRunning, gateCommitting) || g.state.Load() == gateCommitting
}

// Run executes h so that it can never break the agent: whatever happens
// (an error, a panic, a hang past deadline) the exit code is 0, stdout holds
// exactly one JSON object or nothing, and a failure leaves one line on stderr.
func Run(ctx context.Context, name string, deadline time.Duration, stdout, stderr io.Writer, h Handler) (code int) {
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	g := &gate{}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, gateKey{}, g), deadline)
	defer cancel()

	type result struct {
		out *Output
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("panic: %v [%s]", r, firstFrame(debug.Stack()))}
			}
		}()
		out, err := h(ctx)
		done <- result{out: out, err: err}
	}()

	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		if g.state.CompareAndSwap(gateRunning, gateGaveUp) {
			res.err = fmt.Errorf("gave up after %s (fail open)", deadline)
			break
		}
		// Past its point of no return: what it recorded, it answers.
		select {
		case res = <-done:
		case <-time.After(CommitGrace):
			res.err = fmt.Errorf("gave up %s past its deadline of %s, while recording its answer (fail open)", CommitGrace, deadline)
		}
	}
	defer func() {
		// Writing must not panic the process either.
		if r := recover(); r != nil {
			code = 0
		}
	}()
	if res.err != nil {
		fmt.Fprintln(stderr, "borg hook "+name+": "+oneLine(res.err.Error()))
		return 0
	}
	if b := res.out.Encode(); len(b) > 0 {
		_, _ = stdout.Write(b)
	}
	return 0
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// firstFrame picks the panicking function out of a stack trace for the one
// stderr line.
func firstFrame(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+2 < len(lines) {
			return strings.TrimSpace(lines[i+2])
		}
	}
	return ""
}

// FirstLine wraps a hook's stderr so that it carries at most one line: what
// is written up to the end of the first line passes, the rest is dropped.
// Writes from several goroutines are safe.
func FirstLine(w io.Writer) io.Writer { return &firstLine{w: w} }

type firstLine struct {
	mu   sync.Mutex
	w    io.Writer
	done bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return len(p), nil
	}
	q := p
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		q, f.done = p[:i+1], true
	}
	if _, err := f.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}
