package gitcli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHugeMalloc: a git that reads a big index gets glibc's huge-page
// tunable added to the environment, beside the user's other tunables, and
// a hugetlb setting of the user's own wins.
func TestHugeMalloc(t *testing.T) {
	big := t.TempDir()
	sizedFile(t, filepath.Join(big, ".git", "index"), hugeIndexBytes)
	for _, tc := range []struct {
		name    string
		env     []string
		want    string // the GLIBC_TUNABLES git gets
		entries int
	}{
		{"none", []string{"HOME=/h"}, "glibc.malloc.hugetlb=1", 2},
		{"empty", []string{"GLIBC_TUNABLES=", "HOME=/h"}, "glibc.malloc.hugetlb=1", 2},
		{"others kept", []string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 1},
		{"user's own", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}, "glibc.malloc.hugetlb=0", 1},
		{"the last wins", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0", "GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := slices.Clone(tc.env)
			got := hugeMalloc(tc.env, big, []string{"update-index", "--refresh"})
			if !slices.Equal(tc.env, orig) {
				t.Errorf("the caller's environment changed: %q", tc.env)
			}
			if len(got) != tc.entries || lastTunables(got) != tc.want {
				t.Errorf("hugeMalloc(%q) = %q; want GLIBC_TUNABLES=%s in %d entries", tc.env, got, tc.want, tc.entries)
			}
		})
	}
	t.Setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
	cmd := Git{Dir: big, Isolate: true}.Command(context.Background(), "diff", "HEAD")
	if got := lastTunables(cmd.Env); got != "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" {
		t.Errorf("git's GLIBC_TUNABLES = %q", got)
	}
	cmd = Git{Dir: big, Isolate: true}.Command(context.Background(), "rev-parse", "HEAD")
	if got := lastTunables(cmd.Env); got != "glibc.malloc.arena_max=2" {
		t.Errorf("rev-parse's GLIBC_TUNABLES = %q, want the user's alone", got)
	}
}

// TestBigIndexRead: huge pages go to the commands that read the index, and
// only where the index (or the shared index of a split one) is big: in a
// work tree, a bare repository and a linked worktree's git directory.
func TestBigIndexRead(t *testing.T) {
	root := t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	sizedFile(t, at("small/.git/index"), 4096)
	sizedFile(t, at("big/.git/index"), hugeIndexBytes)
	sizedFile(t, at("split/.git/index"), 4096)
	sizedFile(t, at("split/.git/sharedindex.0123"), hugeIndexBytes+1)
	sizedFile(t, at("split/.git/sharedindex.4567"), 100)
	sizedFile(t, at("bare.git/index"), hugeIndexBytes)
	sizedFile(t, at("main/.git/worktrees/wt/index"), hugeIndexBytes)
	sizedFile(t, at("wt/.git"), 0)
	if err := os.WriteFile(at("wt/.git"), []byte("gitdir: "+at("main/.git/worktrees/wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sizedFile(t, at("rel/.git"), 0)
	if err := os.WriteFile(at("rel/.git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		args []string
		want bool
	}{
		{"small", []string{"diff", "HEAD"}, false},
		{"big", []string{"diff", "HEAD"}, true},
		{"big", []string{"update-index", "-q", "--refresh"}, true},
		{"big", []string{"ls-files", "--others"}, true},
		{"big", []string{"update-ref", "refs/heads/main", "HEAD"}, false},
		{"big", []string{"cat-file", "--batch-check"}, false},
		{"big", nil, false},
		{"split", []string{"status"}, true},
		{"bare.git", []string{"read-tree", "HEAD"}, true},
		{"wt", []string{"diff"}, true},
		{"rel", []string{"diff"}, true},
		{"none", []string{"diff"}, false},
	} {
		if got := bigIndexRead(at(tc.dir), tc.args); got != tc.want {
			t.Errorf("bigIndexRead(%s, %q) = %v, want %v", tc.dir, tc.args, got, tc.want)
		}
	}
}

// sizedFile makes a file of n bytes (sparse) at path, with its folders.
func sizedFile(t testing.TB, path string, n int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func lastTunables(env []string) string {
	v := "<none>"
	for _, kv := range env {
		if t, ok := strings.CutPrefix(kv, "GLIBC_TUNABLES="); ok {
			v = t
		}
	}
	return v
}

// BenchmarkBigIndexRead is what deciding costs each git a hook runs in a
// project (a work tree whose index is small, so the shared indexes are
// looked for too).
func BenchmarkBigIndexRead(b *testing.B) {
	dir := b.TempDir()
	sizedFile(b, filepath.Join(dir, ".git", "index"), 64<<10)
	for i := range 12 { // a .git folder's usual entries
		sizedFile(b, filepath.Join(dir, ".git", fmt.Sprintf("entry-%d", i)), 0)
	}
	args := []string{"diff", "--no-color", "HEAD"}
	for b.Loop() {
		if bigIndexRead(dir, args) {
			b.Fatal("a 64 KiB index read as big")
		}
	}
}
