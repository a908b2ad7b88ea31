package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/borg-memory/borg/memfs/fsutil"
	"github.com/borg-memory/borg/memfs/gitcli"
)

// Installer wires borg into an agent's settings and a repository's git hooks,
// and takes it out again. Every install is idempotent, keeps whatever hooks
// were there (they still run), and remembers the original bytes so that
// uninstall restores them exactly when nothing else changed the file since.
type Installer struct {
	Repo string // the project's git top level ("" for --user only)
	// Dir is the folder the agents' project files go in (.claude/,
	// .codex/, .mcp.json, …): an agent started there reads them. ""
	// is Repo. The git hook and the backups are the repository's.
	Dir     string
	Home    string // the user's home, for --user
	Command string // how hooks call borg, e.g. "/usr/local/bin/borg"
	// Store is the store the hooks use, named on their command line
	// (--store); "" for the one borg finds itself (BORG_STORE, the
	// default).
	Store string
}

// borgArgs is the start of every command line the hooks run borg with:
// borg's path, quoted by quote for the shell that runs it, and --store
// when one is named.
func (in Installer) borgArgs(quote func(string) string) string {
	if in.Store == "" {
		return quote(in.Command)
	}
	return quote(in.Command) + " --store " + quote(in.Store)
}

// agentHook is one hook borg registers in an agent's hooks file: the
// agent's event, the borg subcommand it runs, the matcher ("" for none)
// and the timeout in the agent's unit (0 for none).
type agentHook struct {
	event, verb, matcher string
	timeout              int
}

// Agent hook events borg registers, per agent (docs/agents.md). The stop
// hook's timeout leaves room for an external judge (BORG_JUDGE); the others
// answer within borg's own 2 s deadline.
var (
	// Claude Code and Codex CLI: timeouts in seconds.
	claudeEvents = []agentHook{
		{"SessionStart", "session-start", "startup|resume|clear|compact", 10},
		{"UserPromptSubmit", "prompt", "", 10},
		{"PostToolUse", "post-tool", "*", 10},
		{"Stop", "stop", "", 300},
	}
	// Gemini CLI: Claude Code's layout, timeouts in milliseconds; a
	// lifecycle event's matcher is an exact string, so none is given.
	geminiEvents = []agentHook{
		{"SessionStart", "session-start", "", 10000},
		{"BeforeAgent", "prompt", "", 10000},
		{"AfterTool", "post-tool", ".*", 10000},
		{"AfterAgent", "stop", "", 300000},
	}
	// Cursor: one flat entry per event, no matcher or timeout. No
	// sessionStart: borg records the session at its first hook anyway, and
	// some Cursor versions refuse the event ("Unknown hook type").
	cursorEvents = []agentHook{
		{"beforeSubmitPrompt", "prompt", "", 0},
		{"afterShellExecution", "post-tool", "", 0},
		{"stop", "stop", "", 0},
	}
)

// agentEventsOf is the hooks borg registers for an agent kind, and whether
// its hooks file lists flat entries (Cursor) rather than groups of hooks.
func agentEventsOf(kind string) (events []agentHook, flat bool) {
	switch kind {
	case AgentGemini:
		return geminiEvents, false
	case AgentCursor:
		return cursorEvents, true
	}
	return claudeEvents, false
}

// AgentQwen names a Qwen Code install. Qwen Code, a Gemini CLI fork, took
// Claude Code's hooks rather than Gemini CLI's (UserPromptSubmit, Stop,
// PostToolUse, SessionStart; the same input and output fields; timeouts
// in seconds), in its own settings file: its hook JSON reads as Claude
// Code's, so it needs no dialect of its own.
const AgentQwen = "qwen"

const gitHookMarker = "# borg: chained post-commit hook"

