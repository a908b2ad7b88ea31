package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run borg end to end on a throwaway store: lessons, an agent session through the real hooks, a sleep and its diff",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "keep the throwaway store and project (their paths are printed)"},
			&cli.StringFlag{Name: "agent", Usage: "claude or gemini: the session is played by the real Claude Code CLI (on PATH, or $BORG_CLAUDE) or Gemini CLI (on PATH, or $BORG_GEMINI) against a local model stand-in"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("demo takes flags only: borg demo [--keep] [--agent claude|gemini]")
			}
			agent := c.String("agent")
			if agent != "" && agent != "claude" && agent != "gemini" {
				return usageErr("--agent %q: the demo knows claude and gemini (or no --agent: a scripted agent)", agent)
			}
			return runDemo(c.Context, e, c.Bool("keep"), agent)
		},
	}
}

// demo plays a scripted session by running this very binary, exactly as an
// agent and git would: every hook below is a real `borg hook …` process fed
// the agent's JSON on stdin.
type demo struct {
	ctx     context.Context
	out     io.Writer
	self    string
	env     []string
	store   string
	project string
	now     time.Time
	agent   string   // "" (scripted hook JSON), "claude" or "gemini"
	cli     string   // the agent's CLI: Claude Code's or Gemini CLI's
	own     []string // the demo's own environment, over the user's
}

// agentEnv is the environment the real agent CLI runs in: the demo's own
// variables and only the system basics of the user's (and GORACE, the
// race runtime's options for the borg its hooks run, when that is a race
// build), so that none of the user's agent settings (a cloud provider, a
// config dir, a token, a proxy) takes the CLI past the stand-in.
func (d *demo) agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "SHELL", "TERM", "SystemRoot", "ComSpec", "PATHEXT", "GORACE":
			env = append(env, kv)
		}
	}
	return append(append(env, d.own...), extra...)
}

