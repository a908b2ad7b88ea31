package index

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoStoreEngine fails if index depends on the store package or on what
// it pulls in (go-git, gitleaks): index needs only the leaf packages
// (memfs/fsutil, memfs/gitcli), and every hook would pay for the rest at
// start-up.
func TestNoStoreEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/borg-memory/borg/memfs" || strings.Contains(p, "go-git") || strings.Contains(p, "gitleaks") {
			t.Errorf("index depends on %s", p)
		}
	}
}
