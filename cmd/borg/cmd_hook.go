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
	return (&hookEnv{getenv: getenv}).floor()
}

// hookEnv reads the hooks' tunables from the environment, noting each one
// set to a value it cannot use (problems, for doctor: a hook fails open,
// so it never says so itself).
type hookEnv struct {
	getenv   func(string) string
	problems []string
}

// bad notes that name holds a value the hooks cannot use.
func (h *hookEnv) bad(name, want, instead string) {
	h.problems = append(h.problems, fmt.Sprintf("%s=%q: want %s; the hooks use %s", name, h.getenv(name), want, instead))
}

// count reads name as a count of at least least; ok is false when it is
// unset or unusable.
func (h *hookEnv) count(name string, least int, want, instead string) (n int, ok bool) {
	v := h.getenv(name)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= least {
		return n, true
	}
	h.bad(name, want, instead)
	return 0, false
}

// share reads name as a number in [0, 1] (NaN is none).
func (h *hookEnv) share(name, want, instead string) (f float64, ok bool) {
	v := h.getenv(name)
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
		return f, true
	}
	h.bad(name, want, instead)
	return 0, false
}

// duration reads name as a positive duration.
func (h *hookEnv) duration(name string) (d time.Duration, ok bool) {
	v := h.getenv(name)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true
	}
	h.bad(name, "a positive duration, such as 3s", "the default")
	return 0, false
}

// floor is hookFloor's reading of BORG_FLOOR.
func (h *hookEnv) floor() float64 {
	f, ok := h.share("BORG_FLOOR", "a relevance from 0 (no floor) to 1, such as 0.4", fmt.Sprintf("the default floor, %g", index.DefaultFloor))
	switch {
	case !ok:
		return 0
	case f == 0:
		return -1
	}
	return f
}

// config is hookConfig's reading.
func (h *hookEnv) config() (hooks.Config, time.Duration) {
	cfg := hooks.DefaultConfig()
	if n, ok := h.count("BORG_SLOTS", 1, "a count of lessons from 1", strconv.Itoa(cfg.Slots)); ok {
		cfg.Slots = n
	}
	if n, ok := h.count("BORG_MAX_BLOCKS", 0, "a count from 0", strconv.Itoa(cfg.MaxBlocks)); ok {
		cfg.MaxBlocks = n
	}
	if f, ok := h.share("BORG_PLACEBO_RATE", "a share from 0 to 1", fmt.Sprintf("%g", cfg.PlaceboRate)); ok {
		cfg.PlaceboRate = f
	}
	if d, ok := h.duration("BORG_JUDGE_TIMEOUT"); ok {
		cfg.JudgeTimeout = d
	}
	cfg.Judge = strings.TrimSpace(h.getenv("BORG_JUDGE"))
	cfg.Early = h.getenv("BORG_EARLY") == "1"
	cfg.AskAtPrompt = h.getenv("BORG_ASK_AT") == "prompt"
	deadline := hooks.DefaultDeadline
	if d, ok := h.duration("BORG_HOOK_DEADLINE"); ok {
		deadline = d
	}
	if cfg.Judge != "" {
		deadline += cfg.JudgeTimeout * time.Duration(cfg.Slots+1)
	}
	return cfg, deadline
}

// hookEnvProblems names each of the hooks' tunables (hookFloor,
// hookConfig, BORG_AUTOSYNC) that is set to a value they cannot use, with
// what they do instead.
func hookEnvProblems(getenv func(string) string) []string {
	h := &hookEnv{getenv: getenv}
	h.floor()
	h.config()
	if _, err := autosyncEvery(getenv); err != nil {
		h.bad("BORG_AUTOSYNC", "a duration of at least 1m, such as 15m, or off", "no background sync")
	}
	return h.problems
}

// hookConfig reads the hooks' tunables from the environment.
func hookConfig(getenv func(string) string) (hooks.Config, time.Duration) {
	return (&hookEnv{getenv: getenv}).config()
}

// runHook runs one hook through the fail-open guard; it returns 0 always.
func runHook(ctx context.Context, e *env, verb, storeFlag string) int {
	if ctx == nil {
		ctx = context.Background()
	}
	if e.getenv(hooks.JudgingEnv) == "1" {
		return 0 // in a judge borg started (an agent's -p run): the session is borg's own
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