func runDemo(ctx context.Context, e *env, keep bool, agent string) error {
	self, err := selfPath()
	if err != nil {
		return fail(exitFail, "find borg's own binary: %v", err)
	}
	cli := ""
	switch agent {
	case "claude":
		if cli = e.getenv("BORG_CLAUDE"); cli == "" {
			if cli, err = exec.LookPath("claude"); err != nil {
				return fail(exitUsage, "--agent claude needs the Claude Code CLI: npm install -g @anthropic-ai/claude-code, or set BORG_CLAUDE to its path")
			}
		}
	case "gemini":
		if cli = e.getenv("BORG_GEMINI"); cli == "" {
			if cli, err = exec.LookPath("gemini"); err != nil {
				return fail(exitUsage, "--agent gemini needs the Gemini CLI: npm install -g @google/gemini-cli, or set BORG_GEMINI to its path")
			}
		}
	}
	root, err := os.MkdirTemp("", "borg-demo-")
	if err != nil {
		return fail(exitFail, "create a temp dir: %v", err)
	}
	if !keep {
		defer os.RemoveAll(root)
	}
	d := &demo{ctx: ctx, out: e.out, self: self, store: filepath.Join(root, "store"), project: filepath.Join(root, "payments"), now: e.now(),
		agent: agent, cli: cli}
	d.own = []string{
		"BORG_STORE=" + d.store, "BORG_ENGINEER=ada@example.com", "BORG_PLACEBO_RATE=0",
		"HOME=" + filepath.Join(root, "home"), "XDG_DATA_HOME=" + filepath.Join(root, "home", ".local", "share"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "home", ".config"),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "BORG_JUDGE="}
	d.env = append(os.Environ(), d.own...)
	if err := d.run(); err != nil {
		return fail(exitFail, "demo: %v", err)
	}
	if keep {
		fmt.Fprintf(e.out, "\nkept: store %s, project %s\n", d.store, d.project)
	}
	return nil
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

func (d *demo) section(title string) {
	d.say("\n== %s %s", title, strings.Repeat("=", max(0, 70-len(title))))
}

// borg runs this binary with args in dir, showing the command and its output.
func (d *demo) borg(dir, stdin string, args ...string) (string, error) {
	d.say("$ borg %s", strings.Join(quoteArgs(args), " "))
	cmd := exec.CommandContext(d.ctx, d.self, args...)
	cmd.Dir, cmd.Env = dir, d.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if s := strings.TrimRight(out.String(), "\n"); s != "" {
		d.say("%s", indent(s))
	}
	if err != nil {
		return out.String(), fmt.Errorf("borg %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// hook feeds one agent hook its JSON, as Claude Code would.
func (d *demo) hook(verb, json string) (string, error) {
	d.say("agent → borg hook %s   %s", verb, json)
	cmd := exec.CommandContext(d.ctx, d.self, "hook", verb)
	cmd.Dir, cmd.Env = d.project, d.env
	cmd.Stdin = strings.NewReader(json)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return "", fmt.Errorf("hook %s exited: %v", verb, err)
	}
	if s := strings.TrimSpace(errb.String()); s != "" {
		return "", fmt.Errorf("hook %s complained: %s", verb, s)
	}
	if out.Len() == 0 {
		d.say("  (no output: the agent carries on)")
	}
	return out.String(), nil
}

// git runs git args in dir (the demo's throwaway project or store) with the
// demo's environment and returns its stdout.
func (d *demo) git(dir string, args ...string) (string, error) {
	out, err := memfs.Git{Dir: dir, Env: d.own}.Run(d.ctx, nil, args...)
	if ge, ok := errors.AsType[*memfs.GitError](err); ok {
		return string(out), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), ge.Err, strings.TrimSpace(ge.Stderr))
	}
	return string(out), err
}

func (d *demo) write(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func (d *demo) run() error {
	session := `"session_id":"demo-session-1","cwd":` + jsonString(d.project)

	d.section("1. a team store and a project")
	if _, err := d.borg(filepath.Dir(d.store), "", "init"); err != nil {
		return err
	}
	if err := d.write(filepath.Join(d.project, "client.go"), demoClientV1); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "payments client"}} {
		if _, err := d.git(d.project, args...); err != nil {
			return err
		}
	}
	d.say("a project repository at %s with a payments client", d.project)
	if d.agent == "gemini" {
		// A project that uses Gemini CLI has its folder: install wires
		// Gemini CLI there along with the default agents.
		if err := os.MkdirAll(filepath.Join(d.project, ".gemini"), 0o755); err != nil {
			return err
		}
	}
	if _, err := d.borg(d.project, "", "install", "--command", d.self); err != nil {
		return err
	}

	d.section("2. lessons the team learned")
	for _, l := range demoLessons {
		if _, err := d.borg(d.project, "", append([]string{"learn"}, l...)...); err != nil {
			return err
		}
	}
	// A teammate's hand-written lesson whose time-to-live ran out last month.
	// It goes in its bucket: the first two hex digits of the id's SHA-1.
	handPath := memfs.LessonPath("legacy-ftp-export-0c1d")
	if err := d.write(filepath.Join(d.store, filepath.FromSlash(handPath)), demoHandLesson); err != nil {
		return err
	}
	if _, err := d.git(d.store, "add", handPath); err != nil {
		return err
	}
	if _, err := d.git(d.store, "commit", "-q", "-m", "lesson: legacy-ftp-export-0c1d (written by hand)"); err != nil {
		return err
	}
	d.say("a teammate committed %s by hand (its TTL ended 2026-10-15)", handPath)

	d.section("3. an agent session, through the real hooks")
	play := d.scriptedSession
	switch d.agent {
	case "claude":
		play = d.claudeSession
	case "gemini":
		play = d.geminiSession
	}
	if err := play(session); err != nil {
		return err
	}
	if _, err := d.git(d.project, "commit", "-q", "-am", "payments: retry with backoff and jitter"); err != nil {
		return err
	}
	d.say("$ git commit -am 'payments: retry with backoff and jitter'   (borg's post-commit hook records it)")
	log, err := os.ReadFile(filepath.Join(d.store, "log", nodeLog(d.store)))
	if err != nil {
		return err
	}
	d.say("\nthe outcome log now holds (log/%s, shared with the team, no free text):", nodeLog(d.store))
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if strings.Contains(line, `"kind":"created"`) {
			continue
		}
		d.say("  %s", line)
	}
	return d.sleepSection()
}

