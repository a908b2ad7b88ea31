package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// looseStore is a store with two lessons and n extra loose objects, and
// the Store that read it before they were packed.
func looseStore(t *testing.T, n int) (*memfs.Store, map[string]string) {
	t.Helper()
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	var paths strings.Builder
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("object %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths.WriteString(p + "\n")
	}
	// Reachable, as borg's own objects are (git packs only those): the
	// blobs go into a tree and a commit on a branch of their own.
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", store}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	var tree strings.Builder
	for i, h := range strings.Fields(git(paths.String(), "hash-object", "-w", "--stdin-paths")) {
		fmt.Fprintf(&tree, "100644 blob %s\tf%d\n", h, i)
	}
	commit := git("", "commit-tree", "-m", "loose objects", git(tree.String(), "mktree"))
	git("", "update-ref", "refs/heads/loose", commit)
	s, err := memfs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	return s, vars
}

// TestHousekeepingPacksLooseObjects: past packDueAt loose objects a write's
// housekeeping is due, git's gc (as borg runs it) leaves the store well
// under git's own threshold, and a Store opened before the objects moved
// into a pack still reads every lesson and commit.
func TestHousekeepingPacksLooseObjects(t *testing.T) {
	s, vars := looseStore(t, 2*packDueAt)
	ctx := context.Background()
	dir, err := gitCommonDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	before := looseObjects(dir)
	if before < packDueAt || !housekeepingDue(s) {
		t.Fatalf("%d loose objects (estimated): housekeeping not due", before)
	}
	lessons, errs := s.Lessons()
	if len(errs) > 0 || len(lessons) != 2 {
		t.Fatalf("lessons before: %d, %v", len(lessons), errs)
	}
	if _, err := s.GitCLI().Run(ctx, nil, gcArgs()...); err != nil {
		t.Fatal(err)
	}
	if after := looseObjects(dir); after >= packDueAt {
		t.Fatalf("after git's housekeeping %d loose objects (estimated), want under %d", after, packDueAt)
	}
	if housekeepingDue(s) {
		t.Fatal("housekeeping still due right after it ran")
	}
	for _, l := range lessons {
		if _, err := s.Lesson(l.ID); err != nil {
			t.Fatalf("a Store opened before the pack reads %s: %v", l.ID, err)
		}
	}
	// Trees are read from git's objects, loose before and packed now.
	if _, err := s.ReadDirAt("HEAD", "lessons"); err != nil {
		t.Fatalf("the lessons tree after the pack: %v", err)
	}
	code, out, stderr := inProcess(t, vars, "", "recall", "integration tests migrations")
	if code != 0 || !strings.Contains(out, "migrations") {
		t.Fatalf("recall after the pack: exit %d: %s%s", code, out, stderr)
	}
	if out, err := exec.Command("git", "-C", s.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck after the pack: %v: %s", err, out)
	}
}

// TestHousekeepingRespectsGCAutoOff: a user who set gc.auto to 0 never
// has borg start a gc.
func TestHousekeepingRespectsGCAutoOff(t *testing.T) {
	s, _ := looseStore(t, 2*packDueAt)
	if !housekeepingDue(s) {
		t.Fatal("housekeeping not due before gc.auto=0: the test would prove nothing")
	}
	if out, err := exec.Command("git", "-C", s.Dir(), "config", "gc.auto", "0").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// A store opened by the next command reads the changed setting.
	again, err := memfs.Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if housekeepingDue(again) {
		t.Fatal("housekeeping due with gc.auto=0")
	}
}
