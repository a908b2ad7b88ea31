package fsutil

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStdlibOnly fails if fsutil depends on anything outside the standard
// library: it is a leaf every package may import without pulling in the
// store.
func TestStdlibOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/borg-memory/borg/memfs/fsutil" {
			t.Errorf("fsutil depends on %s, outside the standard library", p)
		}
	}
}
