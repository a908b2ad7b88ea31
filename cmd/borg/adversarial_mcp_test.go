package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// borg-mcp's longest line read as one message, and JSON-RPC's error
// codes for a line that is not a message (cmd/borg-mcp/transport.go).
const (
	mcpMaxLine            = 4 << 20
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
)

// TestAdversarialMCPBadLines: a client sends `borg mcp` a line that is not
// JSON, one over the size limit, one that is JSON but no message, and a
// batch, between ordinary requests, and closes its end. Each bad line is
// answered with a JSON-RPC error (parse error -32700 or invalid request
// -32600, id null unless the line named one), every request is answered,
// and the server then exits cleanly.
func TestAdversarialMCPBadLines(t *testing.T) {
	vars := adversarialStore(t)
	cmd := exec.Command(borgBinary(t), "mcp")
	cmd.Env = append(os.Environ(), "BORG_STORE="+vars["BORG_STORE"], "BORG_ENGINEER=ada@example.com")
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	big := `{"jsonrpc":"2.0","id":90,"method":"ping","params":{"pad":"` + strings.Repeat("a", mcpMaxLine) + `"}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this line is not JSON {`,
		big,
		`{"jsonrpc":"2.0","id":"x7","method":42}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`"just a string"`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recall","arguments":{"query":"migrations before the integration tests"}}}`,
	}
	// The client writes everything and closes its end at once: every
	// request passed on is still answered before the server stops.
	go func() {
		defer func() { _ = stdin.Close() }()
		for _, l := range lines {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				return
			}
		}
	}()

	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	want := map[string]int{"null": 4, `"x7"`: 1, "1": 1, "2": 1, "3": 1}
	got := map[string]int{}
	var errs []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("borg mcp wrote a line that is not JSON: %q", sc.Text())
		}
		if len(r.ID) == 0 {
			continue // a notification
		}
		id := string(r.ID)
		got[id]++
		switch id {
		case "null":
			if r.Error == nil || r.Error.Code != jsonrpcParseError && r.Error.Code != jsonrpcInvalidRequest {
				t.Errorf("bad line answered %s", sc.Text())
			}
			errs = append(errs, fmt.Sprint(r.Error.Code))
		case `"x7"`:
			if r.Error == nil || r.Error.Code != jsonrpcInvalidRequest {
				t.Errorf("a message with a bad method answered %s", sc.Text())
			}
		case "2":
			if r.Error != nil || !strings.Contains(string(r.Result), `"recall"`) {
				t.Errorf("tools/list after the bad lines: %s", sc.Text())
			}
		case "3":
			if r.Error != nil || !strings.Contains(string(r.Result), "run-migrations") {
				t.Errorf("recall after the bad lines: %s", sc.Text())
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("borg mcp ended with %v", err)
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("replies with id %s: %d, want %d (all: %v; null-id codes %v)", id, got[id], n, got, errs)
		}
	}
}
