package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/sleep"
)

func sleepCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "sleep",
		Usage: "the memory's nightly maintenance, one reviewable commit per phase on borg/sleep/<date>",
		Description: "Phases: confidence decay, reprieve, near-duplicate merge, frame conflicts, edge typing,\n" +
			"retention triage, link ager. The working tree and git index are never touched.",
		Flags: []cli.Flag{
			storeFlag(), jsonFlag(),
			&cli.StringFlag{Name: "date", Usage: "the night to sleep for, YYYY-MM-DD (default today, UTC)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and change nothing"},
			&cli.BoolFlag{Name: "apply", Usage: "also merge the sleep branch into the store (solo use; teams review a PR)"},
			&cli.StringFlag{Name: "branch", Usage: "branch name, one git accepts (not HEAD, no leading -) (default borg/sleep/<date>)"},
			&cli.BoolFlag{Name: "push", Usage: "push the sleep branch to the store's remote, for review as a pull request"},
			&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the git `REMOTE` --push pushes to"},
			&cli.StringFlag{Name: "summary", Usage: "write each phase's summary as markdown to `FILE` (a pull request's description)"},
			&cli.StringFlag{Name: "branch-file", Usage: "write the sleep branch's name to `FILE` when it has commits (empty otherwise)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("sleep takes flags only (the night is --date YYYY-MM-DD): borg sleep --dry-run")
			}
			opts := sleep.Options{Now: e.now(), DryRun: c.Bool("dry-run"), Apply: c.Bool("apply"), Branch: c.String("branch")}
			if b := strings.TrimPrefix(opts.Branch, "refs/heads/"); opts.Branch != "" && !memfs.ValidBranchName(b) {
				return usageErr("--branch %q is not a valid branch name (git check-ref-format --branch): use a name like borg/sleep/2026-12-08 or review/sleep, not HEAD, without a leading \"-\", \"..\", spaces or any of ~^:?*[\\", opts.Branch)
			}
			if d := c.String("date"); d != "" {
				t, err := time.Parse("2006-01-02", d)
				if err != nil || t.IsZero() {
					// (The zero date is sleep's "today": named, it is no
					// night to sleep for.)
					return usageErr("--date %q: want YYYY-MM-DD", d)
				}
				// A sleep runs once a night and never for an earlier
				// one: a night that has not come, once slept and merged,
				// stops every sleep, the team's too, until it has. Said,
				// not refused: a sleep that looks ahead (how the store
				// decays by then) is a fair question, and a dry run or a
				// branch left unmerged changes nothing. Tomorrow is not
				// said: it is already tomorrow somewhere.
				if tomorrow := opts.Now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour); t.After(tomorrow) && !c.Bool("dry-run") {
					fmt.Fprintf(e.err, "borg: --date %s is after today (%s, UTC): a sleep on an earlier day does not believe it, and counts from the sleep before it\n", d, opts.Now.UTC().Format("2006-01-02"))
				}
				opts.Date = t
			}
			if opts.DryRun && opts.Apply {
				return usageErr("--dry-run and --apply contradict each other")
			}
			if opts.DryRun && c.Bool("push") {
				return usageErr("--dry-run writes no branch to --push")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			if opts.Apply {
				// The merge of the branch would stop on them after the
				// phases are committed, leaving a branch the retry would
				// not build on: said before anything is written.
				if err := applyBlockers(c.Context, s); err != nil {
					return err
				}
			}
			res, err := sleep.Run(c.Context, s, opts, e.err)
			if err != nil {
				return fail(exitFail, "%v", err)
			}
			if err := sleepReview(c, e, s, res); err != nil {
				return err
			}
			if !res.DryRun {
				housekeep(e, s)
			}
			if c.Bool("json") {
				return writeJSON(e, res)
			}
			_, err = e.out.Write([]byte(res.String()))
			return err
		},
	}
}

// sleepReview does what a reviewed sleep needs after the run: the summary
// for the pull request's description, the branch's name for a script, and
// the push of the branch.
func sleepReview(c *cli.Context, e *env, s *memfs.Store, res sleep.Result) error {
	hasBranch := !res.DryRun && len(res.Commits) > 0
	if f := c.String("summary"); f != "" {
		if err := os.WriteFile(f, []byte(sleepMarkdown(res)), 0o644); err != nil {
			return fail(exitFail, "write the summary: %v", err)
		}
	}
	if f := c.String("branch-file"); f != "" {
		name := ""
		if hasBranch {
			name = res.Branch + "\n"
		}
		if err := os.WriteFile(f, []byte(name), 0o644); err != nil {
			return fail(exitFail, "write the branch file: %v", err)
		}
	}
	if c.Bool("push") && hasBranch {
		if err := s.PushBranch(c.Context, c.String("remote"), res.Branch); err != nil {
			return fail(exitFail, "%v (the sleep branch is committed locally; push it with git push)", err)
		}
		fmt.Fprintf(e.err, "borg: pushed %s to %s\n", res.Branch, c.String("remote"))
		// The branch grows from this store's branch: commits the remote
		// lacks (lessons learned and not synced) ride into the review.
		remote, g := c.String("remote"), s.GitCLI()
		if head, err := g.Line(c.Context, "symbolic-ref", "--short", "HEAD"); err == nil {
			if n, err := g.Line(c.Context, "rev-list", "--count", "refs/remotes/"+remote+"/"+head+"..HEAD"); err == nil && n != "0" {
				fmt.Fprintf(e.err, "borg: the pull request also carries %s commit(s) of this store that %s lacks (run borg sync before the sleep to keep them out of it)\n", n, remote)
			}
		}
	}
	return nil
}

// applyBlockers refuses a sleep --apply on a store whose lesson files hold
// changes no commit has: the merge of the sleep branch would stop on them.
func applyBlockers(ctx context.Context, s *memfs.Store) error {
	unc, err := s.Uncommitted()
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	edited, err := s.Edited(ctx)
	if err != nil {
		return nil // not known (another user's store): the merge itself says
	}
	if dirty := append(unc, edited...); len(dirty) > 0 {
		return fail(exitFail, "sleep --apply: %d lesson file(s) hold changes no commit has, such as %s: commit them first (borg doctor --fix commits lesson files), or sleep without --apply and merge the branch later; nothing was written",
			len(dirty), dirty[0])
	}
	return nil
}
