//go:build !linux

package gitcli

import "os/exec"

// dieWithParent does nothing where the OS has no parent-death signal: a
// git child of a killed borg finishes on its own.
func dieWithParent(*exec.Cmd) {}

// hugeMalloc leaves env as it is: glibc's malloc tunables are Linux's.
func hugeMalloc(env []string, _ string, _ []string) []string { return env }
