package gitobj

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs/memfstest"
)

// gitT runs git in dir, isolated from the user's configuration, and
// returns its output trimmed.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo is a new empty repository and its object directory.
func newRepo(t *testing.T) (string, *Objects) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	gitT(t, "", "init", "-q", "-b", "main", dir)
	return dir, Open(filepath.Join(dir, ".git", "objects"))
}

// readAll reads objects through o alone, failing the test on a miss.
func readAll(t *testing.T, o *Objects) func(Type, [20]byte) ([]byte, error) {
	return func(typ Type, id [20]byte) ([]byte, error) {
		data, found, err := o.Read(typ, id)
		if err == nil && !found {
			t.Fatalf("%s %x: not found", typ, id)
		}
		return data, err
	}
}

// parseID is the id a 40-hex name spells.
func parseID(t *testing.T, s string) [20]byte {
	t.Helper()
	var id [20]byte
	if n, err := hex.Decode(id[:], []byte(s)); err != nil || n != 20 {
		t.Fatalf("object name %q: %v", s, err)
	}
	return id
}

// commitTree writes a commit of tree (with parent, unless zero) through
// w, flushes w and moves main to the commit.
func commitTree(t *testing.T, dir string, w *Writer, tree, parent [20]byte) string {
	t.Helper()
	msg := fmt.Sprintf("tree %x\n", tree)
	if parent != ([20]byte{}) {
		msg += fmt.Sprintf("parent %x\n", parent)
	}
	msg += "author t <t@example.com> 1 +0000\ncommitter t <t@example.com> 1 +0000\n\ncommit\n"
	id := w.Add(Commit, []byte(msg))
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h := hex.EncodeToString(id[:])
	gitT(t, dir, "update-ref", "refs/heads/main", h)
	return h
}

// TestWriterMatchesGit: trees a Writer edits keep git's order (a directory
// sorts as if its name ended in a slash) through additions, replacements,
// deletions and names that change kind; git fsck --strict accepts every
// object, git reads back exactly the files written, and Read reads back
// what git reads. The last step writes enough objects to be one pack.
func TestWriterMatchesGit(t *testing.T) {
	dir, o := newRepo(t)
	var many []Change
	for i := range PackAtLeast * 2 {
		many = append(many, Change{Path: fmt.Sprintf("m/%04d", i), Data: []byte(fmt.Sprint("file ", i))})
	}
	steps := [][]Change{
		{{Path: "t/a", Data: []byte("1")}, {Path: "t/a.b", Data: []byte("2")}, {Path: "t/a0", Data: []byte("3")}, {Path: "t/b/c", Data: []byte("4")}},
		{{Path: "t/a", Delete: true}, {Path: "t/a/x", Data: []byte("5")}, {Path: "t/a-", Data: []byte("6")}},
		{{Path: "t/b/c", Delete: true}, {Path: "t/b", Data: []byte("7")}, {Path: "t/a.b", Data: []byte("8")}},
		{{Path: "t/a/x", Delete: true}, {Path: "t/a", Data: []byte("9")}, {Path: "t/0", Data: []byte("10")}},
		many,
	}
	want := map[string]string{}
	var tree, parent [20]byte
	for i, cs := range steps {
		for _, c := range cs {
			if c.Delete {
				delete(want, c.Path)
			} else {
				want[c.Path] = string(c.Data)
			}
		}
		w := o.NewWriter(readAll(t, o))
		next, err := w.WriteTree(tree, cs)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		h := commitTree(t, dir, w, next, parent)
		tree = next
		parent = parseID(t, h)
		gitT(t, dir, "fsck", "--strict", "--no-dangling")
		if got := gitT(t, dir, "rev-parse", h+"^{tree}"); got != hex.EncodeToString(tree[:]) {
			t.Fatalf("step %d: git reads tree %s, the writer wrote %x", i, got, tree)
		}
		t.Logf("step %d", i)
		memfstest.TreeHolds(t, func(args ...string) string { return gitT(t, dir, args...) }, h, want)
	}
	if packs := gitT(t, dir, "count-objects", "-v"); !strings.Contains(packs, "packs: 1") {
		t.Errorf("want one pack:\n%s", packs)
	}
	for _, p := range []string{"t/a", "m/0000", "m/0199"} {
		id := parseID(t, gitT(t, dir, "rev-parse", "main:"+p))
		if data, found, err := o.Read(Blob, id); err != nil || !found || string(data) != want[p] {
			t.Errorf("Read %s: %q, %v, %v; want %q", p, data, found, err, want[p])
		}
		if _, _, err := o.Read(Tree, id); err == nil {
			t.Errorf("Read %s as a tree: no error", p)
		}
		if n, found, err := o.Size(id); err != nil || !found || n != int64(len(want[p])) {
			t.Errorf("Size %s: %d, %v, %v; want %d", p, n, found, err, len(want[p]))
		}
	}
	// A loose object large enough to be stored uncompressed.
	big := bytes.Repeat([]byte("0123456789\n"), StoreRawAbove/10)
	w := o.NewWriter(readAll(t, o))
	id := w.Add(Blob, big)
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, found, err := o.Size(id); err != nil || !found || n != int64(len(big)) {
		t.Errorf("Size of a stored loose blob: %d, %v, %v; want %d", n, found, err, len(big))
	}
	if _, found, err := o.Size([20]byte{9}); found || err != nil {
		t.Errorf("Size of a missing object: found %v, %v", found, err)
	}
}

