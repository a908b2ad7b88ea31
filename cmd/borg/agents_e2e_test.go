package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// The agent CLIs the end-to-end suite drives, pinned.
const claudeCodePackage = "@anthropic-ai/claude-code@2.1.328"

// e2eEnabled gates the suite: it installs real agent CLIs from npm (into a
// cache outside the repository) and runs them, so it runs only when asked
// (.ci/run asks).
func e2eEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("BORG_E2E") == "" {
		t.Skip("set BORG_E2E=1 to drive the real agent CLIs (.ci/run does)")
	}
	if testing.Short() {
		t.Skip("the real agent CLIs do not run under -short")
	}
}

// npmTool installs pkg (name@version) with npm into a cache directory
// outside the repository, once, and returns the path of its bin.
func npmTool(t *testing.T, pkg, bin string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	if v := os.Getenv("BORG_E2E_CACHE"); v != "" {
		cache = v
	}
	dir := filepath.Join(cache, "borg-e2e", strings.NewReplacer("@", "_", "/", "_").Replace(pkg))
	exe := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(exe); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skipf("npm is not installed, so %s cannot be installed: install Node.js and npm to run the agent suite", pkg)
		}
		// Installed beside, then renamed into place: a run sharing the
		// cache never sees half an install.
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-*")
		if err != nil {
			if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if tmp, err = os.MkdirTemp(filepath.Dir(dir), ".install-*"); err != nil {
				t.Fatal(err)
			}
		}
		defer os.RemoveAll(tmp)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
			"--fetch-retries=1", "--fetch-timeout=30000", pkg)
		ownGroup(cmd)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Skipf("npm could not install %s (no registry reachable?): %v\n%s", pkg, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
			if _, statErr := os.Stat(exe); statErr != nil { // another run won the race otherwise
				t.Fatalf("install %s into %s: %v", pkg, dir, err)
			}
		}
		if _, err := os.Stat(exe); err != nil {
			t.Fatalf("npm installed %s but %s is missing: %s", pkg, exe, out)
		}
	}
	// The CLI must run here (a Node.js too old for it, say, is a reason to
	// skip, not a failure of borg).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ver := exec.CommandContext(ctx, exe, "--version")
	ver.WaitDelay = 5 * time.Second
	ownGroup(ver)
	if out, err := ver.CombinedOutput(); err != nil {
		t.Skipf("%s does not run here: %v\n%s", pkg, err, out)
	}
	return exe
}

// borgExe is a borg executable for hooks to call: this test binary under
// the name borg (TestMain runs it as borg when invoked so).
func borgExe(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "borg")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	return exe
}