// InstallTarget names one file an install wrote.
type InstallTarget struct {
	Kind   string `json:"kind"` // claude | codex | gemini | qwen | cursor | cline | git
	Path   string `json:"path"`
	Action string `json:"action"` // installed | updated | already installed | skipped | removed | restored | not installed
	// Note is what the user should know of it: why it was skipped or
	// left as it is.
	Note string `json:"note,omitempty"`
	// Warning is why the agent will not run the hooks install wrote.
	Warning string `json:"warning,omitempty"`
}

// projectDir is the folder the agents' project files go in: Dir, else the
// repository's top level.
func (in Installer) projectDir() string {
	if in.Dir != "" {
		return in.Dir
	}
	return in.Repo
}

// ClaudeSettingsPath is the settings file for a Claude Code install.
func (in Installer) ClaudeSettingsPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".claude", "settings.json")
	}
	return filepath.Join(in.projectDir(), ".claude", "settings.json")
}

// GeminiSettingsPath is the settings file for a Gemini CLI install.
func (in Installer) GeminiSettingsPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".gemini", "settings.json")
	}
	return filepath.Join(in.projectDir(), ".gemini", "settings.json")
}

// QwenSettingsPath is the settings file for a Qwen Code install.
func (in Installer) QwenSettingsPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".qwen", "settings.json")
	}
	return filepath.Join(in.projectDir(), ".qwen", "settings.json")
}

// CursorHooksPath is the hooks file for a Cursor install.
func (in Installer) CursorHooksPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".cursor", "hooks.json")
	}
	return filepath.Join(in.projectDir(), ".cursor", "hooks.json")
}

// CodexHooksPath is the hooks file for a Codex CLI install.
func (in Installer) CodexHooksPath(user bool) string {
	if user {
		return filepath.Join(in.Home, ".codex", "hooks.json")
	}
	return filepath.Join(in.projectDir(), ".codex", "hooks.json")
}

func (in Installer) backupDir(user bool) (string, error) {
	if user || in.Repo == "" {
		return filepath.Join(in.Home, ".borg-install"), nil
	}
	gd, err := gitOut(in.Repo, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("find git dir of %s: %w (install inside a git repository or use --user)", in.Repo, err)
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(in.Repo, gd)
	}
	return filepath.Join(gd, "borg-install"), nil
}

func backupName(path string) string {
	return strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(filepath.Clean(path))
}

// InstallAgent merges borg's hooks into an agent's JSON hooks file: Claude
// Code's settings.json, Codex's hooks.json, Gemini CLI's and Qwen Code's
// settings.json share one schema; Cursor's hooks.json lists flat entries under version 1.
func (in Installer) InstallAgent(kind, path string, user bool) (InstallTarget, error) {
	t := InstallTarget{Kind: kind, Path: path}
	orig, existed, root, err := readJSONConfig(path)
	if err != nil {
		return t, err
	}
	hooks, _ := root.get("hooks").(*jsonObject)
	if hooks == nil {
		hooks = newJSONObject()
	}
	pristine := !hooksHaveBorg(hooks)
	changed, added := false, false
	events, flat := agentEventsOf(kind)
	for _, ev := range events {
		groups, _ := hooks.get(ev.event).([]any)
		// Agents run the command through a shell: borg's path is quoted, so
		// a space in it is no word break and a $(…) in it runs nothing.
		command := in.borgArgs(commandQuote) + " hook " + ev.verb
		if groupsHaveBorg(groups) {
			// Installed: by another command or for another store
			// (--store), it now runs this one.
			changed = retargetBorg(groups, command) || changed
			continue
		}
		added = true
		if flat {
			hooks.set(ev.event, append(groups, jsonObjectOf("command", command)))
			changed = true
			continue
		}
		h := jsonObjectOf("type", "command", "command", command)
		if ev.timeout > 0 {
			h.set("timeout", ev.timeout)
		}
		g := newJSONObject()
		if ev.matcher != "" {
			g.set("matcher", ev.matcher)
		}
		g.set("hooks", []any{h})
		hooks.set(ev.event, append(groups, g))
		changed = true
	}
	if !changed {
		t.Action = "already installed"
		return t, nil
	}
	if flat && !root.has("version") {
		root.set("version", 1) // Cursor's hooks.json schema version
	}
	root.set("hooks", hooks)
	out, err := encodeJSON(root, jsonIndent(orig))
	if err != nil {
		return t, fmt.Errorf("encode %s: %w", path, err)
	}
	if err := in.writeInstalled(path, user, orig, existed, pristine, out); err != nil {
		return t, err
	}
	t.Action = "installed"
	if !added {
		t.Action = "updated"
	}
	return t, nil
}

