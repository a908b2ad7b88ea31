package sleep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// Errors returned by Run. Match them with errors.Is.
var (
	// ErrRaced: another sleep moved the branch while this one was writing
	// it. This sleep stopped cleanly; the other one's commits stand.
	ErrRaced = errors.New("another sleep is writing the branch")
	// ErrForeignBranch: the branch exists but does not hold (a prefix of)
	// this sleep's commits, e.g. the store's branch moved since it was made.
	ErrForeignBranch = errors.New("the branch holds another sleep")
	// ErrNoDate: neither Options.Date nor Options.Now was set.
	ErrNoDate = errors.New("no sleep date")
	// ErrMergeConflict: Apply's 3-way merge of the sleep branch conflicted
	// and was aborted (the store is as it was); the branch needs a pull
	// request.
	ErrMergeConflict = errors.New("the sleep branch does not merge cleanly")
	// ErrBusy: another sleep is running on the store; this one changed
	// nothing.
	ErrBusy = errors.New("another borg sleep is running on this store")
	// ErrBadBranch: Options.Branch is no name git accepts for a branch
	// (memfs.ValidBranchName); nothing was read or written.
	ErrBadBranch = errors.New("not a valid branch name")
)

// BranchPrefix starts every default sleep branch: borg/sleep/<date>.
const BranchPrefix = "borg/sleep/"

// verifySample is how many files per existing phase commit a resumed sleep
// checks against its plan before building on the commit.
const verifySample = 16

// Options configures Run.
type Options struct {
	// Date is the night to sleep for (its date, UTC); zero takes Now's.
	Date time.Time
	// Now is the wall clock, read only when Date is zero. Commit times never
	// read it: a phase commit is stamped Date 00:00:00 UTC plus its phase
	// number in seconds, so the same snapshot and date give the same commit
	// ids.
	Now time.Time
	// DryRun plans and prints, and changes nothing.
	DryRun bool
	// Apply also merges the branch into the store's checked-out branch (a
	// fast-forward when it has not moved, else a 3-way merge; a conflict is
	// aborted and reported as needing a pull request).
	Apply bool
	// Branch names the sleep branch; "" means borg/sleep/<date>.
	Branch string
	// Embedder computes the vectors; nil means DefaultEmbedder.
	Embedder index.Embedder
	// Plan holds the planner's knobs.
	Plan PlanOptions

	// failAfter, when positive, stops Run with an error right after it
	// commits that phase number: a kill between phases, for tests.
	failAfter int
	// beforeCommit, when set, runs before each phase commit: a concurrent
	// writer, for tests.
	beforeCommit func(phase int)
}

// PhaseCommit is one commit a sleep wrote (or found already written by an
// interrupted run of the same sleep, Resumed).
type PhaseCommit struct {
	Phase   Phase  `json:"phase"`
	Number  int    `json:"number"`
	Commit  string `json:"commit"`
	Files   int    `json:"files"`
	Subject string `json:"subject"`
	Resumed bool   `json:"resumed,omitempty"`
}

// Result is what Run did.
type Result struct {
	Branch  string        `json:"branch"`
	Base    string        `json:"base"`
	Tip     string        `json:"tip,omitempty"`
	Commits []PhaseCommit `json:"commits"`
	Plan    Plan          `json:"plan"`
	DryRun  bool          `json:"dry_run,omitempty"`
	// Merged says how Apply merged: "fast-forward", "merge", or "".
	Merged string `json:"merged,omitempty"`
}

// String renders the result as text: the plan, then the commits.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Plan.String())
	if r.DryRun {
		b.WriteString("\ndry run: nothing written\n")
		return b.String()
	}
	if len(r.Commits) == 0 {
		b.WriteString("\nnothing to commit\n")
		return b.String()
	}
	fmt.Fprintf(&b, "\nbranch %s:\n", r.Branch)
	for _, c := range r.Commits {
		state := ""
		if c.Resumed {
			state = " (already there)"
		}
		fmt.Fprintf(&b, "  %s %s%s\n", short(c.Commit), c.Subject, state)
	}
	if r.Merged != "" {
		fmt.Fprintf(&b, "merged into the store (%s)\n", r.Merged)
	}
	return b.String()
}

