//go:build !linux

package gitcli

import "os/exec"

// dieWithParent does nothing where the OS has no parent-death signal: a
// git child of a killed borg finishes on its own.
func dieWithParent(*exec.Cmd) {}
