package gitcli

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a git child borg runs die with borg (Git.DieWithParent:
// only for commands that take no lock).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
