package main

import (
	"context"
	"errors"
	"fmt"

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
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("init takes no arguments (use --store DIR to choose where)")
			}
			return runInit(c.Context, e, storeDir(c, e), c.String("remote"))
		},
	}
}

// runInit creates or clones a store in dir.
func runInit(ctx context.Context, e *env, dir, remote string) error {
	s, err := memfs.Init(ctx, dir, remote, storeOptions(e)...)
	if errors.Is(err, memfs.ErrStoreExists) {
		_, err := fmt.Fprintf(e.out, "a borg store already exists in %s\n", dir)
		return err
	}
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	node, err := s.Node()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.out, "initialised a borg store in %s (node %s)\n", s.Dir(), node)
	return err
}
