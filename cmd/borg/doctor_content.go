package main

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// refusedLessons is doctor's content check: every lesson the screen refuses
// (a secret anywhere in it, its id included, or text addressed to the
// agent), a hand-committed one included, with the reason and the fix. The
// path names the file unless its id is the secret.
func refusedLessons(s *memfs.Store, lessons []domain.Lesson) []doctorProblem {
	out := []doctorProblem{}
	for _, l := range lessons {
		if v := memfs.Screen(l); v != "" {
			// The file where it is (its bucket, or the flat layout), its
			// name masked when the id is the secret.
			p := lessonPath(s, l.ID)
			if safe := memfs.SafeID(l.ID); safe != l.ID {
				p = path.Dir(p) + "/" + safe + ".html"
			}
			out = append(out, doctorProblem{Path: p, Reason: refusedAdvice(v)})
		}
	}
	return out
}

// printRefused writes doctor's lines about refused lessons.
func printRefused(w io.Writer, refused []doctorProblem) {
	if len(refused) == 0 {
		return
	}
	printLine(w, "content: %d lesson(s) never quoted to an agent", len(refused))
	for _, p := range refused {
		printLine(w, "  %s: %s", p.Path, p.Reason)
	}
}

// doctorFailure counts what fails doctor: invalid lesson files, refused ones.
func doctorFailure(invalid, refused int) string {
	var parts []string
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d invalid lesson file(s)", invalid))
	}
	if refused > 0 {
		parts = append(parts, fmt.Sprintf("%d lesson(s) carrying a secret or instruction-like text", refused))
	}
	return strings.Join(parts, " and ")
}
