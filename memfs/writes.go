package memfs

// writes.go is the store's one write discipline. Every write to git (a
// commit on the checked-out branch, a commit on another ref) runs under the
// store's write lock, .borg/write.lock, an flock the OS releases when its
// holder dies, and goes in this order:
//
//  1. take the write lock; if a journal is there, its writer died: recover;
//  2. write the journal (.borg/journal.json: pid, start, message, ref and
//     the paths the commit stages), atomically;
//  3. write the files (a lesson, a log line: the caller's prepare step);
//  4. take index.lock and the ref's lock (gitlock.go), write the objects,
//     move the ref, write the index for the journaled paths;
//  5. remove the journal; release the write lock.
//
// A kill anywhere leaves either no journal (nothing was written) or a
// journal naming what to finish. Recovery rolls forward: it removes the
// dead writer's git locks and commits the journaled paths as they are on
// disk, which stages them, so the index matches HEAD again and a lesson
// written by a killed learn is committed rather than orphaned. Recovery is
// idempotent: killed itself, the next writer does it again. Readers and
// hooks never take the write lock and never pay for any of this.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrBusy: another process holds the store's write lock for longer than
// borg waits.
var ErrBusy = errors.New("another borg process is writing the store")

// writeWait bounds how long a writer waits for the store's write lock. The
// lock cannot go stale (the OS drops it with its holder), so the wait only
// bounds a queue of live writers.
const writeWait = 60 * time.Second

const (
	writeLockFile = PrivateDir + "/write.lock"
	journalFile   = PrivateDir + "/journal.json"
)

// journal is what a writer records before it writes anything.
type journal struct {
	PID     int      `json:"pid"`
	StartMS int64    `json:"start_ms"`
	Message string   `json:"message"`
	Ref     string   `json:"ref"`             // the ref it moves
	Paths   []string `json:"paths,omitempty"` // the paths it commits and stages
	// Merge is set by a writer that runs git's merge in the worktree
	// (sync): one killed mid-merge is undone, not finished.
	Merge bool `json:"merge,omitempty"`
	// From is the ref a merging writer merged (a remote-tracking ref), and
	// Undo the paths its merge changes: a killed merge's are put back as
	// HEAD has them.
	From string   `json:"from,omitempty"`
	Undo []string `json:"undo,omitempty"`
}

