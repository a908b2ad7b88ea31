package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/sleep"
)

func doctorCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check every lesson and log line; exit non-zero when a lesson needs fixing",
		ArgsUsage: " ",
		Flags: []cli.Flag{storeFlag(), jsonFlag(),
			&cli.BoolFlag{Name: "fix", Usage: "repair what a killed borg left: an interrupted commit, a git index that disagrees with HEAD, uncommitted lesson files, committed ones deleted from disk; move lesson files into their buckets (a stale git lock is named with its fix, never removed)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("doctor takes no arguments")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runDoctor(e, s, c.Bool("json"), c.Bool("fix"))
		},
	}
}

type doctorProblem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type doctorReport struct {
	Store          string          `json:"store"`
	Lessons        int             `json:"lessons"`
	InvalidLessons []doctorProblem `json:"invalid_lessons"`
	// RefusedLessons carry a secret or instruction-like text (doctor_content.go).
	RefusedLessons []doctorProblem `json:"refused_lessons"`
	Log            memfs.LogReport `json:"log"`
	// Index is "ok" or the index's problem with its fix. IndexBroken
	// says a file of it failed its check: doctor fails until --fix (or
	// deleting it) rebuilds it, since a search would silently miss what
	// the broken file held. An index only behind its lessons does not fail.
	Index       string `json:"index"`
	IndexBroken bool   `json:"index_broken,omitempty"`
	// IndexBehind is how many lessons the index does not hold as their
	// files are now (0: up to date); Background is the last background
	// reindex's state, when a hook started one.
	IndexBehind int    `json:"index_behind"`
	Background  string `json:"background,omitempty"`
	// Sync is the last background sync's outcome (BORG_AUTOSYNC).
	Sync string `json:"sync,omitempty"`
	// StoreProblems are warnings about the store as a whole, each with
	// its fix: how it keeps .borg/ out of git (committed private state
	// fails doctor), lessons dated in the future.
	StoreProblems []string `json:"store_problems"`
	// Evidence is each shared log file's check (doctor_log.go);
	// EvidenceUnchecked says why there is none.
	Evidence          []logFileCheck `json:"evidence"`
	EvidenceUnchecked string         `json:"evidence_unchecked,omitempty"`
	// Rewrites are the commits of the store's history that took lines
	// out of a shared log file (deleted it, or wrote a version without
	// lines the one before held): each log file is one machine's own and
	// only grows (memfs.LogRewrites).
	Rewrites []memfs.LogRewrite `json:"log_rewrites,omitempty"`
	// EvidenceMode is "signed" when only evidence from commits with a
	// verified signature counts (git config borg.evidence), else "any";
	// Log.Unsigned counts the lines it leaves out.
	EvidenceMode string `json:"evidence_mode"`
	// Repair is the crash-safety check (doctor_repair.go).
	Repair repairReport `json:"repair"`
	// Layout is the fan-out layout's check (doctor_layout.go).
	Layout layoutReport `json:"layout"`
	// Anchors names each lesson whose anchored file a commit changed since
	// the lesson's file last changed: worth a look (anchorReviews).
	Anchors []string `json:"anchors,omitempty"`
	// Env names each variable the hooks read that is set to a value they
	// cannot use, and what they do instead (hookEnvProblems): a hook
	// fails open, so doctor is where a mistyped setting shows.
	Env []string `json:"env,omitempty"`
	OK  bool     `json:"ok"`
}

// indexBehind is how many lessons a sync of the index would read and
// embed now (every lesson when there is no index yet); it changes nothing.
func indexBehind(s *memfs.Store) int {
	emb, err := newEmbedder()
	if err != nil {
		return 0
	}
	ix, err := index.Open(indexDir(s), emb, indexOptions(s, 0))
	if err != nil {
		return 0 // Verify has said what is wrong
	}
	defer ix.Close()
	// Every lesson file is compared, not only the freshness stamp a
	// command reads: the stamp is lessons/'s time and HEAD, which a file
	// written or deleted by hand in its bucket, uncommitted, leaves alone.
	stamps, err := lessonFileStamps(s)
	if err != nil {
		return 0
	}
	n, _ := ix.Pending(stamps)
	return n
}

