//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// killGroup starts cmd in a process group of its own and makes its
// context's cancellation kill the group: a judge is a shell command, and
// killing the shell alone leaves what it started running.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
