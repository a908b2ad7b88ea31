package hooks

import (
	"strings"
	"testing"
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
