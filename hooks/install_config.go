package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The agents' configuration beside their hooks: Codex's config.toml (the
// hooks feature flag, and borg's MCP server) and Claude Code's project MCP
// file (.mcp.json). As with the hooks files, install keeps everything that
// was there, is idempotent, and uninstall restores the original bytes when
// nothing else changed the file since.

// tomlMark ends every line install adds to a config.toml, so uninstall can
// find them again when the file changed since.
const tomlMark = " # borg"

// CodexConfigPath is Codex's config.toml for the project (or the user).
func (in Installer) CodexConfigPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".codex", "config.toml")
	}
	return filepath.Join(in.projectDir(), ".codex", "config.toml")
}

// ClaudeMCPPath is Claude Code's project MCP configuration.
func (in Installer) ClaudeMCPPath() string { return filepath.Join(in.projectDir(), ".mcp.json") }

// InstallCodexConfig sets Codex's hooks feature flag ([features] hooks =
// true: Codex runs hooks only with it, in the versions that have the flag)
// and, with mcp, registers `borg mcp` as the MCP server "borg".
func (in Installer) InstallCodexConfig(path string, user, mcp bool) (InstallTarget, error) {
	t := InstallTarget{Kind: "codex", Path: path}
	orig, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return t, fmt.Errorf("read %s: %w", path, err)
	}
	lines := splitLines(string(orig))
	pristine := !tomlHasBorg(lines)
	changed := false
	switch {
	case tomlHasKey(lines, "features", "hooks") || tomlHasKey(lines, "features", "codex_hooks"):
		// The user's own setting, left as it is; but one that turns
		// the hooks off is said.
		t.Warning = codexHooksOff(path, lines)
	case tomlTopKey(lines, func(k string) bool { return k == "features" }):
		// features = { … }: an inline table cannot be extended; Codex's
		// hooks are on by default in the versions that have the flag.
		t.Warning = codexHooksOff(path, lines)
	case tomlTopKey(lines, func(k string) bool { return strings.HasPrefix(k, "features.") }):
		lines = tomlTopLevel(lines, "features.hooks = true"+tomlMark)
		changed = true
	default:
		lines = tomlSet(lines, "features", "hooks = true"+tomlMark)
		changed = true
	}
	if i := tomlTable(lines, "mcp_servers.borg"); mcp && i >= 0 {
		// Installed: by another command or for another store
		// (--store), borg's lines in its table now name this one.
		want := map[string]string{"command": "command = " + tomlString(in.Command) + tomlMark, "args": "args = " + tomlStrings(in.mcpArgs()) + tomlMark}
		for j := i + 1; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "["); j++ {
			key, _, _ := strings.Cut(strings.TrimSpace(lines[j]), "=")
			if w, ok := want[strings.TrimSpace(key)]; ok && strings.HasSuffix(lines[j], tomlMark) && lines[j] != w {
				lines[j], changed = w, true
			}
		}
	}
	if mcp && tomlTable(lines, "mcp_servers.borg") < 0 {
		if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) != "" {
			lines = append(lines, ""+tomlMark)
		}
		lines = append(lines, "[mcp_servers.borg]"+tomlMark,
			"command = "+tomlString(in.Command)+tomlMark,
			"args = "+tomlStrings(in.mcpArgs())+tomlMark)
		changed = true
	}
	if !changed {
		t.Action = "already installed"
		return t, nil
	}
	out := []byte(strings.Join(lines, "\n") + "\n")
	if err := in.writeInstalled(path, user, orig, existed, pristine, out); err != nil {
		return t, err
	}
	t.Action = "installed"
	return t, nil
}

// codexHooksOff is the warning for a config.toml whose hooks feature flag
// is false (Codex then runs no hook, borg's included), "" when it is not.
func codexHooksOff(path string, lines []string) string {
	for _, key := range []string{"hooks", "codex_hooks"} {
		if v, ok := tomlValue(lines, "features", key); ok && v == "false" {
			return fmt.Sprintf("Codex runs no hooks, borg's included: %s sets [features] %s = false; set it to true (or delete the line) for borg's hooks to run", path, key)
		}
	}
	if v, ok := tomlValue(lines, "", "features"); ok {
		if m := inlineHooksOff().FindStringSubmatch(v); m != nil {
			return fmt.Sprintf("Codex runs no hooks, borg's included: %s sets features = { %s = false }; set it to true (or take it out) for borg's hooks to run", path, m[1])
		}
	}
	return ""
}

