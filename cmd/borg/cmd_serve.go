package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

// defaultServeAddr is where borg serve listens without --addr: loopback only.
const defaultServeAddr = "127.0.0.1:7777"

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "a small local web page over the store: search, lessons, their memory and links, the pending sleep",
		ArgsUsage: " ",
		Description: "borg serve renders the store as read-only HTML pages: / searches as borg recall does\n" +
			"(each hit with its relevance) and lists the lessons; /lesson/<id> shows a lesson, its memory\n" +
			"(uses, activation, the belief over time as a chart, the ranking factor) and its links, those\n" +
			"lesson files declare and those the hooks derive; /sleep shows what tonight's sleep would do, phase by\n" +
			"phase, with each phase's diff (a dry run: nothing is written). The pages run no script.\n" +
			"It listens on loopback only unless --public is given. Stop it with Ctrl-C.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "addr", Value: defaultServeAddr, Usage: "the `HOST:PORT` to listen on (port 0 picks a free one)"},
			&cli.BoolFlag{Name: "public", Usage: "allow an --addr that is not loopback (anyone who can reach it reads the store)"},
			&cli.StringFlag{Name: "repo", Usage: "repo tag the searches run as (default: the current git repository's)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("serve takes flags only: borg serve [--addr 127.0.0.1:7777]")
			}
			addr := c.String("addr")
			loop, err := loopbackAddr(addr)
			if err != nil {
				return usageErr("--addr %q: %v", addr, err)
			}
			if !loop && !c.Bool("public") {
				return fail(exitRefused, "--addr %s is not a loopback address: anyone who can reach it could read the store; pass --public to serve it anyway", addr)
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			repo := c.String("repo")
			if !c.IsSet("repo") {
				repo = repoTag()
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, e, s, serveOptions{addr: addr, public: !loop, repo: repo})
		},
	}
}

// serveOptions configures runServe.
type serveOptions struct {
	addr   string
	public bool   // listening beyond loopback (--public): no Host check
	repo   string // the repo tag searches run as
}

// loopbackAddr reports whether addr (HOST:PORT) listens on loopback only.
// An empty host (every interface) is not loopback; a host name other than
// localhost is refused as unknowable without resolving it.
func loopbackAddr(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("want HOST:PORT, e.g. %s", defaultServeAddr)
	}
	if port == "" {
		return false, fmt.Errorf("no port (use :0 for a free one)")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n > 65535 {
		return false, fmt.Errorf("port %q: want a number from 0 to 65535 (0: a free one)", port)
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	if host == "" {
		return false, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false, fmt.Errorf("use an IP address or localhost, not a host name")
	}
	return ip.IsLoopback(), nil
}

// runServe listens on o.addr, prints the URL and serves the store's pages
// until ctx is cancelled, then shuts down, letting requests in flight end.
func runServe(ctx context.Context, e *env, s *memfs.Store, o serveOptions) error {
	h, err := newServer(e, s, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fail(exitFail, "listen on %s: the port is in use (another borg serve?): pick another with --addr, or --addr 127.0.0.1:0 for a free one", o.addr)
	}
	if err != nil {
		return fail(exitFail, "listen on %s: %v", o.addr, err)
	}
	if o.public {
		fmt.Fprintf(e.err, "borg: warning: serving on %s beyond loopback: anyone who can reach it reads the store\n", ln.Addr())
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute, // a first search may index the store
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(e.out, "borg serve: http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fail(exitFail, "serve: %v", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(exitFail, "serve: %v", err)
	}
	fmt.Fprintln(e.err, "borg serve: stopped")
	return nil
}
