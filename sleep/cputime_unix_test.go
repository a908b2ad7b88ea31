//go:build unix

package sleep

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time of the process and of the children
// it has waited for (the git CLI) so far, so a benchmark can report CPU per
// op, which a busy machine does not inflate the way it inflates wall time.
func processCPU() (time.Duration, bool) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0, false
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano()), true
}
