package memfs

import (
	"io"
	"os"
	"syscall"
)

// widenPipe asks Linux for a pipe buffer of n bytes on r, when r is a
// pipe: git's output then runs ahead of its reader by that much instead of
// 64 KiB, and the two processes switch far less often. Asking is all it
// does; a refusal (a limit set lower) leaves the pipe as it was.
func widenPipe(r io.Reader, n int) {
	if f, ok := r.(*os.File); ok {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETPIPE_SZ, uintptr(n))
	}
}
