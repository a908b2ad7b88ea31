package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

const clinePackage = "cline@3.0.65"

// acpClient drives an agent over the Agent Client Protocol (JSON-RPC 2.0,
// one message a line on the agent's stdin and stdout): the one way Cline's
// CLI plays several prompts in one session without a terminal (its
// one-prompt mode ends the session, and --id resumes only into its
// interactive UI).
type acpClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr syncBuffer // written by exec's copying while a failure reads it
	cancel context.CancelFunc
	next   int
	mu     sync.Mutex
}

func startACP(t *testing.T, dir string, env []string, name string, args ...string) *acpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c := &acpClient{t: t, cancel: cancel}
	c.cmd = exec.CommandContext(ctx, name, args...)
	c.cmd.Dir, c.cmd.Env, c.cmd.WaitDelay = dir, env, 5*time.Second
	c.cmd.Stderr = &c.stderr
	ownGroup(c.cmd)
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := c.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(c.close)
	return c
}

// call sends a request and reads messages until its response, answering
// the agent's own requests on the way (a permission asked is granted with
// its first option; nothing else is offered); step names the step for
// failures.
func (c *acpClient) call(step, method string, params any) json.RawMessage {
	c.t.Helper()
	c.next++
	id := c.next
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: %s: the agent's output ended: %v\n%s", step, method, err, c.stderr.String())
		}
		var msg struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue
		}
		switch {
		case msg.Method != "" && msg.ID != nil:
			c.answer(*msg.ID, msg.Method, msg.Params)
		case msg.Method == "" && msg.ID != nil && string(*msg.ID) == fmt.Sprint(id):
			if len(msg.Error) > 0 {
				c.t.Fatalf("%s: %s: %s\n%s", step, method, msg.Error, c.stderr.String())
			}
			return msg.Result
		}
	}
}

func (c *acpClient) answer(id json.RawMessage, method string, params json.RawMessage) {
	if method != "session/request_permission" {
		c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "not offered"}})
		return
	}
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
		} `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	opt := "allow"
	if len(p.Options) > 0 {
		opt = p.Options[0].OptionID
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}}})
}

func (c *acpClient) send(v any) {
	b, _ := json.Marshal(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.in.Write(append(b, '\n'))
}

// prompt plays one prompt of the session to its end.
func (c *acpClient) prompt(step, session, text string) {
	c.t.Helper()
	c.call(step, "session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

func (c *acpClient) close() {
	_ = c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cancel()
		<-done
	}
	c.cancel()
}

// waitFor polls until ok holds (Cline runs its TaskStart, UserPromptSubmit
// and TaskComplete hooks without waiting for them, so what they record
// lands after the prompt's end), failing with msg after a generous bound.
func waitFor(t *testing.T, msg string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

// TestClineSession plays a session of the real Cline CLI over ACP against
// the Chat Completions stand-in (its openai-compatible provider), through
// the hook files `borg install --cline` writes: the first TaskComplete
// keeps the ask (Cline cannot go on after it), the next prompt's first
// tool result carries it to the agent (PostToolUse is the one hook of
// Cline's CLI whose added context it waits for), the agent rewrites the
// client and answers, the next TaskComplete is judged, and the commit goes
// through the git hook. Every event carries the engineer's id.
//
// No second session: Cline's CLI runs TaskStart and UserPromptSubmit
// without reading their output, so early delivery has no way in
// (docs/agents.md).
func TestClineSession(t *testing.T) {
	e2eEnabled(t)
	cline := npmTool(t, clinePackage, "cline")
	borg := borgExe(t)
	p := newE2EProject(t, borg, "--cline", "CLINE", "OPENAI")
	model := chatStandIn{standIn: &standIn{dir: p.project}, lookFirst: true}
	srv := httptest.NewServer(model)
	defer srv.Close()
	// The provider's base URL is kept in Cline's settings (written by its
	// own auth command); the key and model come from the environment,
	// which ACP mode reads. The local backend keeps Cline from starting
	// its background hub, which would outlive the test.
	runIn(t, "cline auth", p.project, p.env, cline, "auth", "--provider", "openai-compatible", "--apikey", "sk-standin",
		"--modelid", "standin-model", "--baseurl", srv.URL+"/v1")
	p.env = append(p.env, "CLINE_API_KEY=sk-standin", "CLINE_PROVIDER=openai-compatible", "CLINE_MODEL=standin-model",
		"CLINE_SESSION_BACKEND_MODE=local", "DO_NOT_TRACK=1", "NO_COLOR=1")

	acp := startACP(t, p.project, p.env, cline, "--acp", "--auto-approve", "true")
	acp.call("cline initialize", "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(acp.call("cline session/new", "session/new", map[string]any{"cwd": p.project, "mcpServers": []any{}}), &s)

	acp.prompt("cline session 1, prompt 1", s.SessionID, "Add retries to the payments client: the gateway sometimes returns 503.")
	states := filepath.Join(p.store, ".borg", "sessions", "*.json")
	waitFor(t, "cline session 1, TaskComplete: borg kept no ask for the next prompt", func() bool {
		files, _ := filepath.Glob(states)
		for _, f := range files {
			if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(`"deferred"`)) {
				return true
			}
		}
		return false
	})
	acp.prompt("cline session 1, prompt 2 (PostToolUse)", s.SessionID, "Look at the payments client once more before I commit it.")
	// The session state is written last, after the verdicts reach the log:
	// once it holds them, the judging hook is done with the store.
	waitFor(t, "cline session 1, TaskComplete after the ask: no verdict recorded", func() bool {
		files, _ := filepath.Glob(states)
		for _, f := range files {
			if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(`"verdicts"`)) && !bytes.Contains(data, []byte(`"pending"`)) {
				return true
			}
		}
		return false
	})
	acp.close()
	if text := model.textWith("borg, your team's shared memory"); !strings.HasPrefix(text, "borg, your team's shared memory") {
		t.Fatalf("cline session 1, PostToolUse: the agent never received borg's question")
	}
	p.checkFirstSession(t, "cline session 1", model.standIn, acp.stderr.String())
	commitThroughHook(t, p.project, p.store, p.env)
	for _, e := range logEvents(t, p.store) {
		if e.Kind == domain.KindSession && e.Author != p.engineer {
			t.Errorf("cline: session event by %q, want the engineer's %q", e.Author, p.engineer)
		}
	}
}
