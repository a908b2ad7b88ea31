package memfs

import (
	"os"
	"strings"
	"testing"
)

// TestScreenID checks that ScreenID names the gitleaks version go.mod
// requires, so an upgrade of the rules re-screens every indexed lesson.
func TestScreenID(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/zricethezav/gitleaks/v8" {
			if !strings.HasPrefix(ScreenID, "gitleaks-"+f[1]+"+") {
				t.Fatalf("ScreenID %q does not name gitleaks %s: bump it", ScreenID, f[1])
			}
			return
		}
	}
	t.Fatal("go.mod does not require gitleaks")
}
