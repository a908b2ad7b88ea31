package hooks

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// installFileCase is one file install writes, set up as the user keeps
// it, with how to install into it and uninstall again.
type installFileCase struct {
	name               string
	path               func(Installer) string
	orig               string
	install, uninstall func(Installer) (InstallTarget, error)
}

func installFileCases() []installFileCase {
	cases := []installFileCase{
		{"claude settings", func(in Installer) string { return in.ClaudeSettingsPath(false) },
			`{"model":"opus"}` + "\n",
			func(in Installer) (InstallTarget, error) {
				return in.InstallAgent("claude", in.ClaudeSettingsPath(false), false)
			},
			func(in Installer) (InstallTarget, error) {
				return in.UninstallAgent("claude", in.ClaudeSettingsPath(false), false)
			}},
		{"codex config", func(in Installer) string { return in.CodexConfigPath(false) },
			"model = \"o4\"\n",
			func(in Installer) (InstallTarget, error) {
				return in.InstallCodexConfig(in.CodexConfigPath(false), false, true)
			},
			func(in Installer) (InstallTarget, error) {
				return in.UninstallCodexConfig(in.CodexConfigPath(false), false)
			}},
		{".mcp.json", func(in Installer) string { return in.ClaudeMCPPath() },
			`{"mcpServers":{}}` + "\n",
			func(in Installer) (InstallTarget, error) { return in.InstallClaudeMCP(in.ClaudeMCPPath()) },
			func(in Installer) (InstallTarget, error) { return in.UninstallClaudeMCP(in.ClaudeMCPPath()) }},
	}
	if !GitSupportsConfigHooks() {
		cases = append(cases, installFileCase{"git post-commit", func(in Installer) string { return filepath.Join(in.Repo, ".git", "hooks", "post-commit") },
			"#!/bin/sh\necho mine\n",
			func(in Installer) (InstallTarget, error) { return in.InstallGit() },
			func(in Installer) (InstallTarget, error) { return in.UninstallGit() }})
	}
	return cases
}

// TestInstallWritesThroughSymlinks: a settings file (or hook) that is a
// symlink stays one through install and uninstall, whether uninstall
// restores the original or takes borg's entries out of an edited file:
// borg writes the file it names, keeping that file's mode.
func TestInstallWritesThroughSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	for _, tc := range installFileCases() {
		for _, edited := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: ", edited"}[edited], func(t *testing.T) {
				repo := newRepo(t)
				in := Installer{Repo: repo, Command: "borg"}
				path := tc.path(in)
				target := filepath.Join(t.TempDir(), "dotfiles", filepath.Base(path))
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, []byte(tc.orig), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, path); err != nil {
					t.Fatal(err)
				}
				check := func(when string) {
					t.Helper()
					if !isSymlink(path) {
						t.Fatalf("after %s, %s is no longer a symlink", when, path)
					}
					if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o750 {
						t.Fatalf("after %s, the linked file: %v %v, want mode 0750", when, fi.Mode(), err)
					}
				}
				if _, err := tc.install(in); err != nil {
					t.Fatal(err)
				}
				check("install")
				if !strings.Contains(readOr(target), "borg") {
					t.Fatalf("install did not write the linked file:\n%s", readOr(target))
				}
				if edited {
					if err := os.WriteFile(target, []byte(strings.Replace(readOr(target), "mine", "mine, edited", 1)+"\n"), 0o750); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := tc.uninstall(in); err != nil {
					t.Fatal(err)
				}
				check("uninstall")
				if got := readOr(target); !edited && got != tc.orig {
					t.Fatalf("uninstall left %q in the linked file, want the original %q", got, tc.orig)
				} else if strings.Contains(got, "borg") {
					t.Fatalf("uninstall left borg's entries in the linked file:\n%s", got)
				}
			})
		}
	}
}

// TestInstallRefusesReadOnlyFiles: a settings file (or hook) the user made
// read-only is left as it is, by install and by uninstall, with an error
// that names it and the fix.
func TestInstallRefusesReadOnlyFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permission bits")
	}
	for _, tc := range installFileCases() {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			in := Installer{Repo: repo, Command: "borg"}
			path := tc.path(in)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.orig), 0o444); err != nil {
				t.Fatal(err)
			}
			refused := func(verb string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), path+" is read-only") || !strings.Contains(err.Error(), "chmod u+w") {
					t.Fatalf("%s into a read-only file: %v, want a refusal naming it and the fix", verb, err)
				}
				if got := readOr(path); got != tc.orig {
					t.Fatalf("%s rewrote the read-only file:\n%s", verb, got)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o444 {
					t.Fatalf("%s changed the file's mode to %v", verb, fi.Mode().Perm())
				}
			}
			_, err := tc.install(in)
			refused("install", err)
			// Installed while it was writable, made read-only since.
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.install(in); err != nil {
				t.Fatal(err)
			}
			installed := readOr(path)
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
			_, err = tc.uninstall(in)
			if err == nil || !strings.Contains(err.Error(), path+" is read-only") {
				t.Fatalf("uninstall from a read-only file: %v, want a refusal naming it", err)
			}
			if got := readOr(path); got != installed {
				t.Fatalf("uninstall rewrote the read-only file:\n%s", got)
			}
		})
	}
}
