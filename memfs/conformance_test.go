package memfs

// conformance_test.go checks every write path of the store against the git
// CLI, as a user's git, an editor's git view or a CI checkout would see the
// store afterwards: after each borg write, git fsck --strict is clean, git
// diff-files and git status show nothing, git reflog names the commit, and
// git, go-git and a freshly opened Store read the same HEAD, tree and
// lessons. Each case runs in a plain store, in a store that is a linked
// worktree (git worktree add), in one whose index is in git's default
// version 2 and in one with feature.manyFiles.

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/borg-memory/borg/domain"
)

// conformanceLayouts are the kinds of store the suite runs in; each makes
// a store with one committed lesson.
var conformanceLayouts = []struct {
	name string
	make func(t *testing.T) *Store
}{
	{"plain", func(t *testing.T) *Store { return newTestStore(t) }},
	{"linked worktree", newWorktreeStore},
	{"index version 2", func(t *testing.T) *Store {
		// A store made by a borg that left git's default format.
		s := newTestStore(t)
		gitCLI(t, s.Dir(), "config", "index.version", "2")
		gitCLI(t, s.Dir(), "update-index", "--index-version", "2")
		return s
	}},
	{"many files", func(t *testing.T) *Store {
		s := newTestStore(t)
		gitCLI(t, s.Dir(), "config", "feature.manyFiles", "true")
		// git writes the index in the format feature.manyFiles asks for
		// (version 4, untracked cache) at its next write.
		gitCLI(t, s.Dir(), "update-index", "--index-version", "4")
		gitCLI(t, s.Dir(), "status", "--porcelain")
		return s
	}},
}

