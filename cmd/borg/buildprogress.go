package main

import (
	"fmt"
	"time"

	"github.com/borg-memory/borg/memfs"
)

// progressQuietBelow is the log under which a build is not worth showing:
// it ends before anyone would wonder.
const progressQuietBelow = 16 << 20

// buildProgress shows a build of the store's derived state from the whole
// log, the one wait a user meets (the first command on a fresh clone of a
// big team's store). On a terminal a line is redrawn as it advances (the
// phase, megabytes done of total, the rate); elsewhere one line says what
// was built when it ends. A small log shows nothing.
func buildProgress(e *env) memfs.Progress {
	term := isTerminal(e.err)
	var start time.Time
	var current string
	return func(phase string, done, total int64) {
		if total < progressQuietBelow {
			return
		}
		if start.IsZero() {
			// A build from a long log: its memory is the ledger it keeps,
			// which the collector should not let double.
			buildGC()
		}
		if phase != current {
			current, start = phase, time.Now()
		}
		took := time.Since(start)
		if phase == memfs.PhaseSummary && done > 0 {
			// The build let go of the ledger (halfway), or is over: what
			// it held is collected now, not when the heap reaches the
			// limit the ledger raised.
			if done >= total {
				defer endBuildGC()
			} else {
				collectBuild()
			}
		}
		mb := func(n int64) string { return fmt.Sprintf("%.0f", float64(n)/(1<<20)) }
		if term {
			rate := float64(done) / (1 << 20) / max(took.Seconds(), 0.001)
			fmt.Fprintf(e.err, "\rborg: %s (built once per clone): %s of %s MB, %.0f MB/s ", phase, mb(done), mb(total), rate)
			if done >= total {
				fmt.Fprintf(e.err, "done in %s\n", took.Round(100*time.Millisecond))
			}
			return
		}
		if done >= total {
			fmt.Fprintf(e.err, "borg: %s: %s MB, once for this clone, in %s\n", phase, mb(total), took.Round(100*time.Millisecond))
		}
	}
}
