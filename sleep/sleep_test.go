package sleep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestGoldenPhases pins each phase's commit (message and diff) for the
// fixture store: the diff is what a reviewer reads. It embeds with the
// tests' own embedder so a change of the index's default embedder does not
// move the similarities printed here.
func TestGoldenPhases(t *testing.T) {
	st := newFixtureStore(t)
	res, err := Run(t.Context(), st, Options{Date: fixtureDate, Embedder: wordEmbedder{dim: 256}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "plan.txt", strings.ReplaceAll(res.Plan.String(), short(res.Base), "<base>"))
	want := []Phase{PhaseDecay, PhaseReprieve, PhaseMerge, PhaseFrame, PhaseEdges, PhaseRetention}
	if len(res.Commits) != len(want) {
		t.Fatalf("got %d commits, want %d: %+v", len(res.Commits), len(want), res.Commits)
	}
	for i, c := range res.Commits {
		if c.Phase != want[i] {
			t.Errorf("commit %d is phase %s, want %s", i, c.Phase, want[i])
		}
		msg := gitOut(t, st, "log", "-1", "--format=%B", c.Commit)
		diff := gitOut(t, st, "diff", "--no-color", "-M", c.Commit+"~1", c.Commit)
		got := strings.ReplaceAll(msg+"---\n"+diff, res.Base, "<base>")
		checkGolden(t, fmt.Sprintf("%d-%s.txt", c.Number, c.Phase), got)
	}
}

// TestDecayChangesOneLine checks the promise the codec makes to sleep: a
// decay's diff is exactly one meta line.
// A lesson written by hand keeps its markup: its decay is one line too.
func TestDecayChangesOneLine(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "fixture.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	const hand = "pin-go-toolchain-ab12"
	ar.Files = append(ar.Files, txtar.File{Name: memfs.LessonPath(hand), Data: []byte(`<!doctype html>
<html lang="en"><head>
  <meta charset="utf-8">
  <meta name="memhtml-id" content="` + hand + `">
  <meta name="memhtml-type" content="procedural">
  <meta name='memhtml-confidence' content='0.8'>
  <meta name="memhtml-created" content="2026-06-01T00:00:00Z">
  <meta name="memhtml-ticket" content="OPS-12">
</head>
<body><article>
  <p><mark>Always pin the Go toolchain in go.mod</mark></p>
  <p>Why: the <a href="https://go.dev/doc/toolchain">toolchain docs</a> say so.</p>
  <ul><li>step one</li><li>step two</li></ul>
  <!-- reviewer note -->
</article></body></html>
`)})
	st := newStoreWith(t, ar.Files)
	res, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Commits[0]
	stat := gitOut(t, st, "diff", "--numstat", c.Commit+"~1", c.Commit)
	for _, line := range strings.Split(strings.TrimSpace(stat), "\n") {
		if !strings.HasPrefix(line, "1\t1\tlessons/") {
			t.Errorf("decay diff line %q: want one line added and one removed", line)
		}
	}
	if !strings.Contains(stat, memfs.LessonPath(hand)) {
		t.Errorf("the hand-written lesson did not decay: %s", stat)
	}
	after := gitOut(t, st, "show", c.Commit+":"+memfs.LessonPath(hand))
	for _, k := range []string{`<a href="https://go.dev/doc/toolchain">`, "<ul><li>step one</li>", "<!-- reviewer note -->", "memhtml-ticket"} {
		if !strings.Contains(after, k) {
			t.Errorf("the decay dropped %s:\n%s", k, after)
		}
	}
}

// TestDeterminism: the same store, log and date give byte-identical commits
// (same ids, so same trees), and a second run commits nothing.
func TestDeterminism(t *testing.T) {
	a, b := newFixtureStore(t), newFixtureStore(t)
	ra, err := Run(t.Context(), a, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Run(t.Context(), b, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Base != rb.Base {
		t.Fatalf("fixture bases differ: %s %s", ra.Base, rb.Base)
	}
	if len(ra.Commits) == 0 || len(ra.Commits) != len(rb.Commits) {
		t.Fatalf("commit counts %d and %d", len(ra.Commits), len(rb.Commits))
	}
	for i := range ra.Commits {
		if ra.Commits[i].Commit != rb.Commits[i].Commit {
			t.Errorf("phase %s: commit %s vs %s", ra.Commits[i].Phase, ra.Commits[i].Commit, rb.Commits[i].Commit)
		}
		ta := gitOut(t, a, "rev-parse", ra.Commits[i].Commit+"^{tree}")
		tb := gitOut(t, b, "rev-parse", rb.Commits[i].Commit+"^{tree}")
		if ta != tb {
			t.Errorf("phase %s: tree %s vs %s", ra.Commits[i].Phase, ta, tb)
		}
	}

	t.Run("rerun on the branch commits nothing", func(t *testing.T) {
		again, err := Run(t.Context(), a, Options{Date: fixtureDate}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := newCommits(again); n != 0 {
			t.Errorf("second run wrote %d commits", n)
		}
		if again.Tip != ra.Tip {
			t.Errorf("tip moved: %s, was %s", again.Tip, ra.Tip)
		}
	})
	t.Run("rerun after apply commits nothing", func(t *testing.T) {
		applied, err := Run(t.Context(), b, Options{Date: fixtureDate, Apply: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if applied.Merged != "fast-forward" {
			t.Fatalf("merged %q, want fast-forward", applied.Merged)
		}
		again, err := Run(t.Context(), b, Options{Date: fixtureDate}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Commits) != 0 || again.Plan.Note == "" {
			t.Errorf("a second sleep on the same date committed %d (note %q)", len(again.Commits), again.Plan.Note)
		}
	})
}

// TestApplyUpdatesWorktree: --apply fast-forwards the store's branch and its
// files, an eviction included.
func TestApplyUpdatesWorktree(t *testing.T) {
	st := newFixtureStore(t)
	res, err := Run(t.Context(), st, Options{Date: fixtureDate, Apply: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.ResolveRef("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if head != res.Tip {
		t.Fatalf("HEAD %s, want the sleep's tip %s", head, res.Tip)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), filepath.FromSlash(memfs.LessonPath("stale-note")))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("evicted lesson still in lessons/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), filepath.FromSlash(memfs.ArchivePath("stale-note")))); err != nil {
		t.Errorf("evicted lesson not in archive/: %v", err)
	}
	l, err := st.Lesson("cache-ttl-old")
	if err != nil {
		t.Fatal(err)
	}
	if l.Confidence != 0.3 {
		t.Errorf("superseded lesson confidence %v in the worktree, want 0.3", l.Confidence)
	}
	if s := gitOut(t, st, "status", "--porcelain"); s != "" {
		t.Errorf("worktree not clean after apply:\n%s", s)
	}
	next, err := Run(t.Context(), st, Options{Date: fixtureDate.AddDate(0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if next.Plan.LastSleep != "2026-11-30" {
		t.Errorf("the next night's last sleep is %q, want 2026-11-30", next.Plan.LastSleep)
	}
}

// TestApplyMergesWhenMainMoved: when the store's branch moved after the
// sleep branch was made, apply makes a 3-way merge.
func TestApplyMergesWhenMainMoved(t *testing.T) {
	st := newFixtureStore(t)
	if _, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir(), "notes.txt"), []byte("unrelated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit("unrelated", "notes.txt"); err != nil {
		t.Fatal(err)
	}
	// The plan now starts from the moved branch, so the existing branch is
	// foreign; sleep on a fresh branch name and apply.
	res, err := Run(t.Context(), st, Options{Date: fixtureDate, Branch: "borg/sleep/other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir(), "notes.txt"), []byte("changed again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit("unrelated again", "notes.txt"); err != nil {
		t.Fatal(err)
	}
	ff, err := mergeBranch(t.Context(), st, res.Branch, fixtureDate)
	if err != nil {
		t.Fatal(err)
	}
	if ff {
		t.Fatal("merge fast-forwarded a moved branch")
	}
	parents := strings.Fields(gitOut(t, st, "log", "-1", "--format=%P", "HEAD"))
	if len(parents) != 2 {
		t.Fatalf("HEAD has parents %v, want a merge", parents)
	}
	if s := gitOut(t, st, "status", "--porcelain"); s != "" {
		t.Errorf("worktree not clean after the merge:\n%s", s)
	}
}

// TestDryRunWritesNothing: a dry run leaves refs and files as they were.
func TestDryRunWritesNothing(t *testing.T) {
	st := newFixtureStore(t)
	before := gitOut(t, st, "show-ref")
	res, err := Run(t.Context(), st, Options{Date: fixtureDate, DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) != 0 || len(res.Plan.Phases) != len(Phases) {
		t.Errorf("dry run: %d commits, %d phases", len(res.Commits), len(res.Plan.Phases))
	}
	if after := gitOut(t, st, "show-ref"); after != before {
		t.Errorf("refs changed:\n%s\nwas\n%s", after, before)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Plan.String() != res.Plan.String() {
		t.Errorf("the plan does not survive JSON:\n%s", raw)
	}
}

// TestInterruptedSleep kills the sleep after each phase in turn: the store's
// branch never moves, the sleep branch sits at a complete phase commit, and
// a rerun finishes with the commits an uninterrupted sleep makes.
func TestInterruptedSleep(t *testing.T) {
	ref := newFixtureStore(t)
	whole, err := Run(t.Context(), ref, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range whole.Commits {
		t.Run(fmt.Sprintf("after %s", c.Phase), func(t *testing.T) {
			st := newFixtureStore(t)
			base, _ := st.ResolveRef("HEAD")
			_, err := Run(t.Context(), st, Options{Date: fixtureDate, failAfter: c.Number}, nil)
			if err == nil || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("want the injected interruption, got %v", err)
			}
			if head, _ := st.ResolveRef("HEAD"); head != base {
				t.Fatalf("main moved to %s", head)
			}
			tip, err := st.ResolveRef("refs/heads/" + whole.Branch)
			if err != nil || tip != c.Commit {
				t.Fatalf("branch at %s (%v), want the phase commit %s", tip, err, c.Commit)
			}
			if s := gitOut(t, st, "status", "--porcelain"); s != "" {
				t.Errorf("worktree touched:\n%s", s)
			}
			res, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tip != whole.Tip {
				t.Errorf("recovered tip %s, want %s", res.Tip, whole.Tip)
			}
			if n := newCommits(res); n != len(whole.Commits)-i-1 {
				t.Errorf("rerun wrote %d commits, want %d", n, len(whole.Commits)-i-1)
			}
		})
	}
}

// TestForeignBranch: a branch of that name holding something else stops the
// sleep rather than building on it or overwriting it.
func TestForeignBranch(t *testing.T) {
	st := newFixtureStore(t)
	base, _ := st.ResolveRef("HEAD")
	other, err := st.CommitOnRef("refs/heads/borg/sleep/2026-11-30", "", base,
		[]memfs.FileChange{{Path: "notes.txt", Data: []byte("review notes\n")}}, "someone else's", fixtureDate)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), st, Options{Date: fixtureDate}, nil)
	if !errors.Is(err, ErrForeignBranch) {
		t.Fatalf("want ErrForeignBranch, got %v", err)
	}
	if tip, _ := st.ResolveRef("refs/heads/borg/sleep/2026-11-30"); tip != other {
		t.Errorf("branch moved to %s", tip)
	}
}

// TestRacingSleeps: a second sleep started while one runs stops at once
// with ErrBusy (never a git error) and writes nothing; the first one
// finishes. A branch moved under a sleep by another writer stops that sleep
// with ErrRaced and leaves the other writer's commit.
func TestRacingSleeps(t *testing.T) {
	tests := []struct {
		name     string
		intruder func(t *testing.T, st *memfs.Store) error
		want     error // of the sleep the intruder interrupts
		wantIn   error // of the intruder
	}{
		{
			name: "second sleep",
			intruder: func(t *testing.T, st *memfs.Store) error {
				_, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil)
				return err
			},
			wantIn: ErrBusy,
		},
		{
			name: "branch moved",
			intruder: func(t *testing.T, st *memfs.Store) error {
				base, _ := st.ResolveRef("HEAD")
				_, err := st.CommitOnRef("refs/heads/borg/sleep/2026-11-30", "", base,
					[]memfs.FileChange{{Path: "notes.txt", Data: []byte("review notes\n")}}, "someone else's", fixtureDate)
				return err
			},
			want: ErrRaced,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFixtureStore(t)
			var once sync.Once
			var inErr error
			opts := Options{Date: fixtureDate}
			opts.beforeCommit = func(phase int) {
				once.Do(func() { inErr = tt.intruder(t, st) })
			}
			res, err := Run(t.Context(), st, opts, nil)
			if !errors.Is(inErr, tt.wantIn) || (tt.wantIn == nil && inErr != nil) {
				t.Fatalf("the intruder got %v, want %v", inErr, tt.wantIn)
			}
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("the sleep got %v, want %v", err, tt.want)
			}
			if tt.want == nil {
				if tip, _ := st.ResolveRef("refs/heads/" + res.Branch); tip != res.Tip || tip == "" {
					t.Errorf("branch at %s, want the sleep's %s", tip, res.Tip)
				}
			}
			if tt.wantIn != nil && !strings.Contains(inErr.Error(), "another borg sleep is running") {
				t.Errorf("the intruder's message %q does not say another sleep runs", inErr)
			}
		})
	}
}

// TestApplyConflictNeedsPR: when the store's branch changed the same lines,
// the merge is aborted, the store is left as it was, and the error says a
// pull request is needed.
func TestApplyConflictNeedsPR(t *testing.T) {
	st := newFixtureStore(t)
	res, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Lesson("cache-ttl-new")
	if err != nil {
		t.Fatal(err)
	}
	l.Confidence = 0.95
	if err := st.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit("teammate raised confidence", memfs.LessonPath(l.ID)); err != nil {
		t.Fatal(err)
	}
	before, _ := st.ResolveRef("HEAD")
	_, err = mergeBranch(t.Context(), st, res.Branch, fixtureDate)
	if !errors.Is(err, ErrMergeConflict) || !strings.Contains(err.Error(), "pull request") {
		t.Fatalf("want a merge conflict asking for a pull request, got %v", err)
	}
	if after, _ := st.ResolveRef("HEAD"); after != before {
		t.Errorf("HEAD moved to %s", after)
	}
	if s := gitOut(t, st, "status", "--porcelain"); s != "" {
		t.Errorf("worktree left dirty:\n%s", s)
	}
}

// TestFlatLayoutSleeps: a store in the flat layout of earlier borg
// (lessons/<id>.html) sleeps to the same plan as the bucketed fixture; a
// phase rewrites each lesson where it is and archives into archive/'s
// buckets, and a flat copy of a lesson that is also in its bucket is
// skipped, not read twice.
func TestFlatLayoutSleeps(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "fixture.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var flat []txtar.File
	for _, f := range ar.Files {
		if _, id, _, ok := memfs.ParseLessonPath(f.Name); ok {
			f.Name = memfs.LessonsDir + "/" + id + ".html"
		}
		flat = append(flat, f)
	}
	want, err := Run(t.Context(), newFixtureStore(t), Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := newStoreWith(t, flat)
	got, err := Run(t.Context(), st, Options{Date: fixtureDate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Plan.String(), want.Plan.String(); strings.ReplaceAll(g, short(got.Base), "") != strings.ReplaceAll(w, short(want.Base), "") {
		t.Errorf("flat plan differs:\n%s\n--- bucketed ---\n%s", g, w)
	}
	stat := gitOut(t, st, "diff", "--name-status", "-M", got.Base, got.Tip)
	for _, line := range strings.Split(strings.TrimSpace(stat), "\n") {
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "M" && strings.Count(f[1], "/") == 1:
		case strings.HasPrefix(f[0], "R") && strings.Count(f[1], "/") == 1:
			if _, id, flat, ok := memfs.ParseLessonPath(f[2]); !ok || flat || f[2] != memfs.ArchivePath(id) {
				t.Errorf("archived to %s, want archive/<bucket>/", f[2])
			}
		default:
			t.Errorf("sleep of a flat store: %q, want rewrites in place and renames into archive/'s buckets", line)
		}
	}

	// A flat copy beside the bucketed file: the snapshot reads one.
	st = newFixtureStore(t)
	l, err := st.Lesson("stale-note")
	if err != nil {
		t.Fatal(err)
	}
	copyPath := memfs.LessonsDir + "/stale-note.html"
	if err := os.WriteFile(filepath.Join(st.Dir(), copyPath), memfs.Render(l), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit("a flat copy", copyPath); err != nil {
		t.Fatal(err)
	}
	snap, err := LoadSnapshot(t.Context(), st, "HEAD", fixtureDate, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, lf := range snap.Lessons {
		if lf.Lesson.ID == "stale-note" {
			n++
			if lf.Path != memfs.LessonPath("stale-note") {
				t.Errorf("read %s, want the bucketed file", lf.Path)
			}
		}
	}
	if n != 1 || len(snap.Skipped) != 1 || !strings.Contains(snap.Skipped[0], "second copy") {
		t.Errorf("stale-note read %d times; skipped %q", n, snap.Skipped)
	}
}

// TestJSONEmptyLists: a result's and a plan's lists print as [] in JSON,
// never null.
func TestJSONEmptyLists(t *testing.T) {
	dry := func(t *testing.T) any {
		res, err := Run(t.Context(), newFixtureStore(t), Options{Date: fixtureDate, DryRun: true, Embedder: wordEmbedder{dim: 64}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tests := []struct {
		name string
		v    func(t *testing.T) any
		want []string
	}{
		{"a dry run's commits", dry, []string{`"commits":[]`}},
		{"a phase without decisions", func(*testing.T) any { return MakePlan(Snapshot{Date: fixtureDate}, PlanOptions{}) }, []string{`"items":[]`}},
		{"a night already slept", func(*testing.T) any {
			return MakePlan(Snapshot{Date: fixtureDate, LastSleep: fixtureDate}, PlanOptions{})
		}, []string{`"phases":[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.v(t))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "null") {
				t.Errorf("null in %s", data)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("%s lacks %s", data, w)
				}
			}
		})
	}
}

// TestBadBranch: a branch name git refuses (or would read as HEAD or an
// option) stops the sleep before it reads or writes anything.
func TestBadBranch(t *testing.T) {
	st := newFixtureStore(t)
	for _, b := range []string{"HEAD", "refs/heads/HEAD", "-x", "a..b", "sleep tonight"} {
		t.Run(b, func(t *testing.T) {
			_, err := Run(t.Context(), st, Options{Date: fixtureDate, Branch: b, Embedder: wordEmbedder{dim: 64}}, nil)
			if !errors.Is(err, ErrBadBranch) {
				t.Fatalf("Run with --branch %q: %v, want ErrBadBranch", b, err)
			}
		})
	}
	if refs := gitOut(t, st, "for-each-ref", "--format=%(refname)", "refs/heads/"); strings.TrimSpace(refs) != "refs/heads/main" {
		t.Errorf("branches after the refusals: %s", refs)
	}
}

// TestFutureSleepSaidBesideAlreadySlept: a sleep dated after today that is
// in the history is said in the plan even when tonight is already slept
// (by a sleep within the day's slack), so a reviewer learns of it.
func TestFutureSleepSaidBesideAlreadySlept(t *testing.T) {
	st := newFixtureStore(t)
	now := fixtureDate.Add(12 * time.Hour)
	for _, d := range []time.Time{fixtureDate, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, err := Run(t.Context(), st, Options{Date: d, Now: now, Apply: true, Embedder: wordEmbedder{dim: 64}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(t.Context(), st, Options{Date: fixtureDate, Now: now, DryRun: true, Embedder: wordEmbedder{dim: 64}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"already slept on 2026-11-30", "a sleep dated 2099-01-01, after today, is not believed"} {
		if !strings.Contains(res.Plan.Note, w) {
			t.Errorf("the plan's note %q lacks %q", res.Plan.Note, w)
		}
	}
}
