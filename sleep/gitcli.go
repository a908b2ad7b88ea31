package sleep

// gitcli.go is the one file of sleep that runs the git CLI, through the
// store's runner (memfs.Store.GitCLI: isolated from a calling hook's
// GIT_DIR, never prompting, with borg's commit identity), for the two jobs
// memfs has no method for: finding the previous sleep's trailer in history,
// and merging the sleep branch into the store's branch (a fast-forward or a
// 3-way merge that also updates the worktree and the git index, which go-git
// cannot do safely). Everything it writes goes through git's own locks.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// lastSleepAt finds the latest sleep date recorded in the history of rev:
// the greatest Borg-Sleep trailer among the most recent sleep commits. It
// returns the zero time when no sleep has been merged.
func lastSleepAt(ctx context.Context, st *memfs.Store, rev string) (time.Time, error) {
	last, _, err := lastSleepBefore(ctx, st, rev, time.Time{})
	return last, err
}

// lastSleepBefore is lastSleepAt among the sleeps dated no later than
// bound (any date when bound is zero); later is the latest date past it
// (zero when none): a sleep a machine whose clock ran ahead committed.
func lastSleepBefore(ctx context.Context, st *memfs.Store, rev string, bound time.Time) (last, later time.Time, err error) {
	out, err := st.GitCLI().Run(ctx, nil, "log", "-n", "64", "--format=%(trailers:key="+trailerDate+",valueonly,separator=%x20)",
		"--grep=^"+trailerDate+": ", rev)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("find last sleep: %w", err)
	}
	for _, f := range strings.Fields(string(out)) {
		d, err := time.Parse(time.DateOnly, f)
		switch {
		case err != nil:
		case !bound.IsZero() && d.After(bound):
			if d.After(later) {
				later = d
			}
		case d.After(last):
			last = d
		}
	}
	return last, later, nil
}

// LastSleep is the date of the latest sleep merged into rev's history, and
// the latest one dated after now (a day's slack aside) that a sleep does
// not believe: zero when none.
func LastSleep(ctx context.Context, st *memfs.Store, rev string, now time.Time) (last, future time.Time, err error) {
	return lastSleepBefore(ctx, st, rev, dayOf(now).Add(domain.FutureSlack))
}

// PendingBranch is a sleep branch the store's branch has not merged: a
// sleep written and waiting for its review.
type PendingBranch struct {
	Name string // e.g. borg/sleep/2026-12-08
	// Date is the night the branch's name says it slept (zero for a
	// branch named by --branch another way).
	Date time.Time
}

// PendingBranches lists the sleep branches (BranchPrefix) that rev does not
// hold, by name.
func PendingBranches(ctx context.Context, st *memfs.Store, rev string) ([]PendingBranch, error) {
	out, err := st.GitCLI().Run(ctx, nil, "for-each-ref", "--format=%(refname:short)", "--no-merged", rev, "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, fmt.Errorf("list sleep branches: %w", err)
	}
	var pending []PendingBranch
	for _, name := range strings.Fields(string(out)) {
		b := PendingBranch{Name: name}
		if d, err := time.Parse(time.DateOnly, strings.TrimPrefix(name, BranchPrefix)); err == nil {
			b.Date = d
		}
		pending = append(pending, b)
	}
	return pending, nil
}

// mergeBranch merges branch into the store's checked-out branch with the git
// CLI: a fast-forward when the store's branch has not moved since the sleep
// planned from it, otherwise a 3-way merge commit stamped when. The CLI
// updates the worktree and the git index and refuses to overwrite local
// changes. A conflicted merge is aborted and reported with ErrMergeConflict.
func mergeBranch(ctx context.Context, st *memfs.Store, branch string, when time.Time) (fastForward bool, err error) {
	g := st.GitCLI()
	if _, err := g.Run(ctx, nil, "merge", "--ff-only", "-q", branch); err == nil {
		return true, nil
	}
	stamp := strconv.FormatInt(when.Unix(), 10) + " +0000"
	g.Env = append(g.Env, "GIT_AUTHOR_DATE="+stamp, "GIT_COMMITTER_DATE="+stamp)
	out, err := g.Run(ctx, nil, "merge", "--no-ff", "--no-edit", "-q", "-m", "Merge "+branch, branch)
	if err != nil {
		_, _ = g.Run(ctx, nil, "merge", "--abort")
		var ge *memfs.GitError
		if strings.Contains(string(out), "CONFLICT") || (errors.As(err, &ge) && strings.Contains(ge.Stderr, "CONFLICT")) {
			return false, fmt.Errorf("merge %s: %w; open a pull request instead", branch, ErrMergeConflict)
		}
		return false, fmt.Errorf("merge %s: %w", branch, err)
	}
	return false, nil
}