// inlineHooksOff finds the hooks flag set false in an inline features
// table. Compiled on first use, as each of the package's patterns: a hook
// process, which never installs, does not pay for it.
var inlineHooksOff = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[{,]\s*((?:codex_)?hooks)\s*=\s*false\b`)
})

// UninstallCodexConfig takes out what InstallCodexConfig added.
func (in Installer) UninstallCodexConfig(path string, user bool) (InstallTarget, error) {
	t := InstallTarget{Kind: "codex", Path: path, Action: "not installed"}
	cur, bdir, done, err := in.startUninstall(path, user, &t)
	if done || err != nil {
		return t, err
	}
	var keep []string
	removed := false
	lines := splitLines(string(cur))
	for i, l := range lines {
		if !strings.HasSuffix(l, tomlMark) {
			keep = append(keep, l)
			continue
		}
		removed = true
		if tomlHeader(l) != "" && tableHasOthers(lines[i+1:]) {
			// Keys added under borg's header since: the table stays theirs.
			keep = append(keep, strings.TrimSuffix(l, tomlMark))
		}
	}
	if !removed {
		return t, nil
	}
	return t, writeUninstalled(path, bdir, []byte(strings.Join(keep, "\n")+"\n"), &t)
}

// InstallClaudeMCP registers `borg mcp` as the project's MCP server "borg"
// in .mcp.json.
func (in Installer) InstallClaudeMCP(path string) (InstallTarget, error) {
	t := InstallTarget{Kind: "claude", Path: path}
	orig, existed, root, err := readJSONConfig(path)
	if err != nil {
		return t, err
	}
	servers, _ := root.get("mcpServers").(*jsonObject)
	if servers == nil {
		servers = newJSONObject()
	}
	var args []any
	for _, a := range in.mcpArgs() {
		args = append(args, a)
	}
	want := jsonObjectOf("type", "stdio", "command", in.Command, "args", args)
	action := "installed"
	cur := servers.get("borg")
	had := servers.has("borg")
	if had {
		if jsonEqual(cur, want) {
			t.Action = "already installed"
			return t, nil
		}
		action = "updated" // another command or store (--store)
	}
	servers.set("borg", want)
	root.set("mcpServers", servers)
	out, err := encodeJSON(root, jsonIndent(orig))
	if err != nil {
		return t, err
	}
	if err := in.writeInstalled(path, false, orig, existed, !had, out); err != nil {
		return t, err
	}
	t.Action = action
	return t, nil
}

// UninstallClaudeMCP takes borg's server out of .mcp.json.
func (in Installer) UninstallClaudeMCP(path string) (InstallTarget, error) {
	t := InstallTarget{Kind: "claude", Path: path, Action: "not installed"}
	cur, bdir, done, err := in.startUninstall(path, false, &t)
	if done || err != nil {
		return t, err
	}
	root, err := decodeJSONObject(cur)
	if err != nil {
		perr := settingsParseError(path, cur, err, "uninstall")
		if unreadableWithoutBorg(&t, perr, bytes.Contains(cur, []byte(`"borg"`))) {
			return t, nil
		}
		return t, perr
	}
	servers, _ := root.get("mcpServers").(*jsonObject)
	if !servers.has("borg") {
		return t, nil
	}
	servers.del("borg")
	if servers.len() == 0 {
		root.del("mcpServers")
	}
	return t, writeUninstalledJSON(path, bdir, root, jsonIndent(cur), &t)
}

// writeInstalled remembers a file's original bytes (existed says whether
// there was one; pristine, whether they hold none of borg's entries), for
// uninstall, and writes what install made of it.
func (in Installer) writeInstalled(path string, user bool, orig []byte, existed, pristine bool, out []byte) error {
	if _, err := installTarget(path, "install"); err != nil {
		return err // before the backup: nothing is written
	}
	bdir, err := in.backupDir(user)
	if err != nil {
		return err
	}
	if err := saveBackup(bdir, path, orig, existed, pristine, out); err != nil {
		return err
	}
	return writeInstallFile(path, out, 0o644, "install")
}

// modeOf is the permission bits of the file at path, or def when there is
// none: a settings file the user keeps private (it may hold an API key)
// stays private when borg rewrites it.
func modeOf(path string, def os.FileMode) os.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return def
}

// startUninstall reads a file install may have written. When it is still
// exactly what install wrote, its original comes back (done; t says how);
// otherwise the caller takes borg's entries out of cur itself. A missing
// file is done, with nothing to do.
func (in Installer) startUninstall(path string, user bool, t *InstallTarget) (cur []byte, bdir string, done bool, err error) {
	cur, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", true, nil
	}
	if err != nil {
		return nil, "", true, fmt.Errorf("read %s: %w", path, err)
	}
	if bdir, err = in.backupDir(user); err != nil {
		return nil, "", true, err
	}
	done, err = restoreBackup(bdir, path, cur, t)
	return cur, bdir, done, err
}

// restoreBackup puts back a file's original bytes (or removes a file
// install created) when it is still exactly what install wrote; done says
// it did.
func restoreBackup(bdir, path string, cur []byte, t *InstallTarget) (done bool, err error) {
	b, ok := loadBackup(bdir, path)
	if !ok || !bytes.Equal(cur, b.written) {
		return false, nil
	}
	if !b.existed && isSymlink(path) {
		// Install made a file the user has since moved away and linked
		// to: the link and its file stay, without borg's entries.
		return false, nil
	}
	if b.existed {
		if err := writeInstallFile(path, b.orig, 0o644, "uninstall"); err != nil {
			return true, err
		}
		t.Action = "restored"
	} else {
		if err := os.Remove(path); err != nil {
			return true, fmt.Errorf("remove %s: %w", path, err)
		}
		t.Action = "removed"
	}
	dropBackup(bdir, path)
	if !b.existed {
		removeMadeFolder(bdir, filepath.Dir(path))
	}
	return true, nil
}

// mcpArgs is the arguments of the MCP server's command: `borg mcp`, with
// the store when one is named.
func (in Installer) mcpArgs() []string {
	if in.Store == "" {
		return []string{"mcp"}
	}
	return []string{"--store", in.Store, "mcp"}
}

// tomlStrings is a TOML array of strings.
func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// splitLines splits a file's text into lines, without a last empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
}

// tomlHasBorg reports whether a config.toml holds borg's entries: a line
// install added, or borg's MCP server.
func tomlHasBorg(lines []string) bool {
	for _, l := range lines {
		if strings.HasSuffix(l, tomlMark) {
			return true
		}
	}
	return tomlTable(lines, "mcp_servers.borg") >= 0
}

// tomlHeader is the table a line opens ("" when it opens none).
func tomlHeader(line string) string {
	l := strings.TrimSpace(line)
	if i := strings.Index(l, "#"); i >= 0 {
		l = strings.TrimSpace(l[:i])
	}
	if strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "[[") && strings.HasSuffix(l, "]") {
		return strings.TrimSpace(l[1 : len(l)-1])
	}
	return ""
}

// tomlTable is the index of the line that opens table name, or -1.
func tomlTable(lines []string, name string) int {
	for i, l := range lines {
		if tomlHeader(l) == name {
			return i
		}
	}
	return -1
}

// tomlHasKey reports whether table holds key (as "key =" in its lines, or as
// a dotted "table.key =" at the top level).
func tomlHasKey(lines []string, table, key string) bool {
	in := ""
	for _, l := range lines {
		if h := tomlHeader(l); h != "" {
			in = h
			continue
		}
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if (in == table && k == key) || (in == "" && k == table+"."+key) {
			return true
		}
	}
	return false
}

// tomlValue is the value of key in table, as written ("false", "\"x\""),
// without a trailing comment, from its line in the table or a dotted
// "table.key =" at the top level.
func tomlValue(lines []string, table, key string) (string, bool) {
	in := ""
	for _, l := range lines {
		if h := tomlHeader(l); h != "" {
			in = h
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		if k = strings.TrimSpace(k); (in == table && k == key) || (in == "" && k == table+"."+key) {
			if i := strings.Index(v, "#"); i >= 0 && !strings.Contains(v[:i], `"`) {
				v = v[:i]
			}
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// tomlSet adds line to table, right after its header, or as a new table at
// the end.
func tomlSet(lines []string, table, line string) []string {
	if i := tomlTable(lines, table); i >= 0 {
		out := append([]string{}, lines[:i+1]...)
		out = append(out, line)
		return append(out, lines[i+1:]...)
	}
	if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) != "" {
		lines = append(lines, ""+tomlMark)
	}
	return append(lines, "["+table+"]"+tomlMark, line)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s) // JSON's escapes are TOML's for a basic string
	return string(b)
}

