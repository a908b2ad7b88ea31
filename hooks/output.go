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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // lessons quote code: keep <, > and & readable
	if err := enc.Encode(c); err != nil {
		return nil
	}
	return buf.Bytes()
}

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
