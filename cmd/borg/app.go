package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/hooks"
	"github.com/urfave/cli/v2"
)

// version is set at link time (-ldflags "-X main.version=…").
var version = "dev"

// env is what a command may touch of the outside world, injected so tests can
// run commands in-process.
type env struct {
	in     io.Reader
	out    io.Writer
	err    io.Writer
	getenv func(string) string
	now    func() time.Time
	// rawOut is stdout unfiltered, for the hooks' protocol output (out
	// and err pass through termSafe once run has wrapped them).
	rawOut io.Writer
}

func newOSEnv() *env {
	return &env{in: os.Stdin, out: os.Stdout, err: os.Stderr, getenv: os.Getenv, now: time.Now}
}

// protocolOut is stdout for output a program reads byte for byte (the
// hooks'), unfiltered by termSafe.
func (e *env) protocolOut() io.Writer {
	if e.rawOut != nil {
		return e.rawOut
	}
	return e.out
}

// exitError carries an exit code out of a runner.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// fail returns an error that makes borg print msg and exit with code.
func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// run builds the app and runs it; it returns the process exit code.
func run(ctx context.Context, args []string, e *env) int {
	if e.rawOut == nil {
		safe := *e
		safe.rawOut, safe.out, safe.err = e.out, termSafe(e.out), termSafe(e.err)
		e = &safe
	}
	if verb, store, ok := installedHook(args); ok {
		// An agent's hook, as `borg install` writes it: it runs without
		// building the command tree, which every hook would pay for.
		shortLived()
		return runHook(ctx, e, verb, store)
	}
	app := newApp(e)
	cliSetup.Lock()
	var once sync.Once
	release := func() { once.Do(cliSetup.Unlock) }
	defer release()
	if n := len(args); n > 1 && args[n-1] == completionFlag {
		// Always a completion, never the command: after "--" too, where
		// completions lists nothing (running `borg learn --` from a
		// shell's Tab would learn a lesson).
		for _, c := range completions(app, args[1:n-1]) {
			fmt.Fprintln(e.out, c)
		}
		return 0
	}
	releaseAtAction(app.Commands, release)
	argv, err := interspersed(app, args)
	if err != nil {
		fmt.Fprintln(e.err, "borg: "+err.Error())
		return exitUsage
	}
	err = app.RunContext(ctx, argv)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(e.err, "borg: "+ee.msg)
		}
		return ee.code
	}
	var ce cli.ExitCoder
	if errors.As(err, &ce) {
		msg := err.Error()
		if msg != "" {
			fmt.Fprintln(e.err, "borg: "+msg)
		}
		if strings.HasPrefix(msg, "No help topic for") {
			return exitUsage // urfave/cli's 3 is borg's "refused"
		}
		return ce.ExitCode()
	}
	fmt.Fprintln(e.err, "borg: "+err.Error())
	return 1
}

// installedHook reads a command line `borg install` writes for a hook:
// `borg hook VERB`, or `borg --store DIR hook VERB` (--store=DIR too).
func installedHook(args []string) (verb, store string, ok bool) {
	if len(args) < 2 {
		return "", "", false
	}
	rest := args[1:]
	switch {
	case len(rest) == 4 && rest[0] == "--store":
		store, rest = rest[1], rest[2:]
	case len(rest) == 3 && strings.HasPrefix(rest[0], "--store="):
		store, rest = strings.TrimPrefix(rest[0], "--store="), rest[1:]
	}
	if len(rest) == 2 && rest[0] == "hook" && slices.Contains(hooks.Events, rest[1]) {
		return rest[1], store, true
	}
	return "", "", false
}

// cliSetup is held while urfave/cli sets a command up and parses its
// flags: the library writes package-level values as it does (its help
// flag, its help command), so two commands run at once in one process (the
// parallel tests; `borg eval asks`, which plays sets through borg's own
// commands) take turns there. A command's action runs without it, so an
// action may run a command of its own.
var cliSetup sync.Mutex

// releaseAtAction makes each command's action, and its subcommands',
// call release first.
func releaseAtAction(cmds []*cli.Command, release func()) {
	for _, c := range cmds {
		if act := c.Action; act != nil {
			c.Action = func(cc *cli.Context) error {
				release()
				return act(cc)
			}
		}
		releaseAtAction(c.Subcommands, release)
	}
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:    "borg",
		Usage:   "a git-native, team-shared memory for AI coding agents",
		Version: version,
		Description: "Engineers and their agents write lessons; borg hands the right lesson to the\n" +
			"agent when it matters, measures whether it changed the work, and lets the\n" +
			"memory decay, merge and consolidate in a nightly sleep whose every change is\n" +
			"a reviewable git commit.",
		Reader:                 e.in,
		Writer:                 e.out,
		ErrWriter:              e.err,
		HideVersion:            true,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {},
		Commands:               commands(e),
		Flags:                  []cli.Flag{storeFlag()},
	}
	withSuggestions(app)
	return app
}

// commands lists every verb; each lives in its own cmd_<verb>.go.
func commands(e *env) []*cli.Command {
	return []*cli.Command{
		versionCommand(e),
		initCommand(e),
		learnCommand(e),
		noCommand(e),
		showCommand(e),
		listCommand(e),
		doctorCommand(e),
		recallCommand(e),
		reindexCommand(e),
		hookCommand(e),
		installCommand(e),
		uninstallCommand(e),
		sleepCommand(e),
		syncCommand(e),
		linksCommand(e),
		mcpCommand(e),
		completionCommand(e),
		evalCommand(e),
		demoCommand(e),
		debugCommand(e),
		serveCommand(e),
		mergeOutcomesCommand(),
	}
}

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print borg's version",
		Action: func(c *cli.Context) error {
			if err := flagsOnly(c); err != nil {
				return err
			}
			_, err := fmt.Fprintf(e.out, "borg %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
