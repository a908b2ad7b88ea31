package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/memfs"
)

func linksCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "links",
		Usage:     "list the links between what agents use (tools, lessons) and the protos the team keeps wishing for",
		ArgsUsage: " ",
		Description: "Links are derived from the log's passing events (docs/design.md): a tool whose output fed\n" +
			"another, lessons acted on together, and protos, things an agent reached for that did not\n" +
			"exist (a command, a make target, an npm script, a file). States are as the ager reads them\n" +
			"now: active, decaying (weight under 0.20), proto, superseded.",
		Flags: []cli.Flag{
			storeFlag(), jsonFlag(),
			&cli.StringFlag{Name: "from", Usage: "only links whose source is `X`"},
			&cli.StringFlag{Name: "to", Usage: "only links whose destination is `Y`"},
			&cli.StringFlag{Name: "state", Usage: "only links in `STATE` (active, decaying, proto, superseded)"},
			&cli.BoolFlag{Name: "protos", Usage: "only the recurring protos (uses ≥ 3, weight ≥ 0.30) not built yet"},
			&cli.StringFlag{Name: "walk", Usage: "the links reachable from `X`, following links forward"},
			&cli.IntFlag{Name: "depth", Value: 2, Usage: "how many links --walk follows"},
		},
		Subcommands: []*cli.Command{linksPromoteCommand(e)},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("links takes flags only (borg links --help); to promote a proto: borg links promote DST")
			}
			if st := c.String("state"); st != "" && !slices.Contains([]string{"active", "decaying", "proto", "superseded"}, st) {
				return usageErr("--state %q: use active, decaying, proto or superseded", st)
			}
			if c.IsSet("depth") && c.String("walk") == "" {
				return usageErr("--depth goes with --walk X")
			}
			if c.Int("depth") < 1 {
				return usageErr("--depth must be at least 1")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			links, err := currentLinks(e, s)
			if err != nil {
				return err
			}
			all := len(links)
			links = filterLinks(links, linkFilter{from: c.String("from"), to: c.String("to"), state: c.String("state"),
				protos: c.Bool("protos"), walk: c.String("walk"), depth: c.Int("depth")}, e.now().UnixMilli())
			if len(links) == 0 && c.Bool("protos") && !c.Bool("json") {
				_, err := fmt.Fprintf(e.out, "no protos (a proto is a tool, target or file agents reached for and did not find, three times or more; the store has %d link(s))\n", all)
				return err
			}
			if len(links) == 0 && all > 0 && !c.Bool("json") {
				_, err := fmt.Fprintf(e.out, "no link matches (the store has %d; borg links lists them all)\n", all)
				return err
			}
			return printLinks(e, links, c.Bool("json"))
		},
	}
}

// shownLink is one link as borg links prints it: weight read now.
type shownLink struct {
	domain.Link
	WeightNow float64 `json:"weight_now"`
	// Promoted is set on a proto whose destination now has an active link
	// from the same source.
	Promoted bool `json:"promoted,omitempty"`
}

// currentLinks folds the log's passings and ages them at now. The passings
// come from the store's cached ledger (LoadLedger folds only the lines
// appended since), not from a read of the whole log.
func currentLinks(e *env, s *memfs.Store) ([]shownLink, error) {
	led, err := s.LoadLedger()
	if err != nil {
		return nil, fail(exitFail, "%v (run borg doctor)", err)
	}
	now := e.now().UnixMilli()
	aged := domain.AgeLinks(led.Links(), now).Links
	active := map[[2]string]bool{}
	for _, l := range aged {
		if l.State == domain.LinkActive {
			active[[2]string{l.Src, l.Dst}] = true
		}
	}
	out := make([]shownLink, len(aged))
	for i, l := range aged {
		out[i] = shownLink{Link: l, WeightNow: l.WeightAt(now),
			Promoted: l.State == domain.LinkProto && active[[2]string{l.Src, l.Dst}]}
	}
	return out, nil
}

type linkFilter struct {
	from, to, state, walk string
	protos                bool
	depth                 int
}