// tableHasOthers reports whether the lines up to the next table header hold
// a line install did not write.
func tableHasOthers(lines []string) bool {
	for _, l := range lines {
		if tomlHeader(l) != "" {
			return false
		}
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasSuffix(l, tomlMark) {
			return true
		}
	}
	return false
}

// tomlTopKey reports whether a key before the first table header matches.
func tomlTopKey(lines []string, match func(string) bool) bool {
	for _, l := range lines {
		if tomlHeader(l) != "" {
			return false
		}
		if k, _, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.HasPrefix(strings.TrimSpace(l), "#") && match(strings.TrimSpace(k)) {
			return true
		}
	}
	return false
}

// tomlTopLevel inserts line at the end of the top-level keys (before the
// first table header).
func tomlTopLevel(lines []string, line string) []string {
	for i, l := range lines {
		if tomlHeader(l) != "" {
			out := append([]string{}, lines[:i]...)
			out = append(out, line)
			return append(out, lines[i:]...)
		}
	}
	return append(lines, line)
}

// readJSONConfig reads an agent's JSON settings file install is about to
// change: its bytes (for uninstall), whether it existed, and its object (an
// empty one for a missing or blank file).
func readJSONConfig(path string) (orig []byte, existed bool, root *jsonObject, err error) {
	orig, err = os.ReadFile(path)
	existed = err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, nil, fmt.Errorf("read %s: %w", path, err)
	}
	root = newJSONObject()
	if existed && len(bytes.TrimSpace(orig)) > 0 {
		if root, err = decodeJSONObject(orig); err != nil {
			return nil, false, nil, settingsParseError(path, orig, err, "install")
		}
	}
	return orig, existed, root, nil
}

