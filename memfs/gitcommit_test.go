package memfs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs/gitobj"
	"github.com/borg-memory/borg/memfs/memfstest"
)

// TestCommitOnRefTreeOrder: trees borg edits keep git's order (a
// directory sorts as if its name ended in a slash) through additions,
// replacements, deletions and names that change kind, and git fsck --strict
// accepts them; git reads back exactly the files committed.
func TestCommitOnRefTreeOrder(t *testing.T) {
	s := newTestStore(t)
	when := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	steps := [][]FileChange{
		{{Path: "t/a", Data: []byte("1")}, {Path: "t/a.b", Data: []byte("2")}, {Path: "t/a0", Data: []byte("3")}, {Path: "t/b/c", Data: []byte("4")}},
		{{Path: "t/a", Delete: true}, {Path: "t/a/x", Data: []byte("5")}, {Path: "t/a-", Data: []byte("6")}},
		{{Path: "t/b/c", Delete: true}, {Path: "t/b", Data: []byte("7")}, {Path: "t/a.b", Data: []byte("8")}},
		{{Path: "t/a/x", Delete: true}, {Path: "t/a", Data: []byte("9")}, {Path: "t/0", Data: []byte("10")}},
	}
	want := map[string]string{}
	parent, old := "", ""
	for i, cs := range steps {
		for _, c := range cs {
			if c.Delete {
				delete(want, c.Path)
			} else {
				want[c.Path] = string(c.Data)
			}
		}
		h, err := s.CommitOnRef("refs/borg/order", old, parent, cs, fmt.Sprint("step ", i), when)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		parent, old = h, h
		gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
		t.Logf("step %d", i)
		memfstest.TreeHolds(t, func(args ...string) string { return gitCLI(t, s.Dir(), args...) }, h, want)
	}
}

// TestCommitManyWritesPack: a commit of many files writes one pack that git
// and the store read back, and a later small commit on top of it works.
func TestCommitManyWritesPack(t *testing.T) {
	s := newTestStore(t)
	var changes []FileChange
	for i := range gitobj.PackAtLeast * 2 {
		changes = append(changes, FileChange{Path: LessonPath(fmt.Sprintf("l-%04d", i)), Data: []byte(fmt.Sprint("lesson ", i))})
	}
	h, err := s.CommitOnRef("refs/borg/many", "", "", changes, "many", time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(gitCLI(t, s.Dir(), "count-objects", "-v"), "packs: 1"); n != 1 {
		t.Errorf("want one pack:\n%s", gitCLI(t, s.Dir(), "count-objects", "-v"))
	}
	gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
	files, err := s.ReadDirAt(h, LessonsDir)
	if err != nil || len(files) != len(changes) {
		t.Fatalf("ReadDirAt: %d files, %v", len(files), err)
	}
	want := map[string][]byte{}
	for _, c := range changes {
		want[c.Path] = c.Data
	}
	for _, f := range files {
		if !bytes.Equal(f.Data, want[f.Path]) {
			t.Fatalf("%s: %q, want %q", f.Path, f.Data, want[f.Path])
		}
	}
	h2, err := s.CommitOnRef("refs/borg/many", h, h, []FileChange{{Path: LessonPath("l-0000"), Delete: true}}, "one", time.Unix(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, s.Dir(), "ls-tree", "-r", "--name-only", h2); strings.Count(got, "\n") != len(changes)-1 {
		t.Errorf("after one deletion: %d files", strings.Count(got, "\n"))
	}
	gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
}

// TestCommitOnPackedStore: after git gc packs every object (with deltas),
// the store reads its trees from the pack and a learn commits on top; git
// fsck accepts the result.
func TestCommitOnPackedStore(t *testing.T) {
	s := newTestStore(t)
	// Versions of lessons that differ a little: git deltifies them.
	for rev := range 6 {
		var paths []string
		for i := range 40 {
			l := sampleLesson(fmt.Sprintf("packed-lesson-%02d", i))
			l.Body = strings.Repeat(fmt.Sprintf("Line %d of the body, version %d. ", i, rev), 20+i)
			writeStoreFile(t, s, LessonPath(l.ID), Render(l))
			paths = append(paths, LessonPath(l.ID))
		}
		if _, err := s.Commit(fmt.Sprintf("rev %d", rev), paths...); err != nil {
			t.Fatal(err)
		}
	}
	gitCLI(t, s.Dir(), "gc", "-q", "--aggressive", "--prune=now")
	if loose := gitCLI(t, s.Dir(), "count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("objects left loose: %s", loose)
	}
	s2, err := Open(s.Dir(), WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	learnT(t, s2, "after-the-gc")
	gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
	if n := len(strings.Fields(gitCLI(t, s.Dir(), "ls-tree", "-r", "--name-only", "HEAD", "lessons/"))); n != 42 {
		t.Errorf("HEAD holds %d files of lessons/, want 40 lessons, the new one and .keep", n)
	}
}
