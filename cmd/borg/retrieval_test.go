package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// TestStopSyncsWhatGitChanged: after changes committed as borg learn, sync,
// sleep --apply and a pull commit them (lessons added, rewritten, archived,
// deleted), the hook's sync reads the change set from git and leaves the
// index as a full sync of the listing would: same lessons, stamps, hits
// and verdicts, and Verify passes. An uncommitted hand-written file (HEAD
// unmoved, lessons/ changed) takes the full listing instead.
func TestStopSyncsWhatGitChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	getenv := storeGetenv(dir)
	s, err := memfs.Init(context.Background(), dir, "", memfs.WithEnv(getenv))
	if err != nil {
		t.Fatal(err)
	}
	lesson := func(i, rev int) domain.Lesson {
		return domain.Lesson{ID: fmt.Sprintf("payments-lesson-%03d", i), Type: domain.TypeSemantic, Confidence: 0.8,
			Gist: fmt.Sprintf("Payments gateway retry %d backoff revision %d.", i, rev),
			Body: fmt.Sprintf("Lesson %d: the kafka consumer of the ledger times out at revision %d.", i, rev)}
	}
	write := func(ls ...domain.Lesson) []string {
		var paths []string
		for _, l := range ls {
			if err := s.WriteLesson(l); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, memfs.LessonPath(l.ID))
		}
		return paths
	}
	commit := func(msg string, paths ...string) {
		t.Helper()
		if _, err := s.Commit(msg, paths...); err != nil {
			t.Fatal(err)
		}
	}
	var all []domain.Lesson
	for i := range 30 {
		all = append(all, lesson(i, 0))
	}
	commit("lessons", write(all...)...)
	hook := openOptions{budget: hookBudget(func(string) string { return "" })}
	r, err := openRetrieval(context.Background(), s, hook)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()

	steps := []struct {
		name   string
		change func()
	}{
		{"learn", func() { commit("learn", write(lesson(40, 1))...) }},
		{"rewrite", func() { commit("edit", write(lesson(3, 2), lesson(4, 2))...) }},
		{"sleep archive", func() {
			// As a sleep's retention phase does: the lesson moves to archive/.
			for _, id := range []string{"payments-lesson-005", "payments-lesson-006"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, memfs.ArchivePath(id))), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(filepath.Join(dir, memfs.LessonPath(id)), filepath.Join(dir, memfs.ArchivePath(id))); err != nil {
					t.Fatal(err)
				}
				commit("archive", memfs.LessonPath(id), memfs.ArchivePath(id))
			}
		}},
		{"pull (git CLI commit)", func() {
			l := lesson(41, 3)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, memfs.LessonPath(l.ID))), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, memfs.LessonPath(l.ID)), memfs.Render(l), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, memfs.LessonPath("payments-lesson-007"))); err != nil {
				t.Fatal(err)
			}
			env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
			testGit(t, dir, env, "add", "-A", "lessons")
			testGit(t, dir, env, "commit", "-q", "-m", "pulled")
		}},
		{"log only", func() {
			if err := s.Append(domain.Event{MS: 5, Kind: domain.KindCreated, Lesson: "payments-lesson-040"}); err != nil {
				t.Fatal(err)
			}
			commit("log", s.LogPath())
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.change()
			before := copyIndex(t, s)
			ix, err := index.Open(indexDir(s), mustEmbedder(t), indexOptions(s, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			stamp := lessonsStamp(s)
			done, err := syncChangedSince(s, ix, &retrieval{ix: ix}, hook, stamp)
			if err != nil || !done {
				t.Fatalf("incremental sync: done %v, %v", done, err)
			}
			sameAsFullSync(t, s, ix, before, stamp)
		})
	}

	// A hand-written file not committed: HEAD did not move, lessons/ did.
	hand := lesson(50, 4)
	write(hand)
	before := copyIndex(t, s)
	ix, err := index.Open(indexDir(s), mustEmbedder(t), indexOptions(s, 0))
	if err != nil {
		t.Fatal(err)
	}
	if done, err := syncChangedSince(s, ix, &retrieval{ix: ix}, hook, lessonsStamp(s)); done || err != nil {
		t.Fatalf("uncommitted hand write: done %v, %v; want the full listing", done, err)
	}
	ix.Close()
	r, err = openRetrieval(context.Background(), s, hook)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.ix.Info(hand.ID); !ok {
		t.Fatalf("the hand-written lesson is not indexed after the fallback")
	}
	sameAsFullSync(t, s, r.ix, before, lessonsStamp(s))
}

