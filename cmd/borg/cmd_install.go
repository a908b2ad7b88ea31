package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/memfs"
)

// installAgents are the agents install wires, each a flag.
var installAgents = []string{"claude", "codex", "gemini", "qwen", "cursor", "cline", "git"}

func installFlags() []cli.Flag {
	return []cli.Flag{
		jsonFlag(),
		&cli.BoolFlag{Name: "claude", Usage: "Claude Code hooks (.claude/settings.json)"},
		&cli.BoolFlag{Name: "codex", Usage: "Codex CLI hooks (.codex/hooks.json)"},
		&cli.BoolFlag{Name: "gemini", Usage: "Gemini CLI hooks (.gemini/settings.json)"},
		&cli.BoolFlag{Name: "qwen", Usage: "Qwen Code hooks (.qwen/settings.json)"},
		&cli.BoolFlag{Name: "cursor", Usage: "Cursor hooks (.cursor/hooks.json)"},
		&cli.BoolFlag{Name: "cline", Usage: "Cline hooks (.clinerules/hooks/; project only)"},
		&cli.BoolFlag{Name: "git", Usage: "git post-commit hook"},
		&cli.BoolFlag{Name: "mcp", Usage: "also register borg mcp as an MCP server (Claude Code: .mcp.json; Codex: .codex/config.toml)"},
		&cli.BoolFlag{Name: "user", Usage: "agent hooks in your home directory instead of the repository"},
		&cli.StringFlag{Name: "repo", Usage: "the project repository (default: the current one)"},
		&cli.StringFlag{Name: "dir", Usage: "the folder inside the repository the agents' project settings go in, for an agent started there (default: the repository's top level; Claude Code reads only the folder it starts in)"},
		&cli.StringFlag{Name: "command", Usage: "how hooks call borg: one program, a path or a name on PATH, that must be there to run (default: borg when that name on PATH is this binary, else this binary's absolute path)"},
	}
}

func installCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "wire borg into Claude Code, Codex CLI, Gemini CLI, Qwen Code, Cursor, Cline and git (keeps every existing hook; idempotent)",
		Description: "Without an agent flag or --git, installs Claude Code, Codex CLI and git, and Gemini CLI, Qwen Code,\n" +
			"Cursor and Cline where their directory (.gemini/, .qwen/, .cursor/, .clinerules/) already exists. Existing hooks keep running;\n" +
			"borg uninstall restores the files' original bytes. With --store DIR before it (borg --store DIR install),\n" +
			"the hooks and the MCP server use that store.",
		Flags:  installFlags(),
		Action: func(c *cli.Context) error { return runInstall(c, e, false) },
	}
}

func uninstallCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:   "uninstall",
		Usage:  "take borg's hooks out again, restoring the original files",
		Flags:  installFlags(),
		Action: func(c *cli.Context) error { return runInstall(c, e, true) },
	}
}

