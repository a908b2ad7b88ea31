//go:build unix

package domain

import (
	"syscall"
	"time"
)

// processCPU is the process's user+system CPU time so far, so a benchmark can
// report CPU per op that a busy machine does not inflate the way it inflates
// wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
