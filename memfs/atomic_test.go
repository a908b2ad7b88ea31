package memfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFileAtomic: every way of calling the one atomic write leaves
// the new content with its mode, no temp file beside the target or in the
// temp dir, and fails (naming the path) where it cannot write.
func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name    string
		perm    os.FileMode
		opts    func(tmp string) []WriteOption
		exists  bool
		missing bool // the target's directory does not exist
	}{
		{name: "new file", perm: 0o644},
		{name: "over an old file", perm: 0o644, exists: true},
		{name: "read-only mode", perm: 0o444},
		{name: "temp dir", perm: 0o644, opts: func(tmp string) []WriteOption { return []WriteOption{TempDir(tmp)} }},
		{name: "no sync", perm: 0o644, exists: true, opts: func(string) []WriteOption { return []WriteOption{NoSync()} }},
		{name: "both", perm: 0o600, opts: func(tmp string) []WriteOption { return []WriteOption{TempDir(tmp), NoSync()} }},
		{name: "missing directory", perm: 0o644, missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			target := filepath.Join(dir, "f.txt")
			if tt.missing {
				target = filepath.Join(dir, "nowhere", "f.txt")
			}
			if tt.exists {
				if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var opts []WriteOption
			if tt.opts != nil {
				opts = tt.opts(tmp)
			}
			err := WriteFileAtomic(target, []byte("new"), tt.perm, opts...)
			if tt.missing {
				if err == nil || !strings.Contains(err.Error(), target) {
					t.Fatalf("want an error naming %s, got %v", target, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
				t.Fatalf("read back %q, %v", b, err)
			}
			if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != tt.perm {
				t.Fatalf("mode %v, want %v (%v)", fi.Mode().Perm(), tt.perm, err)
			}
			for _, d := range []string{dir, tmp} {
				es, _ := os.ReadDir(d)
				for _, e := range es {
					if e.Name() != "f.txt" {
						t.Errorf("left %s in %s", e.Name(), d)
					}
				}
			}
		})
	}
}
