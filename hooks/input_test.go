package hooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseInput(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantErr bool
		check   func(Input) bool
	}{
		{"claude stop", `{"session_id":"a","stop_hook_active":true,"last_assistant_message":"hi","extra":{"x":1}}`, false,
			func(in Input) bool {
				return in.SessionID == "a" && bool(in.StopHookActive) && in.LastAssistantMessage == "hi"
			}},
		{"string flag", `{"session_id":"a","stop_hook_active":"false"}`, false, func(in Input) bool { return !bool(in.StopHookActive) }},
		{"null flag", `{"stop_hook_active":null}`, false, func(in Input) bool { return !bool(in.StopHookActive) }},
		{"codex argv", `{"tool_input":{"command":["go","test","./..."]}}`, false, func(in Input) bool { return in.ToolCommand() == "go test ./..." }},
		{"claude command", `{"tool_input":{"command":"npm test","description":"x"}}`, false, func(in Input) bool { return in.ToolCommand() == "npm test" }},
		{"claude dialect", `{"session_id":"a","hook_event_name":"Stop"}`, false, func(in Input) bool { return in.Agent == AgentClaude }},
		{"codex is claude", `{"session_id":"a","turn_id":"t","hook_event_name":"Stop"}`, false, func(in Input) bool { return in.Agent == AgentClaude }},
		{"no event is claude", `{"session_id":"a"}`, false, func(in Input) bool { return in.Agent == AgentClaude }},
		{"gemini after agent", `{"session_id":"g","cwd":"/p","hook_event_name":"AfterAgent","prompt":"p","prompt_response":"done","stop_hook_active":true,"timestamp":"2026-11-30T10:00:00Z"}`, false,
			func(in Input) bool {
				return in.Agent == AgentGemini && in.LastAssistantMessage == "done" && bool(in.StopHookActive) && in.Prompt == "p"
			}},
		{"gemini before agent", `{"session_id":"g","hook_event_name":"BeforeAgent","prompt":"p"}`, false, func(in Input) bool { return in.Agent == AgentGemini && in.Prompt == "p" }},
		{"gemini after tool", `{"session_id":"g","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test ./..."},"tool_response":{"llmContent":"x","returnDisplay":"ok  \tpay\t0.1s"}}`, false,
			func(in Input) bool {
				p, known := TestOutcome(in.ToolResponse)
				return in.Agent == AgentGemini && in.ToolCommand() == "go test ./..." && p && known
			}},
		{"gemini session start is claude-shaped", `{"session_id":"g","hook_event_name":"SessionStart","source":"startup"}`, false, func(in Input) bool { return in.Agent == AgentClaude }},
		{"gemini message kept over response", `{"hook_event_name":"AfterAgent","last_assistant_message":"a","prompt_response":"b"}`, false, func(in Input) bool { return in.LastAssistantMessage == "a" }},
		{"cursor stop", `{"conversation_id":"c","generation_id":"g","hook_event_name":"stop","status":"completed","loop_count":0,"workspace_roots":["/w","/x"]}`, false,
			func(in Input) bool {
				return in.Agent == AgentCursor && in.SessionID == "c" && in.CWD == "/w" && in.Stopped()
			}},
		{"status is Cursor's alone", `{"session_id":"a","hook_event_name":"Stop","status":"aborted"}`, false, func(in Input) bool { return in.Stopped() }},
		{"cursor aborted", `{"conversation_id":"c","hook_event_name":"stop","status":"aborted"}`, false, func(in Input) bool { return !in.Stopped() }},
		{"cursor prompt", `{"conversation_id":"c","hook_event_name":"beforeSubmitPrompt","prompt":"p","attachments":[{"type":"file","file_path":"a.go"}]}`, false,
			func(in Input) bool { return in.Agent == AgentCursor && in.Prompt == "p" }},
		{"cursor shell", `{"conversation_id":"c","hook_event_name":"afterShellExecution","command":"npm test","output":"Tests: 3 passed","cwd":"/sub","workspace_roots":["/w"],"duration":12}`, false,
			func(in Input) bool {
				p, known := TestOutcome(in.ToolResponse)
				return in.Agent == AgentCursor && in.ToolName == "Shell" && in.ToolCommand() == "npm test" && in.CWD == "/sub" && p && known
			}},
		{"cursor without event", `{"conversation_id":"c"}`, false, func(in Input) bool { return in.Agent == AgentCursor && in.SessionID == "c" }},
		{"session id wins", `{"session_id":"s","conversation_id":"c"}`, false, func(in Input) bool { return in.SessionID == "s" && in.Agent == AgentClaude }},
		{"odd cursor types", `{"conversation_id":"c","hook_event_name":"stop","status":3,"workspace_roots":"/w","command":["x"],"output":7}`, false,
			func(in Input) bool { return in.Stopped() && in.CWD == "" && in.ToolName == "" }},
		{"cline prompt", `{"clineVersion":"3.36.0","hookName":"UserPromptSubmit","timestamp":"t","taskId":"k","workspaceRoots":["/w"],"userId":"u","userPromptSubmit":{"prompt":"p","attachments":[]}}`, false,
			func(in Input) bool {
				return in.Agent == AgentCline && in.SessionID == "k" && in.CWD == "/w" && in.Prompt == "p" && in.HookEventName == "UserPromptSubmit"
			}},
		{"cline tool", `{"hookName":"PostToolUse","taskId":"k","postToolUse":{"toolName":"execute_command","parameters":{"command":"cargo test"},"result":"test result: ok. 3 passed","success":true,"executionTimeMs":5}}`, false,
			func(in Input) bool {
				p, known := TestOutcome(in.ToolResponse)
				return in.Agent == AgentCline && in.ToolName == "execute_command" && in.ToolCommand() == "cargo test" && p && known
			}},
		{"cline complete", `{"hookName":"TaskComplete","taskId":"k","taskComplete":{"taskMetadata":{"taskId":"k","ulid":"u"}}}`, false,
			func(in Input) bool { return in.Agent == AgentCline && in.Stopped() && !StopContinues(in.Agent) }},
		{"odd cline types", `{"hookName":"PostToolUse","taskId":7,"postToolUse":"x"}`, true, nil},
		{"odd cline objects", `{"hookName":"UserPromptSubmit","workspaceRoots":{},"userPromptSubmit":[1],"postToolUse":{"toolName":3}}`, false,
			func(in Input) bool {
				return in.Agent == AgentCline && in.Prompt == "" && in.ToolName == "" && in.CWD == ""
			}},
		{"empty", "  \n", true, nil},
		{"not json", "hello", true, nil},
		{"array", "[1,2]", true, nil},
		{"too large", `{"prompt":"` + strings.Repeat("x", MaxInput) + `"}`, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseInput(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.check != nil && !tc.check(in) {
				t.Fatalf("unexpected parse: %+v", in)
			}
		})
	}
}

