package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func noCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "no",
		Usage:     "veto a lesson: it stays in the store, and its belief counts the veto",
		ArgsUsage: "<id>",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "why", Usage: "why the lesson is wrong (kept in this machine's local log only)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("no takes one lesson id: borg no <id> (see borg list)")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runNo(e, s, c.Args().First(), c.String("why"))
		},
	}
}

// runNo records a veto of lesson id.
func runNo(e *env, s *memfs.Store, id, why string) error {
	if !domain.ValidID(id) {
		return usageErr("bad lesson id %q: ids look like run-migrations-before-tests-7f3a (see borg list)", id)
	}
	if _, err := s.Lesson(id); errors.Is(err, memfs.ErrNotFound) {
		return fail(exitFail, "no lesson %s in the store (see borg list)", id)
	} else if err != nil {
		return fail(exitFail, "%v (run borg doctor)", err)
	}
	who := engineer(e)
	session := e.getenv("BORG_SESSION")
	if session == "" {
		// Outside an agent session a veto is one person's word on a
		// lesson: it counts once, however often they repeat it.
		session = memfs.HashSession("borg-no\x00" + who + "\x00" + id)
	}
	ev := domain.Event{
		MS: e.now().UnixMilli(), Kind: domain.KindVetoed, Session: session,
		Lesson: id, Repo: repoTag(), Author: who,
	}
	if err := s.Append(ev); err != nil {
		return err
	}
	if why != "" {
		if err := s.AppendEvidence(ev, why); err != nil {
			return err
		}
	}
	if s.ShareOutcomes() {
		logs, err := s.OwnLogPaths()
		if err == nil {
			_, err = s.Commit("borg no: "+id, logs...)
		}
		if err != nil {
			return fail(exitFail, "veto recorded but not committed: %v", err)
		}
		housekeep(e, s)
	}
	_, err := fmt.Fprintf(e.out, "vetoed %s: the lesson stays in the store; its belief counts the veto, once per session (a repeat adds nothing)\n", id)
	return err
}
