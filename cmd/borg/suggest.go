package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// Mistyped commands and flags. urfave/cli answers an unknown command with
// "No help topic for 'recal'" (exit 3, the code borg uses for a refusal) and
// an unknown flag with the command's whole help on stdout; borg answers both
// as usage errors (exit 2) in one line on stderr, naming the closest command
// or flag when one is close enough to be a typo. urfave/cli's own
// suggestion (App.Suggest) always names the nearest candidate, however far,
// so borg keeps it for `borg help <topic>` only and picks its own here.

// failOpen names the commands whose unknown subcommands still exit 0: the
// hook entry points, which agents and git call and which never fail.
var failOpen = map[string]bool{"borg hook": true}

// withSuggestions gives the app and every command that has subcommands but
// no action of its own an action that refuses an unknown command, and every
// command a usage-error handler that names the closest flag.
func withSuggestions(app *cli.App) {
	app.Suggest = true // `borg help recal`: "… Did you mean command "recall"?"
	app.Action = func(c *cli.Context) error {
		if c.NArg() == 0 {
			return cli.ShowAppHelp(c)
		}
		return unknownCommand("borg", c.Args().First(), app.Commands)
	}
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return flagUsageError("borg", err, app.Flags)
	}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			name := prefix + " " + cmd.Name
			if cmd.OnUsageError == nil {
				flags := cmd.Flags
				cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
					return flagUsageError(name, err, flags)
				}
			}
			if len(cmd.Subcommands) > 0 && cmd.Action == nil {
				subs := cmd.Subcommands
				cmd.Action = func(c *cli.Context) error {
					if c.NArg() == 0 && failOpen[name] && !isTerminal(c.App.Reader) {
						// An agent's settings that name no hook: its
						// stdout must stay empty, so the help is not for it.
						_, werr := fmt.Fprintf(c.App.ErrWriter, "borg: %s names no hook (one of: %s); nothing done, the agent carries on\n", name, strings.Join(commandNames(subs), ", "))
						return werr
					}
					if c.NArg() == 0 {
						return cli.ShowSubcommandHelp(c)
					}
					err := unknownCommand(name, c.Args().First(), subs)
					if failOpen[name] {
						// An agent runs these: exit 2 would block it, and
						// Cline blocks on any failure. Say it and carry on.
						_, werr := fmt.Fprintf(c.App.ErrWriter, "borg: %v; nothing done, the agent carries on\n", err)
						return werr
					}
					return err
				}
			}
			walk(name, cmd.Subcommands)
		}
	}
	walk("borg", app.Commands)
}

// unknownCommand is the usage error for `<parent> <word>` when no command
// of that name exists.
func unknownCommand(parent, word string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if s := closest(word, names); s != "" {
		return usageErr("no command %q; did you mean %q? (%s --help lists the commands)", parent+" "+word, parent+" "+s, parent)
	}
	return usageErr("no command %q (%s --help lists the commands)", parent+" "+word, parent)
}

// undefinedFlag finds the flag name in the flag package's error for an
// unknown flag ("flag provided but not defined: -explian").
var undefinedFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(.+)$`) })

// flagUsageError is the usage error for a command's flags: the parser's
// message, and the closest flag when the flag given is unknown.
func flagUsageError(cmd string, err error, flags []cli.Flag) error {
	m := undefinedFlag().FindStringSubmatch(err.Error())
	if m == nil {
		return usageErr("%s: %v (%s --help lists the flags)", cmd, err, cmd)
	}
	typed := dashed(m[1])
	if m[1] == "store" || strings.HasPrefix(m[1], "store=") {
		// A command that takes only the global flag (install, uninstall,
		// demo): the store is named before the command, and the hooks
		// install writes then carry it (docs/reference.md).
		return usageErr("%s has no flag --store: name the store before the command, %s", cmd, strings.Replace(cmd, "borg", "borg --store DIR", 1))
	}
	var names []string
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		names = append(names, f.Names()...)
	}
	if s := closest(m[1], names); s != "" {
		return usageErr("%s has no flag %s; did you mean %s? (%s --help lists the flags)", cmd, typed, dashed(s), cmd)
	}
	return usageErr("%s has no flag %s (%s --help lists the flags)", cmd, typed, cmd)
}

// dashed writes a flag name as it is typed: -k, --explain.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// closest returns the candidate nearest to word when it is near enough to
// be a typo: within one edit for words of three to five letters, a third of
// the word's length for longer ones (a swap of two neighbouring letters is
// one edit), or a prefix of the candidate of at least three letters ("rec"
// for recall) that no other candidate shares. It returns "" otherwise, when
// two candidates are equally near, and for words under three letters, which
// are one edit from too much.
func closest(word string, candidates []string) string {
	word = strings.ToLower(word)
	if len(word) < 3 {
		return ""
	}
	limit := max(1, len(word)/3)
	best, bestD, tie := "", limit+1, false
	for _, c := range candidates {
		d := editDistance(word, strings.ToLower(c))
		switch {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD && c != best:
			tie = true
		}
	}
	if best != "" && !tie {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbouring letters,
// each one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// commandNames is the names of the visible commands of cmds.
func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return names
}