// checkLessons reads the store's lessons into rep: their count, the invalid
// ones and the dates in the future. It returns the valid lessons.
func checkLessons(e *env, s *memfs.Store, rep *doctorReport) []domain.Lesson {
	lessons, errs := s.Lessons()
	rep.Lessons = len(lessons)
	now := e.now()
	for _, l := range lessons {
		if !l.Created.IsZero() && domain.BelievedCreated(l.Created, now).IsZero() {
			rep.StoreProblems = append(rep.StoreProblems, fmt.Sprintf("%s: created %s, in the future: the date is not believed (the lesson ages as one without a date); set memhtml-created to when it was written",
				lessonPath(s, l.ID), l.Created.UTC().Format(time.RFC3339)))
		}
	}
	rep.StoreProblems = append(rep.StoreProblems, unearnedSupersedes(s, lessons)...)
	if _, future, err := sleep.LastSleep(context.Background(), s, "HEAD", now); err == nil && !future.IsZero() {
		rep.StoreProblems = append(rep.StoreProblems, fmt.Sprintf("a sleep dated %s, after today, is in the store's history (a clock that ran ahead, or borg sleep --date): sleeps do not believe it and count from the one before it",
			future.Format(time.DateOnly)))
	}
	for _, err := range errs {
		var im *domain.InvalidMemory
		if errors.As(err, &im) {
			rep.InvalidLessons = append(rep.InvalidLessons, doctorProblem{Path: im.Path, Reason: im.Reason})
		} else {
			rep.InvalidLessons = append(rep.InvalidLessons, doctorProblem{Reason: err.Error()})
		}
	}
	return lessons
}

// maxAnchorReviews bounds doctor's list of lessons to review.
const maxAnchorReviews = 20

// anchorReviews lists the lessons whose anchored file a commit changed
// after the lesson's own file last changed (the post-commit hook's notes):
// the lesson may no longer hold. The latest such commit of each, newest
// first; a lesson edited since, or gone, is not listed.
func anchorReviews(s *memfs.Store) []string {
	flags, err := s.AnchorFlags()
	if err != nil {
		return []string{fmt.Sprintf("read the post-commit hook's notes: %v", err)}
	}
	latest := map[string]memfs.AnchorFlag{}
	for _, f := range flags {
		if f.MS >= latest[f.Lesson].MS {
			latest[f.Lesson] = f
		}
	}
	var open []memfs.AnchorFlag
	for id, f := range latest {
		lf, err := s.StatLesson(id)
		if err != nil || lf.ModTime/int64(time.Millisecond) >= f.MS {
			continue
		}
		open = append(open, f)
	}
	sort.Slice(open, func(i, j int) bool {
		if open[i].MS != open[j].MS {
			return open[i].MS > open[j].MS
		}
		return open[i].Lesson < open[j].Lesson
	})
	var out []string
	for i, f := range open {
		if i == maxAnchorReviews {
			out = append(out, fmt.Sprintf("and %d more", len(open)-i))
			break
		}
		out = append(out, fmt.Sprintf("%s: %s, its anchor, changed in commit %.12s on %s; check the lesson still holds (borg show %s), then edit it or retire it (borg no %s)",
			f.Lesson, f.Path, f.Commit, time.UnixMilli(f.MS).UTC().Format("2006-01-02"), f.Lesson, f.Lesson))
	}
	return out
}

// lessonPath is where the file of lesson id is (its bucket, or the flat
// layout), for naming it in a report.
func lessonPath(s *memfs.Store, id string) string {
	if f, err := s.StatLesson(id); err == nil {
		return f.Path
	}
	return memfs.LessonPath(id)
}

// checkIndex verifies the derived index into rep: ok, broken (rebuilt
// with fix, named without), or behind the lessons.
func checkIndex(e *env, s *memfs.Store, rep *doctorReport, fix bool) {
	rep.Index = "ok"
	emb, err := newEmbedder()
	if err != nil {
		rep.Index = err.Error()
		return
	}
	if err := index.Verify(indexDir(s), emb); err != nil {
		if !fix {
			rep.IndexBroken = true
			rep.Index = fmt.Sprintf("%v (derived state: run borg doctor --fix, or delete %s, and it is rebuilt)", err, indexDir(s))
			return
		}
		if rerr := rebuildIndex(e, s); rerr != nil {
			rep.IndexBroken = true
			rep.Index = fmt.Sprintf("%v; the rebuild failed: %v", err, rerr)
			return
		}
		rep.Index = fmt.Sprintf("rebuilt (it was broken: %v)", err)
		return
	}
	if rep.IndexBehind = indexBehind(s); rep.IndexBehind > 0 {
		rep.Index = fmt.Sprintf("behind: %d lesson(s) not indexed as their files are now (run borg recall --sync, or borg reindex; a lesson changed by hand is read at its commit)", rep.IndexBehind)
	}
}

