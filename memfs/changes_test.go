package memfs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestChangedSince: borg's commits are answered from the journal, across
// several of them; a commit by plain git, a torn or garbage journal, or a
// chain older than the journal is not (ok false), never a wrong answer.
func TestChangedSince(t *testing.T) {
	s := newTestStore(t)
	head := func() string {
		h, err := s.ResolveRef("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	learnT(t, s, "one", "two")
	h0 := head()
	learnT(t, s, "three")
	h1 := head()
	if err := os.Remove(filepath.Join(s.Dir(), LessonPath("one"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("forget one; two again", LessonPath("one"), LessonPath("two")); err != nil {
		t.Fatal(err)
	}
	h2 := head()
	changed, removed, ok := s.ChangedSince(h0, h2)
	slices.Sort(changed)
	want := []string{LessonPath("three"), LessonPath("two")}
	slices.Sort(want)
	if !ok || !slices.Equal(changed, want) || !slices.Equal(removed, []string{LessonPath("one")}) {
		t.Fatalf("ChangedSince(h0, h2) = %v, %v, %v", changed, removed, ok)
	}
	if changed, removed, ok := s.ChangedSince(h1, h2); !ok || !slices.Equal(changed, []string{LessonPath("two")}) || !slices.Equal(removed, []string{LessonPath("one")}) {
		t.Fatalf("ChangedSince(h1, h2) = %v, %v, %v", changed, removed, ok)
	}
	if _, _, ok := s.ChangedSince(h2, h0); ok {
		t.Fatal("answered backwards")
	}
	if _, _, ok := s.ChangedSince(h2, h2); ok {
		t.Fatal("answered for no move")
	}
	// A commit by plain git breaks the chain through it, not before it.
	writeStoreFile(t, s, LessonPath("by-hand"), []byte("x\n"))
	gitCLI(t, s.Dir(), "add", LessonPath("by-hand"))
	gitCLI(t, s.Dir(), "commit", "-q", "-m", "by hand")
	h3 := head()
	learnT(t, s, "four")
	h4 := head()
	if _, _, ok := s.ChangedSince(h2, h4); ok {
		t.Fatal("answered across a commit made by git")
	}
	if changed, _, ok := s.ChangedSince(h3, h4); !ok || !slices.Equal(changed, []string{LessonPath("four")}) {
		t.Fatalf("ChangedSince(h3, h4) = %v, %v", changed, ok)
	}
	// A torn or garbage journal answers nothing; the next commit starts a
	// new one.
	jp := filepath.Join(s.Dir(), changesFile)
	data, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], []byte("garbage"), []byte(`{"v":1,"commits":[{"old":"x","new":"y"}]}`), []byte(`{"v":2,"commits":[]}`)} {
		if err := os.WriteFile(jp, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := s.ChangedSince(h3, h4); ok {
			t.Fatalf("answered from %q", bad)
		}
	}
	learnT(t, s, "five")
	if changed, _, ok := s.ChangedSince(h4, head()); !ok || !slices.Equal(changed, []string{LessonPath("five")}) {
		t.Fatalf("after a garbage journal: %v, %v", changed, ok)
	}
	if _, _, ok := s.ChangedSince(h3, head()); ok {
		t.Fatal("answered for a commit the garbage journal lost")
	}
	// Only the last changesKept commits are kept.
	first := head()
	for i := range changesKept + 1 {
		learnT(t, s, "ring-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if _, _, ok := s.ChangedSince(first, head()); ok {
		t.Fatal("answered for a chain longer than the journal")
	}
	// A commit on another ref is not recorded.
	if _, err := s.CommitOnRef("refs/heads/other", "", head(), []FileChange{{Path: LessonPath("elsewhere"), Data: []byte("x")}}, "other", s.now()); err != nil {
		t.Fatal(err)
	}
	j, _ := s.readChanges()
	for _, c := range j.Commits {
		if slices.Contains(c.Changed, LessonPath("elsewhere")) {
			t.Fatal("a commit on another ref was recorded")
		}
	}
}
