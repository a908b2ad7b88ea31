package tmpfstest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUse: a TMPDIR the caller set stands; without one, on Linux with a
// roomy /dev/shm, TMPDIR moves to a new folder there, which cleanup removes
// and unsets.
func TestUse(t *testing.T) {
	t.Setenv("TMPDIR", "/somewhere/else")
	Use()()
	if got := os.Getenv("TMPDIR"); got != "/somewhere/else" {
		t.Fatalf("TMPDIR %q; the caller's must stand", got)
	}
	t.Setenv("TMPDIR", "")
	os.Unsetenv("TMPDIR")
	cleanup := Use()
	dir := os.Getenv("TMPDIR")
	if dir == "" {
		if runtime.GOOS == "linux" {
			t.Logf("TMPDIR left unset: /dev/shm is not a tmpfs with room here")
		}
		return
	}
	if !strings.HasPrefix(dir, shm+string(filepath.Separator)) || os.TempDir() != dir {
		t.Errorf("TMPDIR %q, os.TempDir %q; want a folder on %s", dir, os.TempDir(), shm)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", dir, err)
	}
	cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after cleanup: %v", dir, err)
	}
	if v, ok := os.LookupEnv("TMPDIR"); ok {
		t.Errorf("TMPDIR %q after cleanup; want it unset again", v)
	}
}
