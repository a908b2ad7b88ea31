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
//  4. stage the journaled paths with git update-index while writing the
//     objects and moving the ref with git update-ref (git takes its own
//     locks: gitlock.go); a ref that did not move unstages them;
//  5. remove the journal; release the write lock.
//
// A kill anywhere leaves either no journal (nothing was written) or a
// journal naming what to finish. Recovery rolls forward: it commits the
// journaled paths as they are on disk, which stages them, so the index
// matches HEAD again and a lesson written by a killed learn is committed
// rather than orphaned. Recovery is idempotent: killed itself, the next
// writer does it again. Readers and hooks never take the write lock and
// never pay for any of this.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/borg-memory/borg/memfs/fsutil"
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
func (s *Store) lockWrites() (func(), error) { return s.lockWritesWithin(writeWait) }

// lockWritesWithin is lockWrites waiting at most wait for another writer
// (0: trying once).
func (s *Store) lockWritesWithin(wait time.Duration) (func(), error) {
	if err := s.checkOwner(); err != nil {
		return nil, err
	}
	p := filepath.Join(s.dir, filepath.FromSlash(writeLockFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		if r := writeRefusal(s.dir, "take the store's write lock", err); r != nil {
			return nil, r
		}
		return nil, err
	}
	unlock, err := s.takeWriteLock(p, wait)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("%w (still after %s; it holds %s)", ErrBusy, wait, writeLockFile)
	}
	if r := writeRefusal(s.dir, "take the store's write lock", err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, err
	}
	s.sweepStaleTemps()
	if _, err := s.recoverLocked(); err != nil {
		unlock()
		if r := writeRefusal(s.dir, "recover an interrupted write", err); r != nil {
			return nil, r
		}
		return nil, fmt.Errorf("recover an interrupted write: %w", err)
	}
	return unlock, nil
}

// takeWriteLock takes the write lock file p, waiting up to wait, and
// records it as held (Store.held) until the returned function releases it.
func (s *Store) takeWriteLock(p string, wait time.Duration) (func(), error) {
	f, unlock, err := fsutil.LockPathFile(p, wait)
	if err != nil {
		return nil, err
	}
	s.held.Store(f)
	return func() {
		s.held.Store(nil)
		unlock()
	}, nil
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
// A commit made whose paths git could not stage returns its hash with a
// *StageError.
func (s *Store) Update(msg string, paths []string, prepare func() error) (string, error) {
	unlock, err := s.lockWrites()
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
	}
	defer unlock()
	return s.updateLocked(msg, paths, prepare)
}

// Pending is an Update begun before its caller knows what it writes: the
// store's write lock is held and git update-index is already reading the
// index (startEarlyStage), while the caller checks what it is about to
// write (a learn screens the lesson and looks for its claim, a few
// milliseconds that a big store's index read then hides). The caller must
// end it with Update or Abort; either ends it, and a second call is an
// error (Update) or nothing (Abort).
type Pending struct {
	s      *Store
	unlock func() // nil once ended
	early  *earlyStage
}

// errPendingEnded is Pending.Update's answer once the commit has ended.
var errPendingEnded = errors.New("commit already ended")

// Begin takes the write lock if no other writer holds it (it does not
// wait: ErrBusy, and the caller writes through Update, which waits, after
// its checks), and starts staging for a commit of up to n paths (see
// earlyStageMax; more, and the commit stages as it always did).
func (s *Store) Begin(n int) (*Pending, error) {
	unlock, err := s.lockWritesWithin(0)
	if err != nil {
		return nil, fmt.Errorf("begin a commit: %w", err)
	}
	return &Pending{s: s, unlock: unlock, early: s.startEarlyStage(n)}, nil
}

// Update is Store.Update under p's lock; it ends p.
func (p *Pending) Update(msg string, paths []string, prepare func() error) (string, error) {
	if p.unlock == nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, " "), errPendingEnded)
	}
	defer p.end()
	early := p.early
	p.early = nil
	if len(paths) > earlyStageMax {
		early.abort()
		early = nil
	}
	return p.s.updateStaged(msg, paths, prepare, early)
}

// Abort ends p with nothing written: git stages nothing and the lock is
// released. It does nothing to an ended p.
func (p *Pending) Abort() {
	p.early.abort()
	p.early = nil
	p.end()
}

