package sleep_test

import (
	"fmt"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/sleep"
)

// MakePlan decides from a snapshot alone; Run would commit each phase that
// changes a file.
func ExampleMakePlan() {
	night := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	old := domain.Lesson{ID: "region-old", Type: "semantic", Confidence: 0.8,
		Created: night.AddDate(0, -6, 0), Gist: "The default region is eu-west-1."}
	newer := domain.Lesson{ID: "region-new", Type: "semantic", Confidence: 0.9,
		Created: night.AddDate(0, 0, -3), Gist: "The default region is us-east-1."}
	snap := sleep.Snapshot{Date: night, Base: "0123456789abcdef", LastSleep: night.AddDate(0, 0, -1), EmbedderID: "none"}
	for _, l := range []domain.Lesson{old, newer} {
		snap.Lessons = append(snap.Lessons, sleep.LessonFile{Lesson: l, Raw: memfs.Render(l)})
	}
	plan := sleep.MakePlan(snap, sleep.PlanOptions{})
	for _, ph := range plan.Phases[:4] {
		fmt.Printf("%s: %d files\n", ph.Phase, ph.Files)
		for _, it := range ph.Items {
			fmt.Printf("  %s %s %s\n", it.Lesson, it.Action, it.Other)
		}
	}
	// Output:
	// decay: 2 files
	//   region-new decay 0.9000 -> 0.8300
	//   region-old decay 0.8000 -> 0.7400
	// reprieve: 0 files
	// merge: 0 files
	// frame-conflicts: 2 files
	//   region-new supersedes region-old
}
