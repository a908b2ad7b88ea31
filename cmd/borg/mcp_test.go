package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSession drives `borg mcp` with the official SDK's client over
// stdio, as an agent would: the server is a real borg process started by
// the client. Each tool behaves as its CLI command, refusals come back as
// tool errors, and lessons read as resources.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestMCPSession(t *testing.T) {
	vars := adversarialStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	session := mcpClient(t, "BORG_STORE="+vars["BORG_STORE"], "BORG_ENGINEER=ada@example.com")

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "learn list no recall show" {
		t.Fatalf("tools: %s", got)
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return res, text.String()
	}

	res, text := call("learn", map[string]any{"gist": "Vendor the protobuf plugins", "body": "CI has no network.", "type": "procedural", "tags": []string{"ci"}})
	if res.IsError {
		t.Fatalf("learn: %s", text)
	}
	var learned struct{ ID, Commit string }
	if err := json.Unmarshal([]byte(text), &learned); err != nil || learned.ID != "vendor-protobuf-plugins-7d53" && !strings.HasPrefix(learned.ID, "vendor-protobuf-plugins-") {
		t.Fatalf("learn answered %q", text)
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["id"] != learned.ID {
		t.Errorf("learn's structured content: %#v", res.StructuredContent)
	}
	// The CLI's refusals, as tool errors.
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"learn", map[string]any{"gist": "Vendor the protobuf plugins"}, "already says this"},
		{"learn", map[string]any{"gist": "   "}, "the gist is empty"},
		{"learn", map[string]any{"gist": "Deploy with the bot token", "body": "token: ghp_" + strings.Repeat("a1B2c3D4e5", 4)[:36]}, "secret"},
		{"learn", map[string]any{"gist": "Ranked lesson", "importance": 11}, "out of range"},
		{"no", map[string]any{"id": "no-such-lesson-0000"}, "no lesson no-such-lesson-0000"},
		{"show", map[string]any{"id": "../../etc/passwd"}, "bad lesson id"},
		{"recall", map[string]any{"query": "   "}, "the query is empty"},
	} {
		res, text := call(tc.name, tc.args)
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError %v, %q; want an error saying %q", tc.name, tc.args, res.IsError, text, tc.want)
		}
	}
	// A body longer than a command line holds is learned whole: it
	// reaches borg on its stdin.
	long := strings.Repeat("The staging cluster drops idle connections after thirty seconds. ", 3500)
	if res, text := call("learn", map[string]any{"gist": "Staging drops idle connections", "body": long}); res.IsError {
		t.Errorf("learn with a body of %d bytes: %s", len(long), text)
	} else if res, text := call("show", map[string]any{"id": res.StructuredContent.(map[string]any)["id"]}); res.IsError || !strings.Contains(text, strings.TrimSpace(long)) {
		t.Errorf("show of the long lesson: %.300s", text)
	}
	// A gist that looks like a flag is a gist.
	if res, text := call("learn", map[string]any{"gist": "--force the cache rebuild after a schema change"}); res.IsError {
		t.Errorf("a gist starting with -- was refused: %s", text)
	}

	res, text = call("recall", map[string]any{"query": "protobuf plugins in CI", "k": 3})
	if res.IsError || !strings.Contains(text, learned.ID) {
		t.Fatalf("recall: %s", text)
	}
	// A query about nothing in the store hands the agent nothing: the weak
	// hits under the hooks' floor are left out, and the text says so.
	if res, text = call("recall", map[string]any{"query": "kubernetes pod autoscaling"}); res.IsError || strings.Contains(text, `"id"`) || !strings.Contains(text, "no lesson") {
		t.Errorf("recall of a query the store knows nothing of: %s", text)
	}
	if res, text = call("recall", map[string]any{"query": "kubernetes pod autoscaling", "include_weak": true}); res.IsError || strings.Contains(text, `"id"`) && !strings.Contains(text, `"weak":true`) {
		t.Errorf("recall with include_weak: %s", text)
	}
	if res, text = call("show", map[string]any{"id": learned.ID}); res.IsError || !strings.Contains(text, "CI has no network.") {
		t.Fatalf("show: %s", text)
	}
	if res, text = call("list", map[string]any{"type": "procedural"}); res.IsError || !strings.Contains(text, learned.ID) || strings.Contains(text, "run-migrations") {
		t.Fatalf("list --type procedural: %s", text)
	}
	if res, text = call("no", map[string]any{"id": learned.ID, "why": "we moved to buf"}); res.IsError || !strings.Contains(text, "vetoed") {
		t.Fatalf("no: %s", text)
	}

	// Lessons as resources: listed (the store's lessons when the client
	// asks) and read by URI (any lesson, through the template).
	list, err := session.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range list.Resources {
		listed[r.URI] = true
	}
	// The two lessons there at start, and those learned through the tool.
	if len(list.Resources) != 5 || !listed[lessonURI(learned.ID)] {
		t.Fatalf("resources: %+v", list.Resources)
	}
	read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: lessonURI(learned.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "Vendor the protobuf plugins") || !strings.Contains(read.Contents[0].Text, "CI has no network.") {
		t.Fatalf("resource: %+v", read.Contents)
	}
	if _, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "borg://lesson/nothing-here-0000"}); err == nil {
		t.Error("a missing lesson read as a resource")
	}

	// A fact restated by a newer lesson (a second later): show and the
	// resource of the older one name the newer, so the agent asks it.
	learn := func(gist string) string {
		t.Helper()
		res, text := call("learn", map[string]any{"gist": gist})
		id, _ := res.StructuredContent.(map[string]any)["id"].(string)
		if res.IsError || id == "" {
			t.Fatalf("learn %q: %s", gist, text)
		}
		return id
	}
	old := learn("The staging database of the payments service is pay-db-stage-1.")
	time.Sleep(1100 * time.Millisecond)
	newer := learn("The staging database of the payments service is pay-db-stage-2.")
	want := "superseded by " + newer + ": ask that one"
	if res, text := call("show", map[string]any{"id": old}); res.IsError || !strings.Contains(text, want) {
		t.Errorf("show of the older fact: %s; want %q", text, want)
	}
	if read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: lessonURI(old)}); err != nil || !strings.Contains(read.Contents[0].Text, want) {
		t.Errorf("the older fact's resource: %v %+v; want %q", err, read, want)
	}
	if res, text := call("show", map[string]any{"id": newer}); res.IsError || strings.Contains(text, "superseded by") {
		t.Errorf("show of the newer fact: %s", text)
	}
}

