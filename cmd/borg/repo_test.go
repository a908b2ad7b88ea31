package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestNoBinaryTracked: no built program is committed (.gitignore keeps
// them out; this catches one added with git add -f). It reads the files
// git tracks in this checkout, and skips outside one.
func TestNoBinaryTracked(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := memfs.Git{Dir: root}.Run(context.Background(), nil, "ls-files", "-z")
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	magics := map[string][]byte{
		"ELF":     {0x7f, 'E', 'L', 'F'},
		"Mach-O":  {0xcf, 0xfa, 0xed, 0xfe},
		"Mach-O ": {0xfe, 0xed, 0xfa, 0xcf},
		"fat":     {0xca, 0xfe, 0xba, 0xbe},
		"PE":      {'M', 'Z'},
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		f, err := os.Open(filepath.Join(root, string(name)))
		if err != nil {
			continue // deleted in the work tree
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for kind, m := range magics {
			if n >= len(m) && bytes.Equal(head[:len(m)], m) {
				t.Errorf("%s is a committed %s binary: git rm --cached it (.gitignore covers built binaries)", name, kind)
			}
		}
	}
}
