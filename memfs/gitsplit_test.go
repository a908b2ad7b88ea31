package memfs

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withSplitAt splits every index of at least n entries for the test.
func withSplitAt(t *testing.T, n int) {
	old := splitIndexAtLeast
	splitIndexAtLeast = n
	t.Cleanup(func() { splitIndexAtLeast = old })
}

// checkIndexAgrees holds the index to what git and borg read: git status
// is clean (without refreshing the index), `git ls-files -s` is HEAD's tree, git fsck passes, doctor's
// check finds nothing, and readFlatIndex reads what git's own unsplit
// index holds.
func checkIndexAgrees(t *testing.T, s *Store) {
	t.Helper()
	dir := s.Dir()
	if st := gitCLI(t, dir, "--no-optional-locks", "status", "--porcelain"); st != "" {
		t.Fatalf("git status = %q", st)
	}
	staged := gitCLI(t, dir, "ls-files", "-s")
	if got, want := normalizeLsFiles(staged), normalizeLsTree(gitCLI(t, dir, "ls-tree", "-r", "HEAD")); got != want {
		t.Fatalf("index:\n%s\nHEAD:\n%s", got, want)
	}
	gitCLI(t, dir, "fsck", "--strict")
	if m, err := s.IndexMismatches(); err != nil || len(m) > 0 {
		t.Fatalf("IndexMismatches = %v, %v", m, err)
	}
	flat, err := readFlatIndex(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := indexHeader(flat); !ok {
		t.Fatal("readFlatIndex: not a whole index")
	}
}

// isSplit reports whether the store's git index is a split index.
func isSplit(t *testing.T, s *Store) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir(), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	_, ok := indexLink(data)
	return ok
}

// splitT parses the store's split index.
func splitT(t *testing.T, s *Store) *splitIndex {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir(), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	si, ok := parseSplit(data)
	if !ok {
		t.Fatal("the index is not a split index borg reads")
	}
	return si
}

func learnT(t *testing.T, s *Store, ids ...string) {
	t.Helper()
	var paths []string
	for _, id := range ids {
		if err := s.WriteLesson(sampleLesson(id)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, LessonPath(id))
	}
	if _, err := s.Commit("learn", paths...); err != nil {
		t.Fatal(err)
	}
}

