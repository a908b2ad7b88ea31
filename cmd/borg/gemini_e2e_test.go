package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const geminiCLIPackage = "@google/gemini-cli@0.61.0"

// geminiEnv writes the stand-in's user settings into home and returns
// the environment that points a Gemini CLI at the stand-in at url.
func geminiEnv(t *testing.T, home, url string) []string {
	t.Helper()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(geminiUserSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(geminiStandInEnv(url), "NO_COLOR=1")
}

// TestGeminiCLISession plays two sessions of the real Gemini CLI against
// the Gemini API stand-in, through the hooks `borg install --gemini`
// writes: AfterAgent rejects the first answer once with the lessons (the
// reason comes back as the next prompt), the agent rewrites the client and
// answers, the next AfterAgent is judged, the commit goes through the git
// hook, a second session gets a consolidated lesson delivered early
// (BeforeAgent), and a third, with BORG_EARLY=1, at SessionStart. Every
// event carries the engineer's id.
func TestGeminiCLISession(t *testing.T) {
	e2eEnabled(t)
	gemini := npmTool(t, geminiCLIPackage, "gemini")
	borg := borgExe(t)
	p := newE2EProject(t, borg, "--gemini", "GEMINI", "GOOGLE_")
	model := geminiStandIn{&standIn{dir: p.project}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	p.env = append(p.env, geminiEnv(t, p.home, srv.URL)...)
	session := func(step, prompt string) string {
		return runIn(t, step, p.project, p.env, gemini, "--prompt", prompt, "--approval-mode", "yolo",
			"--model", "gemini-2.5-flash", "--output-format", "json")
	}

	out := session("gemini session 1 (AfterAgent)", "Add retries to the payments client: the gateway sometimes returns 503.")
	retry := p.checkFirstSession(t, "gemini session 1 (AfterAgent)", model.standIn, out)

	commitThroughHook(t, p.project, p.store, p.env)
	teammates(t, p.store, retry)
	session("gemini session 2 (BeforeAgent)", "The payments client's retry loop with backoff and jitter: make the retry count configurable.")
	p.checkSecondSession(t, "gemini session 2 (BeforeAgent)", model.standIn, retry)

	// With BORG_EARLY=1 SessionStart delivers the lesson, and the CLI's
	// headless mode puts it before the prompt (BeforeAgent's context goes
	// after it, and does not deliver a lesson twice). SessionStart's query
	// is the repository's name, which covers too little of any lesson to
	// clear the relevance floor: the floor is off here (BORG_FLOOR=0), as
	// this session proves the hook's plumbing, not the floor.
	const third = "Log each retry of the payments client."
	p.env = append(p.env, "BORG_EARLY=1", "BORG_FLOOR=0")
	session("gemini session 3 (SessionStart)", third)
	model.mu.Lock()
	defer model.mu.Unlock()
	for _, r := range model.requests {
		if i := strings.Index(r.Text, third); i >= 0 {
			if !strings.Contains(r.Text[:i], "consolidated notes") || !strings.Contains(r.Text[:i], retry) {
				t.Fatalf("gemini session 3, SessionStart (early delivery): the lesson %s did not come before the prompt:\n%s", retry, r.Text)
			}
			return
		}
	}
	t.Fatal("gemini session 3: the prompt never reached the model")
}

// TestDemoWithGemini runs `borg demo --agent gemini`: the demo's session
// played by the real Gemini CLI against the Gemini API stand-in.
func TestDemoWithGemini(t *testing.T) {
	e2eEnabled(t)
	gemini := npmTool(t, geminiCLIPackage, "gemini")
	borg := borgExe(t)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "BORG_") && !strings.HasPrefix(k, "GEMINI") && !strings.HasPrefix(k, "GOOGLE_") {
			env = append(env, kv)
		}
	}
	out := runIn(t, "borg demo --agent gemini", t.TempDir(), append(raceQuickExit(env), "BORG_GEMINI="+gemini), borg, "demo", "--agent", "gemini")
	for _, want := range []string{"the real Gemini CLI (0.61.0)", "gemini installed", "borg's AfterAgent hook rejected the agent's first answer once",
		`"kind":"changed"`, `"w":0.`, "sleep 20"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
