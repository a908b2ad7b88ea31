package memfs

// gitlock.go is git's lock-file protocol as borg speaks it, made safe
// against a borg killed at any instruction.
//
// Every git lock borg takes (index.lock, refs/heads/<b>.lock) is created
// with a marker as its content ("borg-lock pid=… start=…"), atomically: the
// marker is written to a temp file that is then hard-linked to the lock's
// name, which fails when the lock exists. So a lock file is either borg's,
// and says so from its first instant, or someone else's (the git CLI's
// locks are empty or hold an index or a hash). The new content never goes
// into the lock file: it is written to a temp file, synced and renamed over
// the target while the lock is held, and the lock is removed after. A
// marker therefore never becomes an index or a ref, and a borg lock never
// loses its marker.
//
// Borg creates these locks only while it holds the store's write lock
// (writes.go), an flock the OS drops when its holder dies. Whoever holds
// the write lock and finds a borg lock therefore knows its writer is dead,
// and removes it. A lock without a marker is removed only when it is older
// than staleLockAge: the git CLI may be holding it, and git never takes a
// lock for that long in a store.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// staleLockAge is how old a lock without borg's marker (the git CLI's, or a
// borg older than the marker's) must be before borg removes it.
const staleLockAge = 10 * time.Minute

// lockMarkerPrefix starts the content of every git lock borg creates.
const lockMarkerPrefix = "borg-lock "

// tmpPrefix names the temp files borg writes in the git directory (lock
// markers, the new index or ref before its rename).
const tmpPrefix = "borg-tmp-"

// lockOwner is what a lock file's content says about its creator.
type lockOwner struct {
	borg  bool // the content is borg's marker
	pid   int
	start time.Time
}

func lockMarker(pid int, start time.Time) []byte {
	return fmt.Appendf(nil, "%spid=%d start=%d\n", lockMarkerPrefix, pid, start.UnixMilli())
}

// parseLockMarker reads a lock file's content; anything that is not borg's
// marker is an owner with borg false.
func parseLockMarker(data []byte) lockOwner {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	rest, ok := strings.CutPrefix(string(line), lockMarkerPrefix)
	if !ok {
		return lockOwner{}
	}
	o := lockOwner{borg: true}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "pid":
			o.pid = int(n)
		case "start":
			o.start = time.UnixMilli(n)
		}
	}
	return o
}

// staleLock decides whether a lock file can be removed. exclusive says the
// caller holds the store's write lock on a system where locks exclude (so
// no live borg can hold a git lock); alive says whether a pid runs.
//   - borg's marker and exclusive: its writer is dead (it held the write
//     lock while it held this one).
//   - borg's marker and its pid is not running: dead.
//   - borg's marker of a live pid, not exclusive: a live writer.
//   - no marker: stale only when older than staleLockAge.
func staleLock(o lockOwner, age time.Duration, exclusive bool, alive func(int) bool) (bool, string) {
	switch {
	case o.borg && exclusive:
		return true, fmt.Sprintf("left by borg pid %d, which died while writing", o.pid)
	case o.borg && o.pid > 0 && !alive(o.pid):
		return true, fmt.Sprintf("left by borg pid %d, which is not running", o.pid)
	case o.borg:
		return false, fmt.Sprintf("held by borg pid %d, which is running", o.pid)
	case age > staleLockAge:
		return true, fmt.Sprintf("%s old, and no process has touched it since (limit %s)", age.Round(time.Second), staleLockAge)
	default:
		return false, fmt.Sprintf("held by another process for %s (the git CLI?)", age.Round(time.Millisecond))
	}
}

// inspectLock reads the lock file at p and decides whether it is stale.
// It returns os.ErrNotExist when there is no lock.
func inspectLock(p string, exclusive bool, now time.Time) (stale bool, why string, err error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return false, "", err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return false, "", err
	}
	stale, why = staleLock(parseLockMarker(data), now.Sub(fi.ModTime()), exclusive, pidAlive)
	return stale, why, nil
}

// lockFile is a git lock held by this process: path.lock, created with
// borg's marker; commit renames new content over the target and removes it,
// abort removes it.
type lockFile struct {
	path   string
	gitDir string
	done   bool
}

// createLock creates the git lock p (…/index.lock, …/<ref>.lock) with
// borg's marker. A lock that is already there is removed when staleLock says
// it is stale (warn says so in one line); otherwise createLock waits up to
// lockWait for it to go. The caller holds the store's write lock.
func (s *Store) createLock(p string) (*lockFile, error) {
	exclusive := lockSupported
	deadline := time.Now().Add(lockWait)
	delay := time.Millisecond
	for {
		err := linkNew(s.git.gitDir, p, lockMarker(os.Getpid(), time.Now()))
		if err == nil {
			return &lockFile{path: p, gitDir: s.git.gitDir}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		stale, why, err := inspectLock(p, exclusive, time.Now())
		if errors.Is(err, os.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		if stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("remove stale lock %s: %w", p, err)
			}
			s.warnf("removed stale lock %s: %s", s.relGit(p), why)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is %s; if no such process is running, remove it (borg removes it by itself once it is %s old)", p, why, staleLockAge)
		}
		time.Sleep(delay)
		delay = min(delay*2, 50*time.Millisecond)
	}
}

// linkNew creates the file p holding data, atomically and only if p does
// not exist (os.ErrExist then): data goes to a temp file in dir, which is
// hard-linked to p and then removed.
func linkNew(dir, p string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	if cerr != nil {
		return cerr
	}
	return os.Link(tmp, p)
}

// commit writes data to a temp file, syncs it (unless opts say NoSync),
// renames it over target and removes the lock.
func (l *lockFile) commit(target string, data []byte, opts ...WriteOption) error {
	if err := WriteFileAtomic(target, data, 0o644, append([]WriteOption{TempDir(l.gitDir)}, opts...)...); err != nil {
		return err
	}
	l.done = true
	return os.Remove(l.path)
}

// abort removes the lock unless it was committed.
func (l *lockFile) abort() {
	if l.done {
		return
	}
	_ = os.Remove(l.path)
	l.done = true
}

// relGit is p relative to the store's root when it is inside it.
func (s *Store) relGit(p string) string {
	if r, err := filepath.Rel(s.dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}
