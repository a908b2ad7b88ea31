package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

func mergeOutcomesCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge-outcomes",
		Usage:     "git merge driver for log/*.jsonl: the union of both sides' lines",
		ArgsUsage: "BASE OURS THEIRS",
		Description: "Writes the union of OURS and THEIRS, each line once, into OURS. To use it instead of\n" +
			"git's built-in union merge, in the store:\n" +
			"  git config merge.borg-outcomes.driver 'borg merge-outcomes %O %A %B'\n" +
			"and set log/*.jsonl merge=borg-outcomes in .gitattributes.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 3 {
				return usageErr("merge-outcomes takes three files: BASE OURS THEIRS (git passes %%O %%A %%B)")
			}
			return runMergeOutcomes(c.Args().Get(1), c.Args().Get(2))
		},
	}
}

// runMergeOutcomes writes MergeLines(ours, theirs) over ours. The base is
// not needed: a log only grows, so the union holds every line either side
// kept.
func runMergeOutcomes(ours, theirs string) error {
	a, err := os.ReadFile(ours)
	if err != nil {
		return fail(exitFail, "merge-outcomes: %v", err)
	}
	b, err := os.ReadFile(theirs)
	if err != nil {
		return fail(exitFail, "merge-outcomes: %v", err)
	}
	// Git reads the merge result back from %A (ours): write it in place,
	// through a temp file beside it, so a crash leaves ours whole.
	if err := memfs.WriteFileAtomic(ours, memfs.MergeLines(a, b), 0o644); err != nil {
		return fail(exitFail, "merge-outcomes: %v", err)
	}
	return nil
}