// SettingsError is the error of an agent's settings file that is no JSON
// borg can rewrite, with the fix. Comments (which Gemini CLI and Qwen Code
// allow) would be lost in a rewrite, so borg leaves such a file as it is.
type SettingsError struct {
	Path     string
	Comments bool // it holds comments, else it is no JSON
	verb     string
	err      error
}

func (e *SettingsError) Error() string {
	if e.Comments {
		return fmt.Sprintf("%s holds comments, which borg would lose in rewriting it: borg leaves it as it is; remove the comments and run borg %s again, or edit borg's hooks in by hand (borg hook stop, borg hook prompt, …)", e.Path, e.verb)
	}
	return fmt.Sprintf("parse %s: %v (fix the JSON, then run borg %s again)", e.Path, e.err, e.verb)
}

func (e *SettingsError) Unwrap() error { return e.err }

// settingsParseError is the SettingsError of the file at path, data, that
// failed to parse with err.
func settingsParseError(path string, data []byte, err error, verb string) error {
	for _, line := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") {
			return &SettingsError{Path: path, Comments: true, verb: verb, err: err}
		}
	}
	return &SettingsError{Path: path, verb: verb, err: err}
}

// borgHookText matches a borg hook command in a file's text: each runs
// "hook <verb>".
var borgHookText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bhook (stop|prompt|session-start|post-tool)\b`)
})

// unreadableWithoutBorg is uninstall's answer for a settings file it
// cannot read (comments, or no JSON) that holds nothing of borg's (has
// says whether it does): nothing to take out, so the file is left as it
// is, and the note says so. ok is false when borg's entries are there.
func unreadableWithoutBorg(t *InstallTarget, perr error, has bool) (ok bool) {
	if has {
		return false
	}
	why := "is not JSON borg can read"
	if se, _ := perr.(*SettingsError); se != nil && se.Comments {
		why = "holds comments"
	}
	t.Note = fmt.Sprintf("%s %s and nothing of borg's: left as it is", t.Path, why)
	return true
}

// writeUninstalled writes a file with borg's entries taken out (it changed
// since install, so its original cannot come back) and forgets the backup.
func writeUninstalled(path, bdir string, out []byte, t *InstallTarget) error {
	if err := writeInstallFile(path, out, 0o644, "uninstall"); err != nil {
		return err
	}
	dropBackup(bdir, path)
	t.Action = "removed"
	return nil
}

// writeUninstalledJSON is writeUninstalled for a JSON settings file,
// indented as it was.
func writeUninstalledJSON(path, bdir string, root *jsonObject, indent string, t *InstallTarget) error {
	out, err := encodeJSON(root, indent)
	if err != nil {
		return err
	}
	return writeUninstalled(path, bdir, out, t)
}
