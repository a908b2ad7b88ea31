package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSibling: a program beside the running binary is found there before
// one of the same name on PATH; one on PATH alone is found there; one in
// neither place is ErrNoSibling.
func TestSibling(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	name := "sibling-test-" + filepath.Base(t.TempDir())
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	onPath := t.TempDir()
	if err := os.WriteFile(filepath.Join(onPath, file), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", onPath)
	if got, err := Sibling(name); err != nil || got != filepath.Join(onPath, file) {
		t.Errorf("on PATH only: %q, %v", got, err)
	}
	beside := filepath.Join(filepath.Dir(self), file)
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skipf("cannot write beside the test binary: %v", err)
	}
	defer func() { _ = os.Remove(beside) }()
	if got, err := Sibling(name); err != nil || got != beside {
		t.Errorf("beside and on PATH: %q, %v; want %s", got, err, beside)
	}
	if _, err := Sibling(name + "-none"); !errors.Is(err, ErrNoSibling) {
		t.Errorf("in neither place: %v", err)
	}
}
