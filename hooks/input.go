package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxInput is the most stdin a hook reads; the rest is discarded. Claude Code
// caps its own strings well below this, so a larger input is hostile or broken.
const MaxInput = 4 << 20

// The agent dialects borg speaks (docs/agents.md). Codex CLI speaks Claude
// Code's.
const (
	AgentClaude = "claude" // Claude Code and Codex CLI
	AgentGemini = "gemini" // Gemini CLI
	AgentCursor = "cursor" // Cursor
	AgentCline  = "cline"  // Cline
)

// Input is an agent's hook JSON: Claude Code's schema (Codex CLI uses the
// same), with the fields Gemini CLI and Cursor name differently read into
// the same places by ParseInput. Every field is optional and unknown fields
// are ignored.
type Input struct {
	// Agent is the dialect the input is written in (AgentClaude,
	// AgentGemini or AgentCursor), set by ParseInput; the output is
	// written in the same dialect.
	Agent string `json:"-"`

	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	CWD                  string          `json:"cwd"`
	HookEventName        string          `json:"hook_event_name"`
	StopHookActive       looseBool       `json:"stop_hook_active"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	Prompt               string          `json:"prompt"`
	Source               string          `json:"source"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	TurnID               string          `json:"turn_id"` // Codex

	// Gemini CLI: AfterAgent's final text (the last assistant message).
	PromptResponse string `json:"prompt_response"`
	// Cursor: the conversation (its session), the workspace (its cwd),
	// stop's status ("completed", "aborted", "error") and loop count, and
	// afterShellExecution's command and output.
	ConversationID string          `json:"conversation_id"`
	WorkspaceRoots json.RawMessage `json:"workspace_roots"`
	Status         json.RawMessage `json:"status"`
	Command        json.RawMessage `json:"command"`
	ShellOutput    json.RawMessage `json:"output"`
	// Cline: the hook, the task (its session), the workspace, and each
	// hook's own object (the prompt; the tool call and its result).
	HookName         string          `json:"hookName"`
	TaskID           string          `json:"taskId"`
	WorkspaceRootsC  json.RawMessage `json:"workspaceRoots"`
	UserPromptSubmit json.RawMessage `json:"userPromptSubmit"`
	PostToolUse      json.RawMessage `json:"postToolUse"`
	// Cline's CLI: TaskComplete's turn, with the agent's final text.
	Turn json.RawMessage `json:"turn"`
}

// looseBool accepts true/false, "true"/"false" and null: agents have been seen
// to send the flag as a string.
type looseBool bool

func (b *looseBool) UnmarshalJSON(data []byte) error {
	s := strings.Trim(strings.TrimSpace(string(data)), `"`)
	*b = looseBool(strings.EqualFold(s, "true") || s == "1")
	return nil
}

// ErrNoInput is returned for an empty stdin.
var ErrNoInput = errors.New("empty hook input")

