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
	work := t.TempDir()
	store, project, home := filepath.Join(work, "store"), filepath.Join(work, "payments"), filepath.Join(work, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	model := &standIn{dir: project}
	srv := httptest.NewServer(model)
	defer srv.Close()

	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BORG_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "BORG_STORE="+store, "BORG_PLACEBO_RATE=0",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-standin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1")
	engineer := memfs.HashEngineer("ada@example.com")

	// A store with two lessons, and a project whose git knows who works in it.
	runIn(t, "borg init", work, env, borg, "init")
	runIn(t, "borg learn", work, env, borg, "learn", "Retry the payments client with exponential backoff and jitter; never retry non-idempotent POST requests.", "--type", "procedural")
	runIn(t, "borg learn", work, env, borg, "learn", "Every outbound HTTP call to the payments gateway takes a context with a timeout.")
	runIn(t, "git init", project, env, "git", "init", "-q", "-b", "main")
	runIn(t, "git config", project, env, "git", "config", "user.email", "ada@example.com")
	runIn(t, "git config", project, env, "git", "config", "user.name", "Ada")
	if err := os.WriteFile(filepath.Join(project, "README.md"), []byte("# payments\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, "git add", project, env, "git", "add", "README.md")
	runIn(t, "git commit", project, env, "git", "commit", "-q", "-m", "init")
	runIn(t, "borg install", project, env, borg, "install", "--claude", "--git", "--command", borg)

	// Session 1: the agent writes a naive retry loop and stops; borg blocks
	// once; the agent rewrites the client and declares; the next stop is
	// judged.
	out := runIn(t, "claude session 1", project, env, claude, "-p", "Add retries to the payments client: the gateway sometimes returns 503.",
		"--permission-mode", "acceptEdits", "--output-format", "json")
	if !model.sawText("borg, your team's shared memory") {
		t.Fatalf("stop hook: the agent never received borg's question (session output: %s)", out)
	}
	data, err := os.ReadFile(filepath.Join(project, "client.go"))
	if err != nil || !bytes.Contains(data, []byte("jitter")) {
		t.Fatalf("session 1: the agent did not rewrite client.go after the ask: %v\n%s", err, data)
	}
	events := logEvents(t, store)
	kinds := map[domain.EventKind]int{}
	var retry string
	for _, e := range events {
		kinds[e.Kind]++
		if e.Kind != domain.KindCreated && e.Author != engineer {
			t.Errorf("%s event carries author %q, want the engineer's %q (from git config)", e.Kind, e.Author, engineer)
		}
		if e.Kind == domain.KindAsked && strings.Contains(e.Lesson, "retry") {
			retry = e.Lesson
		}
	}
	if kinds[domain.KindSession] != 1 || kinds[domain.KindAsked] != 2 {
		t.Fatalf("session 1 (stop hook): %d session and %d asked events, want 1 and 2: %v", kinds[domain.KindSession], kinds[domain.KindAsked], kinds)
	}
	results := map[string]domain.Event{}
	for _, e := range events {
		if e.Kind.IsResult() {
			results[e.Lesson] = e
		}
	}
	if r, ok := results[retry]; !ok || r.Kind != domain.KindChanged || !(r.W > 0 && r.W < 1) {
		t.Fatalf("session 1 (judged stop): retry lesson result %+v, want changed with the judge's credit", r)
	}
	if len(results) != 2 {
		t.Fatalf("session 1 (judged stop): results %v, want one per asked lesson", results)
	}

	// The commit goes through borg's git hook (in the background).
	commitThroughHook(t, project, store, env)

	// Session 2: teammates' sessions made the retry lesson consolidated, so
	// the prompt hook delivers it early, as context the agent receives.
	teammates(t, store, retry)
	runIn(t, "claude session 2", project, env, claude, "-p", "The payments client retries: make the retry count configurable.",
		"--permission-mode", "acceptEdits", "--output-format", "json")
	if !model.sawText("consolidated notes") || !model.sawText(retry) {
		t.Fatalf("prompt hook (early delivery): session 2's requests never carried the consolidated lesson %s", retry)
	}
	sessions := 0
	for _, e := range logEvents(t, store) {
		if e.Kind == domain.KindSession && e.Author == engineer {
			sessions++
		}
	}
	if sessions != 2 {
		t.Fatalf("session 2: %d sessions of the engineer in the log, want 2", sessions)
	}
}

// teammates writes a teammate's log in which lesson was changed, in full,
// in eight sessions across two repos: enough to consolidate it.
func teammates(t *testing.T, store, lesson string) {
	t.Helper()
	if lesson == "" {
		t.Fatal("no retry lesson was asked")
	}
	var b bytes.Buffer
	ms := time.Now().Add(-time.Hour).UnixMilli()
	for i := range 8 {
		s := fmt.Sprintf("s-%016x", 0xbeef0000+i)
		repo := []string{"payments", "billing"}[i%2]
		for _, e := range []domain.Event{
			{MS: ms + int64(10*i), Kind: domain.KindSession, Session: s, Repo: repo, Author: "e-7e7e7e7e"},
			{MS: ms + int64(10*i+1), Kind: domain.KindAsked, Session: s, Lesson: lesson, Repo: repo, Author: "e-7e7e7e7e"},
			{MS: ms + int64(10*i+2), Kind: domain.KindChanged, Session: s, Lesson: lesson, Repo: repo, Author: "e-7e7e7e7e"},
		} {
			line, err := json.Marshal(e.WithID())
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
	}
	p := filepath.Join(store, "log", "n-teammate0001.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil && !errors.Is(err, os.ErrExist) {
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
	work := t.TempDir()
	store, project, home := filepath.Join(work, "store"), filepath.Join(work, "payments"), filepath.Join(work, "home")
	for _, d := range []string{project, filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	model := codexStandIn{&standIn{dir: project}}
	srv := httptest.NewServer(model)
	defer srv.Close()
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
`, srv.URL, project)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BORG_") || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "OPENAI") || strings.HasPrefix(k, "CODEX") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "BORG_STORE="+store, "BORG_PLACEBO_RATE=0",
		"GIT_CONFIG_NOSYSTEM=1", "STANDIN_API_KEY=sk-standin")
	engineer := memfs.HashEngineer("ada@example.com")

	runIn(t, "borg init", work, env, borg, "init")
	runIn(t, "borg learn", work, env, borg, "learn", "Retry the payments client with exponential backoff and jitter; never retry non-idempotent POST requests.", "--type", "procedural")
	runIn(t, "borg learn", work, env, borg, "learn", "Every outbound HTTP call to the payments gateway takes a context with a timeout.")
	runIn(t, "git init", project, env, "git", "init", "-q", "-b", "main")
	runIn(t, "git config", project, env, "git", "config", "user.email", "ada@example.com")
	runIn(t, "git config", project, env, "git", "config", "user.name", "Ada")
	if err := os.WriteFile(filepath.Join(project, "README.md"), []byte("# payments\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, "git add", project, env, "git", "add", "README.md")
	runIn(t, "git commit", project, env, "git", "commit", "-q", "-m", "init")
	runIn(t, "borg install", project, env, borg, "install", "--codex", "--git", "--command", borg)

	out := runIn(t, "codex session", project, env, codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
		"Add retries to the payments client: the gateway sometimes returns 503.")
	if !model.sawText("borg, your team's shared memory") {
		t.Fatalf("stop hook: the agent never received borg's question (session output: %s)", out)
	}
	data, err := os.ReadFile(filepath.Join(project, "client.go"))
	if err != nil || !bytes.Contains(data, []byte("jitter")) {
		t.Fatalf("codex session: the agent did not rewrite client.go after the ask: %v\n%s\n%s", err, data, out)
	}
	kinds := map[domain.EventKind]int{}
	results := map[string]domain.Event{}
	for _, e := range logEvents(t, store) {
		kinds[e.Kind]++
		if e.Kind != domain.KindCreated && e.Author != engineer {
			t.Errorf("%s event carries author %q, want the engineer's %q (from git config)", e.Kind, e.Author, engineer)
		}
		if e.Kind.IsResult() {
			results[e.Lesson] = e
		}
	}
	if kinds[domain.KindSession] != 1 || kinds[domain.KindAsked] != 2 || len(results) != 2 {
		t.Fatalf("codex session (stop hook, judged stop): events %v, results %v; want 1 session, 2 asked, 2 results", kinds, results)
	}
	retry := ""
	for id, r := range results {
		if strings.Contains(id, "retry") != (r.Kind == domain.KindChanged) {
			t.Errorf("codex session (judged stop): %s recorded %s", id, r.Kind)
		}
		if strings.Contains(id, "retry") {
			retry = id
		}
	}

	// The commit goes through borg's git hook; a second session gets the
	// retry lesson, consolidated by teammates meanwhile, delivered early.
	commitThroughHook(t, project, store, env)
	teammates(t, store, retry)
	runIn(t, "codex session 2", project, env, codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
		"--skip-git-repo-check", "The payments client retries: make the retry count configurable.")
	if !model.sawText("consolidated notes") || !model.sawText(retry) {
		t.Fatalf("prompt hook (early delivery): codex session 2's requests never carried the consolidated lesson %s", retry)
	}
	sessions := 0
	for _, e := range logEvents(t, store) {
		if e.Kind == domain.KindSession && e.Author == engineer {
			sessions++
		}
	}
	if sessions != 2 {
		t.Fatalf("codex session 2: %d sessions of the engineer in the log, want 2", sessions)
	}
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
	out := runIn(t, "borg demo --agent claude", t.TempDir(), append(env, "BORG_CLAUDE="+claude), borg, "demo", "--agent", "claude")
	for _, want := range []string{"the real Claude Code CLI", "borg's Stop hook blocked the agent's first stop once",
		`"kind":"changed"`, `"w":0.`, "sleep 20"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
