package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

func hookCommand(e *env) *cli.Command {
	var subs []*cli.Command
	for _, verb := range hooks.Events {
		verb := verb
		subs = append(subs, &cli.Command{
			Name:            verb,
			Usage:           "run the " + verb + " hook (reads the agent's hook JSON on stdin; never fails)",
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				shortLived()
				store := globalStore(c)
				if st, ok := hookStoreArg(c.Args().Slice()); ok {
					store = st // `borg hook stop --store DIR`
				}
				code := runHook(c.Context, e, verb, store)
				if code != 0 {
					return fail(code, "")
				}
				return nil
			},
		})
	}
	return &cli.Command{
		Name:        "hook",
		Usage:       "agent and git hook entry points: stop, prompt, session-start, post-tool, post-commit",
		Description: "Each hook fails open: whatever goes wrong, it exits 0 with nothing on stdout and one line on stderr.",
		Subcommands: subs,
	}
}

// shortLived tunes the garbage collector for a command that lives tens of
// milliseconds (a hook, a recall): no collection until the heap nears
// 512 MiB, instead of several while it loads the index and the summary. At
// 10,000 lessons the heap stays near 50 MiB, and about 310 MiB on the rare
// call that rebuilds the summary of a 1,000,000-event log from the full
// ledger (collections there would re-mark a 170 MiB ledger each time).
// GOGC or GOMEMLIMIT in the environment take precedence (tuneGC; the
// process ends with the command, so nothing is put back).
func shortLived() { _ = tuneGC(learnHeapLimit) }

// hookStoreArg finds --store DIR (or --store=DIR) among a hook's
// arguments, which are not parsed as flags (a hook must never fail on
// one).
func hookStoreArg(args []string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--store="); ok {
			return v, true
		}
		if a == "--store" && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// globalStore is the --store given before the verb, if any.
func globalStore(c *cli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.IsSet("store") {
			return cc.String("store")
		}
	}
	return ""
}

// hookFloor is the relevance floor a hook's lessons must clear as
// index.Query.Floor takes it: BORG_FLOOR in (0, 1], or 0 for none (every
// lesson that shares a word with the work may be asked); unset or
// anything else, index.DefaultFloor.
func hookFloor(getenv func(string) string) float64 {
	f, err := strconv.ParseFloat(getenv("BORG_FLOOR"), 64)
	switch {
	case err != nil || !(f >= 0 && f <= 1): // NaN too
		return 0
	case f == 0:
		return -1
	}
	return f
}

// hookEnvProblems names each variable of the hooks' tunables (hookFloor,
// hookConfig, BORG_AUTOSYNC) that is set to a value they cannot use, with
// what they do instead.
func hookEnvProblems(getenv func(string) string) []string {
	var out []string
	bad := func(name, want, instead string) {
		if v := getenv(name); v != "" {
			out = append(out, fmt.Sprintf("%s=%q: want %s; the hooks use %s", name, v, want, instead))
		}
	}
	if f, err := strconv.ParseFloat(getenv("BORG_FLOOR"), 64); getenv("BORG_FLOOR") != "" && (err != nil || !(f >= 0 && f <= 1)) {
		bad("BORG_FLOOR", "a relevance from 0 (no floor) to 1, such as 0.4", fmt.Sprintf("the default floor, %g", index.DefaultFloor))
	}
	if n, err := strconv.Atoi(getenv("BORG_SLOTS")); getenv("BORG_SLOTS") != "" && (err != nil || n <= 0) {
		bad("BORG_SLOTS", "a count of lessons from 1", fmt.Sprintf("%d", hooks.DefaultConfig().Slots))
	}
	if n, err := strconv.Atoi(getenv("BORG_MAX_BLOCKS")); getenv("BORG_MAX_BLOCKS") != "" && (err != nil || n < 0) {
		bad("BORG_MAX_BLOCKS", "a count from 0", "the default")
	}
	if f, err := strconv.ParseFloat(getenv("BORG_PLACEBO_RATE"), 64); getenv("BORG_PLACEBO_RATE") != "" && (err != nil || !(f >= 0 && f <= 1)) {
		bad("BORG_PLACEBO_RATE", "a share from 0 to 1", fmt.Sprintf("%g", hooks.DefaultConfig().PlaceboRate))
	}
	for _, name := range []string{"BORG_JUDGE_TIMEOUT", "BORG_HOOK_DEADLINE"} {
		if d, err := time.ParseDuration(getenv(name)); getenv(name) != "" && (err != nil || d <= 0) {
			bad(name, "a positive duration, such as 3s", "the default")
		}
	}
	if v := strings.TrimSpace(getenv("BORG_AUTOSYNC")); v != "" && v != "off" && v != "0" {
		if d, err := time.ParseDuration(v); err != nil || d < time.Minute {
			bad("BORG_AUTOSYNC", "a duration of at least 1m, such as 15m, or off", "no background sync")
		}
	}
	return out
}

