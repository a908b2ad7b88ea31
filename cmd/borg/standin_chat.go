package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// chatStandIn speaks the subset of the OpenAI Chat Completions API that
// OpenAI-compatible agent providers use (POST /v1/chat/completions,
// streamed as server-sent events; GET /v1/models), scripted as the same
// coding model as standIn. It writes the client with Cline's run_commands
// tool (a heredoc) and reads it with read_files, or, gemini-style, with
// Qwen Code's write_file and read_file.
//
// lookFirst makes the model start every turn after its first write by
// reading the client again, as an agent asked to look at its work does:
// that tool call is where an agent that reads added context only from tool
// hooks (Cline's CLI) can receive borg's deferred ask.
type chatStandIn struct {
	*standIn
	lookFirst  bool
	geminiFile bool // write_file and read_file (Qwen Code's tools)
}

// chatMessage is one message of a Chat Completions request.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// text is the message's content: a string, or the texts of its parts.
func (c chatMessage) text() string {
	var s string
	if json.Unmarshal(c.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// ServeHTTP answers one Chat Completions request: the messages mapped onto
// standIn's conversation, the reply streamed as chunks.
func (m chatStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"standin-model","object":"model","owned_by":"standin"}]}`)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var raw struct {
		Stream   bool          `json:"stream"`
		Messages []chatMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &raw)
	req := standInRequest{Path: r.URL.Path, Stream: raw.Stream}
	var all strings.Builder
	for _, msg := range raw.Messages {
		switch msg.Role {
		case "system":
			continue // the agent's instructions: no part of the conversation
		case "assistant":
			sm := standInMessage{Role: "assistant"}
			if t := msg.text(); t != "" {
				sm.Content = append(sm.Content, standInBlock{Type: "text", Text: t})
			}
			for _, c := range msg.ToolCalls {
				name := c.Function.Name
				switch args := c.Function.Arguments; {
				case name == "run_commands" && strings.Contains(args, "cat > ") && strings.Contains(args, "client.go"):
					name = "Write"
				case name == "read_files" && strings.Contains(args, "client.go"):
					name = "Read"
				case name == "write_file" && strings.Contains(args, "client.go"):
					name = "Write"
				case name == "read_file" && strings.Contains(args, "client.go"):
					name = "Read"
				}
				sm.Content = append(sm.Content, standInBlock{Type: "tool_use", Name: name})
			}
			req.Messages = append(req.Messages, sm)
		case "tool":
			// Kept as text: borg's ask may come appended to a tool's result.
			req.Messages = append(req.Messages, standInMessage{Role: "user", Content: []standInBlock{{Type: "tool_result", Text: msg.text()}}})
			all.WriteString(msg.text())
			all.WriteByte('\n')
		default:
			t := msg.text()
			req.Messages = append(req.Messages, standInMessage{Role: "user", Content: []standInBlock{{Type: "text", Text: t}}})
			all.WriteString(t)
			all.WriteByte('\n')
		}
	}
	req.Text = all.String()
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	blocks, _ := m.reply(req)
	if m.lookFirst && turnOpens(req) && !borgAsked().MatchString(req.Text) {
		blocks = []map[string]any{{"type": "tool_use", "id": "call_look", "name": "Read",
			"input": map[string]any{"file_path": m.dir + "/client.go"}}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1,
			"model": "standin-model", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	finish := "stop"
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			chunk(map[string]any{"content": b["text"]}, nil)
		case "tool_use":
			input, _ := b["input"].(map[string]any)
			name, args := "run_commands", map[string]any{"commands": []string{
				fmt.Sprintf("cat > %s <<'BORG_EOF'\n%sBORG_EOF", input["file_path"], input["content"])}}
			switch {
			case m.geminiFile && b["name"] == "Read":
				name, args = "read_file", map[string]any{"file_path": input["file_path"]}
			case m.geminiFile:
				name, args = "write_file", input
			case b["name"] == "Read":
				name, args = "read_files", map[string]any{"files": []any{map[string]any{"path": input["file_path"]}}}
			}
			a, _ := json.Marshal(args)
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": b["id"], "type": "function",
				"function": map[string]any{"name": name, "arguments": string(a)}}}}, nil)
			finish = "tool_calls"
		}
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1,
		"model": "standin-model", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}},
		"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

// turnOpens reports whether the conversation's last message is the user's
// prompt (a turn opens) after the model has already written the client.
func turnOpens(req standInRequest) bool {
	if len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" || len(last.Content) == 0 || last.Content[0].Type != "text" {
		return false
	}
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			if b.Type == "tool_use" && b.Name == "Write" {
				return true
			}
		}
	}
	return false
}
