package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestBuildProgressLines: off a terminal a build of a large log says one
// line when it ends, and a small one says nothing.
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
			for done := int64(0); done < tc.total; done += tc.total / 5 {
				p(memfs.PhaseLog, done, tc.total)
			}
			p(memfs.PhaseLog, tc.total, tc.total)
			if n := strings.Count(errb.String(), "\n"); n != tc.lines || (n > 0 && !strings.Contains(errb.String(), memfs.PhaseLog)) {
				t.Fatalf("%d lines, want %d: %q", n, tc.lines, errb.String())
			}
		})
	}
}
