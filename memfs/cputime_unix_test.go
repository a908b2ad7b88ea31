//go:build unix

package memfs

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used, for
// benchmarks to report cpu-ns/op: on a machine shared with other builds,
// wall time per op mostly measures the others.
func processCPU() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
