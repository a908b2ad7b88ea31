package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// codexStandIn speaks the subset of the OpenAI Responses API Codex uses
// (POST /v1/responses, streamed as server-sent events), scripted as the same
// coding model as standIn: it writes files with Codex's exec_command tool.
type codexStandIn struct {
	*standIn
}

// ServeHTTP answers one Responses API request: Codex's input items mapped
// onto standIn's conversation, the reply streamed as server-sent events. It
// is long on purpose: one protocol exchange, read in the order it happens.
func (m codexStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var raw struct {
		Input []json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(body, &raw)
	// The conversation as standIn reads it: Codex's items mapped onto
	// messages (its function calls onto Write tool uses when they write the
	// client).
	req := standInRequest{Path: r.URL.Path, Stream: true}
	var all strings.Builder
	for _, it := range raw.Input {
		var item struct {
			Type      string `json:"type"`
			Role      string `json:"role"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Output    any    `json:"output"`
			Content   []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(it, &item) != nil {
			continue
		}
		switch item.Type {
		case "message":
			var b strings.Builder
			for _, c := range item.Content {
				b.WriteString(c.Text)
				b.WriteByte('\n')
			}
			role := item.Role
			if role != "assistant" {
				role = "user"
			}
			req.Messages = append(req.Messages, standInMessage{Role: role, Content: []standInBlock{{Type: "text", Text: b.String()}}})
			all.WriteString(b.String())
		case "function_call":
			name := item.Name
			var args struct {
				Cmd string `json:"cmd"`
			}
			_ = json.Unmarshal([]byte(item.Arguments), &args)
			switch {
			case strings.HasPrefix(args.Cmd, "cat > ") && strings.Contains(args.Cmd, "client.go"):
				name = "Write"
			case strings.Contains(args.Cmd, "client.go"):
				name = "Read"
			}
			req.Messages = append(req.Messages, standInMessage{Role: "assistant", Content: []standInBlock{{Type: "tool_use", Name: name}}})
		case "function_call_output":
			out, _ := json.Marshal(item.Output)
			req.Messages = append(req.Messages, standInMessage{Role: "user", Content: []standInBlock{{Type: "tool_result", Content: out}}})
			all.Write(out)
		}
	}
	req.Text = all.String()
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	blocks, _ := m.reply(req)
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	resp := map[string]any{"id": "resp_standin", "object": "response", "status": "in_progress", "model": "standin-model", "output": []any{}}
	event(map[string]any{"type": "response.created", "response": resp})
	var output []any
	for i, b := range blocks {
		var item map[string]any
		switch b["type"] {
		case "text":
			text, _ := b["text"].(string)
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", i), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
			event(map[string]any{"type": "response.output_item.added", "output_index": i,
				"item": map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
			event(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": text})
		case "tool_use":
			input, _ := b["input"].(map[string]any)
			cmd := fmt.Sprintf("cat > %s <<'BORG_EOF'\n%sBORG_EOF", input["file_path"], input["content"])
			if b["name"] == "Read" {
				cmd = fmt.Sprintf("cat %s", input["file_path"])
			}
			args, _ := json.Marshal(map[string]any{"cmd": cmd})
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "call_id": b["id"],
				"name": "exec_command", "arguments": string(args), "status": "completed"}
			event(map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		}
		event(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
		output = append(output, item)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
		"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}
	event(map[string]any{"type": "response.completed", "response": resp})
}