// unearnedSupersedes names each supersedes link a lesson declares that
// does not hold: the two lessons do not state one slot, so the link ranks
// nothing (domain.EarnedSupersedes) though a reader of the file would
// think the older lesson retired.
func unearnedSupersedes(s *memfs.Store, lessons []domain.Lesson) []string {
	gist := make(map[string]string, len(lessons))
	for _, l := range lessons {
		gist[l.ID] = l.Gist
	}
	var out []string
	for _, l := range lessons {
		for _, k := range l.Links {
			old, ok := gist[k.Target]
			if k.Rel != domain.RelSupersedes || !ok || domain.EarnedSupersedes(l.Gist, old, domain.TagHolds(l.Tags)) {
				continue
			}
			out = append(out, fmt.Sprintf("%s: declares that it supersedes %s, but the two do not state one fact with another value, so the link moves nothing in recall or the hooks: restate the newer gist as the older one's claim with the new value, or remove the link",
				lessonPath(s, l.ID), k.Target))
		}
	}
	return out
}

// rebuildIndex deletes the derived index and builds it again from the
// lessons.
func rebuildIndex(e *env, s *memfs.Store) error {
	if err := os.RemoveAll(indexDir(s)); err != nil {
		return err
	}
	r, err := openRetrieval(context.Background(), s, openOptions{force: true, progress: e.err, lockWait: reindexLockWait})
	if err != nil {
		return err
	}
	return r.Close()
}

// printDoctor writes rep for a terminal, one line an item (printLine).
func printDoctor(w io.Writer, rep doctorReport) {
	line := func(format string, args ...any) { printLine(w, format, args...) }
	line("store %s", rep.Store)
	line("lessons: %d valid, %d invalid", rep.Lessons, len(rep.InvalidLessons))
	for _, p := range rep.InvalidLessons {
		if p.Path == "" {
			line("  %s", p.Reason) // the reason names the file
			continue
		}
		line("  %s: %s", p.Path, p.Reason)
	}
	printRefused(w, rep.RefusedLessons)
	line("log: %d files, %d lines, %d events, %d duplicates, %d skipped",
		rep.Log.Files, rep.Log.Lines, rep.Log.Events, rep.Log.Duplicates, len(rep.Log.Skipped))
	for _, sk := range rep.Log.Skipped {
		line("  %s:%d: skipped: %s", sk.File, sk.Line, sk.Reason)
	}
	printLogChecks(w, rep.Evidence)
	printLogRewrites(w, rep.Store, rep.Rewrites)
	if rep.EvidenceMode == "signed" {
		line("evidence: signed only (git config borg.evidence): %d log lines from commits without a verified signature are not counted", rep.Log.Unsigned)
	}
	line("index: %s", rep.Index)
	if rep.Background != "" {
		line("background: %s", rep.Background)
	}
	if rep.Sync != "" {
		line("sync: %s", rep.Sync)
	}
	if rep.EvidenceUnchecked != "" {
		line("evidence: %s", rep.EvidenceUnchecked)
	}
	for _, p := range rep.StoreProblems {
		line("store: %s", p)
	}
	for _, p := range rep.Anchors {
		line("anchor: %s", p)
	}
	for _, p := range rep.Env {
		line("env: %s", p)
	}
	printRepairs(w, rep.Repair)
	printLayout(w, rep.Layout)
}

// printLine writes one line of a report: what it quotes (a file name in
// the store, a teammate's log line, a git message) may hold a newline or a
// tab, which would start a line or a column of its own, a forged line of
// the report on screen; they are written as \n, \r and \t (cellSafe).
// termSafe escapes the other control characters.
func printLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, cellSafe(fmt.Sprintf(format, args...)))
}