// TestSplitIndexWithGit: borg splits a large index, patches the split one
// (replacing, adding, deleting entries), writes a new shared index when
// the changes outgrow it, and git 2.39 reads every state as HEAD, keeps
// the split index through its own commits, and unsplits it on request,
// after which borg carries on with the whole index.
func TestSplitIndexWithGit(t *testing.T) {
	withSplitAt(t, 8)
	s := newTestStore(t)
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("lesson-%02d", i))
	}
	learnT(t, s, ids...)
	if !isSplit(t, s) {
		t.Fatal("an index of 12 entries was not split")
	}
	checkIndexAgrees(t, s)
	learnT(t, s, "lesson-03", "a-new-one", "zz-new-one") // replace, add
	checkIndexAgrees(t, s)
	if si := splitT(t, s); len(si.pos) != 1 || len(si.added) != 2 || len(si.del) != 0 {
		t.Fatalf("split index: %d replaced, %d added, %d deleted; want 1, 2, 0", len(si.pos), len(si.added), len(si.del))
	}
	for _, id := range []string{"lesson-05", "a-new-one"} {
		if err := os.Remove(filepath.Join(s.Dir(), LessonPath(id))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Commit("forget", LessonPath("lesson-05"), LessonPath("a-new-one")); err != nil {
		t.Fatal(err)
	}
	if err := s.archive("lesson-07"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("archive", LessonPath("lesson-07"), ArchivePath("lesson-07")); err != nil {
		t.Fatal(err)
	}
	if si := splitT(t, s); len(si.pos) != 1 || len(si.added) != 2 || len(si.del) != 2 {
		t.Fatalf("split index: %d replaced, %d added, %d deleted; want 1, 2 (zz-new-one, the archived one), 2", len(si.pos), len(si.added), len(si.del))
	}
	checkIndexAgrees(t, s)
	// git's own commit keeps it split, and borg reads what git wrote.
	if err := os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.Dir(), "add", "notes.txt")
	gitCLI(t, s.Dir(), "rm", "-q", "--cached", LessonPath("lesson-09"))
	gitCLI(t, s.Dir(), "commit", "-q", "-m", "by hand")
	if err := os.Remove(filepath.Join(s.Dir(), LessonPath("lesson-09"))); err != nil {
		t.Fatal(err)
	}
	if !isSplit(t, s) {
		t.Fatal("git unsplit the index")
	}
	checkIndexAgrees(t, s)
	learnT(t, s, "after-git")
	checkIndexAgrees(t, s)
	// Many changes: a new shared index.
	before, _ := filepath.Glob(filepath.Join(s.Dir(), ".git", "sharedindex.*"))
	var many []string
	for i := range reshareAtLeast + 5 {
		many = append(many, fmt.Sprintf("many-%03d", i))
	}
	learnT(t, s, many...)
	after, _ := filepath.Glob(filepath.Join(s.Dir(), ".git", "sharedindex.*"))
	if len(after) <= len(before) {
		t.Fatalf("no new shared index after %d changes: %v", len(many), after)
	}
	checkIndexAgrees(t, s)
	gitCLI(t, s.Dir(), "update-index", "--no-split-index")
	if isSplit(t, s) {
		t.Fatal("git did not unsplit")
	}
	checkIndexAgrees(t, s)
	learnT(t, s, "after-unsplit")
	checkIndexAgrees(t, s)
}

// TestSplitIndexConfig: core.splitIndex=false keeps borg's index whole (and
// unsplits one), core.splitIndex=true splits even a small one, and a split
// index git wrote with bitmaps of its own is patched.
func TestSplitIndexConfig(t *testing.T) {
	s := newTestStore(t)
	learnT(t, s, "one", "two", "three")
	if isSplit(t, s) {
		t.Fatal("a small index was split")
	}
	gitCLI(t, s.Dir(), "config", "core.splitIndex", "true")
	learnT(t, s, "four")
	if !isSplit(t, s) {
		t.Fatal("core.splitIndex=true: not split")
	}
	checkIndexAgrees(t, s)
	// git replaces and deletes entries in its own split index.
	if err := os.WriteFile(filepath.Join(s.Dir(), LessonPath("two")), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.Dir(), "add", LessonPath("two"))
	gitCLI(t, s.Dir(), "rm", "-q", LessonPath("three"))
	gitCLI(t, s.Dir(), "commit", "-q", "-m", "by hand")
	checkIndexAgrees(t, s)
	learnT(t, s, "two", "five")
	checkIndexAgrees(t, s)
	gitCLI(t, s.Dir(), "config", "core.splitIndex", "false")
	learnT(t, s, "six")
	if isSplit(t, s) {
		t.Fatal("core.splitIndex=false: still split")
	}
	checkIndexAgrees(t, s)
}

// TestEWAH: the bitmaps borg writes read back, and git's empty one reads.
func TestEWAH(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		var pos []int
		for range r.IntN(n + 1) {
			pos = append(pos, r.IntN(50*n+1))
		}
		if n%7 == 0 {
			for k := range 130 {
				pos = append(pos, 64*3+k) // full words
			}
		}
		slices.Sort(pos)
		pos = slices.Compact(pos)
		b := ewahEncode(pos)
		got, size, err := ewahDecode(append(b, 9, 9))
		if err != nil || size != len(b) || !slices.Equal(got, pos) && len(pos)+len(got) > 0 {
			t.Fatalf("%v: read back %v (%d of %d bytes), %v", pos, got, size, len(b), err)
		}
	}
	// git's ewah_new(): one running-length word.
	empty := []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(ewahEncode(nil), empty) {
		t.Fatalf("empty bitmap = %x", ewahEncode(nil))
	}
	// A running word of ones (bit 0 set, 2 words) reads as 128 bits.
	ones := []byte{0, 0, 0, 128, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0}
	if got, _, err := ewahDecode(ones); err != nil || len(got) != 128 || got[127] != 127 {
		t.Fatalf("running ones read as %d bits, %v", len(got), err)
	}
}

// FuzzPatchSplit: patchSplit never panics on a damaged split index.
func FuzzPatchSplit(f *testing.F) {
	flat, _ := patchIndex(nil, nil, nil)
	if flat == nil {
		e := indexEntry{name: "lessons/a.html", mode: 0o100644}
		flat = encodeSplit(2, [20]byte{}, nil, nil, map[string][]byte{"lessons/a.html": e.encode()})
	}
	f.Add(encodeSplit(2, [20]byte{1}, map[int][]byte{0: (indexEntry{mode: 0o100644}).encode()}, map[int]bool{1: true}, nil))
	f.Fuzz(func(t *testing.T, main []byte) {
		_, _, _ = patchSplit(main, flat, []indexEntry{{name: "lessons/b.html", mode: 0o100644}}, []string{"lessons/a.html"})
		_, _ = flattenSplit(main, flat)
	})
}