// mcpClient starts `borg mcp` as an agent does (borgBinary, which runs
// borg-mcp beside it), with env over the test's environment, and connects
// the SDK's client to it; the session is closed when the test ends.
func mcpClient(t *testing.T, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	cmd := exec.Command(borgBinary(t), "mcp")
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	client := mcp.NewClient(&mcp.Implementation{Name: "borg-test", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to borg mcp: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// lessonURI is a lesson's resource URI, as borg-mcp names it.
func lessonURI(id string) string { return "borg://lesson/" + url.PathEscape(id) }

// TestMCPWithoutServer: borg mcp where borg-mcp is neither beside borg nor
// on PATH fails at once, saying how to install it, and reads nothing of
// its input.
func TestMCPWithoutServer(t *testing.T) {
	vars := adversarialStore(t)
	alone := filepath.Join(t.TempDir(), "borg")
	data, err := os.ReadFile(borgBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	cmd := exec.Command(alone, "mcp")
	cmd.Env = append(os.Environ(), "BORG_STORE="+vars["BORG_STORE"], "PATH="+filepath.Dir(git))
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("borg mcp without borg-mcp: %v, want exit 1", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "borg-mcp") || !strings.Contains(stderr.String(), "go install") {
		t.Errorf("stdout %q, stderr %q; want nothing, and the fix", stdout.String(), stderr.String())
	}
}
