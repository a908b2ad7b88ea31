package memfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deadPID is a pid no process has (above any pid_max).
const deadPID = 999999999

func TestStaleLock(t *testing.T) {
	alive := func(pid int) bool { return pid != deadPID }
	tests := []struct {
		name      string
		owner     lockOwner
		age       time.Duration
		exclusive bool
		want      bool
	}{
		{"borg, dead pid, write lock held", lockOwner{borg: true, pid: deadPID}, time.Second, true, true},
		{"borg, live pid, write lock held (its holder died; the pid was reused)", lockOwner{borg: true, pid: 1}, time.Second, true, true},
		{"borg, dead pid, write lock not held", lockOwner{borg: true, pid: deadPID}, time.Second, false, true},
		{"borg, live pid, write lock not held", lockOwner{borg: true, pid: 1}, time.Hour, false, false},
		{"no marker, fresh", lockOwner{}, time.Minute, true, false},
		{"no marker, fresh, write lock not held", lockOwner{}, time.Minute, false, false},
		{"no marker, older than the limit", lockOwner{}, staleLockAge + time.Second, true, true},
		{"no marker, older than the limit, write lock not held", lockOwner{}, 2 * staleLockAge, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := staleLock(tt.owner, tt.age, tt.exclusive, alive)
			if got != tt.want {
				t.Errorf("stale = %v (%s), want %v", got, why, tt.want)
			}
			if why == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestLockMarkerRoundTrip(t *testing.T) {
	start := time.UnixMilli(1764578400123)
	tests := []struct {
		name string
		data []byte
		want lockOwner
	}{
		{"borg", lockMarker(4242, start), lockOwner{borg: true, pid: 4242, start: start}},
		{"empty (git CLI, just created)", nil, lockOwner{}},
		{"a git index", []byte("DIRC\x00\x00\x00\x02"), lockOwner{}},
		{"a ref", []byte("0123456789abcdef0123456789abcdef01234567\n"), lockOwner{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseLockMarker(tt.data)
			if got.borg != tt.want.borg || got.pid != tt.want.pid || !got.start.Equal(tt.want.start) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRecovery leaves the store as a writer killed at some point leaves it,
// then makes an ordinary commit, which must repair it by itself: the dead
// writer's locks gone, its journaled lesson committed, the git index
// matching HEAD, and one line saying what was repaired.
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
			wantWarn:   "repaired: borg pid 999999999 was killed",
			wantLesson: true,
		},
		{
			name: "journal, killed holding index.lock",
			kill: func(t *testing.T, s *Store) {
				writeJournalT(t, s, lesson)
				writeLessonT(t, s, id)
				markLock(t, filepath.Join(s.git.gitDir, "index.lock"))
			},
			wantWarn:   "removed its .git/index.lock",
			wantLesson: true,
		},
		{
			name: "journal, killed holding the branch's lock",
			kill: func(t *testing.T, s *Store) {
				writeJournalT(t, s, lesson)
				writeLessonT(t, s, id)
				markLock(t, filepath.Join(s.git.gitDir, "index.lock"))
				markLock(t, filepath.Join(s.git.gitDir, "refs", "heads", "main.lock"))
			},
			wantWarn:   "removed its .git/index.lock, .git/refs/heads/main.lock",
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
				markLock(t, filepath.Join(s.git.gitDir, "index.lock"))
				if m, _ := s.IndexMismatches(); len(m) != 1 {
					t.Fatalf("setup: want one mismatch, got %v", m)
				}
			},
			wantWarn:   "committed and staged " + LessonPath(id),
			wantLesson: true,
		},
		{
			name: "no journal, a dead borg's index.lock",
			kill: func(t *testing.T, s *Store) {
				markLock(t, filepath.Join(s.git.gitDir, "index.lock"))
			},
			wantWarn: "removed stale lock .git/index.lock: left by borg pid 999999999",
		},
		{
			name: "no journal, an old index.lock without a marker",
			kill: func(t *testing.T, s *Store) {
				p := filepath.Join(s.git.gitDir, "index.lock")
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				old := time.Now().Add(-2 * staleLockAge)
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			},
			wantWarn: "removed stale lock .git/index.lock: 20m",
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
			if len(warns) > 1 && !strings.Contains(tt.name, "branch") {
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

// markLock creates the lock file p as a borg of deadPID left it.
func markLock(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, lockMarker(deadPID, time.Now()), 0o644); err != nil {
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