// ParseInput reads one hook JSON object from r (at most MaxInput bytes).
func ParseInput(r io.Reader) (Input, error) {
	var in Input
	if r == nil {
		return in, ErrNoInput
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return in, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > MaxInput {
		return in, fmt.Errorf("hook input larger than %d bytes", MaxInput)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return in, ErrNoInput
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("parse hook input: %w", err)
	}
	in.normalize()
	return in, nil
}

// geminiOnlyEvents are the event names only Gemini CLI sends (its SessionStart
// is named as Claude Code's, and answered the same way).
var geminiOnlyEvents = map[string]bool{"BeforeAgent": true, "AfterAgent": true, "BeforeTool": true, "AfterTool": true,
	"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true, "PreCompress": true}

// normalize settles the input's dialect and reads the fields Gemini CLI and
// Cursor name differently into Claude Code's places.
func (in *Input) normalize() {
	ev := in.HookEventName
	switch {
	case in.HookName != "" && ev == "":
		in.Agent = AgentCline
		in.HookEventName = in.HookName
		in.normalizeCline()
	case geminiOnlyEvents[ev]:
		in.Agent = AgentGemini
	case ev != "" && ev[0] >= 'a' && ev[0] <= 'z', in.SessionID == "" && in.ConversationID != "":
		in.Agent = AgentCursor // Cursor's events are camelCase: stop, beforeSubmitPrompt, …
	default:
		in.Agent = AgentClaude
	}
	if in.SessionID == "" {
		in.SessionID = in.ConversationID
	}
	if in.CWD == "" {
		var roots []string
		if json.Unmarshal(in.WorkspaceRoots, &roots) == nil && len(roots) > 0 {
			in.CWD = roots[0]
		}
	}
	if in.LastAssistantMessage == "" {
		in.LastAssistantMessage = in.PromptResponse
	}
	if in.Agent == AgentCursor && in.ToolName == "" {
		// afterShellExecution: a shell call, told as a tool call.
		var cmd, out string
		if json.Unmarshal(in.Command, &cmd) == nil && cmd != "" {
			in.ToolName = "Shell"
			in.ToolInput, _ = json.Marshal(map[string]string{"command": cmd})
			if json.Unmarshal(in.ShellOutput, &out) == nil {
				in.ToolResponse, _ = json.Marshal(map[string]string{"output": out})
			}
		}
	}
}

// normalizeCline reads Cline's fields: the task is the session, the first
// workspace root the directory, and each hook's object carries its prompt
// or tool call.
func (in *Input) normalizeCline() {
	if in.SessionID == "" {
		in.SessionID = in.TaskID
	}
	var roots []string
	if in.CWD == "" && json.Unmarshal(in.WorkspaceRootsC, &roots) == nil && len(roots) > 0 {
		in.CWD = roots[0]
	}
	var p struct {
		Prompt string `json:"prompt"`
	}
	if json.Unmarshal(in.UserPromptSubmit, &p) == nil && in.Prompt == "" {
		in.Prompt = p.Prompt
	}
	var t struct {
		ToolName   string          `json:"toolName"`
		Parameters json.RawMessage `json:"parameters"`
		Result     json.RawMessage `json:"result"`
	}
	if json.Unmarshal(in.PostToolUse, &t) == nil && in.ToolName == "" {
		in.ToolName, in.ToolInput, in.ToolResponse = t.ToolName, t.Parameters, t.Result
	}
	var turn struct {
		OutputText string `json:"outputText"`
	}
	if json.Unmarshal(in.Turn, &turn) == nil && in.LastAssistantMessage == "" {
		in.LastAssistantMessage = turn.OutputText
	}
}

// Stopped reports whether a stop is the agent finishing its work, as
// opposed to the user aborting it or an error ending it (Cursor's stop
// status): borg asks only at a finished stop.
func (in Input) Stopped() bool {
	var s string
	if in.Agent != AgentCursor || json.Unmarshal(in.Status, &s) != nil {
		return true // absent or not a string: every other agent's stop
	}
	return s == "" || s == "completed"
}

// ToolCommand returns the shell command of a Bash-like tool call, or "".
func (in Input) ToolCommand() string {
	if len(in.ToolInput) == 0 {
		return ""
	}
	var v struct {
		Command  any `json:"command"`
		Cmd      any `json:"cmd"`
		Commands any `json:"commands"` // Cline's CLI: its run_commands tool
	}
	if json.Unmarshal(in.ToolInput, &v) != nil {
		return ""
	}
	if s, ok := v.Commands.(string); ok {
		// Cline's CLI passes every parameter as a string: the list is
		// JSON inside it.
		var list []any
		if json.Unmarshal([]byte(s), &list) == nil {
			v.Commands = list
		}
	}
	for _, c := range []any{v.Command, v.Cmd, v.Commands} {
		switch c := c.(type) {
		case string:
			return c
		case []any: // Codex sends argv
			parts := make([]string, 0, len(c))
			for _, p := range c {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}
