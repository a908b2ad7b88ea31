package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// Shell completion: the bash and zsh scripts ask borg itself for the
// candidates (completions: the commands, then a command's subcommands, or
// its flags when the word being completed starts with "-"), so they never
// go stale; fish gets a generated static script.

// completionFlag, last on a command line, asks for completions instead of
// running it (the name urfave/cli's scripts use).
const completionFlag = "--generate-bash-completion"

// completions lists what may come next after words (the command line so
// far, without the program's name; a last word starting with "-" is the
// flag being typed). After a "--" that ends the flags it lists nothing:
// what follows is the command's free text.
func completions(app *cli.App, words []string) []string {
	flags := app.Flags
	subs := app.Commands
	typingFlag := len(words) > 0 && strings.HasPrefix(words[len(words)-1], "-")
	for i, w := range words {
		if w == "--" && i < len(words)-1 {
			return nil
		}
		if strings.HasPrefix(w, "-") {
			continue
		}
		var next *cli.Command
		for _, c := range subs {
			if c.HasName(w) {
				next = c
			}
		}
		if next == nil {
			break
		}
		flags, subs = next.Flags, next.Subcommands
	}
	var out []string
	if typingFlag {
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) > 1 {
					out = append(out, "--"+n)
				}
			}
		}
		return out
	}
	for _, c := range subs {
		if !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

const bashCompletion = `# borg completion for bash: source it, or save it as
# /etc/bash_completion.d/borg (or ~/.local/share/bash-completion/completions/borg).
_borg_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _borg_complete borg
`

const zshCompletion = `#compdef borg
# borg completion for zsh: save it as _borg in a directory of your $fpath.
_borg() {
  local -a opts
  local cur="${words[-1]}"
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} "$cur" --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'borg' opts
  else
    _files
  fi
}
compdef _borg borg
`

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: borg completion bash > ~/.local/share/bash-completion/completions/borg\n" +
			"zsh:  borg completion zsh > \"${fpath[1]}/_borg\"\n" +
			"fish: borg completion fish > ~/.config/fish/completions/borg.fish",
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(e.out, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(e.out, zshCompletion)
				return err
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return fail(exitFail, "fish completion: %v", err)
				}
				_, err = fmt.Fprint(e.out, script)
				return err
			}
			return usageErr("completion takes a shell: bash, zsh or fish")
		},
	}
}