// scriptedSession plays the agent by feeding each hook the JSON Claude Code
// would send, and editing the project as the agent would.
func (d *demo) scriptedSession(session string) error {
	if _, err := d.hook("session-start", "{"+session+`,"hook_event_name":"SessionStart","source":"startup"}`); err != nil {
		return err
	}
	if _, err := d.hook("prompt", "{"+session+`,"hook_event_name":"UserPromptSubmit","prompt":"Add retries to the payments client: the gateway sometimes returns 503."}`); err != nil {
		return err
	}
	if err := d.write(filepath.Join(d.project, "client.go"), demoClientV2); err != nil {
		return err
	}
	d.say("the agent edits client.go: a plain retry loop around every request")
	if _, err := d.hook("post-tool", "{"+session+`,"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"client.go"},"tool_response":{"success":true}}`); err != nil {
		return err
	}
	out, err := d.hook("stop", "{"+session+`,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"I wrapped every payments client request, the charge POSTs included, in a retry loop (3 attempts)."}`)
	if err != nil {
		return err
	}
	if !strings.Contains(out, `"decision":"block"`) {
		return fmt.Errorf("the first stop was not blocked: %q", out)
	}
	d.say("borg blocks the stop once and asks:\n%s", indent(reasonOf(out)))
	ids := askedIDs(out)
	var answer strings.Builder
	for _, id := range ids {
		if strings.HasPrefix(id, "retry-") {
			answer.WriteString(id + ": applies\\n")
		} else {
			answer.WriteString(id + ": skip\\n")
		}
	}
	if err := d.write(filepath.Join(d.project, "client.go"), demoClientV3); err != nil {
		return err
	}
	d.say("the agent answers, and fixes its work: exponential backoff with jitter, and no retry of POST (not idempotent)")
	if _, err := d.hook("post-tool", "{"+session+`,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \tpayments\t0.012s\n","stderr":"","interrupted":false}}`); err != nil {
		return err
	}
	msg := answer.String() + "Switched to exponential backoff with jitter and stopped retrying POST requests."
	if out, err = d.hook("stop", "{"+session+`,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":`+jsonString(strings.ReplaceAll(msg, `\n`, "\n"))+"}"); err != nil {
		return err
	}
	if out != "" {
		return fmt.Errorf("the second stop was blocked again: %q", out)
	}
	d.say("the second stop is judged and never blocked again in this turn: the retry lesson counts as changed because its words are new in the work since the ask (\"applies\" alone would not), credited by the judge's placebo tally (w)")
	return nil
}

