package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hookCommands lists every command in an agent's hooks file by event,
// whether in groups (Claude Code, Codex, Gemini CLI) or flat (Cursor).
func hookCommands(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	var root struct {
		Hooks map[string][]struct {
			Command string `json:"command"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	out := map[string][]string{}
	for ev, entries := range root.Hooks {
		for _, e := range entries {
			if e.Command != "" {
				out[ev] = append(out[ev], e.Command)
			}
			for _, h := range e.Hooks {
				out[ev] = append(out[ev], h.Command)
			}
		}
	}
	return out
}

// TestInstallGeminiCursorRoundTrip: each new agent's install keeps the
// hooks and settings already there, is idempotent, wires borg's verbs to
// the agent's events, and uninstall restores the original bytes; a file
// install created is removed again.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestInstallGeminiCursorRoundTrip(t *testing.T) {
	cases := []struct {
		kind  string
		path  func(Installer) string
		orig  string
		kept  map[string]string // event → a command that must survive
		wired map[string]string // event → borg verb
	}{
		{AgentGemini, func(in Installer) string { return in.GeminiSettingsPath(false) },
			`{
  "model": {"name": "gemini-2.5-pro"},
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5000}]}],
    "AfterAgent": [{"hooks": [{"type": "command", "name": "lint", "command": "./lint.sh"}]}]
  }
}
`,
			map[string]string{"BeforeTool": "./guard.sh", "AfterAgent": "./lint.sh"},
			map[string]string{"SessionStart": "session-start", "BeforeAgent": "prompt", "AfterTool": "post-tool", "AfterAgent": "stop"}},
		{AgentQwen, func(in Installer) string { return in.QwenSettingsPath(false) },
			`{
  "model": {"name": "qwen3-coder-plus"},
  "hooks": {
    "PreToolUse": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}]
  }
}
`,
			map[string]string{"PreToolUse": "./guard.sh", "Stop": "./lint.sh"},
			map[string]string{"SessionStart": "session-start", "UserPromptSubmit": "prompt", "PostToolUse": "post-tool", "Stop": "stop"}},
		{AgentCursor, func(in Installer) string { return in.CursorHooksPath(false) },
			`{
	"version": 1,
	"hooks": {
		"afterFileEdit": [{"command": "./format.sh"}],
		"stop": [{"command": "./audit.sh"}]
	}
}
`,
			map[string]string{"afterFileEdit": "./format.sh", "stop": "./audit.sh"},
			map[string]string{"beforeSubmitPrompt": "prompt", "afterShellExecution": "post-tool", "stop": "stop"}},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			repo := newRepo(t)
			in := Installer{Repo: repo, Command: "/opt/my tools/borg"}
			path := tc.path(in)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.orig), 0o644); err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"installed", "already installed"} {
				tg, err := in.InstallAgent(tc.kind, path, false)
				if err != nil {
					t.Fatal(err)
				}
				if tg.Action != want || tg.Kind != tc.kind {
					t.Fatalf("install #%d: %+v, want %q", i+1, tg, want)
				}
			}
			data, _ := os.ReadFile(path)
			cmds := hookCommands(t, data)
			for ev, c := range tc.kept {
				if !slices.Contains(cmds[ev], c) {
					t.Fatalf("%s lost %q: %v", ev, c, cmds[ev])
				}
			}
			for ev, verb := range tc.wired {
				want := commandQuote(in.Command) + " hook " + verb
				if n := strings.Count(strings.Join(cmds[ev], "\n"), want); n != 1 {
					t.Fatalf("%s has %d × %q: %v", ev, n, want, cmds[ev])
				}
			}
			if len(cmds) != len(tc.wired)+len(tc.kept)-overlap(tc.kept, tc.wired) {
				t.Fatalf("unexpected events: %v", cmds)
			}
			if tc.kind == AgentGemini && !strings.Contains(string(data), `"timeout": 300000`) {
				t.Fatalf("Gemini's timeouts are milliseconds:\n%s", data)
			}
			if tc.kind == AgentQwen && !strings.Contains(string(data), `"timeout": 300`) {
				t.Fatalf("Qwen Code's timeouts are seconds, as Claude Code's:\n%s", data)
			}
			if tc.kind == AgentCursor && (!strings.Contains(string(data), `"version": 1`) || strings.Contains(string(data), `"type"`)) {
				t.Fatalf("not Cursor's layout:\n%s", data)
			}
			tg, err := in.UninstallAgent(tc.kind, path, false)
			if err != nil || tg.Action != "restored" {
				t.Fatalf("uninstall: %+v %v", tg, err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, []byte(tc.orig)) {
				t.Fatalf("uninstall did not restore the original bytes:\n%s", after)
			}

			// A file install created goes away again, with its directory.
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
			if _, err := in.InstallAgent(tc.kind, path, false); err != nil {
				t.Fatal(err)
			}
			if tg, err := in.UninstallAgent(tc.kind, path, false); err != nil || tg.Action != "removed" {
				t.Fatalf("uninstall of a created file: %+v %v", tg, err)
			}
			if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
				t.Fatalf("%s left behind", filepath.Dir(path))
			}
		})
	}
}

func overlap(a, b map[string]string) int {
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return n
}

// TestUninstallGeminiCursorAfterEditRemovesOnlyBorg: once the user changed the
// file since install, uninstall takes out borg's entries alone.
func TestUninstallGeminiCursorAfterEditRemovesOnlyBorg(t *testing.T) {
	for _, kind := range []string{AgentCursor, AgentGemini} {
		t.Run(kind, func(t *testing.T) {
			repo := newRepo(t)
			in := Installer{Repo: repo, Command: "borg"}
			path := in.CursorHooksPath(false)
			if kind == AgentGemini {
				path = in.GeminiSettingsPath(false)
			}
			if _, err := in.InstallAgent(kind, path, false); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			var root map[string]any
			if err := json.Unmarshal(data, &root); err != nil {
				t.Fatal(err)
			}
			hooks := root["hooks"].(map[string]any)
			mine := map[string]any{"command": "./mine.sh"}
			ev := "stop"
			if kind == AgentGemini {
				mine = map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "./mine.sh"}}}
				ev = "AfterAgent"
			}
			hooks[ev] = append(hooks[ev].([]any), mine)
			edited, _ := json.MarshalIndent(root, "", "  ")
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			tg, err := in.UninstallAgent(kind, path, false)
			if err != nil || tg.Action != "removed" {
				t.Fatalf("uninstall: %+v %v", tg, err)
			}
			after, _ := os.ReadFile(path)
			cmds := hookCommands(t, after)
			if len(cmds) != 1 || strings.Join(cmds[ev], "|") != "./mine.sh" {
				t.Fatalf("surgical uninstall went wrong:\n%s", after)
			}
		})
	}
}