// hookConfig reads the hooks' tunables from the environment.
func hookConfig(getenv func(string) string) (hooks.Config, time.Duration) {
	cfg := hooks.DefaultConfig()
	if n, err := strconv.Atoi(getenv("BORG_SLOTS")); err == nil && n > 0 {
		cfg.Slots = n
	}
	if n, err := strconv.Atoi(getenv("BORG_MAX_BLOCKS")); err == nil && n >= 0 {
		cfg.MaxBlocks = n
	}
	if f, err := strconv.ParseFloat(getenv("BORG_PLACEBO_RATE"), 64); err == nil && f >= 0 && f <= 1 {
		cfg.PlaceboRate = f
	}
	if d, err := time.ParseDuration(getenv("BORG_JUDGE_TIMEOUT")); err == nil && d > 0 {
		cfg.JudgeTimeout = d
	}
	cfg.Judge = strings.TrimSpace(getenv("BORG_JUDGE"))
	cfg.Early = getenv("BORG_EARLY") == "1"
	cfg.AskAtPrompt = getenv("BORG_ASK_AT") == "prompt"
	deadline := hooks.DefaultDeadline
	if d, err := time.ParseDuration(getenv("BORG_HOOK_DEADLINE")); err == nil && d > 0 {
		deadline = d
	}
	if cfg.Judge != "" {
		deadline += cfg.JudgeTimeout * time.Duration(cfg.Slots+1)
	}
	return cfg, deadline
}

// runHook runs one hook through the fail-open guard; it returns 0 always.
func runHook(ctx context.Context, e *env, verb, storeFlag string) int {
	if ctx == nil {
		ctx = context.Background()
	}
	tr, traced := hookTracer(e.getenv("BORG_TRACE"), verb)
	defer traced()
	cfg, deadline := hookConfig(e.getenv)
	cwd, _ := os.Getwd()
	// A hook says at most one line on stderr, whichever part of it speaks
	// first (a failure, a notice, a repair, the background sync's error).
	he := *e
	he.err = hooks.FirstLine(e.err)
	e = &he
	// Set by the handler, which may still run when a hook that gave up
	// returns.
	var opened atomic.Pointer[memfs.Store]
	defer func() {
		// After the hook has answered: an opt-in background sync, never
		// on the agent's critical path, failing open like the hook.
		defer func() { _ = recover() }()
		if s := opened.Load(); s != nil && (verb == "stop" || verb == "session-start") {
			if err := maybeAutosync(e, s); err != nil {
				fmt.Fprintln(e.err, "borg: "+err.Error())
			}
		}
	}()
	return hooks.Main(ctx, verb, e.in, e.protocolOut(), e.err, deadline, cwd, func(ctx context.Context) (*hooks.Deps, error) {
		if e.getenv("BORG_HOOK_PANIC") == "1" {
			panic(hooks.ErrForcedPanic)
		}
		dir := memfs.Discover(storeFlag, e.getenv)
		s, err := memfs.Open(dir, storeOptions(e)...)
		if err != nil {
			return nil, err
		}
		opened.Store(s)
		tr.step("store opened", time.Time{})
		local := filepath.Join(s.Dir(), ".borg")
		d := &hooks.Deps{
			Store:           s,
			States:          hooks.StateStore{Dir: filepath.Join(local, "sessions")},
			Commits:         hooks.CommitLog{Path: filepath.Join(local, "local", "commits.tsv")},
			Commit:          e.getenv("BORG_COMMIT"),
			Now:             e.now,
			HashSession:     memfs.HashSession,
			Engineer:        hookEngineer(e),
			ResolveEngineer: func(dir string) string { return memfs.HashEngineer(memfs.GitUserEmail(dir)) },
			Config:          cfg,
			Anchors:         s.Anchors,
		}
		if verb == "stop" || verb == "prompt" || (verb == "session-start" && cfg.Early) {
			sr := &storeRecaller{store: s, budget: hookBudget(e.getenv), notice: e.err, floor: hookFloor(e.getenv), tr: tr}
			d.Recall = sr
			go func() {
				// The index is released when the hook is done (or gives up).
				<-ctx.Done()
				sr.Close()
			}()
		}
		return d, nil
	})
}

// hookEngineer is the engineer's hashed id from the environment
// (BORG_ENGINEER, GIT_AUTHOR_EMAIL); without either, a session resolves it
// once from its repository's git configuration (hooks.Deps.ResolveEngineer),
// read from its files rather than by a git process: hooks run on every
// agent turn.
func hookEngineer(e *env) string {
	if v := e.getenv("BORG_ENGINEER"); v != "" {
		return memfs.HashEngineer(v)
	}
	if v := e.getenv("GIT_AUTHOR_EMAIL"); v != "" {
		return memfs.HashEngineer(v)
	}
	return ""
}