// claudeSession has the real Claude Code CLI play the session in the
// project, its hooks installed, against the model stand-in on a loopback
// port: no network, no account.
func (d *demo) claudeSession(string) error {
	model := &standIn{dir: d.project}
	return d.playAgent(model, model, agentPlay{
		name: "Claude Code CLI", api: "the Messages API", hook: "Stop", bin: "claude",
		env: func(addr string) []string {
			return []string{"ANTHROPIC_BASE_URL=http://" + addr, "ANTHROPIC_API_KEY=sk-borg-demo-stand-in",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
		},
		args: func(prompt string) []string {
			return []string{"-p", prompt, "--permission-mode", "acceptEdits", "--output-format", "json"}
		},
		asked: "borg's Stop hook blocked the agent's first stop once; Claude Code passed the reason on to the model",
		lastWords: func(out []byte) string {
			var r struct {
				Result   string `json:"result"`
				NumTurns int    `json:"num_turns"`
			}
			_ = json.Unmarshal(out, &r)
			return fmt.Sprintf("the agent's last words (%d turns):\n%s", r.NumTurns, indent(r.Result))
		},
	})
}

// geminiSession has the real Gemini CLI play the session in the project,
// its hooks installed, against the Gemini API stand-in on a loopback port:
// no network, no account.
func (d *demo) geminiSession(string) error {
	home := filepath.Join(filepath.Dir(d.store), "home")
	if err := d.write(filepath.Join(home, ".gemini", "settings.json"), geminiUserSettings); err != nil {
		return err
	}
	model := geminiStandIn{&standIn{dir: d.project}}
	return d.playAgent(model, model.standIn, agentPlay{
		name: "Gemini CLI", api: "the Gemini API", hook: "AfterAgent", bin: "gemini",
		env: func(addr string) []string { return geminiStandInEnv("http://" + addr) },
		args: func(prompt string) []string {
			return []string{"--prompt", prompt, "--approval-mode", "yolo", "--model", "gemini-2.5-flash", "--output-format", "json"}
		},
		asked: "borg's AfterAgent hook rejected the agent's first answer once; Gemini CLI sent the reason to the model as a new prompt",
		lastWords: func(out []byte) string {
			var r struct {
				Response string `json:"response"`
			}
			_ = json.Unmarshal(out, &r)
			return "the agent's last words:\n" + indent(r.Response)
		},
	})
}

// agentPlay is what differs between the agents the demo can hand its
// session to.
type agentPlay struct {
	name, api, hook, bin string // "Gemini CLI", "the Gemini API", "AfterAgent", "gemini"
	env                  func(addr string) []string
	args                 func(prompt string) []string
	asked                string // what the agent's CLI did with borg's question
	lastWords            func(out []byte) string
}

// playAgent serves handler (the model stand-in, whose requests model
// records) on a loopback port and has the agent's real CLI play the
// session's prompt in the project, then says what borg asked and how the
// next stop was judged.
func (d *demo) playAgent(handler http.Handler, model *standIn, a agentPlay) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("model stand-in: %w", err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	env := d.agentEnv(a.env(ln.Addr().String())...)
	vctx, vcancel := context.WithTimeout(d.ctx, 30*time.Second)
	vcmd := exec.CommandContext(vctx, d.cli, "--version")
	vcmd.Env, vcmd.WaitDelay = env, time.Second
	version, _ := vcmd.Output()
	vcancel()
	d.say("the real %s (%s) plays the agent, against a model stand-in on %s", a.name, strings.TrimSpace(string(version)), ln.Addr())
	d.say("(a script speaking %s: it writes a naive retry loop, and acts on what borg asks; no network, no account)", a.api)
	prompt := "Add retries to the payments client: the gateway sometimes returns 503."
	args := a.args(prompt)
	shown := make([]string, len(args))
	for i, x := range args {
		shown[i] = x
		if x == prompt {
			shown[i] = fmt.Sprintf("%q", x)
		}
	}
	d.say("$ %s %s", a.bin, strings.Join(shown, " "))
	ctx, cancel := context.WithTimeout(d.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.cli, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = d.project, env, 5*time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s%s", a.bin, err, out, stderr.Bytes())
	}
	question := model.textWith("borg, your team's shared memory")
	if question == "" {
		return fmt.Errorf("the agent never received borg's question: its %s hook did not block", a.hook)
	}
	d.say("%s:\n%s", a.asked, indent(clipLines(question, 15)))
	d.say("%s", a.lastWords(out))
	if log, _ := os.ReadFile(filepath.Join(d.store, "log", nodeLog(d.store))); bytes.Contains(log, []byte(`"kind":"changed"`)) {
		d.say("its next %s was judged: a lesson whose words are new in the work since the ask counts as changed, credited by the judge's placebo tally (w)", a.hook)
	} else {
		d.say("its next %s was judged: no lesson's words are new in the work since the ask, so none counts as changed", a.hook)
	}
	return nil
}

func (d *demo) sleepSection() error {
	ids := d.askedInLog()
	d.section("4. sleep: the memory's nightly maintenance as reviewable commits")
	tomorrow := d.now.UTC().AddDate(0, 0, 1).Format("2006-01-02")
	if _, err := d.borg(d.store, "", "sleep", "--date", tomorrow); err != nil {
		return err
	}
	branch := "borg/sleep/" + tomorrow
	if out, err := d.git(d.store, "log", "--reverse", "--format=%h %s", "main.."+branch); err == nil && strings.TrimSpace(out) != "" {
		d.say("\n$ git log main..%s", branch)
		d.say("%s", indent(strings.TrimRight(out, "\n")))
		diff, err := d.git(d.store, "diff", "--no-ext-diff", "--stat", "-M", "main", branch)
		if err == nil {
			d.say("\n$ git diff --stat -M main %s", branch)
			d.say("%s", indent(strings.TrimRight(diff, "\n")))
		}
		full, err := d.git(d.store, "diff", "--no-ext-diff", "--no-textconv", "-M", "--no-color", "main", branch, "--", "lessons", "archive")
		if err == nil && full != "" {
			d.say("\n$ git diff -M main %s -- lessons archive   (what a reviewer reads)", branch)
			d.say("%s", indent(clipLines(strings.TrimRight(full, "\n"), 60)))
		}
	}

	d.section("5. each lesson's memory after the session")
	if _, err := d.borg(d.store, "", "list"); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := d.borg(d.store, "", "show", id); err != nil {
			return err
		}
	}
	d.section("done")
	d.say("borg install wires the same hooks into a real Claude Code, Codex CLI or Gemini CLI project; see README.md.")
	return nil
}

