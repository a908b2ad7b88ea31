//go:build !unix

package main

import "io"

// runInPlace runs the program at path with argv and env as a child that
// shares in, out and errw, and returns its exit code: where there is no
// exec, borg waits for it.
func runInPlace(path string, argv, env []string, in io.Reader, out, errw io.Writer) (int, error) {
	return runChild(path, argv, env, in, out, errw)
}
