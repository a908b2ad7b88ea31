//go:build unix

package gitcli

import (
	"os/exec"
	"syscall"
)

// cancelGently makes a cancelled context stop git with SIGTERM instead of
// SIGKILL: git catches it, removes the lock files it holds and ends (a
// SIGKILL would leave its locks, and borg never removes them: gitlock.go).
func cancelGently(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
}
