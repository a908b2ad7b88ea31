package main

// doctor_layout.go is doctor's check of the fan-out layout: lesson files of
// the flat layout (lessons/<id>.html, as stores made before the buckets
// hold them) or in another lesson's bucket, and --fix's move of them into
// their buckets as one commit (memfs.MigrateLayout).

import (
	"fmt"
	"io"

	"github.com/borg-memory/borg/memfs"
)

// layoutReport is doctor's "layout" section.
type layoutReport struct {
	// Moves are the files not in their buckets, each with where it goes
	// (and, when it cannot simply move, why).
	Moves []memfs.LayoutMove `json:"moves"`
	// Moved is how many files --fix moved, in Commit.
	Moved  int    `json:"moved,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// checkLayout lists the lesson files out of their buckets and, with fix,
// moves them (after the other repairs: the move is a commit, made under
// the same write discipline as any).
func checkLayout(s *memfs.Store, fix bool) (layoutReport, error) {
	rep := layoutReport{Moves: []memfs.LayoutMove{}}
	if fix {
		done, h, err := s.MigrateLayout()
		if err != nil {
			return rep, err
		}
		rep.Moved, rep.Commit = len(done), h
	}
	moves, err := s.LayoutMoves()
	if err != nil {
		return rep, err
	}
	rep.Moves = append(rep.Moves, moves...)
	return rep, nil
}

// printLayout writes rep for a terminal: one line for the flat files (a
// store can hold 100,000), one per conflict.
func printLayout(w io.Writer, rep layoutReport) {
	if rep.Moved > 0 {
		fmt.Fprintf(w, "repaired: moved %d lesson file(s) into lessons/<bucket>/ and archive/<bucket>/ (commit %s)\n", rep.Moved, shortHash(rep.Commit))
	}
	movable := 0
	for _, m := range rep.Moves {
		if m.Conflict != "" {
			fmt.Fprintf(w, "layout: %s: %s\n", m.From, m.Conflict)
			continue
		}
		movable++
	}
	if movable > 0 {
		first := ""
		for _, m := range rep.Moves {
			if m.Conflict == "" {
				first = fmt.Sprintf(" (such as %s, which belongs at %s)", m.From, m.To)
				break
			}
		}
		fmt.Fprintf(w, "layout: %d lesson file(s) outside their buckets%s; borg reads the flat layout, but a commit into a large flat lessons/ costs its size: borg doctor --fix moves them, in one commit\n", movable, first)
	}
}
