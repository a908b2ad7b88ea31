package main

// doctor_repair.go is doctor's check of what a killed writer can leave
// behind, and --fix's repair of it: git locks (a stale one is named with its
// fix; git's locks are git's, and borg removes none), an
// interrupted write (finished as the next writer would finish it), a git
// index that disagrees with HEAD under lessons/, archive/ and log/ (reset to
// HEAD for those paths, so a plain git commit in the store cannot delete a
// committed lesson), lesson files no commit holds (committed, when they
// are valid lessons), and committed lesson files gone from disk (restored
// from git's index). The next borg learn finishes an interrupted write by
// itself; the index scan reads every entry, so only doctor does it.

import (
	"context"
	"fmt"
	"io"

	"github.com/borg-memory/borg/memfs"
)

// repairReport is doctor's "repair" section.
type repairReport struct {
	Locks       []memfs.LockState     `json:"locks"`
	Interrupted string                `json:"interrupted,omitempty"`
	Index       []memfs.IndexMismatch `json:"index_mismatches"`
	Uncommitted []string              `json:"uncommitted"`
	// Invalid are the paths among Uncommitted and Edited that hold no
	// valid lesson, or one the screen refuses: a fix commits none of them.
	Invalid []string `json:"uncommitted_invalid,omitempty"`
	// held says, for each path of Invalid, what to do to have it committed.
	held map[string]string
	// headOff is set while the store's HEAD is off its branch: --fix
	// repairs nothing until it is back, and the report says so.
	headOff bool
	// Edited are lesson files changed on disk since their commit;
	// EditedUnchecked says why they were not looked for (git would not
	// read the store: another user's).
	Edited          []string `json:"edited"`
	EditedUnchecked string   `json:"edited_unchecked,omitempty"`
	// Deleted are lesson files git's index holds that are gone from disk
	// and not committed: no search reads them, and a fix restores them
	// (a lesson is retired by a veto or a sleep, never by a lost file).
	Deleted  []string `json:"deleted"`
	Repaired []string `json:"repaired"`
	// OK: nothing left to repair.
	OK bool `json:"ok"`
}

// checkRepairs runs the checks and, with fix, the repairs; held are the
// lesson paths doctor found invalid or refused, each with what to do
// about it (never committed by a fix).
func checkRepairs(s *memfs.Store, fix bool, held map[string]string) (repairReport, error) {
	rep := repairReport{Locks: []memfs.LockState{}, Index: []memfs.IndexMismatch{}, Uncommitted: []string{}, Edited: []string{}, Deleted: []string{}, Repaired: []string{}, held: held}
	invalid := func(p string) bool { _, ok := held[p]; return ok }
	lc, err := s.CheckLocks(fix)
	if err != nil {
		return rep, err
	}
	rep.Repaired = append(rep.Repaired, lc.Repaired...)
	rep.Interrupted = lc.Interrupted
	rep.Locks = append(rep.Locks, lc.Locks...)
	if fix {
		rep.Interrupted = ""
	}
	mis, err := s.IndexMismatches()
	if err != nil {
		return rep, err
	}
	if fix && len(mis) > 0 {
		paths := make([]string, len(mis))
		for i, m := range mis {
			paths[i] = m.Path
		}
		if err := s.ResetIndex(paths); err != nil {
			return rep, err
		}
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("reset the git index to HEAD for %d path(s) under lessons/, archive/ and log/", len(mis)))
		if mis, err = s.IndexMismatches(); err != nil {
			return rep, err
		}
	}
	rep.Index = append(rep.Index, mis...)
	// Read after the index's reset: a file git rm took out of the index
	// and off the disk is, once reset, a deleted file to restore.
	deleted, err := s.Deleted(context.Background())
	if err != nil && rep.EditedUnchecked == "" {
		rep.EditedUnchecked = err.Error()
	}
	if fix && len(deleted) > 0 {
		if err := s.RestoreDeleted(deleted); err != nil {
			return rep, err
		}
		for _, p := range deleted {
			rep.Repaired = append(rep.Repaired, "restored "+p+" as its commit holds it")
		}
		if deleted, err = s.Deleted(context.Background()); err != nil {
			return rep, err
		}
	}
	rep.Deleted = append(rep.Deleted, deleted...)
	unc, err := s.Uncommitted()
	if err != nil {
		return rep, err
	}
	var commit []string
	for _, p := range unc {
		if fix && !invalid(p) {
			commit = append(commit, p)
			continue
		}
		rep.Uncommitted = append(rep.Uncommitted, p)
		if invalid(p) {
			rep.Invalid = append(rep.Invalid, p)
		}
	}
	edited, err := s.Edited(context.Background())
	if err != nil {
		rep.EditedUnchecked = err.Error()
	}
	for _, p := range edited {
		if fix && !invalid(p) {
			commit = append(commit, p)
			continue
		}
		rep.Edited = append(rep.Edited, p)
		if invalid(p) {
			rep.Invalid = append(rep.Invalid, p)
		}
	}
	if len(commit) > 0 {
		if _, err := s.Commit(fmt.Sprintf("borg doctor --fix: commit %d uncommitted lesson file(s)", len(commit)), commit...); err != nil {
			return rep, err
		}
		for _, p := range commit {
			rep.Repaired = append(rep.Repaired, "committed "+p)
		}
	}
	rep.OK = len(rep.Index) == 0 && len(rep.Uncommitted) == 0 && len(rep.Edited) == 0 && len(rep.Deleted) == 0 && rep.Interrupted == ""
	for _, l := range rep.Locks {
		if l.Stale {
			rep.OK = false
		}
	}
	return rep, nil
}

// printRepairs writes the section as text.
func printRepairs(w io.Writer, rep repairReport) {
	for _, r := range rep.Repaired {
		printLine(w, "repaired: %s", r)
	}
	if rep.Interrupted != "" {
		printLine(w, "interrupted: %s (the next borg learn, or borg doctor --fix, finishes it)", rep.Interrupted)
	}
	for _, l := range rep.Locks {
		state := "busy"
		if l.Stale {
			state = "stale"
		}
		printLine(w, "lock: %s: %s: %s", l.Path, state, l.Why)
	}
	for _, m := range rep.Index {
		what := "differs from HEAD"
		switch {
		case m.Index == "":
			what = "in HEAD but not in the git index (a git commit would delete it)"
		case m.Head == "":
			what = "in the git index but not in HEAD"
		}
		fix := "borg doctor --fix resets it to HEAD"
		if rep.headOff {
			fix = "once HEAD is back on its branch, " + fix
		}
		printLine(w, "git index: %s: %s (%s)", m.Path, what, fix)
	}
	fixCommits := func(p string) string {
		if why, ok := rep.held[p]; ok {
			return why
		}
		if rep.headOff {
			return "once HEAD is back on its branch, borg doctor --fix commits it"
		}
		return "borg doctor --fix commits it"
	}
	for _, p := range rep.Uncommitted {
		printLine(w, "uncommitted: %s (no commit holds it: %s)", p, fixCommits(p))
	}
	if rep.EditedUnchecked != "" {
		printLine(w, "edited: not checked: %s", rep.EditedUnchecked)
	}
	for _, p := range rep.Edited {
		printLine(w, "edited: %s (changed since its commit, which stops a sync's or a sleep's merge: %s)", p, fixCommits(p))
	}
	for _, p := range rep.Deleted {
		printLine(w, "deleted: %s (gone from disk but not from its commit, so no search reads it and a sync still shares it: borg doctor --fix restores it; to retire the lesson, veto it with borg no, or git rm it and commit)", p)
	}
}
