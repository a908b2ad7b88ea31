package memfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// deadPID is a pid no process has (above any pid_max).
const deadPID = 999999999

// TestRecovery leaves the store as a writer killed at some point leaves it,
// then makes an ordinary commit, which must repair it by itself: its
// journaled lesson committed, the git index matching HEAD, and one line
// saying what was repaired. (A git lock is never removed: see
// TestConformanceGitLockKept.)
func TestRecovery(t *testing.T) {
	const id = "killed-writer-lesson"
	lesson := LessonPath(id)
	tests := []struct {
		name string
		// kill leaves the state a killed writer leaves.
		kill       func(t *testing.T, s *Store)
		wantWarn   string // "" means none
		wantLesson bool   // the journaled lesson is in HEAD after
	}{
		{
			name:     "no journal, no lock",
			kill:     func(t *testing.T, s *Store) {},
			wantWarn: "",
		},
		{
			name: "journal, killed after writing the lesson, before taking index.lock",
			kill: func(t *testing.T, s *Store) {
				writeJournalT(t, s, lesson)
				writeLessonT(t, s, id)
			},
			wantWarn:   "repaired: borg pid 999999999 did not finish",
			wantLesson: true,
		},
		{
			name: "journal, killed after moving the branch, before writing the index",
			kill: func(t *testing.T, s *Store) {
				writeLessonT(t, s, id)
				data, err := os.ReadFile(filepath.Join(s.dir, lesson))
				if err != nil {
					t.Fatal(err)
				}
				head, err := s.ResolveRef("HEAD")
				if err != nil {
					t.Fatal(err)
				}
				// CommitOnRef moves main without touching the index: the
				// state the old kill window left.
				if _, err := s.CommitOnRef("refs/heads/main", head, head, []FileChange{{Path: lesson, Data: data}}, "borg learn: "+id, time.Now()); err != nil {
					t.Fatal(err)
				}
				writeJournalT(t, s, lesson) // written first; CommitOnRef would have recovered it
				if m, _ := s.IndexMismatches(); len(m) != 1 {
					t.Fatalf("setup: want one mismatch, got %v", m)
				}
			},
			wantWarn:   "nothing left to commit: the last commit holds " + LessonPath(id),
			wantLesson: true,
		},
		{
			name: "journal, killed before writing the lesson",
			kill: func(t *testing.T, s *Store) {
				writeJournalT(t, s, lesson)
			},
			wantWarn: "nothing left to commit: the last commit holds " + LessonPath(id),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			var warns []string
			s.warn = func(line string) { warns = append(warns, line) }
			tt.kill(t, s)
			other := LessonPath("another-lesson")
			if _, err := s.Update("borg learn: another-lesson", []string{other}, func() error {
				return s.WriteLesson(sampleLesson("another-lesson"))
			}); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(warns, "\n")
			switch {
			case tt.wantWarn == "" && got != "":
				t.Errorf("warned %q, want nothing", got)
			case tt.wantWarn != "" && !strings.Contains(got, tt.wantWarn):
				t.Errorf("warned %q, want %q", got, tt.wantWarn)
			}
			if len(warns) > 1 {
				t.Errorf("%d lines, want one: %q", len(warns), got)
			}
			if m, err := s.IndexMismatches(); err != nil || len(m) != 0 {
				t.Errorf("index disagrees with HEAD: %v %v", m, err)
			}
			if _, err := s.ReadFileAt("HEAD", lesson); (err == nil) != tt.wantLesson {
				t.Errorf("lesson in HEAD: %v, want %v", err == nil, tt.wantLesson)
			}
			if _, err := s.ReadFileAt("HEAD", other); err != nil {
				t.Errorf("the repairing commit lost its own lesson: %v", err)
			}
			lc, err := s.CheckLocks(false)
			if err != nil || len(lc.Locks) != 0 || lc.Interrupted != "" {
				t.Errorf("left: %+v %v", lc, err)
			}
			if st := gitCLI(t, s.dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status:\n%s", st)
			}
			gitCLI(t, s.dir, "fsck", "--no-progress")
		})
	}
}

func writeJournalT(t *testing.T, s *Store, paths ...string) {
	t.Helper()
	if err := s.writeJournal(journal{PID: deadPID, StartMS: 1, Message: "borg learn: killed-writer-lesson", Ref: "refs/heads/main", Paths: paths}); err != nil {
		t.Fatal(err)
	}
}

