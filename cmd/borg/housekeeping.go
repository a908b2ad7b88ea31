package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/memfs/gitcli"
)

// borg writes each learn, veto and sleep phase as loose objects (a blob,
// its trees, a commit), and only git's fetch and merge start git's own
// automatic gc: a store that never syncs would gather loose objects
// forever, and every git command in it would slow down. After a write,
// borg asks git to tidy up (`git gc --auto`, git's own housekeeping with
// the user's settings) once the loose objects pass packDueAt, in a
// detached process: a write never waits for it, and a hook never starts
// it. borg's object readers find objects git moved into a pack (they list
// the packs again when an object is not where they looked).

// packDueAt is the estimated count of loose objects past which a write
// starts git's housekeeping. Under git's own gc.auto default (6,700), so
// a store that only ever learns stays well below the count at which a
// user's git would stop to pack it in the foreground of some command.
const packDueAt = 2000

// looseObjects estimates the loose objects of the repository whose common
// git directory is dir as git does for gc.auto: the objects of the
// objects/17 fan-out directory, times 256.
func looseObjects(dir string) int {
	entries, err := os.ReadDir(filepath.Join(dir, "objects", "17"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if len(e.Name()) == 38 {
			n++
		}
	}
	return n * 256
}

// gitCommonDir is the store's common git directory: .git itself, or for a
// linked worktree the main repository's (gitcli.FindDirs).
func gitCommonDir(store string) (string, error) {
	d, err := gitcli.FindDirs(store)
	return d.Common, err
}

// housekeepingDue reports whether s has gathered enough loose objects to
// start git's housekeeping, and git's gc.auto has not been set to 0 (the
// user's way of saying "never gc on your own"; read from the git settings
// borg caches, so that a write past packDueAt starts no git to ask).
func housekeepingDue(s *memfs.Store) bool {
	dir, err := gitCommonDir(s.Dir())
	// Due as git's gc --auto counts it: more objects in objects/17 than
	// packDueAt/256, rounded up. A gc started at the bound itself would
	// find nothing to do.
	if err != nil || looseObjects(dir)/256 <= (packDueAt+255)/256 {
		return false
	}
	return !s.GitGCOff()
}

// gcArgs is git's housekeeping as borg starts it: git's own gc, which
// packs at packDueAt rather than at its default so that the store ends
// well under it, with every other gc setting the user's.
func gcArgs() []string {
	return []string{"-c", "gc.auto=" + strconv.Itoa(packDueAt), "gc", "--auto", "--quiet"}
}

// startHousekeeping starts git's housekeeping in s, detached, when it is
// due. Call it after a write has released the store's lock: a git started
// while borg holds it would keep the store locked until it ended.
func startHousekeeping(s *memfs.Store) error {
	ctx := context.Background()
	if !housekeepingDue(s) {
		return nil
	}
	cmd := s.GitCLI().Command(ctx, gcArgs()...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start git gc in %s: %w", s.Dir(), err)
	}
	go cmd.Wait() // reaped if this process outlives it (serve, mcp)
	return nil
}

// housekeep is startHousekeeping for a command that has written: a failure
// to start is one stderr line, never the command's failure.
func housekeep(e *env, s *memfs.Store) {
	if err := startHousekeeping(s); err != nil {
		fmt.Fprintf(e.err, "borg: %v\n", err)
	}
}
