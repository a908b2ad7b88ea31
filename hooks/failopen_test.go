package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFirstLine: a hook's stderr carries what is written up to the end of
// the first line, however the writes split it, and nothing after.
func TestFirstLine(t *testing.T) {
	for _, tt := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"one line", []string{"borg hook stop: failed\n"}, "borg hook stop: failed\n"},
		{"two lines in one write", []string{"first\nsecond\n"}, "first\n"},
		{"a line in pieces", []string{"borg ", "hook ", "stop\n", "borg: autosync\n"}, "borg hook stop\n"},
		{"no newline", []string{"partial"}, "partial"},
		{"nothing", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			w := FirstLine(&b)
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if b.String() != tt.want {
				t.Fatalf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// TestRunCommitGate: a hook that Run has given up on may not commit (an ask
// the agent never sees is not recorded), and one that committed before the
// deadline has its answer delivered after it.
func TestRunCommitGate(t *testing.T) {
	t.Run("given up, then committing", func(t *testing.T) {
		release, committed := make(chan struct{}), make(chan bool, 1)
		var out, errb strings.Builder
		code := Run(context.Background(), "stop", 10*time.Millisecond, &out, &errb, func(ctx context.Context) (*Output, error) {
			<-release
			committed <- Commit(ctx)
			return Block("never delivered"), nil
		})
		close(release)
		if <-committed {
			t.Error("Commit = true after Run gave up")
		}
		if code != 0 || out.Len() != 0 || !strings.Contains(errb.String(), "gave up") {
			t.Errorf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
		}
	})
	t.Run("committed, then past the deadline", func(t *testing.T) {
		var out, errb strings.Builder
		code := Run(context.Background(), "stop", 10*time.Millisecond, &out, &errb, func(ctx context.Context) (*Output, error) {
			if !Commit(ctx) {
				return nil, errors.New("Commit = false before the deadline")
			}
			<-ctx.Done() // the deadline passes while the hook records
			return Block("recorded and delivered"), nil
		})
		if code != 0 || !strings.Contains(out.String(), "recorded and delivered") || errb.Len() != 0 {
			t.Errorf("code %d, stdout %q, stderr %q; want the answer delivered", code, out.String(), errb.String())
		}
	})
}