// retargetBorg makes every borg hook in groups run command; it reports
// whether one ran another.
func retargetBorg(groups []any, command string) bool {
	changed := false
	for _, h := range borgHooks(groups) {
		if h.get("command") != command {
			h.set("command", command)
			changed = true
		}
	}
	return changed
}

// UninstallAgent removes borg's hooks from an agent's hooks file. When the
// file is still exactly what install wrote, the original bytes come back (or
// the file goes away if install created it); otherwise only borg's entries
// are removed and everything else is kept.
func (in Installer) UninstallAgent(kind, path string, user bool) (InstallTarget, error) {
	t := InstallTarget{Kind: kind, Path: path, Action: "not installed"}
	cur, bdir, done, err := in.startUninstall(path, user, &t)
	if done || err != nil {
		return t, err
	}
	root, err := decodeJSONObject(cur)
	if err != nil {
		perr := settingsParseError(path, cur, err, "uninstall")
		if unreadableWithoutBorg(&t, perr, borgHookText().Match(cur)) {
			return t, nil
		}
		return t, perr
	}
	hooks, _ := root.get("hooks").(*jsonObject)
	removed := false
	for _, ev := range hooks.keyList() {
		groups, _ := hooks.get(ev).([]any)
		var keep []any
		here := false
		for _, g := range groups {
			g, dropped := withoutBorg(g)
			here = here || dropped
			if g != nil {
				keep = append(keep, g)
			}
		}
		if !here {
			continue // an event borg has no hook in stays as it is
		}
		removed = true
		if len(keep) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, keep)
		}
	}
	if !removed {
		return t, nil
	}
	if hooks.len() == 0 {
		root.del("hooks")
	}
	return t, writeUninstalledJSON(path, bdir, root, jsonIndent(cur), &t)
}

// withoutBorg is a hook group with borg's hooks taken out, nil when none
// is left (or the group is a flat borg entry, Cursor's); dropped says
// whether there was one. Hooks a user added to the group borg made stay.
func withoutBorg(g any) (rest any, dropped bool) {
	gm, ok := g.(*jsonObject)
	if !ok {
		return g, false
	}
	if cmd, _ := gm.get("command").(string); isBorgHookCommand(cmd) {
		return nil, true
	}
	hs, ok := gm.get("hooks").([]any)
	if !ok {
		return g, false
	}
	var keep []any
	for _, h := range hs {
		hm, _ := h.(*jsonObject)
		if cmd, _ := hm.get("command").(string); isBorgHookCommand(cmd) {
			dropped = true
			continue
		}
		keep = append(keep, h)
	}
	if !dropped {
		return g, false
	}
	if len(keep) == 0 {
		return nil, true
	}
	out := gm.clone()
	out.set("hooks", keep)
	return out, true
}

// hooksHaveBorg reports whether any event of an agent's hooks object runs
// "borg … hook".
func hooksHaveBorg(hooks *jsonObject) bool {
	for _, ev := range hooks.keyList() {
		if groups, _ := hooks.get(ev).([]any); groupsHaveBorg(groups) {
			return true
		}
	}
	return false
}

// groupsHaveBorg reports whether any hook in the groups runs "borg … hook".
func groupsHaveBorg(groups []any) bool { return len(borgHooks(groups)) > 0 }

