//go:build !unix && !windows

package main

import "os/exec"

// detach leaves cmd as it is where sessions do not exist.
func detach(cmd *exec.Cmd) {}
