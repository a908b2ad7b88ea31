package hooks

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestInstallClineRoundTrip: borg's Cline hooks are executables that run
// borg's verbs; install is idempotent, keeps a user's other hooks and rules,
// refuses to overwrite a hook file of theirs, and uninstall leaves the
// project as it was.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestInstallClineRoundTrip(t *testing.T) {
	repo := newRepo(t)
	rules := filepath.Join(repo, ".clinerules")
	if err := os.MkdirAll(filepath.Join(rules, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := []byte("#!/bin/sh\necho '{\"cancel\": false}'\n")
	if err := os.WriteFile(filepath.Join(rules, "hooks", "PreToolUse"), mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "style.md"), []byte("Use tabs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Installer{Repo: repo, Command: "/opt/my tools/borg"}
	for i, want := range []string{"installed", "already installed"} {
		tg, err := in.InstallCline()
		if err != nil || tg.Action != want {
			t.Fatalf("install #%d: %+v %v, want %q", i+1, tg, err, want)
		}
	}
	for _, h := range clineHooks {
		p := filepath.Join(rules, "hooks", h.name)
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o100 == 0 {
			t.Fatalf("%s: %v %v", h.name, st, err)
		}
		data, _ := os.ReadFile(p)
		if !strings.HasSuffix(string(data), "exec '/opt/my tools/borg' hook "+h.verb+"\n") {
			t.Fatalf("%s:\n%s", h.name, data)
		}
	}
	if runtime.GOOS != "windows" {
		// The script runs borg with the hook's stdin: a stand-in borg
		// prints its arguments.
		bin := filepath.Join(t.TempDir(), "borg")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		in2 := Installer{Repo: t.TempDir(), Command: bin}
		out, err := exec.Command("sh", "-c", string(in2.clineScript("stop"))).Output()
		if err != nil || string(out) != "hook stop\n" {
			t.Fatalf("script ran %q %v", out, err)
		}
		// borg gone (its path, or its name on PATH): exit 0, nothing
		// said, for Cline blocks on any other exit.
		for _, gone := range []string{filepath.Join(t.TempDir(), "borg"), "borg-not-on-path"} {
			in3 := Installer{Repo: t.TempDir(), Command: gone}
			out, err := exec.Command("sh", "-c", string(in3.clineScript("stop"))).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Fatalf("script without borg (%s): %q %v, want exit 0 and nothing", gone, out, err)
			}
		}
	}
	// Another command: borg's scripts run it now.
	moved := Installer{Repo: repo, Command: "/usr/local/bin/borg"}
	if tg, err := moved.InstallCline(); err != nil || tg.Action != "updated" {
		t.Fatalf("install with another command: %+v %v", tg, err)
	}
	if data := readOr(filepath.Join(rules, "hooks", "TaskComplete")); !strings.HasSuffix(data, "exec /usr/local/bin/borg hook stop\n") {
		t.Fatalf("after the move:\n%s", data)
	}
	tg, err := in.UninstallCline()
	if err != nil || tg.Action != "removed" {
		t.Fatalf("uninstall: %+v %v", tg, err)
	}
	entries, _ := os.ReadDir(filepath.Join(rules, "hooks"))
	if len(entries) != 1 || entries[0].Name() != "PreToolUse" {
		t.Fatalf("left in hooks/: %v", entries)
	}
	if got, _ := os.ReadFile(filepath.Join(rules, "hooks", "PreToolUse")); !bytes.Equal(got, mine) {
		t.Fatal("the user's hook changed")
	}
	if tg, _ := in.UninstallCline(); tg.Action != "not installed" {
		t.Fatalf("second uninstall: %+v", tg)
	}

	// A user's own TaskComplete: nothing is written, and the error says why.
	if err := os.WriteFile(filepath.Join(rules, "hooks", "TaskComplete"), mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := in.InstallCline(); err == nil || !strings.Contains(err.Error(), "not borg's") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(rules, "hooks", "UserPromptSubmit")); !os.IsNotExist(err) {
		t.Fatal("a refused install wrote files")
	}

	// A project without .clinerules gets it, and loses it again.
	repo2 := newRepo(t)
	in3 := Installer{Repo: repo2, Command: "borg"}
	if _, err := in3.InstallCline(); err != nil {
		t.Fatal(err)
	}
	if _, err := in3.UninstallCline(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo2, ".clinerules")); !os.IsNotExist(err) {
		t.Fatal(".clinerules left behind")
	}

	// .clinerules as a rules file: refused.
	repo3 := newRepo(t)
	if err := os.WriteFile(filepath.Join(repo3, ".clinerules"), []byte("rules\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{Repo: repo3, Command: "borg"}).InstallCline(); err == nil || !strings.Contains(err.Error(), "rules file") {
		t.Fatalf("err = %v", err)
	}
}