// borgHooks is the entries of groups that run "borg … hook": a group's
// hooks, or flat entries (Cursor's), each the object that holds its
// command.
func borgHooks(groups []any) []*jsonObject {
	var out []*jsonObject
	add := func(m *jsonObject) {
		if cmd, _ := m.get("command").(string); isBorgHookCommand(cmd) {
			out = append(out, m)
		}
	}
	for _, g := range groups {
		gm, _ := g.(*jsonObject)
		add(gm)
		hs, _ := gm.get("hooks").([]any)
		for _, h := range hs {
			hm, _ := h.(*jsonObject)
			add(hm)
		}
	}
	return out
}

func isBorgHookCommand(cmd string) bool {
	f := strings.Fields(cmd)
	i := strings.LastIndex(cmd, " hook ")
	if len(f) < 3 || f[len(f)-2] != "hook" || i < 0 {
		return false
	}
	// The program is all before " hook <verb>", quoted or not (its path
	// may hold spaces), and before the store it names, if any (Installer.
	// borgArgs).
	prog := strings.TrimSpace(cmd[:i])
	if j := strings.LastIndex(prog, " --store "); j >= 0 {
		prog = strings.TrimSpace(prog[:j])
	}
	if n := len(prog); n >= 2 && (prog[0] == '\'' && prog[n-1] == '\'' || prog[0] == '"' && prog[n-1] == '"') {
		prog = strings.ReplaceAll(prog[1:n-1], `'\''`, "'")
	}
	base := filepath.Base(prog)
	return base == "borg" || strings.HasPrefix(base, "borg.") || strings.HasSuffix(base, "/borg")
}

// GitHooksDir is where git looks for this repository's hooks (core.hooksPath
// when set, as husky does, else the common git dir's hooks/).
func (in Installer) GitHooksDir() (string, error) {
	if p, err := gitOut(in.Repo, "config", "--get", "core.hooksPath"); err == nil && p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.Repo, p)
		}
		return p, nil
	}
	gd, err := gitOut(in.Repo, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("find git dir of %s: %w", in.Repo, err)
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(in.Repo, gd)
	}
	return filepath.Join(gd, "hooks"), nil
}