// selfPath is the borg the demo runs for each hook: the running executable,
// by the name it was invoked by when that names the same file (a symlink
// named borg stays borg), else by its own path.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		abs, err1 := filepath.Abs(p)
		a, err2 := os.Stat(abs)
		b, err3 := os.Stat(exe)
		// Only the name of this very binary (a bare argv[0] may name
		// another borg on PATH).
		if err1 == nil && err2 == nil && err3 == nil && os.SameFile(a, b) {
			return abs, nil
		}
	}
	return exe, nil
}

// askedInLog lists the lessons the session was asked, from the log.
func (d *demo) askedInLog() []string {
	data, _ := os.ReadFile(filepath.Join(d.store, "log", nodeLog(d.store)))
	var ids []string
	for _, line := range strings.Split(string(data), "\n") {
		var e struct {
			Kind   string `json:"kind"`
			Lesson string `json:"lesson"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == "asked" && !slices.Contains(ids, e.Lesson) {
			ids = append(ids, e.Lesson)
		}
	}
	return ids
}

func nodeLog(store string) string {
	ents, _ := os.ReadDir(filepath.Join(store, "log"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			return e.Name()
		}
	}
	return ""
}

func reasonOf(out string) string {
	i := strings.Index(out, `"reason":"`)
	if i < 0 {
		return out
	}
	s := out[i+len(`"reason":"`):]
	s = strings.TrimSuffix(strings.TrimSpace(s), `"}`)
	s = strings.ReplaceAll(s, `\n`, "\n")
	return strings.ReplaceAll(s, `\"`, `"`)
}

// askedIDs reads the lesson ids a block asks about ("N. <id> (by …)").
func askedIDs(out string) []string {
	var ids []string
	for _, line := range strings.Split(reasonOf(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasSuffix(f[0], ".") && f[2] == "(by" {
			ids = append(ids, f[1])
		}
	}
	return ids
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " ;'\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

func jsonString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var demoLessons = [][]string{
	{"Retry the payments client with exponential backoff and jitter; never retry non-idempotent POST requests.",
		"--type", "procedural", "--tag", "payments", "--tag", "http", "--importance", "8",
		"--body", "Tight retry loops amplified the 2026-10-02 gateway outage; a retried POST charged customers twice."},
	{"Every outbound HTTP call takes a context with a timeout; the payments gateway hangs silently.",
		"--type", "semantic", "--tag", "http", "--body", "Seen in three incidents: the gateway accepts the connection and never answers."},
	{"Run make migrate before go test ./integration/...; the schema is not auto-applied.",
		"--type", "procedural", "--tag", "testing"},
	{"Run make migrate before go test ./integration/...: the schema is not auto-applied.",
		"--type", "procedural", "--tag", "testing"},
	{"The staging database of the payments service is pay-db-stage-1.", "--type", "semantic"},
	{"The staging database of the payments service is pay-db-stage-2.", "--type", "semantic",
		"--body", "Moved during the 2026-11 migration."},
}

const demoHandLesson = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Legacy FTP export</title>
<meta name="memhtml-id" content="legacy-ftp-export-0c1d">
<meta name="memhtml-type" content="episodic">
<meta name="memhtml-confidence" content="0.4000">
<meta name="memhtml-importance" content="2">
<meta name="memhtml-created" content="2026-09-01T09:00:00Z">
<meta name="memhtml-valid-until" content="2026-10-15T00:00:00Z">
</head><body><article>
<p><mark>The nightly FTP export to the old ledger is paused while finance migrates.</mark></p>
</article></body></html>
`

const demoClientV1 = `package payments

import "net/http"

// Do sends a request to the payments gateway.
func Do(c *http.Client, req *http.Request) (*http.Response, error) {
	return c.Do(req)
}
`

const demoClientV2 = `package payments

import "net/http"

// Do sends a request to the payments gateway, retrying failures.
func Do(c *http.Client, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 0; i < 3; i++ {
		if resp, err = c.Do(req); err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
	}
	return resp, err
}
`

const demoClientV3 = `package payments

import (
	"math/rand"
	"net/http"
	"time"
)

// Do sends a request to the payments gateway. Idempotent requests are
// retried with exponential backoff and jitter; a POST is never retried.
func Do(c *http.Client, req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		return c.Do(req)
	}
	var resp *http.Response
	var err error
	backoff := 100 * time.Millisecond
	for attempt := 0; attempt < 4; attempt++ {
		if resp, err = c.Do(req); err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		jitter := time.Duration(rand.Int63n(int64(backoff)))
		time.Sleep(backoff + jitter)
		backoff *= 2
	}
	return resp, err
}
`
