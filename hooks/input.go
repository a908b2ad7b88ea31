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

// Input is an agent's hook JSON (Claude Code; Codex CLI uses the same schema).
// Every field is optional and unknown fields are ignored.
type Input struct {
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
	return in, nil
}

// ToolCommand returns the shell command of a Bash-like tool call, or "".
func (in Input) ToolCommand() string {
	if len(in.ToolInput) == 0 {
		return ""
	}
	var v struct {
		Command any `json:"command"`
		Cmd     any `json:"cmd"`
	}
	if json.Unmarshal(in.ToolInput, &v) != nil {
		return ""
	}
	for _, c := range []any{v.Command, v.Cmd} {
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
