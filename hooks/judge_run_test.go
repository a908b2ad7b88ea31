//go:build unix

package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestRunJudgeStopsTheWholeJudge: a judge cancelled by its context stops,
// what its shell started included, and RunJudge returns without waiting
// for it. Each judge leaves something running that holds the output open
// for a minute; the bound below is half that, far from the milliseconds a
// stopped judge takes.
func TestRunJudgeStopsTheWholeJudge(t *testing.T) {
	for _, tt := range []struct{ name, script string }{
		{"a command after a sleep", "sleep 60; echo changed"},
		{"a pipeline", "sleep 60 | cat"},
		{"a background child", "sleep 60 & echo $! > \"$PIDFILE\"; wait"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			started, pidfile := filepath.Join(dir, "started"), filepath.Join(dir, "pid")
			t.Setenv("PIDFILE", pidfile)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := RunJudge(ctx, "touch '"+started+"'; "+tt.script, "prompt")
				done <- err
			}()
			for {
				if _, err := os.Stat(started); err == nil {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("the judge ended before it was cancelled: %v", err)
				case <-time.After(5 * time.Millisecond):
				}
			}
			if strings.Contains(tt.script, "PIDFILE") {
				for {
					if b, err := os.ReadFile(pidfile); err == nil && strings.HasSuffix(string(b), "\n") {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			cancel()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a cancelled judge gave no error")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("RunJudge waited for what the judge started")
			}
			if b, err := os.ReadFile(pidfile); err == nil {
				pid := strings.TrimSpace(string(b))
				if !waitGone(pid, 30*time.Second) {
					t.Fatalf("the judge's child %s still runs after the judge was cancelled", pid)
				}
			}
		})
	}
}

// waitGone reports whether process pid is gone or a zombie within d.
func waitGone(pid string, d time.Duration) bool {
	stat := filepath.Join("/proc", pid, "stat")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true // no /proc to look in
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return true
		}
		// The state follows the command's name in parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
			return true
		}
	}
	return false
}

// TestRunJudgeAnswerWithABackgroundChild: a judge that answers and exits,
// leaving a child in the background that holds its output open, has
// answered.
func TestRunJudgeAnswerWithABackgroundChild(t *testing.T) {
	got, err := RunJudge(context.Background(), "(sleep 3 &); echo changed", "prompt")
	if err != nil || got != VerdictChanged {
		t.Fatalf("RunJudge = %q, %v; want changed", got, err)
	}
}

// TestRunJudgeMarksItsEnvironment: the judge runs with JudgingEnv set, so
// the hooks of an agent it is (claude -p) stand aside.
func TestRunJudgeMarksItsEnvironment(t *testing.T) {
	got, err := RunJudge(context.Background(), `test "$`+JudgingEnv+`" = 1 && echo changed || echo ignored`, "prompt")
	if err != nil || got != VerdictChanged {
		t.Fatalf("RunJudge = %q, %v; want changed (the judge sees %s=1)", got, err, JudgingEnv)
	}
}

// TestClipWholeCharacters: a clipped diff handed to the judge is valid
// UTF-8 wherever the limit falls.
func TestClipWholeCharacters(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc\n[… clipped]"},
		{"añb", 2, "a\n[… clipped]"}, // ñ is bytes 1–2: the cut falls inside it
		{"日本語", 4, "日\n[… clipped]"}, // each is three bytes
		{"日本語", 3, "日\n[… clipped]"},
	} {
		got := clip(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
