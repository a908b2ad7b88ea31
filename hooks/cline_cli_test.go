package hooks

import (
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// Payloads as Cline's CLI (3.0) sends them to the hook files in
// .clinerules/hooks/: hookName is the SDK's event (agent_start,
// tool_result, agent_end), every tool parameter is a string (a list is
// JSON inside it), and agent_end carries the turn's final text.
const clineCLIBase = `"clineVersion":"","timestamp":"2026-12-03T10:00:00Z","taskId":"conv_1","sessionContext":{"rootSessionId":"1_cli"},"workspaceRoots":["REPO"],"workspaceInfo":{"rootPath":"REPO","hint":"payments"},"userId":"unknown","agent_id":"agent_1","parent_agent_id":null`

func TestClineCLIInput(t *testing.T) {
	fix := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "BASE", clineCLIBase), "REPO", "/w")
	}
	in, err := ParseInput(strings.NewReader(fix(`{BASE,"hookName":"agent_end","iteration":2,"turn":{"outputText":"retry-x: applies","status":"completed"},"taskComplete":{"taskMetadata":{}}}`)))
	if err != nil || in.Agent != AgentCline || in.SessionID != "conv_1" || in.CWD != "/w" || in.LastAssistantMessage != "retry-x: applies" || !in.Stopped() {
		t.Fatalf("agent_end: %+v %v", in, err)
	}
	in, err = ParseInput(strings.NewReader(fix(`{BASE,"hookName":"tool_result","iteration":1,"postToolUse":{"toolName":"run_commands","parameters":{"commands":"[\"go test ./...\",\"git status\"]"},"result":"[{\"query\":\"go test ./...\",\"result\":\"ok\",\"success\":true}]","success":true,"executionTimeMs":40}}`)))
	if err != nil || in.ToolName != "run_commands" || in.ToolCommand() != "go test ./... git status" {
		t.Fatalf("tool_result: %+v %q %v", in, in.ToolCommand(), err)
	}
}

// TestClineCLISession: Cline's CLI waits for no hook but its tool hooks,
// so the ask kept at TaskComplete goes with the next tool result
// (PostToolUse's contextModification), and the completion after it is
// judged from its final text.
func TestClineCLISession(t *testing.T) {
	repo := newRepo(t)
	d, st := newDeps(t, repo)
	fix := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "BASE", clineCLIBase), "REPO", repo)
	}
	start := fix(`{BASE,"hookName":"agent_start","taskStart":{"taskMetadata":{}}}`)
	tool := fix(`{BASE,"hookName":"tool_result","iteration":1,"postToolUse":{"toolName":"read_files","parameters":{"files":"[{\"path\":\"REPO/pay/retry.go\"}]"},"result":"package pay","success":true,"executionTimeMs":3}}`)
	runHook(t, d, "session-start", start, "")
	writeFile(t, repo, "pay/retry.go", "package pay\n\n// retry the payments client 3 times\nfunc retryPayments() {}\n")
	if out, _ := runHook(t, d, "post-tool", tool, ""); out != "" {
		t.Fatalf("a tool result with nothing to ask printed %q", out)
	}
	complete := func(text string) string {
		return fix(`{BASE,"hookName":"agent_end","iteration":1,"turn":{"outputText":"` + text + `","status":"completed"},"taskComplete":{"taskMetadata":{}}}`)
	}
	if out, _ := runHook(t, d, "stop", complete("I added a retry loop to the payments client."), ""); out != "" {
		t.Fatalf("task complete printed %q", out)
	}
	if k := st.kinds(); k[domain.KindAsked] != 0 {
		t.Fatalf("asked recorded before the ask went out: %v", k)
	}
	runHook(t, d, "session-start", start, "")
	out, _ := runHook(t, d, "post-tool", tool, "")
	golden(t, "post-tool-deferred-cline.json", []byte(out))
	if again, _ := runHook(t, d, "post-tool", tool, ""); again != "" {
		t.Fatalf("the ask went out twice: %q", again)
	}
	writeFile(t, repo, "pay/retry.go", "package pay\n\n// Retry with exponential backoff and jitter; idempotent requests only.\nfunc retryPayments() {}\n")
	runHook(t, d, "stop", complete("retry-backoff-3c1d: applies\\ntimeouts-context-9f2e: skip"), "")
	k := st.kinds()
	want := map[domain.EventKind]int{domain.KindSession: 1, domain.KindAsked: 2, domain.KindChanged: 1, domain.KindIgnored: 1}
	for kind, n := range want {
		if k[kind] != n {
			t.Fatalf("%s events = %d, want %d (all: %v)", kind, k[kind], n, k)
		}
	}
}

// TestClineCLIAsksInLaterRuns: Cline's CLI sends no prompt hook, but it
// starts each prompt's run with TaskStart (agent_start): each run is a
// turn, so a later run's completion asks about that run's work, as a later
// turn's stop does with any other agent.
func TestClineCLIAsksInLaterRuns(t *testing.T) {
	repo := newRepo(t)
	d, st := newDeps(t, repo)
	fix := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "BASE", clineCLIBase), "REPO", repo)
	}
	start := fix(`{BASE,"hookName":"agent_start","taskStart":{"taskMetadata":{}}}`)
	tool := fix(`{BASE,"hookName":"tool_result","iteration":1,"postToolUse":{"toolName":"read_files","parameters":{"files":"[]"},"result":"ok","success":true,"executionTimeMs":3}}`)
	complete := func(text string) string {
		return fix(`{BASE,"hookName":"agent_end","iteration":1,"turn":{"outputText":"` + text + `","status":"completed"},"taskComplete":{"taskMetadata":{}}}`)
	}
	asked := func() map[string]bool {
		out := map[string]bool{}
		for _, e := range st.events {
			if e.Kind == domain.KindAsked {
				out[e.Lesson] = true
			}
		}
		return out
	}
	// Run 1: payments work, asked with run 2's first tool result, judged
	// at run 2's completion.
	runHook(t, d, "session-start", start, "")
	writeFile(t, repo, "pay/retry.go", "package pay\n\n// retry the payments client 3 times\nfunc retryPayments() {}\n")
	runHook(t, d, "stop", complete("I added a retry loop to the payments client."), "")
	runHook(t, d, "session-start", start, "")
	if out, _ := runHook(t, d, "post-tool", tool, ""); !strings.Contains(out, "retry-backoff-3c1d") {
		t.Fatalf("run 2's tool result did not carry run 1's ask: %q", out)
	}
	runHook(t, d, "stop", complete("retry-backoff-3c1d: skip"), "")
	// Run 3: stylesheet work, a lesson no run has been asked.
	runHook(t, d, "session-start", start, "")
	writeFile(t, repo, "web/app.css", "/* stylesheet tokens: use design tokens, no hardcoded colours */\n")
	runHook(t, d, "stop", complete("I moved the stylesheet colours to the design tokens."), "")
	runHook(t, d, "session-start", start, "")
	out, _ := runHook(t, d, "post-tool", tool, "")
	if !strings.Contains(out, "unrelated-css-note-0a1b") || !asked()["unrelated-css-note-0a1b"] {
		t.Fatalf("run 3's work was never asked about: tool result %q, asked %v", out, asked())
	}
}
