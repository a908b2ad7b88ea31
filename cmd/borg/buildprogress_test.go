package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestBuildProgressLines: off a terminal each phase of a build of a large
// log says one line when it ends, and a small one says nothing.
func TestBuildProgressLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int64
		lines int
	}{
		{"small log", progressQuietBelow - 1, 0},
		{"large log", 3 * progressQuietBelow, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			p := buildProgress(&env{err: &errb})
			phases := []string{memfs.PhaseAttrib, memfs.PhaseLog, memfs.PhaseSummary}
			for _, phase := range phases {
				for done := int64(0); done < tc.total; done += tc.total / 5 {
					p(phase, done, tc.total)
				}
				p(phase, tc.total, tc.total)
			}
			out := errb.String()
			if n := strings.Count(out, "\n"); n != len(phases)*tc.lines {
				t.Fatalf("%d lines, want %d: %q", n, len(phases)*tc.lines, out)
			}
			for _, phase := range phases {
				if tc.lines > 0 && !strings.Contains(out, phase) {
					t.Fatalf("no line for %q: %q", phase, out)
				}
			}
		})
	}
}