// newWorktreeStore makes a store, then a linked worktree of it on its own
// branch, and opens the worktree as the store.
func newWorktreeStore(t *testing.T) *Store {
	t.Helper()
	main := newTestStore(t)
	dir := filepath.Join(t.TempDir(), "linked")
	gitCLI(t, main.Dir(), "worktree", "add", "-q", "-b", "linked", dir)
	s, err := Open(dir, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// conformanceWrites are borg's write paths; each writes through s and
// returns the commit it made.
var conformanceWrites = []struct {
	name  string
	write func(t *testing.T, s *Store) string
}{
	{"learn", func(t *testing.T, s *Store) string {
		return learnLessonT(t, s, sampleLesson("conformance-learn"))
	}},
	{"no (a rewrite)", func(t *testing.T, s *Store) string {
		learnLessonT(t, s, sampleLesson("conformance-rewrite"))
		l := sampleLesson("conformance-rewrite")
		l.Gist = "Run the migrations first; the schema is not auto-applied."
		l.Confidence = 0.3
		return learnLessonT(t, s, l)
	}},
	{"archive", func(t *testing.T, s *Store) string {
		learnLessonT(t, s, sampleLesson("conformance-archive"))
		from, to := LessonPath("conformance-archive"), ArchivePath("conformance-archive")
		h, err := s.Update("archive", []string{from, to}, func() error {
			return s.renameInto(from, to)
		})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}},
	{"commit on a sleep branch", func(t *testing.T, s *Store) string {
		head, err := s.ResolveRef("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		l := sampleLesson("conformance-sleep")
		h, err := s.CommitOnRef("borg/sleep/2026-12-03", "", head,
			[]FileChange{{Path: LessonPath(l.ID), Data: Render(l)}}, "sleep: merge", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		checkGitReads(t, s, "refs/heads/borg/sleep/2026-12-03", h)
		return head // HEAD does not move
	}},
	{"layout migration", func(t *testing.T, s *Store) string {
		writeStoreFile(t, s, "lessons/conformance-flat.html", Render(sampleLesson("conformance-flat")))
		if _, err := s.Commit("flat", "lessons/conformance-flat.html"); err != nil {
			t.Fatal(err)
		}
		_, _, h, err := s.MigrateLayout()
		if err != nil || h == "" {
			t.Fatalf("MigrateLayout = %s, %v", h, err)
		}
		return h
	}},
	{"recovery of a killed learn", func(t *testing.T, s *Store) string {
		writeLessonT(t, s, "conformance-killed")
		writeJournalT(t, s, LessonPath("conformance-killed"))
		if _, err := s.Commit("next write"); err != nil {
			t.Fatal(err)
		}
		h, err := s.ResolveRef("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}},
}

func learnLessonT(t *testing.T, s *Store, l domain.Lesson) string {
	t.Helper()
	if err := s.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	h, err := s.Commit("learn "+l.ID, LessonPath(l.ID))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestConformance(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	for _, layout := range conformanceLayouts {
		t.Run(layout.name, func(t *testing.T) {
			for _, w := range conformanceWrites {
				t.Run(w.name, func(t *testing.T) {
					s := layout.make(t)
					learnLessonT(t, s, sampleLesson("conformance-first"))
					h := w.write(t, s)
					checkGitReads(t, s, "HEAD", h)
					checkClean(t, s)
				})
			}
		})
	}
}

// TestConformanceSync runs a sync's merge commit against a bare remote,
// in a plain clone and in a linked worktree of one.
func TestConformanceSync(t *testing.T) {
	_, nodes := newSyncNodes(t, 2)
	a, b := nodes[0], nodes[1]
	a.learn(t, "conformance-from-a", "Lesson from a", 10)
	a.sync(t)
	b.learn(t, "conformance-from-b", "Lesson from b", 20)
	res := b.sync(t)
	if !res.Merged {
		t.Fatalf("sync = %+v, want a merge", res)
	}
	h, err := b.s.ResolveRef("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	checkGitReads(t, b.s, "HEAD", h)
	checkClean(t, b.s)
	a.sync(t)
	checkGitReads(t, a.s, "HEAD", h)
	checkClean(t, a.s)
}

// checkGitReads checks that git, go-git and a freshly opened Store read
// rev as commit want, the same tree and the same lessons, and that git's
// reflog of rev names the commit.
func checkGitReads(t *testing.T, s *Store, rev, want string) {
	t.Helper()
	dir := s.Dir()
	if got := strings.TrimSpace(gitCLI(t, dir, "rev-parse", rev)); got != want {
		t.Fatalf("git rev-parse %s = %s, borg made %s", rev, got, want)
	}
	if log := gitCLI(t, dir, "reflog", "show", "--format=%H", rev); !slices.Contains(strings.Fields(log), want) {
		t.Errorf("git reflog %s lacks %s:\n%s", rev, want, log)
	}
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.ResolveRevision("HEAD")
	if rev == "HEAD" && (err != nil || h.String() != want) {
		t.Errorf("go-git reads HEAD as %v (%v), want %s", h, err, want)
	}
	fresh, err := Open(dir, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.ResolveRef(rev); err != nil || got != want {
		t.Errorf("a fresh Store reads %s as %s (%v), want %s", rev, got, err, want)
	}
	gitFiles := strings.Fields(gitCLI(t, dir, "ls-tree", "-r", "--name-only", rev, "--", LessonsDir))
	borgFiles, err := fresh.listAt(rev, LessonsDir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gitFiles, borgFiles) {
		t.Errorf("lessons at %s: git lists %v, borg %v", rev, gitFiles, borgFiles)
	}
	if rev != "HEAD" {
		return
	}
	lessons, errs := fresh.Lessons()
	if len(errs) > 0 {
		t.Errorf("a fresh Store reads lessons with errors: %v", errs)
	}
	var ids []string
	for _, l := range lessons {
		ids = append(ids, LessonPath(l.ID))
	}
	var want2 []string
	for _, f := range gitFiles {
		if strings.HasSuffix(f, ".html") {
			want2 = append(want2, f)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want2) {
		t.Errorf("a fresh Store reads lessons %v, git's HEAD holds %v", ids, want2)
	}
}

// checkClean checks the store as git sees it: fsck --strict is clean, and
// neither diff-files (run first: it trusts the index's stat data as it is,
// where status would refresh it) nor status shows anything.
func checkClean(t *testing.T, s *Store) {
	t.Helper()
	dir := s.Dir()
	if out := gitCLI(t, dir, "diff-files", "--name-only"); out != "" {
		t.Errorf("git diff-files lists paths the commit wrote:\n%s", out)
	}
	if out := gitCLI(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("git status is not clean:\n%s", out)
	}
	if out := gitCLI(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress"); out != "" {
		t.Errorf("git fsck --strict:\n%s", out)
	}
}

// TestConformanceGitLockKept checks that a lock git holds is never removed
// by borg, however old it is (an editor left open on a git commit holds
// index.lock for as long as it likes): the commit fails naming the lock and
// the fix, and doctor names it without removing it.
func TestConformanceGitLockKept(t *testing.T) {
	s := newTestStore(t)
	lock := filepath.Join(s.Dir(), ".git", "index.lock")
	staleLock(t, lock)
	if err := s.WriteLesson(sampleLesson("conformance-locked")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Commit("learn", LessonPath("conformance-locked"))
	if err == nil || !strings.Contains(err.Error(), "index.lock") {
		t.Errorf("commit under git's index.lock = %v, want an error naming the lock", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("borg removed git's lock: %v", err)
	}
	check, err := s.CheckLocks(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Locks) != 1 || !check.Locks[0].Stale || !strings.Contains(check.Locks[0].Why, "rm ") {
		t.Errorf("doctor's lock check = %+v, want index.lock named with its fix, not removed", check)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("doctor removed git's lock: %v", err)
	}
	finishedOnceUnlocked(t, s, lock, "conformance-locked")
}

// staleLock makes a lock file of git's at path, an hour old: borg fails at
// once on it, naming it, rather than waiting for it to go.
func staleLock(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// finishedOnceUnlocked removes git's lock and checks that the next write
// finishes the commit it stopped (the journal's): lesson id is in HEAD,
// and git sees a clean store.
func finishedOnceUnlocked(t *testing.T, s *Store, lock, id string) {
	t.Helper()
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("next"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadFileAt("HEAD", LessonPath(id)); err != nil {
		t.Errorf("the lesson was not committed once the lock went: %v", err)
	}
	checkClean(t, s)
}

// TestConformanceRefLockUnstages checks that a commit whose ref does not
// move (a lock git holds on the branch) leaves nothing staged, though git
// stages the paths while the ref is moved: a user's own git commit must
// not take the lesson with it. The journal's next writer then commits it.
func TestConformanceRefLockUnstages(t *testing.T) {
	s := newTestStore(t)
	branch := strings.TrimSpace(gitCLI(t, s.Dir(), "symbolic-ref", "HEAD"))
	lock := filepath.Join(s.Dir(), ".git", filepath.FromSlash(branch)+".lock")
	staleLock(t, lock)
	if err := s.WriteLesson(sampleLesson("conformance-ref-locked")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("learn", LessonPath("conformance-ref-locked")); err == nil || !strings.Contains(err.Error(), ".lock") {
		t.Fatalf("commit under git's ref lock = %v, want an error naming the lock", err)
	}
	if out := gitCLI(t, s.Dir(), "diff", "--cached", "--name-only"); out != "" {
		t.Errorf("a commit whose ref did not move left paths staged:\n%s", out)
	}
	finishedOnceUnlocked(t, s, lock, "conformance-ref-locked")
}

// TestConformanceSplitIndexIsGits checks that borg leaves the choice of a
// split index to git's config: in a repository git made, where
// core.splitIndex is unset, a store of a few thousand files is not split;
// a store borg made asks for one in its config (docs/git.md), and one
// turned off there stays off.
func TestConformanceSplitIndexIsGits(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,100 lessons")
	}
	many := func(t *testing.T, s *Store) {
		var paths []string
		for i := range 2100 {
			l := sampleLesson(fmt.Sprintf("conformance-many-%04d", i))
			writeStoreFile(t, s, LessonPath(l.ID), Render(l))
			paths = append(paths, LessonPath(l.ID))
		}
		if _, err := s.Commit("many", paths...); err != nil {
			t.Fatal(err)
		}
		learnLessonT(t, s, sampleLesson("conformance-one-more"))
	}
	shared := func(s *Store) []string {
		m, _ := filepath.Glob(filepath.Join(s.Dir(), ".git", "sharedindex.*"))
		return m
	}
	t.Run("git's repository, unset", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "store")
		gitCLI(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
		s, err := Init(context.Background(), dir, "", WithEnv(testEnv(nil)))
		if err != nil {
			t.Fatal(err)
		}
		many(t, s)
		if m := shared(s); len(m) > 0 {
			t.Errorf("borg split the index (%v) though core.splitIndex is unset", m)
		}
		checkClean(t, s)
	})
	t.Run("borg's store, turned off", func(t *testing.T) {
		s := newTestStore(t)
		if v := strings.TrimSpace(gitCLI(t, s.Dir(), "config", "--get", "core.splitIndex")); v != "true" {
			t.Errorf("core.splitIndex = %q in a new store, want true", v)
		}
		gitCLI(t, s.Dir(), "config", "core.splitIndex", "false")
		gitCLI(t, s.Dir(), "update-index", "--no-split-index")
		before := shared(s) // git removes them once they expire
		many(t, s)
		if m := shared(s); !slices.Equal(m, before) {
			t.Errorf("a new shared index (%v, before %v) though core.splitIndex is false", m, before)
		}
		checkClean(t, s)
	})
}

// TestConformanceIndexVersion checks the index format borg asks of git in a
// repository it makes (docs/git.md): version 4 in a new store and in a
// clone of a team's store (whose index git wrote before the setting
// existed), the user's own index.version kept, and a store whose index is
// in version 2 (made by an older borg) left in it and still written right.
func TestConformanceIndexVersion(t *testing.T) {
	version := func(t *testing.T, s *Store) uint32 {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(s.Dir(), ".git", "index"))
		if err != nil || len(b) < 8 || string(b[:4]) != "DIRC" {
			t.Fatalf("read the store's git index: %v (%d bytes)", err, len(b))
		}
		return binary.BigEndian.Uint32(b[4:8])
	}
	t.Run("new store", func(t *testing.T) {
		s := newTestStore(t)
		if v := strings.TrimSpace(gitCLI(t, s.Dir(), "config", "--get", "index.version")); v != "4" {
			t.Errorf("index.version = %q in a new store, want 4", v)
		}
		learnLessonT(t, s, sampleLesson("conformance-v4"))
		if v := version(t, s); v != 4 {
			t.Errorf("git index in version %d after a learn, want 4", v)
		}
		checkClean(t, s)
	})
	t.Run("clone", func(t *testing.T) {
		remote := filepath.Join(t.TempDir(), "remote.git")
		gitCLI(t, t.TempDir(), "init", "-q", "--bare", "--initial-branch=main", remote)
		a, err := Init(context.Background(), filepath.Join(t.TempDir(), "a"), remote, WithEnv(testEnv(nil)))
		if err != nil {
			t.Fatal(err)
		}
		learnLessonT(t, a, sampleLesson("conformance-cloned"))
		gitCLI(t, a.Dir(), "push", "-q", "origin", "main")
		b, err := Init(context.Background(), filepath.Join(t.TempDir(), "b"), remote, WithEnv(testEnv(nil)))
		if err != nil {
			t.Fatal(err)
		}
		if v := version(t, b); v != 4 {
			t.Errorf("a clone's git index in version %d, want 4", v)
		}
		checkClean(t, b)
		learnLessonT(t, b, sampleLesson("conformance-after-clone"))
		checkClean(t, b)
	})
	// The user's own choice of version 2, in git's config or in the
	// environment (which git reads first), is kept.
	for _, setting := range []string{"git config", "GIT_INDEX_VERSION"} {
		t.Run("the user's "+setting, func(t *testing.T) {
			if setting == "GIT_INDEX_VERSION" {
				t.Setenv("GIT_INDEX_VERSION", "2")
			} else {
				global := filepath.Join(t.TempDir(), "gitconfig")
				if err := os.WriteFile(global, []byte("[index]\n\tversion = 2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GIT_CONFIG_GLOBAL", global)
			}
			s := newTestStore(t)
			if b, _ := os.ReadFile(filepath.Join(s.Dir(), ".git", "config")); strings.Contains(string(b), "[index]") {
				t.Errorf("borg set index.version over the user's %s:\n%s", setting, b)
			}
			learnLessonT(t, s, sampleLesson("conformance-users-v2"))
			if v := version(t, s); v != 2 {
				t.Errorf("git index in version %d, want the user's 2 (%s)", v, setting)
			}
		})
	}
	t.Run("an older store's version 2", func(t *testing.T) {
		s := newTestStore(t)
		gitCLI(t, s.Dir(), "config", "--unset", "index.version")
		gitCLI(t, s.Dir(), "update-index", "--index-version", "2")
		learnLessonT(t, s, sampleLesson("conformance-v2"))
		if v := version(t, s); v != 2 {
			t.Errorf("git index in version %d, want 2 as it was", v)
		}
		checkClean(t, s)
	})
}

// TestConformanceUnsupportedFormats checks that a repository git writes in
// a format borg's object and ref code does not speak is refused when the
// store is opened, naming the format.
func TestConformanceUnsupportedFormats(t *testing.T) {
	for _, tt := range []struct{ key, value, want string }{
		{"extensions.objectFormat", "sha256", "extensions.objectFormat=sha256"},
		{"extensions.refStorage", "reftable", "extensions.refStorage=reftable"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			s := newTestStore(t)
			gitCLI(t, s.Dir(), "config", "core.repositoryFormatVersion", "1")
			gitCLI(t, s.Dir(), "config", tt.key, tt.value)
			_, err := Open(s.Dir())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// learnT writes the sample lesson of each id and commits them together.
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

// TestCommitKeepsIndexInStep: whatever index git left (its version, a
// cache tree), borg's commits leave an index that names exactly HEAD's
// files, and git itself can commit on top.
func TestCommitKeepsIndexInStep(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"index as borg init left it", func(*testing.T, string) {}},
		{"index written by git with a cache tree", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitCLI(t, dir, "add", "notes.txt")
			gitCLI(t, dir, "commit", "-q", "-m", "notes by hand")
		}},
		{"index version 4", func(t *testing.T, dir string) {
			gitCLI(t, dir, "update-index", "--index-version", "4")
		}},
		{"index version 3", func(t *testing.T, dir string) {
			gitCLI(t, dir, "update-index", "--index-version", "3")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			tc.setup(t, s.Dir())
			for _, id := range []string{"zeta-last", "alpha-first", "mid-lesson"} {
				if err := s.WriteLesson(sampleLesson(id)); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Commit("learn "+id, LessonPath(id)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.archive("mid-lesson"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Commit("archive", LessonPath("mid-lesson"), ArchivePath("mid-lesson")); err != nil {
				t.Fatal(err)
			}
			if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
				t.Fatalf("git status = %q", st)
			}
			// The index names exactly the committed files, with their blobs.
			staged := gitCLI(t, s.Dir(), "ls-files", "-s")
			tree := gitCLI(t, s.Dir(), "ls-tree", "-r", "HEAD")
			if got, want := normalizeLsFiles(staged), normalizeLsTree(tree); got != want {
				t.Fatalf("index:\n%s\nHEAD:\n%s", got, want)
			}
			gitCLI(t, s.Dir(), "fsck", "--strict")
			// git itself can still commit on top.
			if err := os.WriteFile(filepath.Join(s.Dir(), "more.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitCLI(t, s.Dir(), "add", "more.txt")
			gitCLI(t, s.Dir(), "commit", "-q", "-m", "more")
			if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
				t.Fatalf("git status after a git commit = %q", st)
			}
		})
	}
}

// normalizeLsFiles turns `git ls-files -s` lines (mode hash stage\tpath)
// into "mode hash path" lines.
func normalizeLsFiles(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		out = append(out, f[0]+" "+f[1]+" "+f[3])
	}
	return strings.Join(out, "\n")
}

// normalizeLsTree turns `git ls-tree -r` lines (mode type hash\tpath) into
// the same form.
func normalizeLsTree(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		out = append(out, f[0]+" "+f[2]+" "+f[3])
	}
	return strings.Join(out, "\n")
}
