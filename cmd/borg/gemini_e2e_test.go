package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

const geminiCLIPackage = "@google/gemini-cli@0.61.0"

// geminiUserSettings is the user settings a Gemini CLI session of the suite
// runs with: an API key read from GEMINI_API_KEY (GOOGLE_GEMINI_BASE_URL
// then points the client at the stand-in; without a selected auth type the
// base URL alone selects the gateway auth, which the CLI's headless mode
// refuses), and nothing sent anywhere else: no usage statistics, telemetry
// or update check.
const geminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
}
`

// geminiEnv points a Gemini CLI (or a fork that reads the same variables)
// at the stand-in at url, with the project trusted (an untrusted folder's
// settings, and so borg's hooks, are not loaded) and the user settings
// above written into home.
func geminiEnv(t *testing.T, home, url string) []string {
	t.Helper()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(geminiUserSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_API_KEY=standin-key", "GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1"}
}

// TestGeminiCLISession plays two sessions of the real Gemini CLI against
// the Gemini API stand-in, through the hooks `borg install --gemini`
// writes: AfterAgent rejects the first answer once with the lessons (the
// reason comes back as the next prompt), the agent rewrites the client and
// answers, the next AfterAgent is judged, the commit goes through the git
// hook, and a second session gets a consolidated lesson delivered early
// (SessionStart and BeforeAgent). Every event carries the engineer's id.
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
	session("gemini session 2 (SessionStart, BeforeAgent)", "The payments client retries: make the retry count configurable.")
	p.checkSecondSession(t, "gemini session 2 (SessionStart, BeforeAgent)", model.standIn, retry)
}
