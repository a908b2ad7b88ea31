//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// runInPlace runs the program at path with argv and env in this process's
// place (exec), so that it holds borg's own stdin, stdout and stderr and
// its exit status is borg's. It returns only when the exec fails. When in
// or out is not the process's own stream (borg run in a test, or by
// another Go program), the program runs as a child on them instead.
func runInPlace(path string, argv, env []string, in io.Reader, out, errw io.Writer) (int, error) {
	if in != os.Stdin || out != os.Stdout {
		return runChild(path, argv, env, in, out, errw)
	}
	return 0, syscall.Exec(path, argv, env)
}