// GitSupportsConfigHooks reports git ≥ 2.54, which runs several hooks per
// event from hook.<name>.* config without anyone owning the hook file.
func GitSupportsConfigHooks() bool {
	out, err := gitcli.Git{}.Line(context.Background(), "version")
	if err != nil {
		return false
	}
	f := strings.Fields(out)
	if len(f) < 3 {
		return false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major > 2 || (major == 2 && minor >= 54)
}

// gitHookFile is the post-commit file borg's line goes into: the one git
// runs (GitHooksDir), except under husky v9. husky sets core.hooksPath to
// .husky/_, whose files it writes again at every npm install (they are
// gitignored) and which run the user's hook, .husky/post-commit: borg's
// line goes there, as a user's own would. husky says which it is.
func (in Installer) gitHookFile() (path string, husky bool, err error) {
	dir, err := in.GitHooksDir()
	if err != nil {
		return "", false, err
	}
	if filepath.Base(dir) == "_" && filepath.Base(filepath.Dir(dir)) == ".husky" {
		return filepath.Join(filepath.Dir(dir), "post-commit"), true, nil
	}
	return filepath.Join(dir, "post-commit"), false, nil
}

// InstallGit adds borg's post-commit hook. On git ≥ 2.54 it uses hook config;
// otherwise it chains: an existing post-commit (husky, pre-commit, git-lfs, a
// user's own) is renamed beside ours, byte for byte, and still runs first.
// Under husky v9 borg's lines go into the user's .husky/post-commit, which
// husky runs with sh (gitHookFile).
func (in Installer) InstallGit() (InstallTarget, error) {
	if GitSupportsConfigHooks() {
		return in.installGitConfig()
	}
	path, husky, err := in.gitHookFile()
	if err != nil {
		return InstallTarget{Kind: "git"}, err
	}
	dir := filepath.Dir(path)
	t := InstallTarget{Kind: "git", Path: path}
	if husky {
		// An older borg's lines in husky's own file, which husky writes
		// again: taken out, as they now go into the user's hook.
		if _, err := in.uninstallGitFile(filepath.Join(dir, "_", "post-commit")); err != nil {
			return t, err
		}
	}
	cur, rerr := os.ReadFile(path)
	exists := rerr == nil
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return t, fmt.Errorf("read %s: %w", path, rerr)
	}
	if exists && (bytes.Contains(cur, []byte(gitHookMarker)) || bytes.Contains(cur, []byte(gitHookBlock))) {
		t.Action = "already installed"
		// Installed by another command or for another store
		// (--store): borg's line now runs this one.
		want := in.postCommitCall()
		lines := strings.Split(string(cur), "\n")
		changed := false
		for i, l := range lines {
			if strings.HasPrefix(l, "BORG_COMMIT=") && strings.Contains(l, " hook post-commit ") && l != want {
				lines[i], changed = want, true
			}
		}
		if changed {
			out := []byte(strings.Join(lines, "\n"))
			if _, err := installTarget(path, "install"); err != nil {
				return t, err
			}
			// What install wrote is now this: uninstall still finds
			// its own file, and its backup the true original (none
			// when the user edited the hook since).
			if bdir, err := in.backupDir(false); err == nil {
				if err := saveBackup(bdir, path, cur, true, false, out); err != nil {
					return t, err
				}
			}
			if err := writeInstallFile(path, out, 0o755, "install"); err != nil {
				return t, err
			}
			t.Action = "updated"
		}
		return t, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return t, fmt.Errorf("create hooks dir %s: %w", dir, err)
	}
	// borg runs in the background so the commit returns at once; it is told
	// which commit to record, since HEAD may move before it reads it.
	call := in.postCommitCall() + "\n"
	if husky || exists && isShellScript(cur) {
		// A shell hook (a user's own, husky's, pre-commit's wrapper) gets
		// our lines right after its shebang, or first in a husky hook
		// without one. Its file name and $0 stay as they were, which
		// husky-style stubs rely on to find the real hook.
		block := gitHookBlock + " (borg install --git; borg uninstall removes it)\n" + call + gitHookEnd + "\n"
		nl := bytes.IndexByte(cur, '\n')
		var out []byte
		switch {
		case !bytes.HasPrefix(cur, []byte("#!")):
			out = append([]byte(block), cur...)
		case nl < 0:
			out = append(append(append([]byte{}, cur...), '\n'), block...)
		default:
			out = append(append(append([]byte{}, cur[:nl+1]...), block...), cur[nl+1:]...)
		}
		if _, err := installTarget(path, "install"); err != nil {
			return t, err
		}
		bdir, berr := in.backupDir(false)
		if berr != nil {
			return t, berr
		}
		if err := saveBackup(bdir, path, cur, exists, true, out); err != nil {
			return t, err
		}
		if err := writeInstallFile(path, out, 0o755, "install"); err != nil {
			return t, err
		}
		t.Action = "installed"
		return t, nil
	}
	chained := path + ".borg-chained"
	if exists {
		// Not a shell script (a binary, a Python hook): keep it byte for
		// byte beside ours and run it first.
		if _, serr := os.Stat(chained); serr == nil {
			return t, fmt.Errorf("both %s and %s exist: move one away, then run borg install again", path, chained)
		}
		if err := os.Rename(path, chained); err != nil {
			return t, fmt.Errorf("keep existing hook %s: %w", path, err)
		}
	}
	script := "#!/bin/sh\n" + gitHookMarker + " (borg install --git; borg uninstall restores the original)\n" +
		"hookdir=$(dirname \"$0\")\nstatus=0\n" +
		"if [ -x \"$hookdir/post-commit.borg-chained\" ]; then \"$hookdir/post-commit.borg-chained\" \"$@\"; status=$?; fi\n" +
		call + "exit $status\n"
	if err := writeFileAtomic(path, []byte(script), 0o755); err != nil {
		_ = os.Rename(chained, path)
		return t, err
	}
	t.Action = "installed"
	return t, nil
}

