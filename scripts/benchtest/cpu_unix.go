//go:build unix

package benchtest

import (
	"syscall"
	"time"
)

// ProcessCPU is the user and system CPU time of this process and of the
// children it has waited for (git, say) so far. A benchmark reports CPU per
// op from it: a busy machine inflates wall time, not CPU time. ok is false
// where the OS does not say.
func ProcessCPU() (d time.Duration, ok bool) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0, false
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano()), true
}
