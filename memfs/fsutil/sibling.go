package fsutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrNoSibling is Sibling's error when the program is in neither place.
var ErrNoSibling = errors.New("not found")

// Sibling is the program name installed with the running binary: the
// file name (name.exe on Windows) in the running binary's own directory,
// else name on PATH. borg and borg-mcp find each other so, whichever of
// the two an agent started.
func Sibling(name string) (string, error) {
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	self, err := os.Executable()
	if err == nil {
		beside := filepath.Join(filepath.Dir(self), file)
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			return beside, nil
		}
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, exec.ErrNotFound) {
		return "", err
	}
	return "", fmt.Errorf("%s: %w beside %s nor on PATH", file, ErrNoSibling, filepath.Dir(self))
}
