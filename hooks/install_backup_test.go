package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReinstallKeepsTheUsersEdits: uninstall puts a file's original back
// only while it is what install last wrote and the user changed nothing
// since the first install. A second install that rewrites the file (another
// command, --mcp) must not bless an edit made in between: uninstall then
// takes out borg's entries only, and every edit stays. A file that held
// borg's entries before borg first wrote it (a teammate committed them)
// has no original to go back to either; one the user cleared of borg's
// entries by hand starts afresh.
func TestReinstallKeepsTheUsersEdits(t *testing.T) {
	agent := func(kind string) func(in Installer, path string) (InstallTarget, error) {
		return func(in Installer, path string) (InstallTarget, error) { return in.InstallAgent(kind, path, false) }
	}
	unAgent := func(kind string) func(in Installer, path string) (InstallTarget, error) {
		return func(in Installer, path string) (InstallTarget, error) { return in.UninstallAgent(kind, path, false) }
	}
	codexCfg := func(in Installer, path string) (InstallTarget, error) {
		return in.InstallCodexConfig(path, false, true)
	}
	unCodexCfg := func(in Installer, path string) (InstallTarget, error) { return in.UninstallCodexConfig(path, false) }
	mcp := func(in Installer, path string) (InstallTarget, error) { return in.InstallClaudeMCP(path) }
	unMCP := func(in Installer, path string) (InstallTarget, error) { return in.UninstallClaudeMCP(path) }
	claudePath := func(in Installer) string { return in.ClaudeSettingsPath(false) }
	for _, tc := range []struct {
		name                string
		path                func(Installer) string
		orig                string // "" for no file
		install, uninstall  func(Installer, string) (InstallTarget, error)
		edit                func(cur string) string // between the two installs; nil for none
		wantAction          string                  // uninstall's
		want, gone          []string                // in the file after uninstall
		exact               string                  // the file after uninstall, when set
		installedFirstAlone bool                    // only the second install runs
	}{
		{name: "claude: an edit between two installs",
			path: claudePath, orig: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./lint.sh"}]}]}}` + "\n",
			install: agent("claude"), uninstall: unAgent("claude"),
			edit: func(cur string) string {
				return strings.Replace(cur, `"hooks": {`, `"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],`, 1)
			},
			wantAction: "removed", want: []string{`"opus"`, `"guard"`, `"./lint.sh"`}, gone: []string{"borg hook"}},
		{name: "codex config: a table appended between two installs",
			path: func(in Installer) string { return in.CodexConfigPath(false) },
			install: func(in Installer, path string) (InstallTarget, error) {
				// The first install without --mcp, the second with it.
				return in.InstallCodexConfig(path, false, strings.HasPrefix(in.Command, "/usr/local/"))
			},
			uninstall:  unCodexCfg,
			edit:       func(cur string) string { return cur + "\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n" },
			wantAction: "removed", want: []string{"[mcp_servers.github]", `command = "gh-mcp"`}, gone: []string{"borg"}},
		{name: ".mcp.json: a server added between two installs",
			path: func(in Installer) string { return in.ClaudeMCPPath() }, orig: `{"mcpServers":{"docs":{"command":"docs"}}}` + "\n",
			install: mcp, uninstall: unMCP,
			edit: func(cur string) string {
				return strings.Replace(cur, `"mcpServers": {`, `"mcpServers": {"github": {"command": "gh-mcp"},`, 1)
			},
			wantAction: "removed", want: []string{`"github"`, `"docs"`}, gone: []string{"borg"}},
		{name: "codex config: an edit, then the same install again",
			path: func(in Installer) string { return in.CodexConfigPath(false) }, orig: "model = \"o4\"\n",
			install: codexCfg, uninstall: unCodexCfg,
			edit:       func(cur string) string { return cur + "\n[profiles.fast]\nmodel = \"mini\"\n" },
			wantAction: "removed", want: []string{`model = "o4"`, "[profiles.fast]"}, gone: []string{"borg"}},
		{name: "claude: borg's hooks committed by a teammate",
			path: claudePath, orig: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./lint.sh"},{"type":"command","command":"/old/borg hook stop"}]}]}}` + "\n",
			install: agent("claude"), uninstall: unAgent("claude"), installedFirstAlone: true,
			wantAction: "removed", want: []string{`"./lint.sh"`}, gone: []string{"borg hook"}},
		{name: "claude: borg's hooks taken out by hand, then installed again",
			path: claudePath, orig: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./lint.sh"}]}]}}` + "\n",
			install: agent("claude"), uninstall: unAgent("claude"),
			edit:       func(string) string { return `{"model":"opus"}` + "\n" },
			wantAction: "restored", exact: `{"model":"opus"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			first := Installer{Repo: repo, Command: "borg"}
			second := Installer{Repo: repo, Command: "/usr/local/bin/borg"}
			path := tc.path(first)
			if tc.orig != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.orig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.installedFirstAlone {
				if _, err := tc.install(first, path); err != nil {
					t.Fatal(err)
				}
			}
			if tc.edit != nil {
				cur, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.edit(string(cur))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tg, err := tc.install(second, path); err != nil || tg.Action == "already installed" {
				t.Fatalf("second install: %+v %v (want a rewrite)", tg, err)
			}
			tg, err := tc.uninstall(first, path)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Action != tc.wantAction {
				t.Errorf("uninstall: %q, want %q", tg.Action, tc.wantAction)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("uninstall took the file away: %v", err)
			}
			if tc.exact != "" && string(after) != tc.exact {
				t.Fatalf("after uninstall:\n%s\nwant:\n%s", after, tc.exact)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(after), w) {
					t.Errorf("the user's %s is gone after uninstall:\n%s", w, after)
				}
			}
			for _, g := range tc.gone {
				if strings.Contains(string(after), g) {
					t.Errorf("%q left after uninstall:\n%s", g, after)
				}
			}
		})
	}
}

// TestGitReinstallKeepsTheUsersEdits: the same for borg's block in a
// user's own post-commit script.
func TestGitReinstallKeepsTheUsersEdits(t *testing.T) {
	if GitSupportsConfigHooks() {
		t.Skip("git ≥ 2.54 uses hook config; no hook file is written")
	}
	repo := newRepo(t)
	path := filepath.Join(repo, ".git", "hooks", "post-commit")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{Repo: repo, Command: "borg"}).InstallGit(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("echo added later\n")
	f.Close()
	if tg, err := (Installer{Repo: repo, Command: "/usr/local/bin/borg"}).InstallGit(); err != nil || tg.Action != "updated" {
		t.Fatalf("second install: %+v %v", tg, err)
	}
	if _, err := (Installer{Repo: repo, Command: "borg"}).UninstallGit(); err != nil {
		t.Fatal(err)
	}
	if after := readOr(path); after != "#!/bin/sh\necho mine\necho added later\n" {
		t.Fatalf("after uninstall:\n%s", after)
	}
}
