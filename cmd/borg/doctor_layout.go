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
// the same write discipline as any), returning the moves made.
func checkLayout(s *memfs.Store, fix bool) (layoutReport, []memfs.LayoutMove, error) {
	rep := layoutReport{Moves: []memfs.LayoutMove{}}
	var moves []memfs.LayoutMove
	var err error
	if fix {
		moves, rep.Moves, rep.Commit, err = s.MigrateLayout()
		rep.Moved = len(moves)
	} else {
		rep.Moves, err = s.LayoutMoves()
	}
	if rep.Moves == nil {
		rep.Moves = []memfs.LayoutMove{}
	}
	return rep, moves, err
}

// moveReport brings doctor's report up to date with the moves --fix made:
// a file that was read where it was is the same file at its new path; one
// that was not read (in another lesson's bucket) is a lesson now, and the
// store's lessons are checked again (rare: a hand-misplaced file).
func moveReport(e *env, s *memfs.Store, rep *doctorReport, moves []memfs.LayoutMove) {
	to := map[string]string{}
	reread := false
	for _, m := range moves {
		to[m.From] = m.To
		if _, _, _, read := memfs.ParseLessonPath(m.From); !read {
			reread = true
		}
	}
	if reread {
		fresh := doctorReport{InvalidLessons: []doctorProblem{}}
		lessons := checkLessons(e, s, &fresh)
		rep.Lessons, rep.InvalidLessons = fresh.Lessons, fresh.InvalidLessons
		rep.RefusedLessons = refusedLessons(s, lessons)
		return
	}
	for _, list := range [][]doctorProblem{rep.InvalidLessons, rep.RefusedLessons} {
		for i := range list {
			if p, moved := to[list[i].Path]; moved {
				list[i].Path = p
			}
		}
	}
}

// printLayout writes rep for a terminal: one line for the flat files (a
// store can hold 100,000), one per conflict.
func printLayout(w io.Writer, rep layoutReport) {
	if rep.Moved > 0 {
		printLine(w, "repaired: moved %d lesson file(s) into lessons/<bucket>/ and archive/<bucket>/ (commit %s)", rep.Moved, shortHash(rep.Commit))
	}
	movable, first := 0, ""
	for _, m := range rep.Moves {
		if m.Conflict != "" {
			printLine(w, "layout: %s: %s", m.From, m.Conflict)
			continue
		}
		if movable == 0 {
			first = fmt.Sprintf(" (such as %s, which belongs at %s)", m.From, m.To)
		}
		movable++
	}
	if movable > 0 {
		printLine(w, "layout: %d lesson file(s) outside their buckets%s; borg reads the flat layout, but a commit into a large flat lessons/ costs its size: borg doctor --fix moves them, in one commit", movable, first)
	}
}
