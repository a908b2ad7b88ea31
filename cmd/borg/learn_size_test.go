package main

import (
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestLearnBodyOverLimitRefused: a body on stdin longer than a lesson may
// hold is refused as a lesson file over the limit is (exit 3, docs/lessons.md
// "What learn refuses"), names the limit and the fix, and writes nothing.
func TestLearnBodyOverLimitRefused(t *testing.T) {
	a := newAdvStore(t)
	body := strings.Repeat("lorem ipsum ", memfs.MaxLessonBytes/12+1)
	code, out, errs := a.borg(body, "learn", "The export job keeps a long log", "--body", "-")
	if code != exitRefused {
		t.Fatalf("exit %d, want %d (refused); stdout %q stderr %q", code, exitRefused, out, errs)
	}
	if !strings.Contains(errs, "more than a lesson may hold") || !strings.Contains(errs, "--anchor") {
		t.Fatalf("stderr %q does not name the limit and the fix", errs)
	}
	if files, _ := a.s.LessonFiles(); len(files) != 0 {
		t.Fatalf("%d lesson files written by a refused learn", len(files))
	}
}
