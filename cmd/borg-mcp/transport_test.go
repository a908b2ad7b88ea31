package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
