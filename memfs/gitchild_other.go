//go:build !linux

package memfs

import "os/exec"

// dieWithParent does nothing where the OS has no parent-death signal: a
// git child of a killed borg finishes on its own, and its locks are left
// to the age rule.
func dieWithParent(*exec.Cmd) {}

// childrenDieWithParent says dieWithParent works here.
const childrenDieWithParent = false
