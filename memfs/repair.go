package memfs

// repair.go is what doctor checks and doctor --fix repairs beyond what the
// next writer repairs by itself (writes.go): git locks left by any process,
// a dead writer's journal, and lesson files that no commit holds.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// LockState is one git lock file found in the store's git directory.
type LockState struct {
	Path    string `json:"path"` // slash path from the store's root
	Stale   bool   `json:"stale"`
	Why     string `json:"why"`
	Removed bool   `json:"removed,omitempty"`
}

// LockCheck is what CheckLocks found and did.
type LockCheck struct {
	Locks []LockState `json:"locks"`
	// Interrupted describes a journal left by a writer that died ("" when
	// none, or when a live writer holds the write lock).
	Interrupted string `json:"interrupted,omitempty"`
	// Repaired says what a fix did, one line per repair.
	Repaired []string `json:"repaired,omitempty"`
}

// CheckLocks lists the git lock files (*.lock) in the store's git directory
// and whether each is stale (gitlock.go's rule; borg's own are judged while
// holding the write lock, so a borg lock found is a dead writer's), and a
// dead writer's journal. With fix it finishes the interrupted write as the
// next writer would (writes.go) and removes every stale lock.
func (s *Store) CheckLocks(fix bool) (LockCheck, error) {
	var out LockCheck
	lp := filepath.Join(s.dir, filepath.FromSlash(writeLockFile))
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return out, err
	}
	wait := time.Duration(0)
	if fix {
		wait = writeWait
	}
	exclusive := false
	if unlock, err := LockPath(lp, wait); err == nil {
		defer unlock()
		exclusive = lockSupported
		jp := filepath.Join(s.dir, filepath.FromSlash(journalFile))
		if data, err := os.ReadFile(jp); err == nil {
			out.Interrupted = "a borg write was interrupted; its journal " + journalFile + " says " + strings.TrimSpace(string(data))
		}
		if fix {
			rep, err := s.recoverLocked()
			if err != nil {
				return out, fmt.Errorf("recover an interrupted write: %w", err)
			}
			out.Repaired = append(out.Repaired, rep.Lines...)
		}
	} else if fix {
		return out, fmt.Errorf("%w: %v", ErrBusy, err)
	}
	var paths []string
	err := filepath.WalkDir(s.git.gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && p != s.git.gitDir {
			rel, _ := filepath.Rel(s.git.gitDir, p)
			if first, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); first == "objects" || first == "logs" {
				return fs.SkipDir // many files, and git keeps no locks there
			}
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("list git locks: %w", err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		stale, why, err := inspectLock(p, exclusive, time.Now())
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		st := LockState{Path: s.relGit(p), Stale: stale, Why: why}
		if fix && stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return out, fmt.Errorf("remove stale lock: %w", err)
			}
			st.Removed = true
			out.Repaired = append(out.Repaired, fmt.Sprintf("removed stale lock %s: %s", st.Path, why))
		}
		out.Locks = append(out.Locks, st)
	}
	return out, nil
}

// Uncommitted lists the lesson files under lessons/ and archive/ that HEAD
// does not hold (written and never committed: by hand, or by a borg killed
// before its commit and not yet recovered), as sorted slash paths.
func (s *Store) Uncommitted() ([]string, error) {
	var out []string
	for _, d := range []string{LessonsDir, ArchiveDir} {
		var inHead map[string]bool
		if s.git.hasCommits() {
			files, err := s.listAt("HEAD", d)
			if err != nil {
				return nil, err
			}
			inHead = make(map[string]bool, len(files))
			for _, f := range files {
				inHead[f] = true
			}
		}
		found, stray, err := s.scanLessonDir(d)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if !inHead[f.rel] {
				out = append(out, f.rel)
			}
		}
		for _, f := range stray {
			if f.regular && !inHead[f.rel] {
				out = append(out, f.rel)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