func runInstall(c *cli.Context, e *env, remove bool) error {
	if c.NArg() > 0 {
		verb, a := "install", c.Args().First()
		if remove {
			verb = "uninstall"
		}
		if slices.Contains(installAgents, a) {
			return usageErr("%s takes flags, not arguments: the agents are flags (borg %s --%s)", verb, verb, a)
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			return usageErr("%s takes flags, not arguments: the project is --repo (borg %s --repo %s)", verb, verb, a)
		}
		return usageErr("%s takes flags, not arguments (the agents: --%s)", verb, strings.Join(installAgents, ", --"))
	}
	pl := installPlan{claude: c.Bool("claude"), codex: c.Bool("codex"), git: c.Bool("git"),
		gemini: c.Bool("gemini"), qwen: c.Bool("qwen"), cursor: c.Bool("cursor"), cline: c.Bool("cline"),
		user: c.Bool("user"), mcp: c.Bool("mcp"), remove: remove}
	if pl.cline && pl.user {
		return usageErr("--cline --user: borg installs Cline's hooks per project only (Cline's docs name two different user hook folders)")
	}
	home, _ := os.UserHomeDir()
	if h := e.getenv("HOME"); h != "" {
		home = h
	}
	defaults := !pl.claude && !pl.codex && !pl.git && !pl.gemini && !pl.qwen && !pl.cursor && !pl.cline
	repo, dir := c.String("repo"), c.String("dir")
	if dir != "" {
		if pl.user {
			return usageErr("--dir names a folder of the project; --user writes to your home instead")
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageErr("--dir %s: no such directory (name the folder an agent starts in)", dir)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fail(exitFail, "--dir %s: %v", dir, err)
		}
		dir = abs
	}
	switch {
	case repo != "":
		if fi, err := os.Stat(repo); err != nil || !fi.IsDir() {
			return usageErr("--repo %s: no such directory (name the project's git repository)", repo)
		}
		repo = memfs.GitToplevel(repo)
	case dir != "":
		repo = memfs.GitToplevel(dir)
	default:
		wd, _ := os.Getwd()
		repo = memfs.GitToplevel(wd)
	}
	if repo == "" && (pl.git || !pl.user) {
		return fail(exitFail, "not inside a git repository: run borg install from your project, pass --repo DIR, or use --user for agent hooks only")
	}
	if dir != "" && !within(repo, dir) {
		return usageErr("--dir %s is not inside the repository %s", dir, repo)
	}
	command, err := installCommandPath(c.String("command"), !remove)
	if err != nil {
		return err
	}
	in := hooks.Installer{Repo: repo, Dir: dir, Home: home, Command: command}
	if st := globalStore(c); st != "" {
		// `borg --store DIR install`: the hooks use that store too.
		abs, err := filepath.Abs(st)
		if err != nil {
			return fail(exitFail, "--store %s: %v", st, err)
		}
		if !remove {
			// Hooks for a store that is not there would fail open, for
			// good and silently.
			if _, err := memfs.Open(abs); err != nil {
				return fail(exitFail, "%v", err)
			}
		}
		in.Store = abs
	}
	if defaults {
		// Claude Code and Codex as ever; Gemini CLI, Qwen Code, Cursor and
		// Cline only where they are in use (their directory exists), so a
		// default install adds no .gemini/, .qwen/, .cursor/ or
		// .clinerules/ to a project that uses none of them.
		// Uninstall takes out all of them.
		pl.claude, pl.codex, pl.git = true, true, !pl.user
		pl.gemini = remove || dirExists(filepath.Dir(in.GeminiSettingsPath(pl.user)))
		pl.qwen = remove || dirExists(filepath.Dir(in.QwenSettingsPath(pl.user)))
		pl.cursor = remove || dirExists(filepath.Dir(in.CursorHooksPath(pl.user)))
		pl.cline = !pl.user && (remove || dirExists(filepath.Dir(in.ClineHooksDir())))
	}
	if pl.mcp && pl.user && pl.claude {
		return usageErr("--mcp --user: Claude Code keeps user MCP servers in its own file; run: claude mcp add --scope user borg -- %s mcp", command)
	}
	// Every step runs, one failing or not: what was done is said, and
	// what failed is named after it (an install half done and silent
	// leaves the user guessing which agent is wired).
	var done []hooks.InstallTarget
	var failed []string
	for _, step := range pl.steps(in) {
		t, err := step()
		if se, ok := errors.AsType[*hooks.SettingsError](err); ok && !remove && defaults && optionalAgents[t.Kind] != "" {
			// An agent wired only because its folder is there, whose
			// settings borg cannot rewrite: skipped, and said why; an
			// install that names it (--gemini) fails instead.
			t.Action, t.Note = "skipped", skippedNote(se, t.Kind)
			err = nil
		}
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		done = append(done, t)
	}
	if c.Bool("json") {
		if err := writeJSON(e, done); err != nil {
			return err
		}
	} else {
		for _, t := range done {
			fmt.Fprintf(e.out, "%-6s %-18s %s\n", t.Kind, t.Action, t.Path)
		}
		for _, t := range done {
			if t.Warning != "" {
				fmt.Fprintf(e.out, "warning: %s\n", t.Warning)
			}
			if t.Note != "" {
				fmt.Fprintf(e.out, "note: %s\n", t.Note)
			}
		}
	}
	if len(failed) > 0 {
		verb := "install"
		if remove {
			verb = "uninstall"
		}
		return fail(exitFail, "%s: %s", verb, strings.Join(failed, "; "))
	}
	if c.Bool("json") {
		return nil
	}
	if pl.mcp && !remove {
		// The server is a binary of its own: say so now, not when an
		// agent first fails to start it.
		if _, err := findMCPServer(); err != nil {
			fmt.Fprintf(e.out, "note: %s\n", strings.TrimPrefix(err.Error(), "mcp: "))
		}
	}
	if pl.claude && !remove && !pl.user && dir == "" && c.String("repo") == "" {
		// Claude Code reads a project's settings in the folder it
		// starts in only, not up to the repository's top (Codex looks
		// up): say so where it is missed, below the top.
		if wd, err := os.Getwd(); err == nil && within(repo, wd) && !sameFile(wd, repo) {
			rel, _ := filepath.Rel(resolved(repo), resolved(wd))
			fmt.Fprintf(e.out, "note: Claude Code reads .claude/settings.json in the folder it starts in only: these hooks run when claude starts in %s, not in %s; to wire sessions started here too, run: borg install --claude --dir .\n", repo, rel)
		}
	}
	if pl.codex && !remove {
		// Codex's own rule, not borg's: say it where it is missed.
		fmt.Fprintln(e.out, "note: Codex runs a project's hooks only in a trusted project, once you have trusted the hooks themselves: run /hooks in Codex")
	}
	return nil
}

