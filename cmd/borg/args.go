package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a command's flags before its arguments, so that
// `borg learn "gist" --tag go` parses like `borg learn --tag go "gist"`
// (urfave/cli v2 stops reading flags at the first argument). Everything
// after a "--" stays an argument, and so does a token with a space in its
// name ("-v flag is broken" is a query, not a flag). A flag that takes a
// value and ends the line is a usage error: moved before the arguments, it
// would read the "--" that ends the flags as its value.
func interspersed(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := []string{args[0]}
	i := 1
	// Global flags, up to the command name.
	for i < len(args) && isFlag(args[i]) {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value (borg --help lists the flags)", args[i])
			}
			i++
			out = append(out, args[i])
		}
		i++
	}
	if i >= len(args) {
		return out, nil
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		return append(out, args[i:]...), nil
	}
	out = append(out, args[i])
	i++
	for len(cmd.Subcommands) > 0 && i < len(args) {
		sub := cmd.Command(args[i])
		if sub == nil {
			break
		}
		cmd = sub
		out = append(out, args[i])
		i++
	}
	if cmd.SkipFlagParsing {
		// Its arguments are its own to read (a hook's), as given.
		return append(out, args[i:]...), nil
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !isFlag(a) {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if takesValue(cmd.Flags, a) {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value (%s --help lists the flags)", a, strings.Join(out, " "))
			}
			i++
			flags = append(flags, args[i])
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out, nil
}

// isFlag reports whether a token is a flag: it starts with "-", is not "-"
// alone (stdin), and has no space before any "=" (a flag's name never
// does; a query such as "-v flag is broken" does).
func isFlag(tok string) bool {
	if !strings.HasPrefix(tok, "-") || tok == "-" {
		return false
	}
	name, _, _ := strings.Cut(tok, "=")
	return !strings.ContainsAny(name, " \t\n")
}

// takesValue reports whether the flag token names a flag that reads the
// next token as its value ("--body TEXT", not "--body=TEXT" or "--json").
func takesValue(flags []cli.Flag, tok string) bool {
	if strings.Contains(tok, "=") {
		return false
	}
	name := strings.TrimLeft(tok, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if tv, ok := f.(interface{ TakesValue() bool }); ok {
				return tv.TakesValue()
			}
			return false
		}
	}
	return false
}
