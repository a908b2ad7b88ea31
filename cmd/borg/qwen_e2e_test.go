package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

const qwenCodePackage = "@qwen-code/qwen-code@0.24.4"

// qwenUserSettings is the user settings (~/.qwen/settings.json) a Qwen Code
// session against the stand-in runs with: the OpenAI-compatible auth (its
// key, base URL and model from the environment), and no side requests or
// traffic: no managed memory (its extraction replays the conversation to
// the model after the turn), usage statistics, telemetry or update check.
const qwenUserSettings = `{
  "security": {"auth": {"selectedType": "openai"}},
  "memory": {"enableManagedAutoMemory": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true}
}
`

// TestQwenCodeSession plays two sessions of the real Qwen Code CLI against
// the Chat Completions stand-in, through the hooks `borg install --qwen`
// writes (Claude Code's, in .qwen/settings.json): the stop is blocked once
// with the lessons, the agent rewrites the client and answers, the next
// stop is judged, the commit goes through the git hook, and a second
// session gets a consolidated lesson delivered early. Every event carries
// the engineer's id.
func TestQwenCodeSession(t *testing.T) {
	e2eEnabled(t)
	qwen := npmTool(t, qwenCodePackage, "qwen")
	borg := borgExe(t)
	p := newE2EProject(t, borg, "--qwen", "QWEN", "OPENAI")
	model := chatStandIn{standIn: &standIn{dir: p.project}, geminiFile: true}
	srv := httptest.NewServer(model)
	defer srv.Close()
	dir := filepath.Join(p.home, ".qwen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(qwenUserSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	p.env = append(p.env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-standin", "OPENAI_MODEL=standin-model",
		// No relaunch: the CLI otherwise starts itself again in a child
		// process with a larger heap, which doubles its start-up.
		"QWEN_CODE_NO_RELAUNCH=1", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1", "NO_COLOR=1")
	session := func(step, prompt string) string {
		return runIn(t, step, p.project, p.env, qwen, "--prompt", prompt, "--auth-type", "openai", "--approval-mode", "yolo",
			"--output-format", "json")
	}

	out := session("qwen session 1 (Stop)", "Add retries to the payments client: the gateway sometimes returns 503.")
	retry := p.checkFirstSession(t, "qwen session 1 (Stop)", model.standIn, out)

	commitThroughHook(t, p.project, p.store, p.env)
	teammates(t, p.store, retry)
	session("qwen session 2 (UserPromptSubmit)", "The payments client's retry loop with backoff and jitter: make the retry count configurable.")
	p.checkSecondSession(t, "qwen session 2 (UserPromptSubmit)", model.standIn, retry)
}
