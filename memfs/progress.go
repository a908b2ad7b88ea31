package memfs

import (
	"os"
	"path/filepath"
)

// Progress hears how a long build advances: its phase, and done of total
// in the phase's unit. Builds from the whole log report bytes of log
// folded, at most every progressStep bytes and once more at the end with
// done equal to total. It is called on the building goroutine.
type Progress func(phase string, done, total int64)

// WithProgress has the store report its builds from the whole log (the
// ledger and the summary on a fresh clone: the one wait a user meets) to
// p. Without it nothing is reported.
func WithProgress(p Progress) Option { return func(s *Store) { s.progress = p } }

// The phases of a build from the whole log: the walk of git history that
// finds who committed each line (attrib.go), the fold of the logs, then
// the summary made from the ledger and the caches written. The summary
// phase reports the log's size as its total three times: when it starts
// (done 0), halfway, when the build has let go of the ledger, the largest
// thing it holds (done half the total), and when it ends (done the total):
// what the build held is garbage then.
const (
	PhaseAttrib  = "finding who committed the team's log"
	PhaseLog     = "reading the team's log"
	PhaseSummary = "summing up the team's log"
)

// progressStep is the most log a build folds between two reports.
var progressStep int64 = 4 << 20

// buildTicker reports one build's progress; the zero ticker reports
// nothing (no listener, or not a build from the whole log).
type buildTicker struct {
	report      Progress
	total, base int64 // every file's size; the files folded before this one
	start, last int64 // this file's first offset; done at the last report
	sizes       map[string]int64
}

func (s *Store) buildTicker(full bool, files []string) *buildTicker {
	t := &buildTicker{}
	if !full || s.progress == nil {
		return t
	}
	t.report, t.sizes = s.progress, map[string]int64{}
	for _, name := range files {
		if fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(name))); err == nil {
			t.sizes[name] = fi.Size()
			t.total += fi.Size()
		}
	}
	return t
}

// file returns the offset hook for the next file, which folding starts at
// start (nil when nothing listens).
func (t *buildTicker) file(start int64) func(off int64) {
	if t.report == nil {
		return nil
	}
	t.start = start
	return func(off int64) {
		if done := t.base + off - t.start; done-t.last >= progressStep {
			t.last = done
			t.report(PhaseLog, done, t.total)
		}
	}
}

// fileDone counts a folded file whole.
func (t *buildTicker) fileDone(name string) {
	if t.report != nil {
		t.base += t.sizes[name]
	}
}

// done is the last report.
func (t *buildTicker) done() {
	if t.report != nil {
		t.report(PhaseLog, t.total, t.total)
	}
}
