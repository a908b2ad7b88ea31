package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// geminiStandIn speaks the subset of the Gemini API (generativelanguage,
// v1beta) Gemini CLI and its forks use: POST
// /v1beta/models/<model>:streamGenerateContent?alt=sse, streamed as
// server-sent events, its unstreamed twin :generateContent, and
// :countTokens. It is scripted as the same coding model as standIn and
// writes files with the CLI's write_file tool.
type geminiStandIn struct {
	*standIn
}

// geminiPart is one part of a Gemini content: text, a function call the
// model made, or the CLI's answer to one.
type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	FunctionCall *struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

// ServeHTTP answers one Gemini API request: the contents mapped onto
// standIn's conversation, the reply streamed as one server-sent event (or
// one JSON object when unstreamed).
func (m geminiStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"totalTokens":100}`)
		return
	}
	var raw struct {
		Contents []struct {
			Role  string       `json:"role"`
			Parts []geminiPart `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(body, &raw)
	// The conversation as standIn reads it: the CLI's write_file and
	// read_file calls on the client are its Write and Read.
	req := standInRequest{Path: r.URL.Path, Stream: strings.HasSuffix(r.URL.Path, ":streamGenerateContent")}
	var all strings.Builder
	for _, c := range raw.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		msg := standInMessage{Role: role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				name := p.FunctionCall.Name
				path, _ := p.FunctionCall.Args["file_path"].(string)
				switch {
				case name == "write_file" && strings.HasSuffix(path, "client.go"):
					name = "Write"
				case name == "read_file" && strings.HasSuffix(path, "client.go"):
					name = "Read"
				}
				msg.Content = append(msg.Content, standInBlock{Type: "tool_use", Name: name})
			case p.FunctionResponse != nil:
				msg.Content = append(msg.Content, standInBlock{Type: "tool_result", Content: p.FunctionResponse.Response})
				all.Write(p.FunctionResponse.Response)
				all.WriteByte('\n')
			case p.Text != "" && !p.Thought:
				msg.Content = append(msg.Content, standInBlock{Type: "text", Text: p.Text})
				all.WriteString(p.Text)
				all.WriteByte('\n')
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	req.Text = all.String()
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	blocks, _ := m.reply(req)
	var parts []any
	for _, b := range blocks {
		switch b["type"] {
		case "text":
			parts = append(parts, map[string]any{"text": b["text"]})
		case "tool_use":
			input, _ := b["input"].(map[string]any)
			name := "write_file"
			if b["name"] == "Read" {
				name, input = "read_file", map[string]any{"file_path": input["file_path"]}
			}
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": name, "args": input}})
		}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": parts}}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  "gemini-standin",
	}
	data, _ := json.Marshal(resp)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", data)
}

// geminiUserSettings is the user settings (~/.gemini/settings.json) a
// Gemini CLI session against the stand-in runs with: the API key auth
// (GOOGLE_GEMINI_BASE_URL alone would select the gateway auth, which the
// CLI's headless mode refuses) and nothing sent anywhere else: no usage
// statistics, telemetry or update check.
const geminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
}
`

// geminiStandInEnv points a Gemini CLI at the stand-in at url, with the
// project trusted: in an untrusted folder the CLI's headless mode turns
// the approval mode back to asking, and nobody is there to answer.
func geminiStandInEnv(url string) []string {
	return []string{"GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_API_KEY=standin-key", "GEMINI_CLI_TRUST_WORKSPACE=true"}
}
