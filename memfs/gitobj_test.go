package memfs

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
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
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(gitCLI(t, s.Dir(), "ls-tree", "-r", "--name-only", h)), "\n") {
			got = append(got, line)
			if c := gitCLI(t, s.Dir(), "cat-file", "blob", h+":"+line); c != want[line] {
				t.Errorf("step %d: %s holds %q, want %q", i, line, c, want[line])
			}
		}
		var paths []string
		for p := range want {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		slices.Sort(got)
		if !slices.Equal(got, paths) {
			t.Fatalf("step %d: tree holds %q, want %q", i, got, paths)
		}
	}
}

// TestCommitManyWritesPack: a commit of many files writes one pack that git
// and the store read back, and a later small commit on top of it works.
func TestCommitManyWritesPack(t *testing.T) {
	s := newTestStore(t)
	var changes []FileChange
	for i := range packAtLeast * 2 {
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

// TestLooseObjectEncodings: a small object is compressed, a large one is
// stored; both inflate to git's loose format and read back.
func TestLooseObjectEncodings(t *testing.T) {
	for _, n := range []int{0, 1, storeRawAbove, storeRawAbove + 1, 3*65535 + 7} {
		data := bytes.Repeat([]byte("abcdefgh"), n/8+1)[:n]
		z, err := looseObject(objTree, data)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := fmt.Sprintf("tree %d\x00", n) + string(data); string(all) != want {
			t.Fatalf("%d bytes: inflated to something else", n)
		}
		back, err := readLoose(bytes.NewReader(z), objTree)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(back), err)
		}
		if _, err := readLoose(bytes.NewReader(z), objBlob); err == nil {
			t.Fatalf("%d bytes: a tree read as a blob", n)
		}
		if back, err := readLooseBytes(bytes.Clone(z), objTree); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: readLooseBytes read back %d bytes, %v", n, len(back), err)
		}
		if _, err := readLooseBytes(bytes.Clone(z), objBlob); err == nil {
			t.Fatalf("%d bytes: readLooseBytes read a tree as a blob", n)
		}
		if n <= storeRawAbove {
			continue
		}
		// A flipped content byte of a stored object: its Adler-32
		// refuses it.
		bad := bytes.Clone(z)
		bad[len(bad)/2] ^= 0x40
		if _, err := readLooseBytes(bad, objTree); err == nil {
			t.Fatalf("%d bytes: a corrupted object read back as the original", n)
		}
	}
}

// FuzzParseRawTree: a tree parses into entries whose bytes are the tree's,
// or is refused; and merging no change into it gives it back.
func FuzzParseRawTree(f *testing.F) {
	f.Add([]byte("100644 a.html\x00" + strings.Repeat("\x01", 20) + "40000 dir\x00" + strings.Repeat("\x02", 20)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var back []byte
		for i := 0; i < len(b); {
			e, err := nextTreeEntry(b, i)
			if err != nil {
				return
			}
			back = append(back, b[e.start:e.end]...)
			i = e.end
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("entries do not cover the tree")
		}
		starts, err := scanTree(b, map[string]*treeChange{})
		if err != nil {
			t.Fatalf("scanTree refused what nextTreeEntry read: %v", err)
		}
		if out, n := mergeTree(b, starts, map[string]*treeChange{}); !bytes.Equal(out, b) || n != len(starts) {
			t.Fatalf("merging nothing changed the tree")
		}
	})
}

// TestCommitSurvivesPrunedObjectDirs: a git gc beside borg removes the
// object directories it empties; a commit whose object directory vanishes
// just before the object is written makes it again and succeeds.
func TestCommitSurvivesPrunedObjectDirs(t *testing.T) {
	s := newTestStore(t)
	removed := 0
	looseDirHook = func(dir string) {
		if removed < 3 {
			removed++
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { looseDirHook = nil })
	writeStoreFile(t, s, "lessons/ab/pruned.html", Render(sampleLesson("pruned-lesson")))
	h, err := s.Commit("learn", "lessons/ab/pruned.html")
	if err != nil {
		t.Fatalf("commit while gc prunes: %v", err)
	}
	if removed == 0 {
		t.Fatal("the hook never ran")
	}
	gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
	if got := strings.TrimSpace(gitCLI(t, s.Dir(), "rev-parse", "HEAD")); got != h {
		t.Fatalf("HEAD %s, commit %s", got, h)
	}
}