func filterLinks(links []shownLink, f linkFilter, now int64) []shownLink {
	keep := func(l shownLink) bool {
		return (f.from == "" || l.Src == f.from) && (f.to == "" || l.Dst == f.to) &&
			(f.state == "" || string(l.State) == f.state)
	}
	if f.protos {
		recurring := map[domain.LinkKey]bool{}
		plain := make([]domain.Link, len(links))
		for i, l := range links {
			plain[i] = l.Link
		}
		for _, l := range domain.RecurringProtos(plain, now) {
			recurring[l.Key()] = true
		}
		prev := keep
		keep = func(l shownLink) bool { return prev(l) && recurring[l.Key()] && !l.Promoted }
	}
	if f.walk != "" {
		reach := map[string]bool{f.walk: true}
		frontier := []string{f.walk}
		var walked []shownLink
		seen := map[domain.LinkKey]bool{}
		for d := 0; d < f.depth && len(frontier) > 0; d++ {
			var next []string
			for _, src := range frontier {
				for _, l := range links {
					if l.Src != src || seen[l.Key()] || l.State == domain.LinkSuperseded {
						continue
					}
					seen[l.Key()] = true
					walked = append(walked, l)
					if !reach[l.Dst] {
						reach[l.Dst] = true
						next = append(next, l.Dst)
					}
				}
			}
			frontier = next
		}
		links = walked
	}
	var out []shownLink
	for _, l := range links {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

func printLinks(e *env, links []shownLink, asJSON bool) error {
	if asJSON {
		if links == nil {
			links = []shownLink{}
		}
		return writeJSON(e, links)
	}
	if len(links) == 0 {
		_, err := fmt.Fprintln(e.out, "no links (they come from agent sessions through the hooks: borg install)")
		return err
	}
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "state\tweight\tuses\tsource\t→ destination")
	for _, l := range links {
		state := string(l.State)
		if l.Promoted {
			state += " (promoted)"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%d\t%s\t→ %s\n", state, l.WeightNow, l.Uses, cellSafe(endpoint(l.Src, l.SrcV)), cellSafe(endpoint(l.Dst, l.DstV)))
	}
	return tw.Flush()
}

// cellEscapes spell the characters that would end a table's cell or row.
var cellEscapes = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// cellSafe is s for one cell of a table: a link's ends come from any
// teammate's log lines, and a newline or tab in one would start a row or
// a column of its own (a forged link on screen). termSafe escapes the
// other control characters.
func cellSafe(s string) string { return cellEscapes.Replace(s) }

// endpoint prints a link end with its version, shortened for a terminal.
func endpoint(name, version string) string {
	switch version {
	case "":
		return name
	case domain.ProtoVersion:
		return name + " (missing)"
	}
	if len(version) > 40 {
		version = "…" + version[len(version)-39:]
	}
	return name + "@" + version
}

func linksPromoteCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "promote",
		Usage:     "make a proto an active link, now that what it wanted exists",
		ArgsUsage: "DST",
		Description: "DST is a proto's destination as borg links --protos shows it (cmd:NAME, make:TARGET,\n" +
			"npm:SCRIPT, file:PATH). borg checks that it exists now, from the working directory (the\n" +
			"command on PATH, the target in the Makefile, the script in package.json, the file), and\n" +
			"records a passing from each source that wanted it to the real thing, which starts an\n" +
			"active link. The proto itself fades with the ager.",
		Flags: []cli.Flag{storeFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("links promote takes one destination, as borg links --protos lists it: borg links promote make:migrate")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runPromote(e, s, c.Args().First())
		},
	}
}

func runPromote(e *env, s *memfs.Store, dst string) error {
	links, err := currentLinks(e, s)
	if err != nil {
		return err
	}
	var protos []shownLink
	for _, l := range links {
		if l.Dst == dst && l.State == domain.LinkProto {
			protos = append(protos, l)
		}
	}
	if len(protos) == 0 {
		return fail(exitFail, "no proto wants %s (see borg links --state proto)", dst)
	}
	cwd, _ := os.Getwd()
	version, err := existsNow(dst, cwd)
	if err != nil {
		return fail(exitFail, "%s does not exist yet: %v; build it, then promote it", dst, err)
	}
	var events []domain.Event
	for _, p := range protos {
		events = append(events, domain.Event{MS: e.now().UnixMilli(), Kind: domain.KindPassing,
			Session: memfs.HashSession("borg-links-promote\x00" + dst), Repo: repoTag(), Author: engineer(e),
			Src: p.Src, SrcV: p.SrcV, Dst: dst, DstV: version})
	}
	if err := s.Append(events...); err != nil {
		return err
	}
	if s.ShareOutcomes() {
		logs, err := s.OwnLogPaths()
		if err == nil {
			_, err = s.Commit("borg links promote: "+dst, logs...)
		}
		if err != nil {
			return fail(exitFail, "promotion recorded but not committed: %v", err)
		}
	}
	_, err = fmt.Fprintf(e.out, "promoted %s (%s): an active link from %d source(s)\n", dst, version, len(protos))
	return err
}

// existsNow checks that a proto's destination exists from dir and returns
// its version: a command's resolved path, else the kind's file.
func existsNow(dst, dir string) (string, error) {
	kind, name, ok := strings.Cut(dst, ":")
	if !ok || name == "" {
		return "", fmt.Errorf("%q is not KIND:NAME", dst)
	}
	switch kind {
	case "cmd":
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s is not on PATH", name)
		}
		abs, _ := filepath.Abs(p)
		return hooks.PathVersion(abs), nil
	case "make":
		for _, mf := range []string{"GNUmakefile", "makefile", "Makefile"} {
			data, err := os.ReadFile(filepath.Join(dir, mf))
			if err != nil {
				continue
			}
			re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*::?([^=]|$)`)
			if re.Match(data) {
				return mf, nil
			}
			return "", fmt.Errorf("no rule for %s in %s", name, mf)
		}
		return "", fmt.Errorf("no Makefile in %s", dir)
	case "npm":
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			return "", fmt.Errorf("no package.json in %s", dir)
		}
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(data, &pkg) != nil || pkg.Scripts[name] == "" {
			return "", fmt.Errorf("no script %s in package.json", name)
		}
		return "package.json", nil
	case "file":
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return "", fmt.Errorf("no file %s in %s", name, dir)
		}
		return name, nil
	}
	return "", fmt.Errorf("unknown kind %q (cmd, make, npm or file)", kind)
}
