package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs/gitcli"
)

// gitRun runs git args in dir through gitcli.Git (the project's one git
// runner) under a test identity and returns its stdout; a failure fails the
// test with git's stderr. It is the hooks tests' one way to run git.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	g := gitcli.Git{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e"}}
	out, err := g.Run(context.Background(), nil, args...)
	if err != nil {
		stderr := ""
		if ge, ok := errors.AsType[*gitcli.GitError](err); ok {
			stderr = ge.Stderr
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	return dir
}

// fakeBorg writes a stand-in borg that records each hook call in a file, so
// the test sees the chain run end to end through real git.
func fakeBorg(t *testing.T) (cmd, logPath string) {
	t.Helper()
	dir := t.TempDir()
	logPath = filepath.Join(dir, "calls")
	cmd = filepath.Join(dir, "borg")
	script := "#!/bin/sh\necho \"borg $*\" >> '" + logPath + "'\n"
	if err := os.WriteFile(cmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return cmd, logPath
}

// waitCalls waits (borg runs in the background after a commit) until the
// fake borg has been called want times, or 30 seconds have passed.
func waitCalls(path string, want int) int {
	deadline := time.Now().Add(30 * time.Second) // a bound for a slow machine; a call ends the wait
	for {
		n := strings.Count(readOr(path), "borg hook post-commit")
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestInstallGitChainsExistingHooks: borg install --git keeps every
// existing post-commit hook running (a shell hook gets borg's block, another
// is chained), and uninstall restores each. It is long on purpose: its table
// of existing hooks, each set up inline beside its name.
func TestInstallGitChainsExistingHooks(t *testing.T) {
	if GitSupportsConfigHooks() {
		t.Skip("git ≥ 2.54 uses hook config; chaining is not exercised")
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, repo string) (hookPath string)
	}{
		{"user post-commit", func(t *testing.T, repo string) string {
			p := filepath.Join(repo, ".git", "hooks", "post-commit")
			if err := os.WriteFile(p, []byte("#!/bin/sh\necho user-hook >> \"$(git rev-parse --show-toplevel)/.userhook\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"husky", func(t *testing.T, repo string) string {
			// husky v9: core.hooksPath=.husky/_ whose stubs run .husky/<hook>.
			hd := filepath.Join(repo, ".husky", "_")
			if err := os.MkdirAll(hd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo, ".husky", "post-commit"), []byte("echo user-hook >> .userhook\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stub := "#!/bin/sh\nsh \"$(dirname \"$0\")/../$(basename \"$0\")\"\n"
			p := filepath.Join(hd, "post-commit")
			if err := os.WriteFile(p, []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			gitRun(t, repo, "config", "core.hooksPath", ".husky/_")
			return p
		}},
		{"python hook (renamed and chained)", func(t *testing.T, repo string) string {
			p := filepath.Join(repo, ".git", "hooks", "post-commit")
			py := "#!/usr/bin/env python3\nimport subprocess\ntop = subprocess.check_output(['git', 'rev-parse', '--show-toplevel']).decode().strip()\nopen(top + '/.userhook', 'a').write('user-hook\\n')\n"
			if err := os.WriteFile(p, []byte(py), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"no hook", func(t *testing.T, repo string) string {
			return filepath.Join(repo, ".git", "hooks", "post-commit")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			hookPath := tc.setup(t, repo)
			before, beforeErr := os.ReadFile(hookPath)
			cmd, calls := fakeBorg(t)
			in := Installer{Repo: repo, Command: cmd}

			for i := 0; i < 2; i++ { // idempotent
				tg, err := in.InstallGit()
				if err != nil {
					t.Fatal(err)
				}
				want := "installed"
				if i == 1 {
					want = "already installed"
				}
				if tg.Action != want {
					t.Fatalf("install #%d: action %q, want %q", i+1, tg.Action, want)
				}
			}
			gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
			if got := waitCalls(calls, 1); got != 1 {
				t.Fatalf("borg ran %d times on one commit, want 1", got)
			}
			hadUser := beforeErr == nil
			if hadUser && !strings.Contains(readOr(filepath.Join(repo, ".userhook")), "user-hook") {
				t.Fatalf("the existing hook did not run after install")
			}

			if _, err := in.UninstallGit(); err != nil {
				t.Fatal(err)
			}
			after, afterErr := os.ReadFile(hookPath)
			if hadUser {
				if afterErr != nil || !bytes.Equal(before, after) {
					t.Fatalf("uninstall did not restore the original hook bytes")
				}
				st, _ := os.Stat(hookPath)
				if st.Mode().Perm()&0o100 == 0 {
					t.Fatalf("restored hook lost its executable bit")
				}
			} else if afterErr == nil {
				t.Fatalf("uninstall left a hook where there was none")
			}
			_ = os.Remove(filepath.Join(repo, ".userhook"))
			gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
			if got := strings.Count(readOr(calls), "borg hook post-commit"); got != 1 {
				t.Fatalf("borg still runs after uninstall")
			}
			if hadUser && !strings.Contains(readOr(filepath.Join(repo, ".userhook")), "user-hook") {
				t.Fatalf("the original hook does not run after uninstall")
			}
		})
	}
}

func TestInstallClaudeKeepsOtherHooks(t *testing.T) {
	repo := newRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{
    "permissions": {"allow": ["Bash(go test:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "./scripts/lint.sh"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
    }
}
`)
	if err := os.WriteFile(settings, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	in := Installer{Repo: repo, Command: "/opt/bin/borg"}
	for i, want := range []string{"installed", "already installed"} {
		tg, err := in.InstallAgent("claude", settings, false)
		if err != nil {
			t.Fatal(err)
		}
		if tg.Action != want {
			t.Fatalf("install #%d: %q, want %q", i+1, tg.Action, want)
		}
	}
	var got struct {
		Permissions map[string]any `json:"permissions"`
		Hooks       map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Command string }
		} `json:"hooks"`
	}
	data, _ := os.ReadFile(settings)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Permissions == nil {
		t.Fatal("install dropped the permissions block")
	}
	cmds := map[string][]string{}
	for ev, groups := range got.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				cmds[ev] = append(cmds[ev], h.Command)
			}
		}
	}
	if want := []string{"./scripts/lint.sh", "/opt/bin/borg hook stop"}; strings.Join(cmds["Stop"], "|") != strings.Join(want, "|") {
		t.Fatalf("Stop hooks = %v, want %v", cmds["Stop"], want)
	}
	if strings.Join(cmds["PreToolUse"], "|") != "guard" {
		t.Fatalf("PreToolUse = %v", cmds["PreToolUse"])
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse"} {
		if len(cmds[ev]) != 1 || !strings.HasPrefix(cmds[ev][0], "/opt/bin/borg hook ") {
			t.Fatalf("%s = %v", ev, cmds[ev])
		}
	}
	tg, err := in.UninstallAgent("claude", settings, false)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Action != "restored" {
		t.Fatalf("uninstall action %q", tg.Action)
	}
	if after, _ := os.ReadFile(settings); !bytes.Equal(after, orig) {
		t.Fatalf("uninstall did not restore the original bytes:\n%s", after)
	}
}

func TestUninstallAfterUserEditKeepsTheirChanges(t *testing.T) {
	repo := newRepo(t)
	path := filepath.Join(repo, ".codex", "hooks.json")
	in := Installer{Repo: repo, Command: "borg"}
	if _, err := in.InstallAgent("codex", path, false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var root map[string]any
	_ = json.Unmarshal(data, &root)
	root["model"] = "mine"
	edited, _ := json.Marshal(root)
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := in.UninstallAgent("codex", path, false)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Action != "removed" {
		t.Fatalf("action %q", tg.Action)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), `"model": "mine"`) || strings.Contains(string(after), "hook stop") {
		t.Fatalf("surgical uninstall went wrong:\n%s", after)
	}
}

func TestInstallCreatesAndUninstallRemoves(t *testing.T) {
	repo := newRepo(t)
	in := Installer{Repo: repo, Command: "borg"}
	path := in.ClaudeSettingsPath(false)
	if _, err := in.InstallAgent("claude", path, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if tg, err := in.UninstallAgent("claude", path, false); err != nil || tg.Action != "removed" {
		t.Fatalf("uninstall: %v %v", tg, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("settings file left behind")
	}
}

func TestInstallRefusesBrokenJSON(t *testing.T) {
	repo := newRepo(t)
	in := Installer{Repo: repo, Command: "borg"}
	path := in.ClaudeSettingsPath(false)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte("{not json"), 0o644)
	_, err := in.InstallAgent("claude", path, false)
	if err == nil || !strings.Contains(err.Error(), "fix the JSON") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Fatalf("broken file was rewritten")
	}
}

// TestAdversarialHookCommandsQuoted: a borg path with a space, or with shell
// syntax in it, reaches the agent quoted: one word, nothing run; install
// recognises its own entries after, and uninstall removes them.
func TestAdversarialHookCommandsQuoted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the quoting a POSIX shell reads")
	}
	for _, cmd := range []string{"/opt/my tools/borg", "/tmp/$(touch pwned)/borg", "/tmp/it's/borg"} {
		t.Run(cmd, func(t *testing.T) {
			repo := newRepo(t)
			in := Installer{Repo: repo, Command: cmd}
			path := in.ClaudeSettingsPath(false)
			if _, err := in.InstallAgent("claude", path, false); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Hooks map[string][]struct {
					Hooks []struct {
						Command string `json:"command"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			command := got.Hooks["Stop"][0].Hooks[0].Command
			// What a shell makes of it: borg's path as one word.
			out, err := exec.Command("sh", "-c", `printf '%s\n' `+strings.TrimSuffix(command, " hook stop")).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != cmd {
				t.Fatalf("the shell reads %q as %q (%v), want %q", command, out, err, cmd)
			}
			if tg, err := in.InstallAgent("claude", path, false); err != nil || tg.Action != "already installed" {
				t.Fatalf("second install: %+v %v", tg, err)
			}
			if tg, err := in.UninstallAgent("claude", path, false); err != nil || tg.Action != "removed" {
				t.Fatalf("uninstall: %+v %v", tg, err)
			}
		})
	}
}

// TestInstallKeepsPrivateSettingsPrivate: an agent's settings file the user
// keeps private (it may hold an API key) stays private through install and
// uninstall, and the backups of it are the user's own only.
func TestInstallKeepsPrivateSettingsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permission bits")
	}
	home := t.TempDir()
	in := Installer{Home: home, Command: "/opt/bin/borg"}
	settings := in.ClaudeSettingsPath(true)
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"env": {"ANTHROPIC_API_KEY": "sk-test"}}` + "\n")
	if err := os.WriteFile(settings, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if _, err := in.InstallAgent("claude", settings, true); err != nil {
		t.Fatal(err)
	}
	if m := mode(settings); m != 0o600 {
		t.Errorf("settings after install: mode %v, want 0600", m)
	}
	bdir, err := in.backupDir(true)
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(bdir); m != 0o700 {
		t.Errorf("backup dir: mode %v, want 0700", m)
	}
	backups, _ := filepath.Glob(filepath.Join(bdir, "*"))
	if len(backups) == 0 {
		t.Fatal("install kept no backup")
	}
	for _, b := range backups {
		if m := mode(b); m != 0o600 {
			t.Errorf("backup %s: mode %v, want 0600", filepath.Base(b), m)
		}
	}
	if tg, err := in.UninstallAgent("claude", settings, true); err != nil || tg.Action != "restored" {
		t.Fatalf("uninstall: %+v %v", tg, err)
	}
	if after, _ := os.ReadFile(settings); !bytes.Equal(after, orig) {
		t.Fatalf("uninstall did not restore the original:\n%s", after)
	}
	if m := mode(settings); m != 0o600 {
		t.Errorf("settings after uninstall: mode %v, want 0600", m)
	}
}

// TestUninstallKeepsAHookAddedToBorgsGroup: a hook the user added to the
// group install made stays when uninstall takes borg's own out.
func TestUninstallKeepsAHookAddedToBorgsGroup(t *testing.T) {
	repo := newRepo(t)
	in := Installer{Repo: repo, Command: "borg"}
	path := in.ClaudeSettingsPath(false)
	if _, err := in.InstallAgent("claude", path, false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	stop := root["hooks"].(map[string]any)["Stop"].([]any)
	group := stop[0].(map[string]any)
	group["hooks"] = append(group["hooks"].([]any), map[string]any{"type": "command", "command": "./scripts/notify-done.sh"})
	edited, _ := json.MarshalIndent(root, "", "  ")
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if tg, err := in.UninstallAgent("claude", path, false); err != nil || tg.Action != "removed" {
		t.Fatalf("uninstall: %+v %v", tg, err)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), "./scripts/notify-done.sh") {
		t.Fatalf("uninstall dropped the user's hook:\n%s", after)
	}
	if strings.Contains(string(after), "borg hook") {
		t.Fatalf("uninstall left borg's hooks:\n%s", after)
	}
}

// TestUninstallKeepsTheUsersAgentFolder: an agent's folder the user made
// (it says the agent is in use) stays after uninstall, empty; one install
// made goes with it.
func TestUninstallKeepsTheUsersAgentFolder(t *testing.T) {
	for _, tt := range []struct {
		name      string
		userMade  bool
		install   func(Installer) error
		uninstall func(Installer) error
		folder    func(Installer) string
	}{
		{"cursor", true,
			func(in Installer) error {
				_, err := in.InstallAgent(AgentCursor, in.CursorHooksPath(false), false)
				return err
			},
			func(in Installer) error {
				_, err := in.UninstallAgent(AgentCursor, in.CursorHooksPath(false), false)
				return err
			},
			func(in Installer) string { return filepath.Dir(in.CursorHooksPath(false)) }},
		{"cursor", false,
			func(in Installer) error {
				_, err := in.InstallAgent(AgentCursor, in.CursorHooksPath(false), false)
				return err
			},
			func(in Installer) error {
				_, err := in.UninstallAgent(AgentCursor, in.CursorHooksPath(false), false)
				return err
			},
			func(in Installer) string { return filepath.Dir(in.CursorHooksPath(false)) }},
		{"codex, two files in one folder", false,
			func(in Installer) error {
				if _, err := in.InstallAgent("codex", in.CodexHooksPath(false), false); err != nil {
					return err
				}
				_, err := in.InstallCodexConfig(in.CodexConfigPath(false), false, true)
				return err
			},
			func(in Installer) error {
				if _, err := in.UninstallAgent("codex", in.CodexHooksPath(false), false); err != nil {
					return err
				}
				_, err := in.UninstallCodexConfig(in.CodexConfigPath(false), false)
				return err
			},
			func(in Installer) string { return filepath.Dir(in.CodexHooksPath(false)) }},
		{"cline", true,
			func(in Installer) error { _, err := in.InstallCline(); return err },
			func(in Installer) error { _, err := in.UninstallCline(); return err },
			func(in Installer) string { return filepath.Dir(in.ClineHooksDir()) }},
		{"cline", false,
			func(in Installer) error { _, err := in.InstallCline(); return err },
			func(in Installer) error { _, err := in.UninstallCline(); return err },
			func(in Installer) string { return filepath.Dir(in.ClineHooksDir()) }},
	} {
		t.Run(fmt.Sprintf("%s, folder made by the user: %v", tt.name, tt.userMade), func(t *testing.T) {
			in := Installer{Repo: newRepo(t), Command: "borg"}
			dir := tt.folder(in)
			if tt.userMade {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.install(in); err != nil {
				t.Fatal(err)
			}
			if err := tt.uninstall(in); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(dir)
			if tt.userMade && err != nil {
				t.Fatalf("uninstall removed the user's %s: %v", dir, err)
			}
			if !tt.userMade && !os.IsNotExist(err) {
				t.Fatalf("uninstall left %s, which install made", dir)
			}
		})
	}
}

// TestInstallGitConfigHookRunsInTheBackground: through git's hook config
// (git ≥ 2.54) the post-commit hook is the same shell line as in a hook
// file: in the background, silent, told the commit; an older borg's
// foreground entry is updated.
func TestInstallGitConfigHookRunsInTheBackground(t *testing.T) {
	repo := newRepo(t)
	borg, calls := fakeBorg(t)
	in := Installer{Repo: repo, Command: borg}
	gitRun(t, repo, "config", "hook.borg.command", shellQuote(borg)+" hook post-commit")
	tg, err := in.installGitConfig()
	if err != nil || tg.Action != "updated" {
		t.Fatalf("install over an older entry: %+v %v", tg, err)
	}
	if tg, err := in.installGitConfig(); err != nil || tg.Action != "already installed" {
		t.Fatalf("second install: %+v %v", tg, err)
	}
	cmd := strings.TrimSpace(gitRun(t, repo, "config", "--get", "hook.borg.command"))
	if cmd != in.postCommitCall() || !strings.HasSuffix(cmd, "&") || !strings.Contains(cmd, "BORG_COMMIT=") {
		t.Fatalf("hook.borg.command = %q", cmd)
	}
	// Run as git runs it: through the shell, in the repository.
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir = repo
	if out, err := sh.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("the hook line: %v, said %q (want nothing)", err, out)
	}
	if n := waitCalls(calls, 1); n != 1 {
		t.Fatalf("borg ran %d times, want 1", n)
	}
}

// TestIsBorgHookCommand: borg's hook commands are told from others, with
// or without a store, quoted or not.
func TestIsBorgHookCommand(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want bool
	}{
		{"borg hook stop", true},
		{"/opt/bin/borg hook prompt", true},
		{"'/opt/my tools/borg' hook stop", true},
		{"borg --store /s hook stop", true},
		{"'/opt/my tools/borg' --store '/my store' hook post-tool", true},
		{`"/opt/my tools/borg" --store /s hook stop`, true},
		{"./scripts/lint.sh", false},
		{"cyborg hook stop", false},
		{"borg hook", false},
		{"notify --store /s hook stop", false},
	} {
		if got := isBorgHookCommand(tt.cmd); got != tt.want {
			t.Errorf("isBorgHookCommand(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

// TestInstallWithAStore: hooks installed for a store are borg's as any
// others: installed once, moved to another store in place, and taken out
// by an uninstall after the user edited the file.
func TestInstallWithAStore(t *testing.T) {
	repo := newRepo(t)
	path := Installer{Repo: repo}.ClaudeSettingsPath(false)
	in := Installer{Repo: repo, Command: "borg", Store: "/stores/one"}
	for i, want := range []string{"installed", "already installed"} {
		if tg, err := in.InstallAgent("claude", path, false); err != nil || tg.Action != want {
			t.Fatalf("install #%d: %+v %v, want %q", i+1, tg, err, want)
		}
	}
	in.Store = "/stores/two"
	if tg, err := in.InstallAgent("claude", path, false); err != nil || tg.Action != "updated" {
		t.Fatalf("install for another store: %+v %v, want updated", tg, err)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "hook stop"); n != 1 || !strings.Contains(string(data), "borg --store /stores/two hook stop") || strings.Contains(string(data), "/stores/one") {
		t.Fatalf("after the move (%d Stop hooks):\n%s", n, data)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	root["model"] = "mine"
	edited, _ := json.Marshal(root)
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if tg, err := in.UninstallAgent("claude", path, false); err != nil || tg.Action != "removed" {
		t.Fatalf("uninstall after an edit: %+v %v", tg, err)
	}
	if after, _ := os.ReadFile(path); strings.Contains(string(after), "hook ") || !strings.Contains(string(after), "mine") {
		t.Fatalf("after uninstall:\n%s", after)
	}
}

// TestCodexMCPMovesToAnotherStore: Codex's MCP server entry names the
// store install was given, and moves with it.
func TestCodexMCPMovesToAnotherStore(t *testing.T) {
	repo := newRepo(t)
	in := Installer{Repo: repo, Command: "borg", Store: "/stores/one"}
	path := in.CodexConfigPath(false)
	if _, err := in.InstallCodexConfig(path, false, true); err != nil {
		t.Fatal(err)
	}
	in.Store = "/stores/two"
	if _, err := in.InstallCodexConfig(path, false, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `args = ["--store", "/stores/two", "mcp"]`) || strings.Contains(string(data), "/stores/one") || strings.Count(string(data), "[mcp_servers.borg]") != 1 {
		t.Fatalf("config after the move:\n%s", data)
	}
	if tg, err := in.UninstallCodexConfig(path, false); err != nil || tg.Action == "not installed" {
		t.Fatalf("uninstall: %+v %v", tg, err)
	}
	if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "borg") {
		t.Fatalf("left after uninstall:\n%s", data)
	}
}
