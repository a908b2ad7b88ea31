package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/memfs"
)

func installFlags() []cli.Flag {
	return []cli.Flag{
		jsonFlag(),
		&cli.BoolFlag{Name: "claude", Usage: "Claude Code hooks (.claude/settings.json)"},
		&cli.BoolFlag{Name: "codex", Usage: "Codex CLI hooks (.codex/hooks.json)"},
		&cli.BoolFlag{Name: "gemini", Usage: "Gemini CLI hooks (.gemini/settings.json)"},
		&cli.BoolFlag{Name: "cursor", Usage: "Cursor hooks (.cursor/hooks.json)"},
		&cli.BoolFlag{Name: "cline", Usage: "Cline hooks (.clinerules/hooks/; project only)"},
		&cli.BoolFlag{Name: "git", Usage: "git post-commit hook"},
		&cli.BoolFlag{Name: "mcp", Usage: "also register borg mcp as an MCP server (Claude Code: .mcp.json; Codex: .codex/config.toml)"},
		&cli.BoolFlag{Name: "user", Usage: "agent hooks in your home directory instead of the repository"},
		&cli.StringFlag{Name: "repo", Usage: "the project repository (default: the current one)"},
		&cli.StringFlag{Name: "command", Usage: "how hooks call borg (default: this binary's absolute path)"},
	}
}

func installCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "wire borg into Claude Code, Codex CLI, Gemini CLI, Cursor, Cline and git (keeps every existing hook; idempotent)",
		Description: "Without an agent flag or --git, installs Claude Code, Codex CLI and git, and Gemini CLI, Cursor\n" +
			"and Cline where their directory (.gemini/, .cursor/, .clinerules/) already exists. Existing hooks keep running;\n" +
			"borg uninstall restores the files' original bytes.",
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
	claude, codex, gitHook := c.Bool("claude"), c.Bool("codex"), c.Bool("git")
	gemini, cursor, cline := c.Bool("gemini"), c.Bool("cursor"), c.Bool("cline")
	user := c.Bool("user")
	if cline && user {
		return usageErr("--cline --user: borg installs Cline's hooks per project only (Cline's docs name two different user hook folders)")
	}
	home, _ := os.UserHomeDir()
	if h := e.getenv("HOME"); h != "" {
		home = h
	}
	defaults := !claude && !codex && !gitHook && !gemini && !cursor && !cline
	repo := c.String("repo")
	if repo == "" {
		wd, _ := os.Getwd()
		repo = memfs.GitToplevel(wd)
	} else {
		repo = memfs.GitToplevel(repo)
	}
	if repo == "" && (gitHook || !user) {
		return fail(exitFail, "not inside a git repository: run borg install from your project, pass --repo DIR, or use --user for agent hooks only")
	}
	command := c.String("command")
	if command == "" {
		exe, err := os.Executable()
		if err != nil {
			return fail(exitFail, "find borg's own path: %v (pass --command)", err)
		}
		if p, err := exec.LookPath("borg"); err == nil {
			if ap, err := filepath.Abs(p); err == nil && sameFile(ap, exe) {
				exe = "borg"
			}
		}
		command = exe
	}
	in := hooks.Installer{Repo: repo, Home: home, Command: command}
	if defaults {
		// Claude Code and Codex as ever; Gemini CLI, Cursor and Cline only
		// where they are in use (their directory exists), so a default
		// install adds no .gemini/, .cursor/ or .clinerules/ to a project
		// that uses none of them.
		// Uninstall takes out all of them.
		claude, codex, gitHook = true, true, !user
		gemini = remove || dirExists(filepath.Dir(in.GeminiSettingsPath(user)))
		cursor = remove || dirExists(filepath.Dir(in.CursorHooksPath(user)))
		cline = !user && (remove || dirExists(filepath.Dir(in.ClineHooksDir())))
	}
	var done []hooks.InstallTarget
	step := func(t hooks.InstallTarget, err error) error {
		if err != nil {
			return fail(exitFail, "%v", err)
		}
		done = append(done, t)
		return nil
	}
	mcp := c.Bool("mcp")
	if mcp && user && claude {
		return usageErr("--mcp --user: Claude Code keeps user MCP servers in its own file; run: claude mcp add --scope user borg -- %s mcp", command)
	}
	if claude {
		p := in.ClaudeSettingsPath(user)
		if remove {
			err := step(in.UninstallAgent("claude", p, user))
			if err != nil {
				return err
			}
			if !user {
				if err := step(in.UninstallClaudeMCP(in.ClaudeMCPPath())); err != nil {
					return err
				}
			}
		} else if err := step(in.InstallAgent("claude", p, user)); err != nil {
			return err
		} else if mcp {
			if err := step(in.InstallClaudeMCP(in.ClaudeMCPPath())); err != nil {
				return err
			}
		}
	}
	if codex {
		p, cfg := in.CodexHooksPath(user), in.CodexConfigPath(user)
		if remove {
			if err := step(in.UninstallAgent("codex", p, user)); err != nil {
				return err
			}
			if err := step(in.UninstallCodexConfig(cfg, user)); err != nil {
				return err
			}
		} else {
			if err := step(in.InstallAgent("codex", p, user)); err != nil {
				return err
			}
			if err := step(in.InstallCodexConfig(cfg, user, mcp)); err != nil {
				return err
			}
		}
	}
	for _, a := range []struct {
		on   bool
		kind string
		path string
	}{{gemini, hooks.AgentGemini, in.GeminiSettingsPath(user)}, {cursor, hooks.AgentCursor, in.CursorHooksPath(user)}} {
		if !a.on {
			continue
		}
		if remove {
			if err := step(in.UninstallAgent(a.kind, a.path, user)); err != nil {
				return err
			}
		} else if err := step(in.InstallAgent(a.kind, a.path, user)); err != nil {
			return err
		}
	}
	if cline {
		if remove {
			if err := step(in.UninstallCline()); err != nil {
				return err
			}
		} else if err := step(in.InstallCline()); err != nil {
			return err
		}
	}
	if gitHook {
		if remove {
			if err := step(in.UninstallGit()); err != nil {
				return err
			}
		} else if err := step(in.InstallGit()); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return writeJSON(e, done)
	}
	for _, t := range done {
		fmt.Fprintf(e.out, "%-6s %-18s %s\n", t.Kind, t.Action, t.Path)
	}
	if codex && !remove {
		// Codex's own rule, not borg's: say it where it is missed.
		fmt.Fprintln(e.out, "note: Codex runs a project's hooks only in a trusted project, once you have trusted the hooks themselves: run /hooks in Codex")
	}
	return nil
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