// optionalAgents are the agents a default install wires only where their
// folder exists, by their names.
var optionalAgents = map[string]string{hooks.AgentGemini: "Gemini CLI", hooks.AgentQwen: "Qwen Code", hooks.AgentCursor: "Cursor"}

// skippedNote says why a default install skipped an agent's settings file,
// and how to wire the agent.
func skippedNote(se *hooks.SettingsError, kind string) string {
	why := fmt.Sprintf("is not JSON borg can read (%v)", errors.Unwrap(se))
	fix := "fix it"
	if se.Comments {
		why, fix = "holds comments, which borg would lose in rewriting it", "remove the comments"
	}
	return fmt.Sprintf("%s %s: %s is not wired; %s and run borg install --%s, or add borg's hooks by hand (borg hook stop, borg hook prompt, …)", se.Path, why, optionalAgents[kind], fix, kind)
}

// installCommandPath is the command the hooks run borg by: --command, else
// "borg" when that is this binary on PATH, else this binary's path. With
// check (install), it must be a program there to run, and not the
// temporary build of go run, which is gone when go run exits: hooks that
// call a program that is not there fail in every session.
func installCommandPath(command string, check bool) (string, error) {
	given := command != ""
	if !given {
		exe, err := os.Executable()
		if err != nil {
			return "", fail(exitFail, "find borg's own path: %v (pass --command)", err)
		}
		command = exe
		if p, err := exec.LookPath("borg"); err == nil {
			if ap, err := filepath.Abs(p); err == nil && sameFile(ap, exe) {
				command = "borg"
			}
		}
	}
	if !check {
		return command, nil
	}
	if err := checkHookCommand(command, given); err != nil {
		return "", err
	}
	return command, nil
}

