package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestCodexConfigRoundTrip: install sets the hooks feature flag (and with
// mcp registers borg mcp) in whatever config.toml is there, idempotently;
// uninstall restores the original bytes, or, when the file changed since,
// takes out exactly the lines install added.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestCodexConfigRoundTrip(t *testing.T) {
	tests := []struct {
		name, orig string
		exists     bool
		wantLines  []string // lines the installed file must hold
	}{
		{"no file", "", false, []string{"[features] # borg", "hooks = true # borg", "[mcp_servers.borg] # borg", `command = "/opt/my tools/borg" # borg`, `args = ["mcp"] # borg`}},
		{"empty file", "", true, []string{"[features] # borg", "hooks = true # borg"}},
		{"other settings", "model = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n", true, []string{"model = \"o4\"", "[mcp_servers.docs]", "[features] # borg", "[mcp_servers.borg] # borg"}},
		{"a features table", "[features]\nweb_search = true\n", true, []string{"[features]", "hooks = true # borg", "web_search = true"}},
		{"flag already set", "[features]\nhooks = true\n", true, []string{"[features]", "hooks = true", "[mcp_servers.borg] # borg"}},
		{"dotted key", "features.codex_hooks = true\n", true, []string{"features.codex_hooks = true", "[mcp_servers.borg] # borg"}},
		{"other dotted features", "features.web_search = true\n\n[profiles.fast]\nmodel = \"mini\"\n", true, []string{"features.hooks = true # borg", "features.web_search = true", "[profiles.fast]"}},
		{"an inline features table", "features = { web_search = true }\n", true, []string{"features = { web_search = true }", "[mcp_servers.borg] # borg"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			in := Installer{Repo: repo, Command: "/opt/my tools/borg"}
			path := in.CodexConfigPath(false)
			if tc.exists {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.orig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := in.InstallCodexConfig(path, false, true); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			var parsed map[string]any
			if err := toml.Unmarshal(got, &parsed); err != nil {
				t.Fatalf("install wrote invalid TOML: %v\n%s", err, got)
			}
			lines := strings.Split(string(got), "\n")
			for _, want := range tc.wantLines {
				if !contains(lines, want) {
					t.Errorf("installed config lacks %q:\n%s", want, got)
				}
			}
			if strings.Count(string(got), "[features]") > 1 || strings.Count(string(got), "hooks = true") > 1 {
				t.Errorf("a table or the flag written twice:\n%s", got)
			}
			if tgt, err := in.InstallCodexConfig(path, false, true); err != nil || tgt.Action != "already installed" {
				t.Fatalf("second install: %+v %v", tgt, err)
			}
			if _, err := in.UninstallCodexConfig(path, false); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if !tc.exists {
				if err == nil {
					t.Fatalf("the file install created is still there: %s", after)
				}
				return
			}
			if string(after) != tc.orig {
				t.Fatalf("uninstall left %q, want the original %q", after, tc.orig)
			}
		})
	}
	t.Run("changed since", func(t *testing.T) {
		repo := newRepo(t)
		in := Installer{Repo: repo, Command: "borg"}
		path := in.CodexConfigPath(false)
		if _, err := in.InstallCodexConfig(path, false, true); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\n[profiles.fast]\nmodel = \"mini\"\n")
		f.Close()
		if _, err := in.UninstallCodexConfig(path, false); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if strings.Contains(string(got), "borg") || !strings.Contains(string(got), "[profiles.fast]") {
			t.Fatalf("after uninstall:\n%s", got)
		}
	})
}

// TestClaudeMCPRoundTrip: .mcp.json gains borg's server beside the others
// and loses it again, bytes restored.
func TestClaudeMCPRoundTrip(t *testing.T) {
	repo := newRepo(t)
	in := Installer{Repo: repo, Command: "borg"}
	path := in.ClaudeMCPPath()
	orig := "{\n    \"mcpServers\": {\"docs\": {\"command\": \"docs-mcp\"}}\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.InstallClaudeMCP(path); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if b := cfg.MCPServers["borg"]; b.Command != "borg" || len(b.Args) != 1 || b.Args[0] != "mcp" || cfg.MCPServers["docs"].Command != "docs-mcp" {
		t.Fatalf(".mcp.json after install: %s", data)
	}
	if tgt, _ := in.InstallClaudeMCP(path); tgt.Action != "already installed" {
		t.Fatalf("second install: %+v", tgt)
	}
	if _, err := in.UninstallClaudeMCP(path); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != orig {
		t.Fatalf("uninstall left %s", data)
	}
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestCodexHooksOffIsSaid: a config.toml whose hooks feature flag the user
// set false is left so (borg does not flip a user's explicit choice), and
// install warns that Codex will run none of borg's hooks, naming the
// setting and the fix.
func TestCodexHooksOffIsSaid(t *testing.T) {
	for _, tc := range []struct {
		name, orig, warn string // warn: "" for none
	}{
		{"hooks = false", "[features]\nhooks = false\n", "sets [features] hooks = false; set it to true"},
		{"codex_hooks = false, with a comment", "[features]\ncodex_hooks = false # not yet\n", "sets [features] codex_hooks = false"},
		{"a dotted key", "features.hooks = false\n", "sets [features] hooks = false"},
		{"an inline table", "features = { web_search = true, hooks = false }\n", "sets features = { hooks = false }"},
		{"hooks = true", "[features]\nhooks = true\n", ""},
		{"false in another table", "[features]\nhooks = true\n\n[profiles.x]\nhooks = false\n", ""},
		{"no flag", "model = \"o4\"\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Installer{Repo: newRepo(t), Command: "borg"}
			path := in.CodexConfigPath(false)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.orig), 0o644); err != nil {
				t.Fatal(err)
			}
			tg, err := in.InstallCodexConfig(path, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.warn == "" && tg.Warning != "" || tc.warn != "" && !strings.Contains(tg.Warning, tc.warn) {
				t.Fatalf("warning %q, want %q", tg.Warning, tc.warn)
			}
			if tc.warn != "" {
				if !strings.Contains(tg.Warning, path) {
					t.Errorf("the warning does not name %s: %q", path, tg.Warning)
				}
				if got, _ := os.ReadFile(path); string(got) != tc.orig {
					t.Fatalf("install changed the user's flag:\n%s", got)
				}
			}
		})
	}
}
