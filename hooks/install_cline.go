package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Cline runs a project's hooks as executables named after the hook in
// .clinerules/hooks/ (macOS and Linux). borg writes one small shell script
// per hook and never touches a hook file it did not write: Cline runs one
// file per hook name, so a user's own file there is left alone and the
// install stops, saying so.

// clineMarker is the second line of every hook file borg writes.
const clineMarker = "# borg: Cline hook (borg install --cline; borg uninstall removes it)"

// clineHooks maps Cline's hook names to borg's verbs.
var clineHooks = []struct{ name, verb string }{
	{"TaskStart", "session-start"},
	{"UserPromptSubmit", "prompt"},
	{"PostToolUse", "post-tool"},
	{"TaskComplete", "stop"},
}

// ClineHooksDir is the project's Cline hooks folder.
func (in Installer) ClineHooksDir() string {
	return filepath.Join(in.projectDir(), ".clinerules", "hooks")
}

// clineScript is borg's hook file for verb. Where borg is not there (not
// on PATH, or its path gone) it exits 0 at once, printing nothing: Cline
// blocks the action on any other exit, and goes on on an empty answer.
func (in Installer) clineScript(verb string) []byte {
	return []byte("#!/bin/sh\n" + clineMarker + "\n" + in.borgPresent() + " || exit 0\nexec " + in.borgArgs(shellQuote) + " hook " + verb + "\n")
}

// borgPresent is a shell test that borg's command is there to run: an
// executable at its path, or its name found on PATH.
func (in Installer) borgPresent() string {
	if strings.ContainsRune(in.Command, '/') {
		return "[ -x " + shellQuote(in.Command) + " ]"
	}
	return "command -v " + shellQuote(in.Command) + " >/dev/null 2>&1"
}

// InstallCline writes borg's Cline hooks. It is idempotent and refuses,
// before writing anything, when a hook file of the same name is not borg's
// or .clinerules is a rules file rather than a folder.
func (in Installer) InstallCline() (InstallTarget, error) {
	dir := in.ClineHooksDir()
	t := InstallTarget{Kind: AgentCline, Path: dir}
	if st, err := os.Stat(filepath.Dir(dir)); err == nil && !st.IsDir() {
		return t, fmt.Errorf("%s is a rules file, not a folder: Cline then reads no hooks there; move your rules into .clinerules/ first", filepath.Dir(dir))
	}
	todo := map[string]bool{}
	created := false
	for _, h := range clineHooks {
		p := filepath.Join(dir, h.name)
		cur, err := os.ReadFile(p)
		switch {
		case err == nil && bytes.Contains(cur, []byte(clineMarker)):
			// borg's: written again when it runs another command (or
			// store), or is an older borg's.
			if !bytes.Equal(cur, in.clineScript(h.verb)) {
				todo[h.name] = true
			}
			continue
		case err == nil:
			return t, fmt.Errorf("%s is not borg's: borg leaves it as it is (Cline runs one file per hook); make it also run `%s hook %s`, or move it away and run borg install again", p, shellQuote(in.Command), h.verb)
		case !errors.Is(err, os.ErrNotExist):
			return t, fmt.Errorf("read %s: %w", p, err)
		}
		todo[h.name], created = true, true
	}
	if len(todo) == 0 {
		t.Action = "already installed"
		return t, nil
	}
	if _, err := os.Stat(filepath.Dir(dir)); errors.Is(err, os.ErrNotExist) {
		// Install makes .clinerules: uninstall may take it away again
		// (one the user made says Cline is in use, and stays).
		bdir, err := in.backupDir(false)
		if err != nil {
			return t, err
		}
		if err := os.MkdirAll(bdir, 0o700); err != nil {
			return t, fmt.Errorf("create backup dir %s: %w", bdir, err)
		}
		if err := writeFileAtomic(newDirMark(bdir, filepath.Dir(dir)), nil, 0o600); err != nil {
			return t, err
		}
	}
	for _, h := range clineHooks {
		if !todo[h.name] {
			continue
		}
		if err := writeFileAtomic(filepath.Join(dir, h.name), in.clineScript(h.verb), 0o755); err != nil {
			return t, err
		}
	}
	t.Action = "installed"
	if !created {
		t.Action = "updated"
	}
	return t, nil
}

// UninstallCline removes the hook files borg wrote (those carrying its
// marker), then the folders it leaves empty.
func (in Installer) UninstallCline() (InstallTarget, error) {
	dir := in.ClineHooksDir()
	t := InstallTarget{Kind: AgentCline, Path: dir, Action: "not installed"}
	for _, h := range clineHooks {
		p := filepath.Join(dir, h.name)
		cur, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cur, []byte(clineMarker)) {
			continue
		}
		if err := os.Remove(p); err != nil {
			return t, fmt.Errorf("remove %s: %w", p, err)
		}
		t.Action = "removed"
	}
	if t.Action == "removed" {
		_ = os.Remove(dir) // only if empty
		// .clinerules too when install made it (and it is empty).
		if bdir, err := in.backupDir(false); err == nil {
			removeMadeFolder(bdir, filepath.Dir(dir))
		}
	}
	return t, nil
}
