package main

import (
	"time"

	"github.com/urfave/cli/v2"

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
			&cli.StringFlag{Name: "branch", Usage: "branch name (default borg/sleep/<date>)"},
		},
		Action: func(c *cli.Context) error {
			opts := sleep.Options{Now: e.now(), DryRun: c.Bool("dry-run"), Apply: c.Bool("apply"), Branch: c.String("branch")}
			if d := c.String("date"); d != "" {
				t, err := time.Parse("2006-01-02", d)
				if err != nil {
					return usageErr("--date %q: want YYYY-MM-DD", d)
				}
				opts.Date = t
			}
			if opts.DryRun && opts.Apply {
				return usageErr("--dry-run and --apply contradict each other")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			res, err := sleep.Run(c.Context, s, opts, e.err)
			if err != nil {
				return fail(exitFail, "%v", err)
			}
			if c.Bool("json") {
				return writeJSON(e, res)
			}
			_, err = e.out.Write([]byte(res.String()))
			return err
		},
	}
}