// childCommitSplit commits lessons into a split index until it is killed:
// one at a time, and now and then enough at once to write a new shared
// index.
func childCommitSplit(dir string) int {
	splitIndexAtLeast = 1
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		n := 1
		if i%5 == 4 {
			n = reshareAtLeast + 3
		}
		var paths []string
		for k := range n {
			paths = append(paths, LessonPath(fmt.Sprintf("split-lesson-%03d", (i*7+k)%150)))
		}
		_, err := s.Update("learn", paths, func() error {
			for k, p := range paths {
				l := sampleLesson(filepath.Base(p[:len(p)-len(".html")]))
				l.Body = fmt.Sprintf("version %d.%d", i, k)
				if err := s.WriteLesson(l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("committed") // the parent kills after a number of these
	}
}

// TestSplitIndexSurvivesKills: a committer killed at random points while it
// patches the split index or writes a new shared one leaves a store that,
// once the next writer has recovered, git and borg read as HEAD. Each
// round waits for a random number of the child's commits (the first for
// six: one of them writes a new shared index) before the random pause and
// the kill, so the commits happen however slow the machine.
func TestSplitIndexSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	withSplitAt(t, 1)
	s := newTestStore(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for round := range 10 {
		cmd := child(t, "commitsplit", s.Dir())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wait := r.IntN(4)
		if round == 0 {
			wait = 6
		}
		lines := bufio.NewScanner(out)
		for range wait {
			if !lines.Scan() {
				t.Fatalf("round %d: the committer stopped before %d commits", round, wait)
			}
		}
		time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		unlock, err := s.LockWrites() // recovers the killed commit
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		unlock()
		checkIndexAgrees(t, s)
	}
	shared, _ := filepath.Glob(filepath.Join(s.Dir(), ".git", "sharedindex.*"))
	commits := strings.TrimSpace(gitCLI(t, s.Dir(), "rev-list", "--count", "HEAD"))
	if !isSplit(t, s) || len(shared) < 2 {
		t.Fatalf("split %v, %d shared indexes, %s commits: the test proved nothing", isSplit(t, s), len(shared), commits)
	}
	t.Logf("%d shared indexes, %s commits across the kills", len(shared), commits)
}

// TestSplitIndexSharedMissing: a split index whose shared index is gone
// fails the commit's staging with the fix named (the commit itself is
// made and journaled, and the next writer finishes it once the index is
// rebuilt), and doctor's check says so too; never a guess at the index.
func TestSplitIndexSharedMissing(t *testing.T) {
	withSplitAt(t, 1)
	s := newTestStore(t)
	learnT(t, s, "one", "two")
	shared, _ := filepath.Glob(filepath.Join(s.Dir(), ".git", "sharedindex.*"))
	for _, p := range shared {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteLesson(sampleLesson("three")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Commit("learn", LessonPath("three"))
	if err == nil || !strings.Contains(err.Error(), "git reset") {
		t.Fatalf("commit with no shared index: %v", err)
	}
	if _, err := s.IndexMismatches(); err == nil || !strings.Contains(err.Error(), "no-split-index") {
		t.Fatalf("IndexMismatches with no shared index: %v", err)
	}
	if _, _, ok := patchSplit([]byte("DIRC"), nil, nil, nil); ok {
		t.Fatal("patched garbage")
	}
	if _, err := flattenSplit(encodeSplit(2, [20]byte{}, nil, nil, nil), []byte("DIRC")); err == nil {
		t.Fatal("flattened with a short shared index")
	}
	if err := os.Remove(filepath.Join(s.Dir(), ".git", "index")); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.Dir(), "reset", "-q")
	learnT(t, s, "four") // finishes the journaled commit of three too
	checkIndexAgrees(t, s)
	if got := gitCLI(t, s.Dir(), "ls-files", LessonPath("three")); strings.TrimSpace(got) != LessonPath("three") {
		t.Fatalf("three not committed after the fix: %q", got)
	}
}