// goRunBuild matches the path of a binary go run built: it deletes it when
// it exits.
// Compiled on first use: every borg process would pay for it at start-up.
var goRunBuild = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[/\\])go-build[0-9]*[/\\]b[0-9]+[/\\]exe[/\\][^/\\]+$`)
})

// checkHookCommand refuses a hook command that is no program there to
// run, with the fix; given says the user passed it (--command).
func checkHookCommand(command string, given bool) error {
	what := "--command " + command
	if !given {
		what = "borg's own path, " + command + ","
	}
	fix := "pass borg's installed path: borg install --command /path/to/borg"
	var resolved string
	if strings.ContainsAny(command, `/\`) {
		fi, err := os.Stat(command)
		switch {
		case err != nil:
			return fail(exitFail, "%s is not there (%v): the hooks would fail in every session; %s", what, errors.Unwrap(err), fix)
		case fi.IsDir() || runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
			return fail(exitFail, "%s is not an executable: the hooks would fail in every session; %s", what, fix)
		}
		resolved = command
	} else {
		p, err := exec.LookPath(command)
		if err != nil {
			msg := fmt.Sprintf("%s: no program of that name on PATH: the hooks would fail in every session; %s, or put borg on PATH first", what, fix)
			if strings.ContainsAny(command, " \t") {
				msg += " (--command is one program, borg's path, not a command line: set BORG_* variables in the agent's environment, or in a script that runs borg)"
			}
			return fail(exitFail, "%s", msg)
		}
		resolved = p
	}
	if goRunBuild().MatchString(filepath.ToSlash(resolved)) && !(given && isSelf(resolved)) {
		// Named on purpose, this very binary, is a caller that knows
		// (borg demo, run by go run, on its throwaway project).
		return fail(exitFail, "%s is go run's temporary build, deleted when go run exits: the hooks would call a program that is gone; install borg (go install ./cmd/borg) and run borg install with it, or %s", what, fix)
	}
	return nil
}

// installPlan is what borg install (or, with remove, uninstall) touches.
type installPlan struct {
	claude, codex, git, gemini, qwen, cursor, cline bool
	user, mcp, remove                               bool
}

type installStep func() (hooks.InstallTarget, error)

// steps are the plan's installs (or uninstalls), in the order they run:
// Claude Code (and its MCP server), Codex (and its config), Gemini CLI,
// Qwen Code, Cursor, Cline, the git hook.
func (pl installPlan) steps(in hooks.Installer) []installStep {
	var out []installStep
	add := func(on bool, install, uninstall installStep) {
		step := install
		if pl.remove {
			step = uninstall
		}
		if on && step != nil {
			out = append(out, step)
		}
	}
	user := pl.user
	agent := func(kind, path string) (installStep, installStep) {
		return func() (hooks.InstallTarget, error) { return in.InstallAgent(kind, path, user) },
			func() (hooks.InstallTarget, error) { return in.UninstallAgent(kind, path, user) }
	}
	mcpPath, codexCfg := in.ClaudeMCPPath(), in.CodexConfigPath(user)
	claudeIn, claudeOut := agent("claude", in.ClaudeSettingsPath(user))
	add(pl.claude, claudeIn, claudeOut)
	add(pl.claude && pl.mcp, func() (hooks.InstallTarget, error) { return in.InstallClaudeMCP(mcpPath) }, nil)
	add(pl.claude && !user, nil, func() (hooks.InstallTarget, error) { return in.UninstallClaudeMCP(mcpPath) })
	codexIn, codexOut := agent("codex", in.CodexHooksPath(user))
	add(pl.codex, codexIn, codexOut)
	add(pl.codex, func() (hooks.InstallTarget, error) { return in.InstallCodexConfig(codexCfg, user, pl.mcp) },
		func() (hooks.InstallTarget, error) { return in.UninstallCodexConfig(codexCfg, user) })
	geminiIn, geminiOut := agent(hooks.AgentGemini, in.GeminiSettingsPath(user))
	add(pl.gemini, geminiIn, geminiOut)
	qwenIn, qwenOut := agent(hooks.AgentQwen, in.QwenSettingsPath(user))
	add(pl.qwen, qwenIn, qwenOut)
	cursorIn, cursorOut := agent(hooks.AgentCursor, in.CursorHooksPath(user))
	add(pl.cursor, cursorIn, cursorOut)
	add(pl.cline, in.InstallCline, in.UninstallCline)
	add(pl.git, in.InstallGit, in.UninstallGit)
	return out
}

// within reports whether path is top or inside it (symlinks resolved).
func within(top, path string) bool {
	rel, err := filepath.Rel(resolved(top), resolved(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved is path absolute, its symlinks resolved where it exists.
func resolved(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// isSelf reports whether path is this running binary.
func isSelf(path string) bool {
	exe, err := os.Executable()
	return err == nil && sameFile(path, exe)
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