// TestLooseObjectEncodings: a small object is compressed, a large one is
// stored; both inflate to git's loose format and read back.
func TestLooseObjectEncodings(t *testing.T) {
	for _, n := range []int{0, 1, StoreRawAbove, StoreRawAbove + 1, 3*65535 + 7} {
		data := bytes.Repeat([]byte("abcdefgh"), n/8+1)[:n]
		z, err := looseObject(Tree, data)
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
		back, err := readLoose(bytes.NewReader(z), Tree)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(back), err)
		}
		if _, err := readLoose(bytes.NewReader(z), Blob); err == nil {
			t.Fatalf("%d bytes: a tree read as a blob", n)
		}
		if back, err := readLooseBytes(bytes.Clone(z), Tree); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: readLooseBytes read back %d bytes, %v", n, len(back), err)
		}
		if _, err := readLooseBytes(bytes.Clone(z), Blob); err == nil {
			t.Fatalf("%d bytes: readLooseBytes read a tree as a blob", n)
		}
		if n <= StoreRawAbove {
			continue
		}
		// A flipped content byte of a stored object: its Adler-32
		// refuses it.
		bad := bytes.Clone(z)
		bad[len(bad)/2] ^= 0x40
		if _, err := readLooseBytes(bad, Tree); err == nil {
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
			e, err := NextTreeEntry(b, i)
			if err != nil {
				return
			}
			back = append(back, b[e.Start:e.End]...)
			i = e.End
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("entries do not cover the tree")
		}
		starts, err := scanTree(b, map[string]*treeChange{})
		if err != nil {
			t.Fatalf("scanTree refused what NextTreeEntry read: %v", err)
		}
		if out, n := mergeTree(b, starts, map[string]*treeChange{}); !bytes.Equal(out, b) || n != len(starts) {
			t.Fatalf("merging nothing changed the tree")
		}
	})
}

// TestWriterSurvivesPrunedObjectDirs: a git gc beside borg removes the
// object directories it empties; a write whose object directory vanishes
// just before the object is written makes it again and succeeds.
func TestWriterSurvivesPrunedObjectDirs(t *testing.T) {
	dir, o := newRepo(t)
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
	w := o.NewWriter(readAll(t, o))
	tree, err := w.WriteTree([20]byte{}, []Change{{Path: "lessons/ab/pruned.html", Data: []byte("pruned")}})
	if err != nil {
		t.Fatal(err)
	}
	h := commitTree(t, dir, w, tree, [20]byte{})
	if removed == 0 {
		t.Fatal("the hook never ran")
	}
	gitT(t, dir, "fsck", "--strict", "--no-dangling")
	if got := gitT(t, dir, "cat-file", "blob", h+":lessons/ab/pruned.html"); got != "pruned" {
		t.Fatalf("git reads %q", got)
	}
}

// TestWriterFreshensWhatItFinds: an object the writer would write but
// finds, loose or packed, has its file marked as just written, as git
// does, so that a gc pruning old unreachable objects beside borg spares
// it until the ref that reaches it again has moved; and it is not written
// a second time.
func TestWriterFreshensWhatItFinds(t *testing.T) {
	_, o := newRepo(t)
	old := time.Now().Add(-30 * 24 * time.Hour)
	age := func(p string) time.Duration {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(fi.ModTime())
	}
	write := func(blobs [][]byte) [][20]byte {
		t.Helper()
		w := o.NewWriter(readAll(t, o))
		var ids [][20]byte
		for _, b := range blobs {
			ids = append(ids, w.Add(Blob, b))
		}
		if _, err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	// Loose.
	one := [][]byte{[]byte("a lesson\n")}
	p := o.LoosePath(write(one)[0])
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	write(one)
	if a := age(p); a > time.Hour {
		t.Errorf("a loose object found again is %s old", a)
	}
	// Packed.
	var many [][]byte
	for i := range PackAtLeast {
		many = append(many, fmt.Appendf(nil, "blob %d\n", i))
	}
	write(many)
	packs, _ := filepath.Glob(filepath.Join(o.dir, "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("want one pack, have %v", packs)
	}
	if err := os.Chtimes(packs[0], old, old); err != nil {
		t.Fatal(err)
	}
	write(many)
	if again, _ := filepath.Glob(filepath.Join(o.dir, "pack", "*.pack")); len(again) != 1 {
		t.Errorf("the same objects packed twice: %v", again)
	}
	if a := age(packs[0]); a > time.Hour {
		t.Errorf("a pack whose objects were found again is %s old", a)
	}
}