// Run sleeps once: it snapshots the store's checked-out branch, plans, and
// (unless DryRun) writes one commit per phase with changes on the sleep
// branch by compare-and-swap, never touching the worktree or the git index.
// A branch left by an interrupted run of the same sleep is verified and
// completed; a branch moved by a concurrent sleep stops this one with
// ErrRaced. With Apply the branch is then merged. Progress lines go to
// progress (may be nil).
func Run(ctx context.Context, st *memfs.Store, opts Options, progress io.Writer) (Result, error) {
	if progress == nil {
		progress = io.Discard
	}
	date := opts.Date
	if date.IsZero() {
		date = opts.Now
	}
	if date.IsZero() {
		return Result{}, fmt.Errorf("sleep: %w", ErrNoDate)
	}
	date = dayOf(date)
	day := date.Format(time.DateOnly)
	branch := opts.Branch
	if branch == "" {
		branch = BranchPrefix + day
	}
	branch = strings.TrimPrefix(branch, "refs/heads/")
	if !memfs.ValidBranchName(branch) {
		return Result{}, fmt.Errorf("sleep %s: --branch %q: %w", day, branch, ErrBadBranch)
	}
	ref := "refs/heads/" + branch
	res := Result{Branch: branch, DryRun: opts.DryRun, Commits: []PhaseCommit{}} // [] in JSON, never null

	head, err := st.GitCLI().HeadBranch(ctx)
	if err != nil {
		return res, fmt.Errorf("sleep %s: %w", day, err)
	}
	if head == ref {
		return res, fmt.Errorf("sleep %s: the store has %s checked out; check out its main branch", day, branch)
	}
	if !opts.DryRun {
		release, err := claimSleep(st)
		if err != nil {
			return res, fmt.Errorf("sleep %s: %w", day, err)
		}
		defer release()
	}
	fmt.Fprintf(progress, "sleep %s: reading the store at %s\n", day, strings.TrimPrefix(head, "refs/heads/"))
	snap, err := LoadSnapshot(ctx, st, head, date, opts.Embedder)
	if err != nil {
		return res, fmt.Errorf("sleep %s: %w", day, err)
	}
	res.Base = snap.Base
	// A sleep dated after today (a machine whose clock ran ahead, a --date
	// in the future) is not believed: it would stop every sleep until then.
	var future time.Time
	if !opts.Now.IsZero() {
		if snap.LastSleep, future, err = LastSleep(ctx, st, snap.Base, opts.Now); err != nil {
			return res, fmt.Errorf("sleep %s: %w", day, err)
		}
	}
	fmt.Fprintf(progress, "sleep %s: planning over %d lessons and %d events\n", day, len(snap.Lessons), len(snap.Events))
	res.Plan = MakePlan(snap, opts.Plan)
	if !future.IsZero() {
		// Said beside any other note (a night already slept, by the
		// sleep before it), so a reviewer learns of it either way.
		note := fmt.Sprintf("a sleep dated %s, after today, is not believed (a clock that ran ahead, or --date): this one counts from the sleep before it", future.Format(time.DateOnly))
		if res.Plan.Note != "" {
			note = res.Plan.Note + "; " + note
		}
		res.Plan.Note = note
	}
	if opts.DryRun {
		return res, nil
	}
	var todo []PhasePlan
	for _, ph := range res.Plan.Phases {
		if ph.Changed() {
			todo = append(todo, ph)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(progress, "sleep %s: nothing to commit\n", day)
		return res, nil
	}

	if err := commitPhases(ctx, st, opts, date, todo, &res, progress); err != nil {
		return res, fmt.Errorf("sleep %s: %w", day, err)
	}
	if opts.Apply {
		if err := applySleep(ctx, st, ref, date, &res); err != nil {
			return res, fmt.Errorf("sleep %s: %w", day, err)
		}
		fmt.Fprintf(progress, "sleep %s: merged %s into %s (%s)\n", day, branch, strings.TrimPrefix(head, "refs/heads/"), res.Merged)
	}
	return res, nil
}

// commitPhases writes todo's commits on res.Branch from res.Base, after the ones an
// interrupted run of the same sleep left (verified by resumePoint), and
// records each in res; res.Tip is the last. A ref moved under it stops it
// with ErrRaced.
func commitPhases(ctx context.Context, st *memfs.Store, opts Options, date time.Time, todo []PhasePlan, res *Result, progress io.Writer) error {
	day, ref := date.Format(time.DateOnly), "refs/heads/"+res.Branch
	prev, expected, done, err := resumePoint(st, ref, res.Base, todo)
	if err != nil {
		return err
	}
	for i, ph := range todo[:done] {
		h, _ := st.ResolveRef(ref + "~" + strconv.Itoa(done-1-i))
		res.Commits = append(res.Commits, PhaseCommit{Phase: ph.Phase, Number: ph.Number, Commit: h,
			Files: ph.Files, Subject: subject(ph.Message), Resumed: true})
	}
	for _, ph := range todo[done:] {
		if err := ctx.Err(); err != nil {
			return err
		}
		when := date.Add(time.Duration(ph.Number) * time.Second)
		if opts.beforeCommit != nil {
			opts.beforeCommit(ph.Number)
		}
		h, err := st.CommitOnRef(ref, expected, prev, ph.Changes, ph.Message, when)
		if errors.Is(err, memfs.ErrRefMoved) {
			return fmt.Errorf("phase %d %s: %w (%s moved under it); this sleep stopped cleanly: %v",
				ph.Number, ph.Phase, ErrRaced, res.Branch, err)
		}
		if err != nil {
			return fmt.Errorf("phase %d %s: %w", ph.Number, ph.Phase, err)
		}
		prev, expected = h, h
		res.Commits = append(res.Commits, PhaseCommit{Phase: ph.Phase, Number: ph.Number, Commit: h, Files: ph.Files, Subject: subject(ph.Message)})
		fmt.Fprintf(progress, "sleep %s: %s %s\n", day, short(h), subject(ph.Message))
		if opts.failAfter == ph.Number {
			return fmt.Errorf("interrupted after phase %d (injected)", ph.Number)
		}
	}
	res.Tip = prev
	return nil
}

// applySleep merges the sleep branch ref into the store's branch under the
// store's write lock, journaled so a sleep killed mid-merge is undone by
// the next writer, and records how in res.Merged.
func applySleep(ctx context.Context, st *memfs.Store, ref string, date time.Time, res *Result) error {
	unlock, err := st.LockWrites()
	if err != nil {
		return fmt.Errorf("merge %s: %w", res.Branch, err)
	}
	defer unlock()
	mctx := context.WithoutCancel(ctx)
	end, err := st.BeginMerge(mctx, ref, "borg sleep: merge "+res.Branch)
	if err != nil {
		return fmt.Errorf("merge %s: %w", res.Branch, err)
	}
	ff, err := mergeBranch(mctx, st, res.Branch, date.Add(time.Duration(len(Phases)+1)*time.Second))
	_, pending := os.Stat(filepath.Join(st.Dir(), ".git", "MERGE_HEAD"))
	if endErr := end(pending == nil); err == nil {
		err = endErr
	}
	if err != nil {
		return err
	}
	res.Merged = "merge"
	if ff {
		res.Merged = "fast-forward"
	}
	return nil
}

// resumePoint reads the sleep branch: absent, it starts from base; present,
// it must sit on base with its first done commits holding the plan's first
// done phases (checked on a sample of each commit's files), and the sleep
// continues after them. It returns the parent and the expected ref value for
// the next commit and how many phases are already committed.
func resumePoint(st *memfs.Store, ref, base string, todo []PhasePlan) (prev, expected string, done int, err error) {
	tip, err := st.ResolveRef(ref)
	if errors.Is(err, memfs.ErrNotFound) {
		return base, "", 0, nil
	}
	if err != nil {
		return "", "", 0, err
	}
	depth := -1
	for d := 0; d <= len(todo); d++ {
		h, err := st.ResolveRef(ref + "~" + strconv.Itoa(d))
		if err != nil {
			break
		}
		if h == base {
			depth = d
			break
		}
	}
	if depth < 0 {
		return "", "", 0, fmt.Errorf("%s: %w: it does not sit on %s within %d commits; review or delete it (git branch -D), or pass another branch name",
			ref, ErrForeignBranch, short(base), len(todo))
	}
	for i := 0; i < depth; i++ {
		rev := ref + "~" + strconv.Itoa(depth-1-i)
		if err := verifyPhase(st, rev, todo[i]); err != nil {
			return "", "", 0, fmt.Errorf("%s: %w: commit %d differs from phase %s: %v", ref, ErrForeignBranch, i+1, todo[i].Phase, err)
		}
	}
	return tip, tip, depth, nil
}

// verifyPhase checks a sample of a phase's changes against the commit rev.
func verifyPhase(st *memfs.Store, rev string, ph PhasePlan) error {
	step := max(1, len(ph.Changes)/verifySample)
	for i := 0; i < len(ph.Changes); i += step {
		c := ph.Changes[i]
		data, err := st.ReadFileAt(rev, c.Path)
		switch {
		case c.Delete && errors.Is(err, memfs.ErrNotFound):
		case c.Delete:
			return fmt.Errorf("%s is still there", c.Path)
		case err != nil:
			return err
		case !bytes.Equal(data, c.Data):
			return fmt.Errorf("%s has other content", c.Path)
		}
	}
	return nil
}

// subject is a commit message's first line.
func subject(msg string) string {
	s, _, _ := strings.Cut(msg, "\n")
	return s
}

// claimSleep takes the store's sleep lock, .borg/sleep.lock, without
// waiting: two sleeps at once would race on the branch and the merge, so
// the second stops before writing anything, with ErrBusy naming the first
// one's pid. The lock is an flock: the OS drops it when its holder dies.
func claimSleep(st *memfs.Store) (func(), error) {
	p := filepath.Join(st.Dir(), memfs.PrivateDir, "sleep.lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := memfs.LockFile(f, 0); err != nil {
		_ = f.Close()
		if errors.Is(err, memfs.ErrLocked) {
			who := "another process"
			if data, rerr := os.ReadFile(p); rerr == nil && len(bytes.TrimSpace(data)) > 0 {
				who = "pid " + string(bytes.TrimSpace(data))
			}
			return nil, fmt.Errorf("%w (%s); this one stopped and changed nothing: run it again when that one is done", ErrBusy, who)
		}
		return nil, err
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = memfs.UnlockFile(f)
		_ = f.Close()
	}, nil
}
