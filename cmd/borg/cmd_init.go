package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a store (or clone a team's store from a git remote)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "remote", Usage: "clone the store from this git `URL` (an empty remote is fine)"},
			&cli.StringFlag{Name: "ci", Usage: "also commit a nightly workflow that sleeps and opens a pull request for review: github or gitlab"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("init takes no arguments (use --store DIR to choose where)")
			}
			if ci := c.String("ci"); ci != "" {
				if _, _, err := ciWorkflow(ci); err != nil {
					return usageErr("%v", err)
				}
			}
			if err := runInit(c.Context, e, storeDir(c, e), c.String("remote")); err != nil {
				return err
			}
			if ci := c.String("ci"); ci != "" {
				return runInitCI(e, storeDir(c, e), ci)
			}
			return nil
		},
	}
}

// runInit creates or clones a store in dir.
func runInit(ctx context.Context, e *env, dir, remote string) error {
	s, err := memfs.Init(ctx, dir, remote, append(storeOptions(e), memfs.WithProgress(buildProgress(e)))...)
	if errors.Is(err, memfs.ErrStoreExists) {
		return storeExists(ctx, e, dir, remote)
	}
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	node, err := s.Node()
	if err != nil {
		return err
	}
	if remote != "" {
		// A clone is where a user expects to wait: the derived state (the
		// index, the log's summary) is built now, once, rather than by
		// the first recall or hook.
		if _, err := reindexWith(ctx, e, s, false); err != nil {
			fmt.Fprintf(e.err, "borg: the search state was not built (the first recall builds it): %v\n", err)
		}
	}
	_, err = fmt.Fprintf(e.out, "initialised a borg store in %s (node %s)\n", s.Dir(), node)
	return err
}

// storeExists answers an init of a directory that already holds a store:
// nothing to do, unless the init asked to clone a remote the store does
// not come from, which would otherwise leave the user believing it had.
func storeExists(ctx context.Context, e *env, dir, remote string) error {
	if remote == "" {
		_, err := fmt.Fprintf(e.out, "a borg store already exists in %s\n", dir)
		return err
	}
	s, err := memfs.Open(dir, storeOptions(e)...)
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	if origin, err := s.GitCLI().Line(ctx, "remote", "get-url", "origin"); err == nil && origin == remote {
		_, err := fmt.Fprintf(e.out, "a borg store cloned from %s already exists in %s\n", remote, dir)
		return err
	}
	return fail(exitFail, "a borg store already exists in %s and was not cloned from %s: nothing was cloned. To share this store, add the remote (git -C %s remote add origin %s) and run borg sync; to use the team's store instead, move %s aside or choose another directory with --store", dir, remote, dir, remote, dir)
}

// runInitCI commits the CI system's nightly sleep workflow into the store.
// An existing file is left as it is (it may be the team's own edit).
func runInitCI(e *env, dir, system string) error {
	s, err := memfs.Open(dir, storeOptions(e)...)
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	rel, content, err := ciWorkflow(system)
	if err != nil {
		return usageErr("%v", err)
	}
	full := filepath.Join(s.Dir(), filepath.FromSlash(rel))
	if _, err := os.Stat(full); err == nil {
		_, err := fmt.Fprintf(e.out, "%s already exists: left as it is\n", rel)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if err := memfs.WriteFileAtomic(full, content, 0o644); err != nil {
		return err
	}
	if _, err := s.Commit("borg init: nightly sleep on "+system, rel); err != nil {
		return fail(exitFail, "%s written but not committed: %v", rel, err)
	}
	review := "opens a pull request to review (push the store to share it; allow workflows to open pull requests: docs/sleep.md)"
	if system == "gitlab" {
		review = "opens a merge request to review (push the store to share it; add a pipeline schedule and a BORG_PUSH_TOKEN variable with write access: docs/sleep.md)"
	}
	_, err = fmt.Fprintf(e.out, "committed %s: each night it runs borg sleep and %s\n", rel, review)
	return err
}