// run runs name with args in dir and env, failing the test with the output
// on error; step names the step for the message.
func runIn(t *testing.T, step, dir string, env []string, name string, args ...string) string {
	t.Helper()
	// A scripted session takes seconds; a hung agent fails the step
	// instead of the whole test run (the demo's own bound on its agent is
	// two minutes: this one is longer).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	ownGroup(cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %s %s: %v\n%s", step, filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// logEvents reads every event of the store's logs (shared and local).
func logEvents(t *testing.T, store string) []domain.Event {
	t.Helper()
	var out []domain.Event
	for _, pattern := range []string{"log/*.jsonl", ".borg/local/*.jsonl"} {
		files, _ := filepath.Glob(filepath.Join(store, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				var e domain.Event
				if json.Unmarshal(sc.Bytes(), &e) == nil && e.Kind != "" {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// raceQuickExit adds to env, unless it sets GORACE already, the race
// runtime's option to exit at once: under -race every borg a hook or a
// step runs is this test binary, which otherwise sleeps a second before
// it exits (atexit_sleep_ms, left for late race reports of other
// goroutines; a race is still reported and fails the process).
func raceQuickExit(env []string) []string {
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GORACE=") }) {
		return env
	}
	return append(env, "GORACE=atexit_sleep_ms=0")
}

// e2eProject is the world an agent session plays in: a store with two
// lessons, a project whose git knows who works in it (and no author
// variable: real agents set none), borg's hooks installed in it, and the
// environment the agent runs with.
type e2eProject struct {
	store, project, home string
	env                  []string
	engineer             string
}

// newE2EProject builds it. Variables of the user's environment starting
// with one of drop are left out (the agent's own settings, which could take
// it past the stand-in), and install names the agent for `borg install`
// (--claude, --codex).
func newE2EProject(t *testing.T, borg, install string, drop ...string) *e2eProject {
	t.Helper()
	work := t.TempDir()
	p := &e2eProject{store: filepath.Join(work, "store"), project: filepath.Join(work, "payments"), home: filepath.Join(work, "home"),
		engineer: memfs.HashEngineer("ada@example.com")}
	for _, d := range []string{p.project, p.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || slices.ContainsFunc(append([]string{"BORG_", "GIT_"}, drop...), func(pre string) bool { return strings.HasPrefix(k, pre) }) {
			continue
		}
		p.env = append(p.env, kv)
	}
	p.env = append(raceQuickExit(p.env), "HOME="+p.home, "BORG_STORE="+p.store, "BORG_PLACEBO_RATE=0", "GIT_CONFIG_NOSYSTEM=1")

	runIn(t, "borg init", work, p.env, borg, "init")
	runIn(t, "borg learn", work, p.env, borg, "learn", "Retry the payments client with exponential backoff and jitter; never retry non-idempotent POST requests.", "--type", "procedural")
	runIn(t, "borg learn", work, p.env, borg, "learn", "Every outbound HTTP call to the payments gateway takes a context with a timeout.")
	runIn(t, "git init", p.project, p.env, "git", "init", "-q", "-b", "main")
	runIn(t, "git config", p.project, p.env, "git", "config", "user.email", "ada@example.com")
	runIn(t, "git config", p.project, p.env, "git", "config", "user.name", "Ada")
	if err := os.WriteFile(filepath.Join(p.project, "README.md"), []byte("# payments\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, "git add", p.project, p.env, "git", "add", "README.md")
	runIn(t, "git commit", p.project, p.env, "git", "commit", "-q", "-m", "init")
	runIn(t, "borg install", p.project, p.env, borg, "install", install, "--git", "--command", borg)
	return p
}

// checkFirstSession checks the log after the first session (named by step
// in failures): borg's question reached the agent, the agent rewrote the
// client, one session and the asks were recorded, each event by the
// engineer, each asked lesson has a result, the retry lesson (the task's
// own subject) was asked and changed with the judge's credit, and any
// other asked lesson did not change (whether the timeout lesson, which
// shares fewer words with the work, clears the ask's relevance floor is
// retrieval's business, not this test's); it returns the retry lesson's
// id.
func (p *e2eProject) checkFirstSession(t *testing.T, step string, model *standIn, out string) string {
	t.Helper()
	if !model.sawText("borg, your team's shared memory") {
		t.Fatalf("%s, stop hook: the agent never received borg's question (session output: %s)", step, out)
	}
	data, err := os.ReadFile(filepath.Join(p.project, "client.go"))
	if err != nil || !bytes.Contains(data, []byte("jitter")) {
		t.Fatalf("%s: the agent did not rewrite client.go after the ask: %v\n%s\n%s", step, err, data, out)
	}
	kinds := map[domain.EventKind]int{}
	results := map[string]domain.Event{}
	for _, e := range logEvents(t, p.store) {
		kinds[e.Kind]++
		if e.Kind != domain.KindCreated && e.Author != p.engineer {
			t.Errorf("%s: %s event carries author %q, want the engineer's %q (from git config)", step, e.Kind, e.Author, p.engineer)
		}
		if e.Kind.IsResult() {
			results[e.Lesson] = e
		}
	}
	// The retry lesson is asked; the timeout lesson shares "payments
	// gateway" with the work and may be asked beside it only when it
	// clears the relevance floor.
	if kinds[domain.KindSession] != 1 || kinds[domain.KindAsked] < 1 || kinds[domain.KindAsked] > 2 || len(results) != kinds[domain.KindAsked] {
		t.Fatalf("%s (stop hook, judged stop): events %v, results %v; want 1 session, 1 or 2 asked, one result per asked lesson", step, kinds, results)
	}
	retry := ""
	for id, r := range results {
		if !strings.Contains(id, "retry") {
			if r.Kind == domain.KindChanged {
				t.Errorf("%s (judged stop): %s recorded changed; the agent skipped it", step, id)
			}
			continue
		}
		retry = id
		if r.Kind != domain.KindChanged || !(r.W > 0 && r.W < 1) {
			t.Fatalf("%s (judged stop): retry lesson result %+v, want changed with the judge's credit", step, r)
		}
	}
	if retry == "" {
		t.Fatalf("%s: the retry lesson was not asked: %v", step, results)
	}
	return retry
}

// checkSecondSession checks that the second session's requests carried the
// retry lesson delivered early, and that the log holds the engineer's two
// sessions.
func (p *e2eProject) checkSecondSession(t *testing.T, step string, model *standIn, retry string) {
	t.Helper()
	if !model.sawText("consolidated notes") || !model.sawText(retry) {
		t.Fatalf("%s, prompt hook (early delivery): the requests never carried the consolidated lesson %s", step, retry)
	}
	sessions := 0
	for _, e := range logEvents(t, p.store) {
		if e.Kind == domain.KindSession && e.Author == p.engineer {
			sessions++
		}
	}
	if sessions != 2 {
		t.Fatalf("%s: %d sessions of the engineer in the log, want 2", step, sessions)
	}
}

// TestClaudeCodeSession plays two sessions of the real Claude Code CLI
// against the model stand-in, through the hooks `borg install` writes:
// the first stop is blocked once with the lessons, the agent's answer and
// its rewrite are judged at the next stop, the commit goes through the git
// hook, and a second session gets a consolidated lesson delivered early.
// Every event carries the engineer's hashed id, resolved from the project's
// git configuration (Claude Code sets no author variable).
func TestClaudeCodeSession(t *testing.T) {
	e2eEnabled(t)
	claude := npmTool(t, claudeCodePackage, "claude")
	borg := borgExe(t)
	p := newE2EProject(t, borg, "--claude", "ANTHROPIC_", "CLAUDE")
	model := &standIn{dir: p.project}
	srv := httptest.NewServer(model)
	defer srv.Close()
	p.env = append(p.env, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-standin",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")

	out := runIn(t, "claude session 1", p.project, p.env, claude, "-p", "Add retries to the payments client: the gateway sometimes returns 503.",
		"--permission-mode", "acceptEdits", "--output-format", "json")
	retry := p.checkFirstSession(t, "claude session 1", model, out)

	// The commit goes through borg's git hook; a second session gets the
	// retry lesson, consolidated by teammates meanwhile, delivered early.
	commitThroughHook(t, p.project, p.store, p.env)
	teammates(t, p.store, retry)
	runIn(t, "claude session 2", p.project, p.env, claude, "-p", "The payments client's retry loop with backoff and jitter: make the retry count configurable.",
		"--permission-mode", "acceptEdits", "--output-format", "json")
	p.checkSecondSession(t, "claude session 2", model, retry)
}

// teammates writes two teammates' logs in which lesson was changed, in
// full, in eight sessions each across two repos: enough to consolidate it
// and to deliver it early (no single teammate's evidence carries it alone,
// domain.EarlyTrusted).
func teammates(t *testing.T, store, lesson string) {
	t.Helper()
	if lesson == "" {
		t.Fatal("no retry lesson was asked")
	}
	ms := time.Now().Add(-time.Hour).UnixMilli()
	for k, author := range []string{"e-7e7e7e7e", "e-8e8e8e8e"} {
		var b bytes.Buffer
		for i := range 8 {
			s := fmt.Sprintf("s-%016x", 0xbeef0000+16*k+i)
			repo := []string{"payments", "billing"}[i%2]
			for _, e := range []domain.Event{
				{MS: ms + int64(10*i), Kind: domain.KindSession, Session: s, Repo: repo, Author: author},
				{MS: ms + int64(10*i+1), Kind: domain.KindAsked, Session: s, Lesson: lesson, Repo: repo, Author: author},
				{MS: ms + int64(10*i+2), Kind: domain.KindChanged, Session: s, Lesson: lesson, Repo: repo, Author: author},
			} {
				line, err := json.Marshal(e.WithID())
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
		}
		p := filepath.Join(store, "log", fmt.Sprintf("n-teammate%04d.jsonl", k+1))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
	}
	// As a command would after a pull: the store's attribution reaches
	// HEAD, so the hooks count these uncommitted lines as written (a hook
	// never walks history itself).
	s, err := memfs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadLedger(); err != nil { // refreshes the attribution
		t.Fatal(err)
	}
}

const codexPackage = "@openai/codex@0.171.0"

// TestCodexSession plays Codex sessions against the Responses API stand-in
// through the hooks `borg install --codex` writes, with Codex's hooks
// feature enabled: the stop is blocked once with the lessons, the agent
// rewrites its work and answers, the next stop is judged, the commit goes
// through the git hook, and a second session gets a consolidated lesson
// delivered early.
func TestCodexSession(t *testing.T) {
	e2eEnabled(t)
	codex := npmTool(t, codexPackage, "codex")
	borg := borgExe(t)
	p := newE2EProject(t, borg, "--codex", "OPENAI", "CODEX")
	model := codexStandIn{&standIn{dir: p.project}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	codexHome := filepath.Join(p.home, ".codex")
	p.env = append(p.env, "CODEX_HOME="+codexHome, "STANDIN_API_KEY=sk-standin")
	config := fmt.Sprintf(`model = "standin-model"
model_provider = "standin"

[model_providers.standin]
name = "standin"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[features]
hooks = true

[projects.%q]
trust_level = "trusted"
`, srv.URL, p.project)
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	exec := func(step, prompt string) string {
		return runIn(t, step, p.project, p.env, codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
			"--skip-git-repo-check", prompt)
	}

	out := exec("codex session 1", "Add retries to the payments client: the gateway sometimes returns 503.")
	retry := p.checkFirstSession(t, "codex session 1", model.standIn, out)

	commitThroughHook(t, p.project, p.store, p.env)
	teammates(t, p.store, retry)
	exec("codex session 2", "The payments client's retry loop with backoff and jitter: make the retry count configurable.")
	p.checkSecondSession(t, "codex session 2", model.standIn, retry)
}

// commitThroughHook commits client.go in project and waits for borg's
// post-commit hook (run in the background) to record the commit.
func commitThroughHook(t *testing.T, project, store string, env []string) {
	t.Helper()
	runIn(t, "git add", project, env, "git", "add", "client.go")
	runIn(t, "git commit (post-commit hook)", project, env, "git", "commit", "-q", "-m", "payments: retry with backoff and jitter")
	commits := filepath.Join(store, ".borg", "local", "commits.tsv")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if data, _ := os.ReadFile(commits); bytes.Contains(data, []byte("\t")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("post-commit hook: no commit recorded in %s", commits)
		}
	}
}

// TestDemoWithClaude runs `borg demo --agent claude`: the demo's session
// played by the real Claude Code CLI against the stand-in.
func TestDemoWithClaude(t *testing.T) {
	e2eEnabled(t)
	claude := npmTool(t, claudeCodePackage, "claude")
	borg := borgExe(t)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "BORG_") && !strings.HasPrefix(k, "ANTHROPIC_") {
			env = append(env, kv)
		}
	}
	out := runIn(t, "borg demo --agent claude", t.TempDir(), append(raceQuickExit(env), "BORG_CLAUDE="+claude), borg, "demo", "--agent", "claude")
	for _, want := range []string{"the real Claude Code CLI", "borg's Stop hook blocked the agent's first stop once",
		`"kind":"changed"`, `"w":0.`, "sleep 20"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