func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false}`,
		`{"tool_input":{"command":["go","test"]},"tool_response":{"exit_code":0}}`,
		`{"prompt":"\u0000\ud800"}`, `[]`, `null`, ``, `{"stop_hook_active":"yes"}`,
		`{"session_id":"g","hook_event_name":"AfterAgent","prompt_response":"done","stop_hook_active":true}`,
		`{"session_id":"g","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"go test"},"tool_response":{"llmContent":"ok"}}`,
		`{"conversation_id":"c","hook_event_name":"stop","status":"completed","loop_count":1,"workspace_roots":["/w"]}`,
		`{"conversation_id":"c","hook_event_name":"afterShellExecution","command":"go test","output":"ok  x","workspace_roots":[1]}`,
		`{"conversation_id":"c","hook_event_name":"","status":null,"command":null}`,
		`{"hookName":"UserPromptSubmit","taskId":"k","workspaceRoots":["/w"],"userPromptSubmit":{"prompt":"p"}}`,
		`{"hookName":"PostToolUse","taskId":"k","postToolUse":{"toolName":"execute_command","parameters":{"command":"go test"},"result":"ok  x","success":true}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput(bytes.NewReader(data))
		if err != nil {
			return
		}
		_ = in.ToolCommand()
		_, _ = TestOutcome(in.ToolResponse)
		_ = in.Stopped()
		for _, o := range []*Output{Block(in.Prompt + in.LastAssistantMessage), Context("UserPromptSubmit", in.Prompt), Context("SessionStart", in.LastAssistantMessage)} {
			o.Agent = in.Agent
			if enc := o.Encode(); len(enc) > 0 && (enc[0] != '{' || bytes.Count(enc, []byte("\n")) != 1 || !json.Valid(enc)) {
				t.Fatalf("output is not one JSON line: %q", enc)
			}
		}
	})
}