// lockWrites takes the store's write lock and finishes the work of a writer
// that died holding it. The returned function releases the lock.
func (s *Store) lockWrites() (func(), error) {
	p := filepath.Join(s.dir, filepath.FromSlash(writeLockFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	unlock, err := LockPath(p, writeWait)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("%w (still after %s; it holds %s)", ErrBusy, writeWait, writeLockFile)
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.recoverLocked(); err != nil {
		unlock()
		return nil, fmt.Errorf("recover an interrupted write: %w", err)
	}
	return unlock, nil
}

// LockWrites takes the store's write lock (waiting for another writer,
// ErrBusy after a minute), recovering first from a writer that died. The
// caller runs git CLI commands that write the store under it (sleep's
// merge), so that they never meet borg's own git locks. The returned
// function releases it.
func (s *Store) LockWrites() (func(), error) { return s.lockWrites() }

// Update writes and commits under the write discipline: it records the
// paths in the journal, runs prepare (which writes the files; it may be
// nil), then commits the paths as Commit does. When prepare fails nothing
// is committed and its error is returned as it is. A kill at any point is
// finished by the next writer: the paths are committed as they are then.
func (s *Store) Update(msg string, paths []string, prepare func() error) (string, error) {
	unlock, err := s.lockWrites()
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	defer unlock()
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	j := journal{PID: os.Getpid(), StartMS: time.Now().UnixMilli(), Message: msg, Ref: branch.String(), Paths: paths}
	if err := s.writeJournal(j); err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	if prepare != nil {
		if err := prepare(); err != nil {
			_ = s.removeJournal()
			return "", err
		}
	}
	h, err := s.commit(msg, paths)
	if err != nil {
		// The journal stays: the next writer finishes the commit.
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	if err := s.removeJournal(); err != nil {
		return "", err
	}
	return h, nil
}

// Repair is what recovery did: one line per repair.
type Repair struct {
	Lines []string
}

// recoverLocked finishes a dead writer's work; the caller holds the write
// lock. Without a journal it costs one failed open.
func (s *Store) recoverLocked() (Repair, error) {
	var rep Repair
	if line := s.recoverFetch(); line != "" {
		rep.Lines = append(rep.Lines, line)
		s.warnf("repaired: %s", line)
	}
	jp := filepath.Join(s.dir, filepath.FromSlash(journalFile))
	data, err := os.ReadFile(jp)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		// A journal is written atomically, so this one was not borg's
		// doing: the locks and the index are still checked below.
		j = journal{Message: "unreadable journal"}
	}
	removed, err := s.clearDeadLocks(j)
	if err != nil {
		return rep, err
	}
	s.sweepTemps()
	what := fmt.Sprintf("borg pid %d was killed during %q", j.PID, subjectOf(j.Message))
	var done []string
	if len(removed) > 0 {
		done = append(done, "removed its "+strings.Join(removed, ", "))
	}
	if j.Merge {
		if undone, err := s.undoMerge(j.From, j.Undo); err != nil {
			return rep, fmt.Errorf("undo the merge of %q: %w", subjectOf(j.Message), err)
		} else if undone != "" {
			done = append(done, undone)
		}
	}
	if len(j.Paths) > 0 {
		msg := j.Message + fmt.Sprintf("\n\nBorg-Recovered: finished after pid %d was killed\n", j.PID)
		if _, err := s.commit(msg, j.Paths); err != nil {
			return rep, fmt.Errorf("finish %q: %w", subjectOf(j.Message), err)
		}
		done = append(done, "committed and staged "+strings.Join(j.Paths, ", ")+" as they are")
	}
	if err := os.Remove(jp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, err
	}
	if len(done) == 0 {
		done = append(done, "nothing was left to finish")
	}
	line := what + "; " + strings.Join(done, "; ")
	rep.Lines = append(rep.Lines, line)
	s.warnf("repaired: %s", line)
	return rep, nil
}

// clearDeadLocks removes the git locks the dead writer of journal j left
// (index.lock, its ref's lock, and after a merge every lock its git took)
// and returns them, relative to the git directory.
func (s *Store) clearDeadLocks(j journal) ([]string, error) {
	exclusive := lockSupported
	locks := []string{filepath.Join(s.git.gitDir, "index.lock")}
	if strings.HasPrefix(j.Ref, "refs/") && checkRefName(j.Ref) == nil {
		locks = append(locks, filepath.Join(s.git.gitDir, filepath.FromSlash(j.Ref))+".lock")
	}
	var removed []string
	// A writer that ran git's merge (sync) left git's own locks, which
	// carry no pid: its git died with it (dieWithParent), so they are its.
	gitsDied := j.Merge && childrenDieWithParent && j.PID > 0 && !pidAlive(j.PID)
	if gitsDied {
		// A merge takes many: ORIG_HEAD, MERGE_HEAD, the remote-tracking
		// refs a fetch moved, packed-refs.
		top, _ := filepath.Glob(filepath.Join(s.git.gitDir, "*.lock"))
		locks = append(locks, top...)
		_ = filepath.WalkDir(filepath.Join(s.git.gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				locks = append(locks, p)
			}
			return nil
		})
		slices.Sort(locks)
		locks = slices.Compact(locks)
	}
	for _, p := range locks {
		stale, _, err := inspectLock(p, exclusive, time.Now())
		if errors.Is(err, os.ErrNotExist) || (err == nil && !stale && !gitsDied) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		removed = append(removed, s.relGit(p))
	}
	return removed, nil
}

// sweepTemps removes the temp files dead writers left in the git directory
// and .borg/tmp; the caller holds the write lock.
func (s *Store) sweepTemps() {
	for _, pat := range []string{
		filepath.Join(s.git.gitDir, tmpPrefix+"*"),
		filepath.Join(s.git.gitDir, ".*.tmp-*"),
	} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
}

func (s *Store) writeJournal(j journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return writeAtomic(s, filepath.Join(s.dir, filepath.FromSlash(journalFile)), append(data, '\n'))
}

func (s *Store) removeJournal() error {
	err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(journalFile)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func subjectOf(msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	return line
}

// warnf reports one repair line through WithWarn.
func (s *Store) warnf(format string, args ...any) {
	if s.warn != nil {
		s.warn(fmt.Sprintf(format, args...))
	}
}

// WithWarn sets where the store reports what it repaired by itself (a
// stale lock removed, an interrupted commit finished): one line each. The
// default reports nothing.
func WithWarn(warn func(string)) Option {
	return func(s *Store) { s.warn = warn }
}

// undoMerge undoes a merge a dead writer left in the worktree: a merge
// git had stopped in (MERGE_HEAD: conflicted or uncommitted) is aborted, and
// of the paths the merge brought in from `from` (a fast-forward killed while
// it checked files out), the index entry goes back to HEAD's and the file
// too when it holds what `from` has (the merge wrote it). A file that holds
// anything else (a hand edit, new log lines) is never touched. No lesson
// file is left with conflict markers or ahead of the index, and the next
// sync merges afresh. It says what it did ("" for nothing).
func (s *Store) undoMerge(from string, paths []string) (string, error) {
	ctx := context.Background()
	var done []string
	if _, err := os.Stat(filepath.Join(s.git.gitDir, "MERGE_HEAD")); err == nil {
		if _, err := s.runGit(ctx, nil, "merge", "--abort"); err != nil {
			var ge *GitError
			if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "MERGE_HEAD missing") {
				return "", err
			}
		} else {
			done = append(done, "undid its unfinished merge")
		}
	}
	n := 0
	for _, p := range paths {
		if checkRepoPath(p) != nil || p == s.LogPath() {
			continue
		}
		// The index never stays ahead of HEAD.
		if _, err := s.runGit(ctx, nil, "reset", "-q", "--", p); err != nil {
			return "", err
		}
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		data, err := os.ReadFile(full)
		if err != nil {
			continue // gone, or never checked out
		}
		if !s.mergeWrote(ctx, from, p, data) {
			continue // not what the merge wrote
		}
		if _, err := s.runGit(ctx, nil, "cat-file", "-e", "HEAD:"+p); err == nil {
			if _, err := s.runGit(ctx, nil, "checkout", "-q", "HEAD", "--", p); err != nil {
				return "", err
			}
		} else if err := os.Remove(full); err != nil {
			return "", err
		}
		n++
	}
	if n > 0 {
		done = append(done, fmt.Sprintf("put back %d file(s) its merge was bringing in", n))
	}
	if len(done) == 0 {
		return "", nil
	}
	return strings.Join(done, "; ") + " (the next sync merges again)", nil
}

// mergeWrote reports whether data, the file at p, is what a merge of from
// wrote there, or was writing when it was killed: from's version, or the
// start of it (git checks a file out by creating it, then writing it, so a
// kill between leaves it empty or short).
func (s *Store) mergeWrote(ctx context.Context, from, p string, data []byte) bool {
	want, err := s.runGit(ctx, nil, "rev-parse", "-q", "--verify", from+":"+p)
	if err != nil {
		return false
	}
	id := strings.TrimSpace(string(want))
	if h, _ := s.git.blobHash(data); h.String() == id {
		return true
	}
	blob, err := s.runGit(ctx, nil, "cat-file", "blob", id)
	return err == nil && len(data) < len(blob) && bytes.HasPrefix(blob, data)
}

// fetchMarker is written by a sync before it fetches (the fetch runs
// without the write lock: it moves only remote-tracking refs) and removed
// after; its pid names the fetching process.
const fetchMarker = localLogDir + "/fetch.pid"

// markFetch records that this process is about to fetch; the returned
// function removes the mark.
func (s *Store) markFetch() func() {
	p := filepath.Join(s.dir, filepath.FromSlash(fetchMarker))
	if err := writeAtomic(s, p, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(p) }
}

// recoverFetch removes the remote-tracking ref locks a sync killed while
// fetching left (its git died with it: dieWithParent), and says so ("" when
// there was nothing to do). Only where git children die with borg: else
// their locks are left to the age rule.
func (s *Store) recoverFetch() string {
	p := filepath.Join(s.dir, filepath.FromSlash(fetchMarker))
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if !childrenDieWithParent || pid <= 0 || pidAlive(pid) {
		return ""
	}
	var removed []string
	_ = filepath.WalkDir(filepath.Join(s.git.gitDir, "refs", "remotes"), func(q string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(q, ".lock") && os.Remove(q) == nil {
			removed = append(removed, s.relGit(q))
		}
		return nil
	})
	for _, name := range []string{"FETCH_HEAD.lock", "packed-refs.lock", "shallow.lock"} {
		if q := filepath.Join(s.git.gitDir, name); os.Remove(q) == nil {
			removed = append(removed, s.relGit(q))
		}
	}
	_ = os.Remove(p)
	if len(removed) == 0 {
		return ""
	}
	return fmt.Sprintf("borg pid %d was killed while it fetched; removed its %s", pid, strings.Join(removed, ", "))
}