// runDoctor validates the store. Invalid lessons are errors a user must fix
// (non-zero exit); skipped log lines are reported but tolerated.
func runDoctor(e *env, s *memfs.Store, asJSON, fix bool) error {
	rep := doctorReport{Store: s.Dir(), InvalidLessons: []doctorProblem{}}
	// A HEAD off the store's branch fails every commit, or starts a
	// history apart from the team's: doctor names it, and --fix repairs
	// nothing until it is back on the branch.
	head := s.HeadProblem(context.Background())
	if head != "" {
		fix = false
	}
	// A lesson written by hand where borg does not read it, and not
	// committed, is moved to its place first: there it is checked and
	// screened as every uncommitted lesson is, and committed when valid.
	var placed []string
	if fix {
		moves, err := s.PlaceUncommitted()
		for _, m := range moves {
			placed = append(placed, fmt.Sprintf("moved %s to %s, where it is read", m.From, m.To))
		}
		if err != nil {
			return fail(exitFail, "%v", err)
		}
	}
	lessons := checkLessons(e, s, &rep)
	rep.RefusedLessons = refusedLessons(s, lessons)
	_, logRep, err := s.ReadEvents()
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	if logRep.Skipped == nil {
		logRep.Skipped = []memfs.SkippedLine{}
	}
	rep.Log = logRep
	rep.EvidenceMode = "any"
	if signed, err := s.SignedEvidence(); signed {
		rep.EvidenceMode = "signed"
		if err != nil {
			rep.StoreProblems = append(rep.StoreProblems, err.Error()+" (until then only signed evidence counts)")
		}
	}
	checkIndex(e, s, &rep, fix)
	if st, ok := readBackgroundStatus(s); ok {
		rep.Background = describeBackground(st, e.now())
	}
	if st, ok := readAutosync(s); ok {
		rep.Sync = describeAutosync(st, e.now())
	}
	rep.Env = hookEnvProblems(e.getenv)
	rep.Anchors = anchorReviews(s)
	problems, leaked := s.Hygiene()
	if head != "" {
		problems = append(problems, head)
	}
	badLogs := s.LogFileProblems()
	problems = append(problems, badLogs...)
	rep.StoreProblems = append(append([]string{}, problems...), rep.StoreProblems...)
	if rep.Evidence, err = checkLogEvidence(context.Background(), s, e.now().UnixMilli(), engineer(e)); err != nil {
		// Who committed what needs git's history; a store git will not
		// read for this user (another user's) is checked without it.
		rep.EvidenceUnchecked = fmt.Sprintf("%v (the log's evidence was not checked against its commits)", err)
	}
	if rep.Rewrites, err = s.LogRewrites(context.Background()); err != nil {
		rep.StoreProblems = append(rep.StoreProblems, fmt.Sprintf("the log's history was not checked for rewritten log files: %v", err))
	}
	// A fix commits no file that holds no valid lesson, nor one the
	// screen refuses: a sync would hand the team its secret.
	held := map[string]string{}
	for _, p := range rep.InvalidLessons {
		held[p.Path] = "it is no valid lesson: fix it as its lessons line says, and borg doctor --fix commits it"
	}
	for _, p := range rep.RefusedLessons {
		held[p.Path] = "the screen refuses it: take out what its content line names, and borg doctor --fix commits it"
	}
	if rep.Repair, err = checkRepairs(s, fix, held); err != nil {
		return fail(exitFail, "%v", err)
	}
	rep.Repair.headOff = head != ""
	rep.Repair.Repaired = append(placed, rep.Repair.Repaired...)
	var moved []memfs.LayoutMove
	if rep.Layout, moved, err = checkLayout(s, fix); err != nil {
		return fail(exitFail, "%v", err)
	}
	moveReport(e, s, &rep, moved)
	rep.OK = len(rep.InvalidLessons) == 0 && len(rep.RefusedLessons) == 0 && !leaked && head == "" && len(badLogs) == 0 && forgedLogs(rep.Evidence) == 0 && rep.Repair.OK && !rep.IndexBroken
	if asJSON {
		if err := writeJSON(e, rep); err != nil {
			return err
		}
	} else {
		printDoctor(e.out, rep)
	}
	if leaked {
		return fail(exitFail, "the store's private state is committed: see the store: line above")
	}
	if head != "" {
		return fail(exitFail, "the store's HEAD is not on its branch: check out the branch as the store: line above says, then run borg doctor again")
	}
	if len(badLogs) > 0 {
		return fail(exitFail, "%d log file(s) are not files: move each out of the way as its store: line says", len(badLogs))
	}
	if len(rep.InvalidLessons) > 0 || len(rep.RefusedLessons) > 0 {
		return fail(exitFail, "%s: fix each one as the reason says, or move it out of lessons/", doctorFailure(len(rep.InvalidLessons), len(rep.RefusedLessons)))
	}
	if n := forgedLogs(rep.Evidence); n > 0 {
		return fail(exitFail, "%d log file(s) hold forged evidence: revert the commits named above and push", n)
	}
	if !rep.Repair.OK {
		return fail(exitFail, "the store needs repair: run borg doctor --fix")
	}
	if rep.IndexBroken {
		return fail(exitFail, "the derived index is broken (see the index: line above): run borg doctor --fix")
	}
	if !asJSON {
		_, err := fmt.Fprintln(e.out, "ok")
		return err
	}
	return nil
}