// copyIndex copies s's index directory (its files, not its lock) to a
// temporary one.
func copyIndex(t *testing.T, s *memfs.Store) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(indexDir(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "lock" || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(indexDir(s), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// sameAsFullSync checks ix against the index it was before (a copy in
// before) synced from the full listing of s's lessons at stamp, and
// verifies ix on disk.
func sameAsFullSync(t *testing.T, s *memfs.Store, ix *index.Index, before, stamp string) {
	t.Helper()
	ref, err := index.Open(before, mustEmbedder(t), indexOptions(s, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	stamps, err := lessonFileStamps(s)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	if _, err := ref.SyncFiles(stamps, lessonReader(s, &skipped), stamp, false); err != nil {
		t.Fatal(err)
	}
	if ix.Stamp() != ref.Stamp() {
		t.Fatalf("stamp %q, want %q", ix.Stamp(), ref.Stamp())
	}
	if !slices.Equal(ix.Infos(), ref.Infos()) {
		t.Fatalf("lessons %v, want %v", ix.Infos(), ref.Infos())
	}
	if n, full := ix.Pending(stamps); n != 0 || full {
		t.Fatalf("%d file(s) still pending (full %v) after the sync", n, full)
	}
	for _, q := range []string{"payments gateway retry", "kafka consumer ledger", "revision 2", "backoff"} {
		a, err := ix.Search(context.Background(), index.Query{Text: q, K: 10, Bar: -1})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ref.Search(context.Background(), index.Query{Text: q, K: 10, Bar: -1})
		if len(a) != len(b) {
			t.Fatalf("%q: %d hits, want %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].ID != b[i].ID || a[i].Score != b[i].Score {
				t.Fatalf("%q hit %d: %s %v, want %s %v", q, i, a[i].ID, a[i].Score, b[i].ID, b[i].Score)
			}
		}
	}
	for _, li := range ref.Infos() {
		if ix.Flag(li.ID) != ref.Flag(li.ID) {
			t.Fatalf("%s: verdict %q, want %q", li.ID, ix.Flag(li.ID), ref.Flag(li.ID))
		}
	}
	if err := index.Verify(indexDir(s), mustEmbedder(t)); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// TestLessonChangesFromJournal: after borg's own commits (learn, learn) the
// Stop's change set comes from the store's change journal, with no git at
// all (PATH emptied); across a commit made by plain git, or with a garbage
// journal, it goes to git diff-tree, and with no git it says it cannot
// (the caller lists lessons/), never a wrong set.
func TestLessonChangesFromJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := memfs.Init(context.Background(), dir, "", memfs.WithEnv(storeGetenv(dir)))
	if err != nil {
		t.Fatal(err)
	}
	rev := 0
	learn := func(ids ...string) string {
		t.Helper()
		var paths []string
		rev++
		for _, id := range ids {
			l := domain.Lesson{ID: id, Type: domain.TypeSemantic, Confidence: 0.8, Gist: "Gist of " + id + ".", Body: fmt.Sprintf("Body, revision %d.", rev)}
			if err := s.WriteLesson(l); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, memfs.LessonPath(l.ID))
		}
		if _, err := s.Commit("learn", paths...); err != nil {
			t.Fatal(err)
		}
		return lessonsStamp(s)
	}
	ids := func(fs []index.FileStamp) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID)
		}
		slices.Sort(out)
		return out
	}
	s0 := learn("alpha-one", "beta-two")
	learn("gamma-three")
	s2 := learn("alpha-one")
	path := os.Getenv("PATH")
	t.Setenv("PATH", "")
	changed, removed, ok := lessonChanges(s, s0, s2)
	if !ok || !slices.Equal(ids(changed), []string{"alpha-one", "gamma-three"}) || len(removed) != 0 {
		t.Fatalf("from the journal: %v, %v, %v", ids(changed), removed, ok)
	}
	// A commit by plain git in between: the journal does not cover it.
	t.Setenv("PATH", path)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, memfs.LessonPath("by-hand"))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, memfs.LessonPath("by-hand")), []byte("<p>x</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	testGit(t, dir, env, "add", memfs.LessonPath("by-hand"))
	testGit(t, dir, env, "commit", "-q", "-m", "by hand")
	s4 := learn("delta-four")
	t.Setenv("PATH", "")
	if _, _, ok := lessonChanges(s, s2, s4); ok {
		t.Fatal("answered across a git commit without asking git")
	}
	t.Setenv("PATH", path)
	if changed, _, ok := lessonChanges(s, s2, s4); !ok || !slices.Equal(ids(changed), []string{"by-hand", "delta-four"}) {
		t.Fatalf("from git diff-tree: %v, %v", ids(changed), ok)
	}
	// A garbage journal: git again.
	if err := os.WriteFile(filepath.Join(dir, ".borg", "changes.json"), []byte("{\"v\":1,\"commits\":[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	if _, _, ok := lessonChanges(s, s0, s2); ok {
		t.Fatal("answered from a garbage journal")
	}
	t.Setenv("PATH", path)
	if changed, _, ok := lessonChanges(s, s0, s2); !ok || !slices.Equal(ids(changed), []string{"alpha-one", "gamma-three"}) {
		t.Fatalf("from git after a garbage journal: %v, %v", ids(changed), ok)
	}
}
