//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach makes cmd its own session: it outlives the process that starts it
// and does not receive the terminal's signals.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
