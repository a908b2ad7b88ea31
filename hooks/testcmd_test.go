package hooks

import (
	"encoding/json"
	"testing"
)

func TestIsTestCommand(t *testing.T) {
	cases := []struct {
		cmd  string
		want bool
	}{
		{"go test ./...", true},
		{"cd x && go test -race ./pkg", true},
		{"pytest -q tests/", true},
		{"python -m pytest", true},
		{"npm test", true},
		{"npm run test -- --watch=false", true},
		{"cargo test --all", true},
		{"make test", true},
		{"./gradlew clean test", true},
		{"go build ./...", false},
		{"git commit -m 'add test'", false},
		{"cat test.go", false},
		{"echo latest", false},
		{"npm install", false},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			if got := IsTestCommand(tc.cmd); got != tc.want {
				t.Fatalf("IsTestCommand(%q) = %v, want %v", tc.cmd, got, tc.want)
			}
		})
	}
}

// FuzzIsTestCommand: the word filter drops no command the expression
// reads as a test run.
func FuzzIsTestCommand(f *testing.F) {
	for _, s := range []string{"go test ./...", "make check", "TOX -e py312", "npx Jest", "bundle exec rspec", "ls -la", "", "go teſt", "make chec\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if got, want := IsTestCommand(cmd), testCommand().MatchString(cmd); got != want {
			t.Fatalf("IsTestCommand(%q) = %v, the expression says %v", cmd, got, want)
		}
	})
}

func TestTestOutcome(t *testing.T) {
	js := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	cases := []struct {
		name          string
		resp          json.RawMessage
		passed, known bool
	}{
		{"go ok", js(map[string]any{"stdout": "ok  \tgithub.com/x/y\t0.1s\n", "stderr": ""}), true, true},
		{"go fail", js(map[string]any{"stdout": "--- FAIL: TestX (0.00s)\nFAIL\n"}), false, true},
		{"exit code wins", js(map[string]any{"exit_code": 1, "stdout": "ok x"}), false, true},
		{"exit 0", js(map[string]any{"exit_code": 0}), true, true},
		{"pytest pass", js(map[string]any{"stdout": "===== 12 passed in 0.3s ====="}), true, true},
		{"pytest fail", js(map[string]any{"stdout": "===== 1 failed, 11 passed ====="}), false, true},
		{"cargo", js(map[string]any{"stdout": "test result: ok. 3 passed; 0 failed"}), true, true},
		{"interrupted", js(map[string]any{"interrupted": true}), false, true},
		{"silent", js(map[string]any{"stdout": "building..."}), false, false},
		{"plain string", js("PASS\n"), true, true},
		{"empty", nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, k := TestOutcome(tc.resp)
			if p != tc.passed || k != tc.known {
				t.Fatalf("TestOutcome = (%v, %v), want (%v, %v)", p, k, tc.passed, tc.known)
			}
		})
	}
}
