package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// standIn is a local model stand-in speaking the subset of the Anthropic
// Messages API Claude Code uses (POST /v1/messages, streamed as server-sent
// events, and count_tokens), scripted as a coding model working on a
// payments client: it reads the client if there is one, writes a naive
// retry loop and says it is done; when borg's Stop hook asks it about
// lessons, it rewrites the client with backoff and jitter and declares the
// retry lesson applies and every other one skip. It records every request so
// the demo (`borg demo --agent claude`) and the end-to-end tests can show
// what the agent sent. It is a script, not a model: it answers only this
// task.
type standIn struct {
	dir string // the project the model writes into

	mu       sync.Mutex
	requests []standInRequest
}

type standInRequest struct {
	Path     string
	Stream   bool
	Messages []standInMessage
	Text     string // every text of the request, joined
}

type standInMessage struct {
	Role    string
	Content []standInBlock
}

type standInBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Name      string          `json:"name,omitempty"`
	ID        string          `json:"id,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// The two versions of the client the scripted model writes.
const (
	naiveClient = `package payments

// Do calls the payments gateway, retrying every request up to 3 times.
func Do(call func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = call(); err == nil {
			return nil
		}
	}
	return err
}
`
	backoffClient = `package payments

import (
	"math/rand"
	"time"
)

// Do calls the payments gateway with exponential backoff and jitter between
// attempts; a non-idempotent POST is never retried.
func Do(call func() error, idempotent bool) error {
	err := call()
	for i := 0; err != nil && idempotent && i < 3; i++ {
		backoff := time.Duration(1<<i) * 100 * time.Millisecond
		time.Sleep(backoff + time.Duration(rand.Int63n(int64(backoff))))
		err = call()
	}
	return err
}
`
)

// borgAsked finds borg's question in a conversation: a user message quoting
// lessons as "N. <id> (by …)".
var borgAsked = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*\d+\. ([a-z0-9][a-z0-9-]*[a-z0-9]) \(by `) })

func (m *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var raw struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &raw)
	req := standInRequest{Path: r.URL.Path, Stream: raw.Stream}
	var all strings.Builder
	for _, msg := range raw.Messages {
		sm := standInMessage{Role: msg.Role}
		var text string
		if json.Unmarshal(msg.Content, &text) == nil {
			sm.Content = []standInBlock{{Type: "text", Text: text}}
		} else {
			_ = json.Unmarshal(msg.Content, &sm.Content)
		}
		for _, b := range sm.Content {
			all.WriteString(b.Text)
			all.Write(b.Content)
			all.WriteByte('\n')
		}
		req.Messages = append(req.Messages, sm)
	}
	req.Text = all.String()
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":100}`)
		return
	}
	blocks, stop := m.reply(req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_standin", "type": "message", "role": "assistant",
			"model": "claude-standin", "content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": 100, "output_tokens": 20}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// reply is the scripted model's next message for a conversation: its
// content blocks and stop reason.
func (m *standIn) reply(req standInRequest) ([]map[string]any, string) {
	text := func(s string) ([]map[string]any, string) {
		return []map[string]any{{"type": "text", "text": s}}, "end_turn"
	}
	tool := func(id, name string, input map[string]any) ([]map[string]any, string) {
		return []map[string]any{{"type": "tool_use", "id": id, "name": name, "input": input}}, "tool_use"
	}
	if len(req.Messages) == 0 {
		return text("OK.")
	}
	// What the model already did in this conversation.
	var asked []string
	writes, reads, askedAt := 0, 0, -1
	for i, msg := range req.Messages {
		for _, b := range msg.Content {
			if msg.Role == "assistant" && b.Type == "tool_use" && b.Name == "Write" {
				writes++
			}
			if msg.Role == "assistant" && b.Type == "tool_use" && b.Name == "Read" {
				reads++
			}
			if msg.Role == "user" {
				if ids := borgAsked().FindAllStringSubmatch(b.Text+string(b.Content), -1); len(ids) > 0 && askedAt < 0 {
					askedAt = i
					for _, id := range ids {
						asked = append(asked, id[1])
					}
				}
			}
		}
	}
	if !strings.Contains(req.Text, "payments") {
		return text("OK.") // a side request (a title, a summary): nothing to do
	}
	client := filepath.Join(m.dir, "client.go")
	_, statErr := os.Stat(client)
	switch {
	case askedAt < 0 && writes == 0 && reads == 0 && statErr == nil:
		// An agent reads a file before it rewrites it.
		return tool("toolu_read", "Read", map[string]any{"file_path": client})
	case askedAt < 0 && writes == 0:
		return tool("toolu_naive", "Write", map[string]any{"file_path": client, "content": naiveClient})
	case askedAt < 0:
		return text("I wrapped every payments client request, the charge POSTs included, in a retry loop (3 attempts).")
	case writes < 2:
		return tool("toolu_backoff", "Write", map[string]any{"file_path": client, "content": backoffClient})
	}
	var b strings.Builder
	for _, id := range asked {
		verdict := "skip"
		if strings.Contains(id, "retry") {
			verdict = "applies"
		}
		fmt.Fprintf(&b, "%s: %s\n", id, verdict)
	}
	b.WriteString("I switched the payments client to exponential backoff with jitter and no retry of non-idempotent POSTs.")
	return text(b.String())
}

// textWith returns the first text of a request the agent sent that
// contains s ("" when none does), from s on.
func (m *standIn) textWith(s string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests {
		if i := strings.Index(r.Text, s); i >= 0 {
			return r.Text[i:]
		}
	}
	return ""
}

// sawText reports whether any request the agent sent contains s.
func (m *standIn) sawText(s string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests {
		if strings.Contains(r.Text, s) {
			return true
		}
	}
	return false
}
