//go:build !unix

package main

import "os/exec"

// ownGroup is a no-op where process groups are not unix's: cancelling
// kills the direct child only.
func ownGroup(*exec.Cmd) {}
