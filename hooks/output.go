package hooks

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxString is the most characters any string in a hook's stdout may carry:
// Claude Code replaces longer strings with a file path and a preview.
const MaxString = 10000

// Output is the one JSON object a hook prints, or nothing when it is nil.
type Output struct {
	// Agent is the dialect to write (an Agent* constant; "" is Claude
	// Code's): Main sets it from the input.
	Agent              string              `json:"-"`
	Decision           string              `json:"decision,omitempty"`
	Reason             string              `json:"reason,omitempty"`
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput carries additional context for UserPromptSubmit and
// SessionStart.
type HookSpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Block is a Stop hook's block decision.
func Block(reason string) *Output { return &Output{Decision: "block", Reason: reason} }

// Context is an early-delivery output for event (UserPromptSubmit, SessionStart).
func Context(event, text string) *Output {
	return &Output{HookSpecificOutput: &HookSpecificOutput{HookEventName: event, AdditionalContext: text}}
}

// Encode renders o as one line of JSON with every string capped at MaxString
// characters. A nil or empty output encodes to nothing.
func (o *Output) Encode() []byte {
	if o == nil {
		return nil
	}
	c := *o
	c.Reason = capString(c.Reason)
	if c.HookSpecificOutput != nil {
		h := *c.HookSpecificOutput
		h.AdditionalContext = capString(h.AdditionalContext)
		if h.AdditionalContext == "" {
			c.HookSpecificOutput = nil
		} else {
			c.HookSpecificOutput = &h
		}
	}
	if c.Decision == "" && c.Reason == "" && c.HookSpecificOutput == nil {
		return nil
	}
	var v any = c
	switch c.Agent {
	case AgentGemini:
		// Gemini CLI reads Claude Code's fields ("block" is its alias of
		// "deny"); only the prompt event has its own name.
		if h := c.HookSpecificOutput; h != nil && h.HookEventName == "UserPromptSubmit" {
			g := *h
			g.HookEventName = "BeforeAgent"
			c.HookSpecificOutput = &g
		}
		v = c
	case AgentCursor:
		v = cursorOutput(c)
		if v == nil {
			return nil
		}
	case AgentCline:
		// Cline takes added context from any hook; it cannot be made to
		// go on after TaskComplete, so borg never blocks it.
		if c.HookSpecificOutput == nil {
			return nil
		}
		v = clineOutput{ContextModification: c.HookSpecificOutput.AdditionalContext}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // lessons quote code: keep <, > and & readable
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return buf.Bytes()
}

// cursorStop is Cursor's answer to stop: a follow-up message, which Cursor
// submits as the next user message so the agent goes on.
type cursorStop struct {
	FollowupMessage string `json:"followup_message"`
}

// cursorSessionStart is Cursor's answer to sessionStart: context added to
// the conversation.
type cursorSessionStart struct {
	AdditionalContext string `json:"additional_context"`
}

// clineOutput is Cline's answer: never cancel, and context for the
// conversation.
type clineOutput struct {
	Cancel              bool   `json:"cancel"`
	ContextModification string `json:"contextModification"`
}

// cursorOutput is o in Cursor's words, or nil when Cursor has none for it
// (its beforeSubmitPrompt takes no added context: Prompt never offers any).
func cursorOutput(o Output) any {
	switch {
	case o.Decision == "block":
		return cursorStop{FollowupMessage: o.Reason}
	case o.HookSpecificOutput != nil && o.HookSpecificOutput.HookEventName == "SessionStart":
		return cursorSessionStart{AdditionalContext: o.HookSpecificOutput.AdditionalContext}
	}
	return nil
}

// StopContinues reports whether agent can be made to go on after a stop
// (a block with a reason; Cursor's followup_message). Every agent borg
// knows can (docs/agents.md); one that cannot is asked with its next
// prompt instead (Config.AskAtPrompt).
func StopContinues(agent string) bool {
	switch agent {
	case AgentClaude, AgentGemini, AgentCursor, "":
		return true
	}
	return false // Cline: TaskComplete cannot continue the task
}

// PromptContext reports whether agent takes added context when the user
// submits a prompt (Cursor's beforeSubmitPrompt does not).
func PromptContext(agent string) bool { return agent != AgentCursor }

// capString truncates s to MaxString characters, marking the cut.
func capString(s string) string {
	if utf8.RuneCountInString(s) <= MaxString {
		return s
	}
	const tail = "\n[… truncated by borg]"
	limit := MaxString - utf8.RuneCountInString(tail)
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + tail
		}
		n++
	}
	return s
}
