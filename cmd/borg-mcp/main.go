// Command borg-mcp is borg's Model Context Protocol server: it serves a
// store to an agent over stdio. Agents start it as `borg mcp`, which finds
// this binary beside borg (or on PATH) and runs it in its place.
//
// It is a binary of its own so that the MCP SDK and what it brings (a JSON
// schema library, an HTTP and OAuth stack) are not loaded by every other
// borg process: each hook call pays the start of the binary it runs,
// initialisers included (BENCHMARKS.md measures what this one saves).
//
// Each tool runs the borg command of the same name (with --json) as a
// process, so it has the CLI's behaviour, validation and refusals exactly:
// a refusal or an error is a tool result with isError set and borg's
// message as its text. Lessons are resources too (borg://lesson/<id>).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// version is set at release builds, as borg's is.
var version = "dev"

// borgEnv names the borg binary the tools run; `borg mcp` sets it to
// itself, so that the server runs the borg that started it.
const borgEnv = "BORG_BIN"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run serves the store named by args (--store DIR, else where borg finds
// it) over in and out until in ends, and returns the exit code.
func run(ctx context.Context, args []string, in io.Reader, out, errw io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("borg-mcp", flag.ContinueOnError)
	fs.SetOutput(errw)
	store := fs.String("store", "", "the store to serve (default: as borg finds it)")
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: borg-mcp [--store DIR]\n\nserves a borg store to an agent over the Model Context Protocol (stdio); agents start it as borg mcp")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(errw, "borg-mcp: it takes no arguments (the store is --store DIR)")
		return 2
	}
	opts := []memfs.Option{memfs.WithEnv(getenv), memfs.WithWarn(func(line string) { fmt.Fprintf(errw, "borg-mcp: %s\n", line) })}
	s, err := memfs.Open(memfs.Discover(*store, getenv), opts...)
	if err != nil {
		fmt.Fprintf(errw, "borg-mcp: %v\n", err)
		return 1
	}
	borg, err := borgBinary(getenv)
	if err != nil {
		fmt.Fprintf(errw, "borg-mcp: %v\n", err)
		return 1
	}
	srv := newServer(s.Dir(), borg, opts, errw)
	// A bad line is answered with a JSON-RPC error and the server keeps
	// serving (guardedStdio).
	if err := srv.Run(ctx, guardedStdio(in, out, maxMCPLine, endGrace)); err != nil && ctx.Err() == nil {
		fmt.Fprintf(errw, "borg-mcp: %v\n", err)
		return 1
	}
	return 0
}

// borgBinary is the borg the tools run: $BORG_BIN, else the borg beside
// this binary, else the one on PATH.
func borgBinary(getenv func(string) string) (string, error) {
	if b := getenv(borgEnv); b != "" {
		return b, nil
	}
	p, err := fsutil.Sibling("borg")
	if err != nil {
		return "", fmt.Errorf("the tools run borg: %v; install it with: CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/borg (from a checkout)", err)
	}
	return p, nil
}