// installGitConfig installs the hook through git's hook config (git ≥ 2.54).
func (in Installer) installGitConfig() (InstallTarget, error) {
	t := InstallTarget{Kind: "git", Path: "hook.borg (git config)"}
	want := in.postCommitCall()
	cur, _ := gitOut(in.Repo, "config", "--get", "hook.borg.command")
	if strings.TrimSpace(cur) == want {
		t.Action = "already installed"
		return t, nil
	}
	if _, err := gitOut(in.Repo, "config", "hook.borg.event", "post-commit"); err != nil {
		return t, err
	}
	// git runs a configured hook's command through the shell, as it runs
	// a hook file: the same line, in the background.
	if _, err := gitOut(in.Repo, "config", "hook.borg.command", want); err != nil {
		return t, err
	}
	t.Action = "installed"
	if cur != "" {
		t.Action = "updated" // an older borg's, which ran in the foreground
	}
	return t, nil
}

// postCommitCall is the shell line that runs borg's post-commit hook: in
// the background, so that the commit returns at once, with nothing on the
// user's terminal (the hook fails open and says why on a stderr no one
// reads), and told which commit to record, since HEAD may move before it
// reads it.
func (in Installer) postCommitCall() string {
	return "BORG_COMMIT=$(git rev-parse HEAD 2>/dev/null) " + in.borgArgs(shellQuote) + " hook post-commit </dev/null >/dev/null 2>&1 &"
}

const (
	gitHookBlock = "# borg: post-commit block"
	gitHookEnd   = "# borg: end"
)

// isShellScript reports whether a hook file is a POSIX-shell-family script.
func isShellScript(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("#!")) {
		return false
	}
	line := string(b)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	for _, sh := range []string{"/sh", " sh", "bash", "dash", "zsh", "ksh"} {
		if strings.Contains(line, sh) {
			return true
		}
	}
	return false
}

// UninstallGit removes borg's post-commit hook and puts back the hook it
// chained, untouched. Under husky v9 it also takes an older borg's lines
// out of husky's own file.
func (in Installer) UninstallGit() (InstallTarget, error) {
	if GitSupportsConfigHooks() {
		t := InstallTarget{Kind: "git", Path: "hook.borg (git config)", Action: "not installed"}
		if cur, _ := gitOut(in.Repo, "config", "--get", "hook.borg.command"); cur != "" {
			if _, err := gitOut(in.Repo, "config", "--remove-section", "hook.borg"); err != nil {
				return t, err
			}
			t.Action = "removed"
		}
		return t, nil
	}
	path, husky, err := in.gitHookFile()
	if err != nil {
		return InstallTarget{Kind: "git"}, err
	}
	t := InstallTarget{Kind: "git", Path: path, Action: "not installed"}
	paths := []string{path}
	if husky {
		paths = append(paths, filepath.Join(filepath.Dir(path), "_", "post-commit"))
	}
	for _, p := range paths {
		action, err := in.uninstallGitFile(p)
		if err != nil {
			return t, err
		}
		if action != "not installed" && t.Action == "not installed" {
			t.Path, t.Action = p, action
		}
	}
	return t, nil
}

