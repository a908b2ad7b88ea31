package memfs

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a git child borg runs die with borg: a borg killed
// mid-merge must not leave its git merging the store without the write
// lock (the next writer undoes the merge instead; see undoMerge).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// childrenDieWithParent says dieWithParent works here.
const childrenDieWithParent = true
