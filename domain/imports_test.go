package domain

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStdlibOnly fails if domain depends on anything outside the standard
// library.
func TestStdlibOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/borg-memory/borg/domain" {
			t.Errorf("domain depends on %s, outside the standard library", p)
		}
	}
}