// uninstallGitFile takes borg's lines out of the post-commit file at path:
// its block from a shell hook (the hook's original bytes come back when
// nothing else changed it; a file install made goes), or its own script,
// the hook it chained put back. It says what it did.
func (in Installer) uninstallGitFile(path string) (action string, err error) {
	cur, err := os.ReadFile(path)
	if err != nil {
		return "not installed", nil
	}
	if i := bytes.Index(cur, []byte(gitHookBlock)); i >= 0 {
		// Our block inside someone else's shell hook.
		bdir, err := in.backupDir(false)
		if err != nil {
			return "", err
		}
		b, ok := loadBackup(bdir, path)
		action = "restored"
		switch {
		case ok && b.existed && bytes.Equal(cur, b.written):
			if err := writeInstallFile(path, b.orig, 0o755, "uninstall"); err != nil {
				return "", err
			}
		case ok && !b.existed && bytes.Equal(cur, b.written) && !isSymlink(path):
			// A husky hook install made.
			if err := os.Remove(path); err != nil {
				return "", fmt.Errorf("remove %s: %w", path, err)
			}
			action = "removed"
		default:
			end := bytes.Index(cur[i:], []byte(gitHookEnd+"\n"))
			if end < 0 {
				return "", fmt.Errorf("%s: borg's block has no end marker; remove the lines from %q by hand", path, gitHookBlock)
			}
			out := append(append([]byte{}, cur[:i]...), cur[i+end+len(gitHookEnd)+1:]...)
			if err := writeInstallFile(path, out, 0o755, "uninstall"); err != nil {
				return "", err
			}
		}
		dropBackup(bdir, path)
		return action, nil
	}
	if !bytes.Contains(cur, []byte(gitHookMarker)) {
		return "not installed", nil
	}
	chained := path + ".borg-chained"
	if _, err := os.Stat(chained); err == nil {
		if err := os.Rename(chained, path); err != nil {
			return "", fmt.Errorf("restore %s: %w", path, err)
		}
		return "restored", nil
	}
	if err := os.Remove(path); err != nil {
		return "", fmt.Errorf("remove %s: %w", path, err)
	}
	return "removed", nil
}

type backup struct {
	existed bool
	orig    []byte
	written []byte
}

// saveBackup keeps a file's original bytes and what install wrote, for
// uninstall, which puts the original back only while the file is still
// what install last wrote. pristine says whether orig holds none of
// borg's entries. The original stays the first install's while each
// install finds the file as the last one wrote it; when a user's edit
// came in between (or the file held borg's entries before borg wrote it:
// a teammate committed them), no original is kept, and uninstall takes
// out borg's entries only: a whole-file restore would drop that edit. A
// file found free of borg's entries again starts afresh.
//
// The copies are the user's own only (0600 in a 0700 directory): an
// agent's settings may hold credentials, whatever mode the file itself
// has.
func saveBackup(dir, path string, orig []byte, existed, pristine bool, written []byte) error {
	base := filepath.Join(dir, backupName(path))
	prev, had := loadBackup(dir, path)
	if !pristine && !(had && existed && bytes.Equal(prev.written, orig)) {
		// Nothing to restore to: forget any earlier backup.
		dropBackup(dir, path)
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create backup dir %s: %w", dir, err)
	}
	// A directory an older borg created readable by all is made private.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make backup dir %s private: %w", dir, err)
	}
	if had && existed && bytes.Equal(prev.written, orig) {
		// As borg last wrote it: the earlier backup holds the true
		// original; keep it, private.
		if err := os.Chmod(base+".orig", 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("make backup %s private: %w", base+".orig", err)
		}
		return writeFileAtomic(base+".written", written, 0o600)
	}
	if existed {
		if err := writeFileAtomic(base+".orig", orig, 0o600); err != nil {
			return err
		}
	} else {
		_ = os.Remove(base + ".orig")
		// Whether install makes the file's folder too: uninstall removes
		// only a folder it made (an agent's folder the user made says
		// the agent is in use). The mark is the folder's: two files of
		// borg's may share it (Codex's hooks.json and config.toml).
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, os.ErrNotExist) {
			if err := writeFileAtomic(newDirMark(dir, filepath.Dir(path)), nil, 0o600); err != nil {
				return err
			}
		}
	}
	return writeFileAtomic(base+".written", written, 0o600)
}

func loadBackup(dir, path string) (backup, bool) {
	base := filepath.Join(dir, backupName(path))
	w, err := os.ReadFile(base + ".written")
	if err != nil {
		return backup{}, false
	}
	b := backup{written: w}
	if o, err := os.ReadFile(base + ".orig"); err == nil {
		b.existed, b.orig = true, o
	}
	return b, true
}