func writeLessonT(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.WriteLesson(sampleLesson(id)); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryUndoesTornMergeFiles: a merge killed while git checked files
// out leaves some whole, some created but not yet written (empty or
// short); the next writer removes both as the merge's, and keeps a file
// that holds anything else.
func TestRecoveryUndoesTornMergeFiles(t *testing.T) {
	s := newTestStore(t)
	writeLessonT(t, s, "base-lesson")
	if _, err := s.Commit("base", LessonPath("base-lesson")); err != nil {
		t.Fatal(err)
	}
	head, err := s.ResolveRef("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"whole", "empty", "short", "edited"}
	var changes []FileChange
	var undo []string
	for _, id := range ids {
		changes = append(changes, FileChange{Path: LessonPath(id), Data: Render(sampleLesson(id))})
		undo = append(undo, LessonPath(id))
	}
	if _, err := s.CommitOnRef("refs/heads/side", "", head, changes, "side", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	disk := map[string][]byte{
		"whole": changes[0].Data, "empty": nil, "short": changes[2].Data[:10],
		"edited": []byte("a hand edit, not the merge's"),
	}
	for id, data := range disk {
		writeStoreFile(t, s, LessonPath(id), data)
	}
	if err := s.writeJournal(journal{PID: deadPID, StartMS: 1, Message: "borg sync: merge side", Ref: "refs/heads/main", Merge: true, From: "refs/heads/side", Undo: undo}); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.LockWrites()
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for id := range disk {
		_, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(LessonPath(id))))
		if kept := err == nil; kept != (id == "edited") {
			t.Errorf("%s: kept %v", id, kept)
		}
	}
}

// TestUpdatePrepareFails checks a write whose prepare step fails after it
// wrote a file (a learn refused once it looked): nothing is committed or
// journaled, the git index is left byte for byte as it was, and no lock of
// git's is left.
func TestUpdatePrepareFails(t *testing.T) {
	s := newTestStore(t)
	learnLessonT(t, s, sampleLesson("before-the-failure"))
	head, err := s.ResolveRef("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(s.Dir(), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused by prepare")
	p := LessonPath("never-committed")
	if _, err := s.Update("learn never-committed", []string{p}, func() error {
		writeLessonT(t, s, "never-committed") // on disk, then refused
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("Update = %v, want prepare's error as it is", err)
	}
	if h, _ := s.ResolveRef("HEAD"); h != head {
		t.Errorf("HEAD moved to %s", h)
	}
	if after, _ := os.ReadFile(filepath.Join(s.Dir(), ".git", "index")); !bytes.Equal(after, index) {
		t.Error("the git index changed")
	}
	for _, f := range []string{".git/index.lock", journalFile} {
		if _, err := os.Stat(filepath.Join(s.Dir(), filepath.FromSlash(f))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left: %v", f, err)
		}
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "?? "+path.Dir(p)+"/\n" && st != "?? "+p+"\n" {
		t.Errorf("git status = %q, want only the file prepare wrote", st)
	}
}

// TestRecoverySweepsOldTemps: the next writer removes the temp files dead
// writers left in .borg/tmp and beside the packs once they are an hour
// old, with or without a journal to recover from, and leaves a fresh one
// (a live hook's cache write).
func TestRecoverySweepsOldTemps(t *testing.T) {
	s := newTestStore(t)
	old := time.Now().Add(-2 * staleTempAge)
	mk := func(p string, mtime time.Time) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		mk(filepath.Join(s.dir, tmpDir, ".journal.json.tmp-1"), old),
		mk(filepath.Join(s.git.commonDir, "objects", "pack", ".pack-x.pack.tmp-2"), old),
	}
	kept := mk(filepath.Join(s.dir, tmpDir, ".summary.bin.tmp-3"), time.Now())
	if _, err := s.Update("borg learn: another-lesson", []string{LessonPath("another-lesson")}, func() error {
		return s.WriteLesson(sampleLesson("another-lesson"))
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind", p)
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a fresh temp file was removed: %v", err)
	}
}

// TestUpdateStagingFailsAfterTheCommit: when git cannot stage the paths of
// a commit already made, Update returns the commit with a *StageError (the
// lesson is committed; only git's index lags), and the next writer stages
// them.
func TestUpdateStagingFailsAfterTheCommit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for git")
	}
	s := newTestStore(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	script := "#!/bin/sh\ncase \" $* \" in *\" update-index \"*) echo 'fatal: cannot stage' >&2; exit 128;; esac\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(fake, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", fake+string(os.PathListSeparator)+path)
	lesson := LessonPath("staged-later")
	h, err := s.Update("borg learn: staged-later", []string{lesson}, func() error {
		return s.WriteLesson(sampleLesson("staged-later"))
	})
	se, ok := errors.AsType[*StageError](err)
	if !ok || h == "" || se.Commit != h {
		t.Fatalf("Update = %q, %v; want the commit and a *StageError", h, err)
	}
	if head, _ := s.ResolveRef("HEAD"); head != h {
		t.Fatalf("HEAD %s, want the commit %s", head, h)
	}
	t.Setenv("PATH", path)
	if _, err := s.Update("borg learn: another-lesson", []string{LessonPath("another-lesson")}, func() error {
		return s.WriteLesson(sampleLesson("another-lesson"))
	}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.IndexMismatches(); err != nil || len(m) != 0 {
		t.Errorf("index disagrees with HEAD after the next write: %v %v", m, err)
	}
}

// TestEarlyStage: a commit of a few paths starts git update-index before
// its files are written, and git stages them once they are: the index then
// matches HEAD and git sees nothing to commit. One that git cannot stage (it
// failed as it started) is staged by a git run then; one aborted stages
// nothing and leaves no lock. With git's index held by another git, none is
// started.
func TestEarlyStage(t *testing.T) {
	s := newTestStore(t)
	learnLessonT(t, s, sampleLesson("early-one"))
	checkClean(t, s)

	p := LessonPath("early-failed")
	bad := &earlyStage{cmd: s.GitCLI().Command(context.Background(), "update-index", "--no-such-option")}
	bad.stdin, _ = bad.cmd.StdinPipe()
	if err := bad.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteLesson(sampleLesson("early-failed")); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.lockWrites()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.commitStaging("borg learn: early-failed", []string{p}, bad)
	unlock()
	if err != nil {
		t.Fatalf("a commit whose early git failed: %v", err)
	}
	checkClean(t, s)

	e := s.startEarlyStage(1)
	if e == nil {
		t.Fatal("no early stage with git's index free")
	}
	writeLessonT(t, s, "early-aborted")
	e.abort()
	if _, err := os.Stat(filepath.Join(s.Dir(), ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left after an aborted stage: %v", err)
	}
	if out := gitCLI(t, s.Dir(), "ls-files", LessonPath("early-aborted")); out != "" {
		t.Errorf("an aborted stage staged %q", out)
	}

	lock := filepath.Join(s.Dir(), ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e := s.startEarlyStage(1); e != nil {
		e.abort()
		t.Error("an early stage started while another git held the index")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
}

// TestPending: a commit begun before its paths are known holds the write
// lock and has git reading the index; its Update commits and stages what
// prepare wrote, as Update does, with many paths too, and Abort leaves the
// index, the branch and the locks as they were.
func TestPending(t *testing.T) {
	s := newTestStore(t)
	learnLessonT(t, s, sampleLesson("pending-base"))
	head, _ := s.ResolveRef("HEAD")

	p, err := s.Begin(1)
	if err != nil {
		t.Fatal(err)
	}
	if p.early == nil {
		t.Fatal("Begin started no stage with git's index free")
	}
	if s.held.Load() == nil {
		t.Fatal("Begin does not hold the write lock")
	}
	writeLessonT(t, s, "pending-aborted")
	p.Abort()
	if s.held.Load() != nil {
		t.Error("Abort left the write lock held")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left after Abort: %v", err)
	}
	if out := gitCLI(t, s.Dir(), "ls-files", LessonPath("pending-aborted")); out != "" {
		t.Errorf("an aborted commit staged %q", out)
	}
	if now, _ := s.ResolveRef("HEAD"); now != head {
		t.Errorf("Abort moved HEAD %s → %s", head, now)
	}
	if err := os.Remove(filepath.Join(s.Dir(), filepath.FromSlash(LessonPath("pending-aborted")))); err != nil {
		t.Fatal(err)
	}

	// Ended once, a commit ends no more: no second release of the lock.
	p, err = s.Begin(1)
	if err != nil {
		t.Fatal(err)
	}
	p.Abort()
	p.Abort()
	if _, err := p.Update("borg learn: late", []string{LessonPath("late")}, nil); !errors.Is(err, errPendingEnded) {
		t.Errorf("Update after Abort = %v, want errPendingEnded", err)
	}

	// Another writer holding the store: Begin does not wait for it.
	other, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := other.lockWrites()
	if err != nil {
		t.Fatal(err)
	}
	// "still after 0s": it tried once (a Begin that waited would say the
	// wait it gave up after).
	if p, err := s.Begin(1); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "still after 0s") {
		if p != nil {
			p.Abort()
		}
		t.Errorf("Begin with the store held = %v, want ErrBusy at once", err)
	}
	unlock()

	for _, n := range []int{1, earlyStageMax + 1} {
		p, err := s.Begin(1)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for i := range n {
			paths = append(paths, LessonPath(fmt.Sprintf("pending-%d-%d", n, i)))
		}
		h, err := p.Update(fmt.Sprintf("borg learn: %d lessons", n), paths, func() error {
			for i := range n {
				if err := s.WriteLesson(sampleLesson(fmt.Sprintf("pending-%d-%d", n, i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update of %d paths: %v", n, err)
		}
		if now, _ := s.ResolveRef("HEAD"); now != h {
			t.Fatalf("%d paths: HEAD %s, want the commit %s", n, now, h)
		}
		if s.held.Load() != nil {
			t.Errorf("%d paths: Update left the write lock held", n)
		}
		checkClean(t, s)
		p.Abort() // ended by Update: nothing
		if s.held.Load() != nil {
			t.Errorf("%d paths: Abort after Update took the lock again", n)
		}
	}
}
