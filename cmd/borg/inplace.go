package main

import (
	"errors"
	"io"
	"os/exec"
)

// runChild runs the program at path (argv[0] its name) with env and the
// streams given, and returns its exit code.
func runChild(path string, argv, env []string, in io.Reader, out, errw io.Writer) (int, error) {
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: in, Stdout: out, Stderr: errw}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}
