package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestScreenLines: each line is passed on or answered, whatever its shape:
// CRLF and blank lines, a last line without a newline, a line exactly at
// the limit and one past it.
func TestScreenLines(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name, in string
		max      int
		good     []string
		bad      []int // the error codes answered, in order
	}{
		{"one message", ping + "\n", 100, []string{ping}, nil},
		{"crlf and blank lines", "\r\n" + ping + "\r\n\n", 100, []string{ping}, nil},
		{"no final newline", ping, 100, []string{ping}, nil},
		{"not json", "hello\n" + ping + "\n", 100, []string{ping}, []int{rpcParseError}},
		{"at the limit", ping + "\n", len(ping), []string{ping}, nil},
		{"over the limit", ping + "\n" + ping + "\n", len(ping) - 1, nil, []int{rpcParseError, rpcParseError}},
		{"over a long way", strings.Repeat("x", 200_000) + "\n" + ping + "\n", 1000, []string{ping}, []int{rpcParseError}},
		{"a batch", "[" + ping + "]\n", 100, nil, []int{rpcInvalidRequest}},
		{"a number", "42\n", 100, nil, []int{rpcInvalidRequest}},
		{"a stray response", `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n", 100, []string{`{"jsonrpc":"2.0","id":3,"result":{}}`}, nil},
		{"a method that is no string", `{"jsonrpc":"2.0","id":3,"method":7}` + "\n", 100, nil, []int{rpcInvalidRequest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var good, bad bytes.Buffer
			if err := screenLines(strings.NewReader(tc.in), &good, &bad, tc.max); err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(good.String()); strings.Join(got, "|") != strings.Join(tc.good, "|") {
				t.Errorf("passed on %q, want %q", got, tc.good)
			}
			var codes []int
			for _, line := range strings.Split(strings.TrimSpace(bad.String()), "\n") {
				if line == "" {
					continue
				}
				var r struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   struct{ Code int }
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" {
					t.Fatalf("answer %q is not a JSON-RPC response", line)
				}
				codes = append(codes, r.Error.Code)
			}
			if len(codes) != len(tc.bad) {
				t.Fatalf("answered %v, want %v", codes, tc.bad)
			}
			for i := range codes {
				if codes[i] != tc.bad[i] {
					t.Fatalf("answered %v, want %v", codes, tc.bad)
				}
			}
		})
	}
}

// FuzzCheckRPCMessage: any line gets a verdict, and a line refused is
// answered with an id that is null, a string or a number.
func FuzzCheckRPCMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"id":{"a":1}}`, `[]`, `"x"`, `{`, `{"jsonrpc":"2.0","id":"a","method":7}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 {
			return
		}
		code, id, _ := checkRPCMessage(line)
		if code != 0 && id != nil && !validRPCID(id) {
			t.Fatalf("answer id %s for %q", id, line)
		}
	})
}

// TestEndOfInputAnswersAndExits: at the end of its input the server
// answers what it can and exits, whatever ids the requests carried: an id
// the SDK answers in another spelling (1.5 as 1, a number past int64 as
// the int64 it becomes), and a second request with the id of one not yet
// answered (refused with an error of id null; the first is answered once).
func TestEndOfInputAnswersAndExits(t *testing.T) {
	store := testStore(t)
	dir, bin := fakeBorg(t)
	writeFile(t, dir, "sleep.recall", "1")
	writeFile(t, dir, "out.recall", "[]\n")
	recall := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"recall","arguments":{"query":"queues"}}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  map[string]int // replies by id
	}{
		{"a fractional id", []string{`{"jsonrpc":"2.0","id":3.5,"method":"ping"}`}, map[string]int{"3": 1}},
		{"an id past int64", []string{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`}, nil},
		{"an id in exponent form", []string{`{"jsonrpc":"2.0","id":2e0,"method":"ping"}`}, map[string]int{"2": 1}},
		{"a string id", []string{`{"jsonrpc":"2.0","id":"2","method":"ping"}`}, map[string]int{`"2"`: 1}},
		{"a duplicate id in flight", []string{recall("2"), `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, map[string]int{"2": 1, "null": 1}},
		{"a duplicate id in another spelling", []string{recall("2"), `{"jsonrpc":"2.0","id":2.25,"method":"ping"}`}, map[string]int{"2": 1, "null": 1}},
		// A bad line the guard answers with the id of a request in flight
		// does not answer that request: its reply is still awaited.
		{"a bad line with the id of one in flight", []string{recall("2"), `{"jsonrpc":"2.0","id":2,"method":5}`}, map[string]int{"2": 2}},
		{"an id used again once answered", []string{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, nil}, // answered twice, or refused once: either way, it exits
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string{initLine, initializedLine}, tc.lines...)
			replies, code := serveLines(t, store, map[string]string{borgEnv: bin}, linesOf(lines...), 20*time.Second)
			got := map[string]int{}
			for _, r := range replies {
				got[string(r.ID)]++
			}
			if code != 0 || len(replies) != len(tc.lines)+1 {
				t.Errorf("exit %d, replies %v; want one for each request", code, got)
			}
			for id, n := range tc.want {
				if got[id] != n {
					t.Errorf("replies with id %s: %d, want %d (all: %v)", id, got[id], n, got)
				}
			}
		})
	}
}

// TestWaitIdleGivesUp: at the end of input the guard waits for the
// answers owed, but not past grace with nothing written: a request the
// SDK never answers cannot keep the server alive.
func TestWaitIdleGivesUp(t *testing.T) {
	w := &lockedWriter{w: io.Discard, pending: map[string]bool{"7": true}}
	w.idle = sync.NewCond(&w.mu)
	done := make(chan struct{})
	go func() { w.waitIdle(200 * time.Millisecond); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waitIdle waited past its grace for an answer never written")
	}
}
