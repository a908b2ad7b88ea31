package hooks

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseInput(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantErr bool
		check   func(Input) bool
	}{
		{"claude stop", `{"session_id":"a","stop_hook_active":true,"last_assistant_message":"hi","extra":{"x":1}}`, false,
			func(in Input) bool {
				return in.SessionID == "a" && bool(in.StopHookActive) && in.LastAssistantMessage == "hi"
			}},
		{"string flag", `{"session_id":"a","stop_hook_active":"false"}`, false, func(in Input) bool { return !bool(in.StopHookActive) }},
		{"null flag", `{"stop_hook_active":null}`, false, func(in Input) bool { return !bool(in.StopHookActive) }},
		{"codex argv", `{"tool_input":{"command":["go","test","./..."]}}`, false, func(in Input) bool { return in.ToolCommand() == "go test ./..." }},
		{"claude command", `{"tool_input":{"command":"npm test","description":"x"}}`, false, func(in Input) bool { return in.ToolCommand() == "npm test" }},
		{"empty", "  \n", true, nil},
		{"not json", "hello", true, nil},
		{"array", "[1,2]", true, nil},
		{"too large", `{"prompt":"` + strings.Repeat("x", MaxInput) + `"}`, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseInput(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.check != nil && !tc.check(in) {
				t.Fatalf("unexpected parse: %+v", in)
			}
		})
	}
}

func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false}`,
		`{"tool_input":{"command":["go","test"]},"tool_response":{"exit_code":0}}`,
		`{"prompt":"\u0000\ud800"}`, `[]`, `null`, ``, `{"stop_hook_active":"yes"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput(bytes.NewReader(data))
		if err != nil {
			return
		}
		_ = in.ToolCommand()
		_, _ = TestOutcome(in.ToolResponse)
		o := Block(in.Prompt + in.LastAssistantMessage)
		if enc := o.Encode(); len(enc) > 0 && (enc[0] != '{' || bytes.Count(enc, []byte("\n")) != 1) {
			t.Fatalf("output is not one JSON line: %q", enc)
		}
	})
}