func dropBackup(dir, path string) {
	base := filepath.Join(dir, backupName(path))
	_ = os.Remove(base + ".written")
	_ = os.Remove(base + ".orig")
	_ = os.Remove(dir)
}

// newDirMark is the file in the backup directory bdir that says install
// made the folder folder.
func newDirMark(bdir, folder string) string {
	return filepath.Join(bdir, backupName(folder)+".newdir")
}

// removeMadeFolder removes folder, once empty, when install made it (its
// mark in bdir), and then the mark.
func removeMadeFolder(bdir, folder string) {
	mark := newDirMark(bdir, folder)
	if _, err := os.Stat(mark); err != nil {
		return
	}
	if err := os.Remove(folder); err == nil || errors.Is(err, os.ErrNotExist) {
		_ = os.Remove(mark)
		_ = os.Remove(bdir) // only if empty
	}
}

// writeInstallFile writes a file install or uninstall changes (an agent's
// settings, a git hook) the way the user keeps it: through a symlink to
// the file it names, the link left in place, and with that file's mode
// (def for a new one). A read-only file is refused (installTarget).
func writeInstallFile(path string, data []byte, def os.FileMode, verb string) error {
	target, err := installTarget(path, verb)
	if err != nil {
		return err
	}
	return writeFileAtomic(target, data, modeOf(target, def))
}

// installTarget is the file a write to path changes: path, or the file
// its symlink names. A link to nothing, something other than a file, and
// a read-only file (its owner cannot write it: the user protected it) are
// refused with the fix; verb is the command to run again after it.
func installTarget(path, verb string) (string, error) {
	target := path
	if isSymlink(path) {
		var err error
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("%s is a symlink to nothing (%v): borg writes through a symlink, not over it; point it at a file or remove it, then run borg %s again", path, err, verb)
		}
	}
	fi, err := os.Stat(target)
	if errors.Is(err, os.ErrNotExist) {
		return target, nil
	}
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", target, err)
	}
	named := path
	if target != path {
		named = path + " (a symlink to " + target + ")"
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file: borg leaves it as it is", named)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return "", fmt.Errorf("%s is read-only (mode %04o): borg leaves it as it is; make it writable (chmod u+w %s) and run borg %s again, or edit borg's hooks in by hand", named, fi.Mode().Perm(), shellQuote(target), verb)
	}
	return target, nil
}

// isSymlink reports whether path is a symlink.
func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// writeFileAtomic creates path's directory when it is missing (an agent's
// settings directory, the session state directory) and writes data there
// through fsutil.WriteFileAtomic, borg's one atomic write: a temp file
// beside path, given mode exactly (a hook keeps its executable bit), synced
// and renamed in.
func writeFileAtomic(path string, data []byte, mode os.FileMode, opts ...fsutil.WriteOption) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return fsutil.WriteFileAtomic(path, data, mode, opts...)
}

// commandQuote quotes borg's path for a hook command an agent or git runs
// through the platform's shell: shellQuote's single quotes for a POSIX
// shell; on Windows, double quotes, and only when the path needs them (a
// drive letter and backslashes do not).
func commandQuote(s string) string {
	if runtime.GOOS != "windows" {
		return shellQuote(s)
	}
	if s != "" && !strings.ContainsAny(s, " \t\"&|<>^%()!;,'`$") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, "") + `"`
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ' ' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 && !strings.Contains(s, " ") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gitOut runs git args in the user's repository at dir (not isolated: it
// is theirs) and returns its output without surrounding space.
func gitOut(dir string, args ...string) (string, error) {
	out, err := gitcli.Git{Dir: dir}.Line(context.Background(), args...)
	if ge, ok := errors.AsType[*gitcli.GitError](err); ok {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), ge.Err, strings.TrimSpace(ge.Stderr))
	}
	return out, err
}
