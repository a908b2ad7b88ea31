package memfs

// repair.go is what doctor checks and doctor --fix repairs beyond what the
// next writer repairs by itself (writes.go): git locks left by any process,
// a dead writer's journal, and lesson files that no commit holds.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/borg-memory/borg/memfs/gitcli"
)

// LockState is one git lock file found in the store's git directory.
// borg never removes one (gitlock.go): Why says how old it is and, for a
// stale one, the fix.
type LockState struct {
	Path  string `json:"path"` // slash path from the store's root
	Stale bool   `json:"stale"`
	Why   string `json:"why"`
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

// CheckLocks lists the git lock files (*.lock) in the store's git
// directories, each stale when it is older than git ever holds a lock
// (staleLockAge) with the fix in Why, and a dead writer's journal. With fix
// it finishes the interrupted write as the next writer would (writes.go),
// unless a git lock is there (the write would meet it); it removes no lock.
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
	unlock, lockErr := s.takeWriteLock(lp, wait)
	if lockErr != nil && fix {
		return out, fmt.Errorf("%w: %v", ErrBusy, lockErr)
	}
	if lockErr == nil {
		defer unlock()
	}
	locks, err := s.gitLocks()
	if err != nil {
		return out, err
	}
	out.Locks = locks
	if lockErr != nil {
		return out, nil // a live writer: its journal is its own
	}
	jp := filepath.Join(s.dir, filepath.FromSlash(journalFile))
	data, jerr := os.ReadFile(jp)
	if jerr == nil {
		out.Interrupted = "a borg write was interrupted; its journal " + journalFile + " says " + strings.TrimSpace(string(data))
	}
	if !fix {
		return out, nil
	}
	if jerr == nil && len(locks) > 0 {
		out.Interrupted += "; it is finished once the git lock(s) below are gone"
		return out, nil
	}
	rep, err := s.recoverLocked()
	if err != nil {
		return out, fmt.Errorf("recover an interrupted write: %w", err)
	}
	out.Repaired = append(out.Repaired, rep.Lines...)
	return out, nil
}

// gitLocks lists the git lock files of the repository (its worktrees'
// too), sorted, with their age and, past staleLockAge, their fix.
func (s *Store) gitLocks() ([]LockState, error) {
	var paths []string
	root := s.git.commonDir
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && p != root {
			rel, _ := filepath.Rel(root, p)
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
		return nil, fmt.Errorf("list git locks: %w", err)
	}
	if s.git.gitDir != s.git.commonDir && !strings.HasPrefix(s.git.gitDir, root+string(filepath.Separator)) {
		m, _ := filepath.Glob(filepath.Join(s.git.gitDir, "*.lock"))
		paths = append(paths, m...)
	}
	sort.Strings(paths)
	var out []LockState
	now := time.Now()
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		age := now.Sub(fi.ModTime())
		st := LockState{Path: s.relGit(p), Why: fmt.Sprintf("held by a git process for %s", age.Round(time.Millisecond))}
		if age > staleLockAge {
			st.Stale = true
			st.Why = fmt.Sprintf("%s old, longer than git holds a lock; %s", age.Round(time.Second), gitcli.LockFix(p))
		}
		out = append(out, st)
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

// Edited lists the lesson files under lessons/ and archive/ that git holds
// and that were changed on disk since (by hand: a sync or a sleep's merge
// stops on them), as sorted slash paths. git compares, without writing its
// index.
func (s *Store) Edited(ctx context.Context) ([]string, error) {
	paths, err := s.worktreeChanges(ctx, "MT")
	if err != nil {
		return nil, fmt.Errorf("list edited lesson files: %w", err)
	}
	return paths, nil
}

// Deleted lists the lesson files under lessons/ and archive/ that git's
// index holds and that are gone from disk (deleted by hand, or by a tool,
// and not committed), as sorted slash paths: no search reads them, yet
// their commit still shares them. git compares, without writing its index.
func (s *Store) Deleted(ctx context.Context) ([]string, error) {
	paths, err := s.worktreeChanges(ctx, "D")
	if err != nil {
		return nil, fmt.Errorf("list deleted lesson files: %w", err)
	}
	return paths, nil
}

// worktreeChanges lists the paths under lessons/ and archive/ whose work
// tree side against git's index (the Y of git status) is one of codes,
// sorted.
func (s *Store) worktreeChanges(ctx context.Context, codes string) ([]string, error) {
	if !s.git.hasCommits() {
		return nil, nil
	}
	// git status, unlike git diff, leaves the index unwritten without
	// optional locks however stale its stat data.
	g := s.GitCLI()
	g.Env = append(g.Env, "GIT_OPTIONAL_LOCKS=0")
	out, err := g.Run(ctx, nil, "status", "--porcelain", "-z", "-uno", "--no-renames", "--", LessonsDir, ArchiveDir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range strings.Split(string(out), "\x00") {
		// "XY path": Y is the work tree's side against the index.
		if len(e) > 3 && strings.IndexByte(codes, e[1]) >= 0 {
			paths = append(paths, e[3:])
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// RestoreDeleted writes each of paths (lesson files Deleted lists) back as
// git's index holds it, under the write lock: git writes the files, and
// leaves any that exists again as it is. Nothing else changes: the index
// is not written, and nothing is committed.
func (s *Store) RestoreDeleted(paths []string) error {
	unlock, err := s.lockWrites()
	if err != nil {
		return fmt.Errorf("restore deleted lesson files: %w", err)
	}
	defer unlock()
	if len(paths) == 0 {
		return nil
	}
	var in strings.Builder
	for _, p := range paths {
		if err := checkRepoPath(p); err != nil {
			return fmt.Errorf("restore deleted lesson files: %w", err)
		}
		if !strings.HasPrefix(p, LessonsDir+"/") && !strings.HasPrefix(p, ArchiveDir+"/") {
			return fmt.Errorf("restore deleted lesson files: %s is not under %s/ or %s/", p, LessonsDir, ArchiveDir)
		}
		in.WriteString(p)
		in.WriteByte(0)
	}
	// Without -f, a file that exists again is kept as it is (-q: quietly).
	if _, err := s.runGitWaiting(context.Background(), []byte(in.String()), "checkout-index", "-q", "-z", "--stdin"); err != nil {
		return fmt.Errorf("restore deleted lesson files: %w", err)
	}
	return nil
}