// end releases p's lock, once.
func (p *Pending) end() {
	if p.unlock != nil {
		p.unlock()
		p.unlock = nil
	}
}

// updateLocked is Update for a caller that holds the write lock.
func (s *Store) updateLocked(msg string, paths []string, prepare func() error) (string, error) {
	return s.updateStaged(msg, paths, prepare, nil)
}

// updateStaged is updateLocked with a stage the caller started (nil:
// started here, after the journal).
func (s *Store) updateStaged(msg string, paths []string, prepare func() error, early *earlyStage) (string, error) {
	fail := func(err error) (string, error) {
		early.abort()
		return "", err
	}
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return fail(fmt.Errorf("commit: %w", err))
		}
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return fail(fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err))
	}
	j := journal{PID: os.Getpid(), StartMS: time.Now().UnixMilli(), Message: msg, Ref: branch.String(), Paths: paths}
	if err := s.writeJournal(j); err != nil {
		return fail(fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err))
	}
	if early == nil {
		early = s.startEarlyStage(len(paths))
	}
	if prepare != nil {
		if err := prepare(); err != nil {
			early.abort()
			_ = s.removeJournal()
			return "", err
		}
	}
	h, err := s.commitStaging(msg, paths, early)
	if err != nil {
		// The journal stays: the next writer finishes the commit (or,
		// made, stages it). h is the commit when it was made (a
		// StageError).
		return h, fmt.Errorf("commit %s: %w", strings.Join(paths, " "), err)
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
	s.sweepTemps()
	what := fmt.Sprintf("borg pid %d did not finish %q", j.PID, subjectOf(j.Message)) // killed, or failed (a lock git held)
	var done []string
	if j.Merge {
		if undone, err := s.undoMerge(j.From, j.Undo); err != nil {
			return rep, fmt.Errorf("undo the merge of %q: %w", subjectOf(j.Message), err)
		} else if undone != "" {
			done = append(done, undone)
		}
	}
	if len(j.Paths) > 0 {
		msg := j.Message + fmt.Sprintf("\n\nBorg-Recovered: finished after pid %d stopped\n", j.PID)
		before := s.headHash()
		h, err := s.commit(msg, j.Paths)
		if err != nil {
			return rep, fmt.Errorf("finish %q: %w", subjectOf(j.Message), err)
		}
		if h != "" && h == before {
			// The writer died before it wrote anything the last commit
			// lacks, or after its commit, before the index.
			done = append(done, "nothing left to commit: the last commit holds "+strings.Join(j.Paths, ", ")+" as they are, and the git index now does too")
		} else {
			done = append(done, "committed and staged "+strings.Join(j.Paths, ", ")+" as they are")
		}
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

// sweepTemps removes the temp files dead writers left in the git
// directory (linkNew's, and those of borgs that wrote the index and refs
// themselves) and in the object directory; the caller holds the write
// lock and has found a dead writer's journal.
func (s *Store) sweepTemps() {
	for _, pat := range []string{
		filepath.Join(s.git.commonDir, tmpPrefix+"*"),
		filepath.Join(s.git.commonDir, ".*.tmp-*"),
		filepath.Join(s.git.commonDir, "objects", ".*.tmp-*"),
	} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
}

// sweepStaleTemps removes the temp files of .borg/tmp (atomic writes:
// lessons, the journal, caches) and of borg's pack writer once they are
// staleTempAge old, at every write lock: a writer killed while it wrote
// its journal leaves no journal to recover from. Age, not the lock, says
// whose they are: a hook writes a cache there without the write lock, and
// none holds a temp file that long.
func (s *Store) sweepStaleTemps() {
	for _, pat := range []string{
		filepath.Join(s.dir, tmpDir, "*"),
		filepath.Join(s.git.commonDir, "objects", "pack", ".*.tmp-*"),
	} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTempAge {
				_ = os.Remove(p)
			}
		}
	}
}

// staleTempAge is the age from which a temp file in .borg/tmp or of borg's
// pack writer is a dead writer's.
const staleTempAge = time.Hour

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
		if checkRepoPath(p) != nil || s.IsOwnLog(p) {
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

// headHash is the commit the store's checked-out branch names, "" when it
// cannot be read.
func (s *Store) headHash() string {
	branch, err := s.git.headBranch()
	if err != nil {
		return ""
	}
	h, err := s.git.refHash(branch)
	if err != nil {
		return ""
	}
	return h.String()
}
