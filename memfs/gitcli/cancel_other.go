//go:build !unix

package gitcli

import "os/exec"

// cancelGently leaves a cancelled context's kill as it is where there is no
// signal git catches.
func cancelGently(*exec.Cmd) {}
