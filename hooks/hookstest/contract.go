// Package hookstest holds the contract suites of the hooks' small
// interfaces (hooks.Store, hooks.Recaller): the behaviour the hooks rely on,
// run alike against the real implementations (the memfs store, the CLI's
// index-backed recaller) and the test doubles the hooks' own tests use, so a
// double cannot drift from what it stands for.
package hookstest

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/memfs"
)

// Lessons are the lessons the suites give an implementation to hold: three
// about one subject (payments retries), one about another.
func Lessons() []domain.Lesson {
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	mk := func(id, gist, body string) domain.Lesson {
		return domain.Lesson{ID: id, Type: domain.TypeSemantic, Confidence: 0.8, Reach: domain.ReachTeam,
			Author: "e-0123abcd", Created: at, Gist: gist, Body: body}
	}
	return []domain.Lesson{
		mk("payments-gateway-retries-need-jitter-0a01", "Payments gateway retries need jitter.", "Retrying the payments gateway without jitter stampedes it."),
		mk("payments-gateway-timeout-is-thirty-seconds-0a02", "Payments gateway timeout is thirty seconds.", "The payments gateway drops calls after thirty seconds."),
		mk("payments-gateway-retries-stop-after-three-0a03", "Payments gateway retries stop after three attempts.", "A fourth payments gateway retry is refused."),
		mk("stylesheet-colour-tokens-live-in-design-0a04", "Stylesheet colour tokens live in the design folder.", "Colour tokens are defined once, in the design stylesheet."),
	}
}

// query is a recall the payments lessons bear on.
const query = "payments gateway retries jitter timeout"

// StoreContract checks a hooks.Store that open makes holding lessons
// (fresh: no events, no tally).
func StoreContract(t *testing.T, open func(t *testing.T, lessons []domain.Lesson) hooks.Store) {
	t.Run("Lesson", func(t *testing.T) {
		ls := Lessons()
		s := open(t, ls)
		for _, want := range ls {
			got, err := s.Lesson(want.ID)
			if err != nil {
				t.Fatalf("Lesson(%s): %v", want.ID, err)
			}
			if got.ID != want.ID || got.Gist != want.Gist {
				t.Fatalf("Lesson(%s) = %s %q, want %q", want.ID, got.ID, got.Gist, want.Gist)
			}
		}
		if _, err := s.Lesson("no-such-lesson-0000"); err == nil {
			t.Fatal("Lesson of an unknown id: no error")
		}
	})
	t.Run("JudgeTally", func(t *testing.T) {
		s := open(t, Lessons())
		if got, err := s.JudgeTally(); err != nil || got != (domain.JudgeTally{}) {
			t.Fatalf("a fresh store's tally = %+v, %v; want the zero tally (the prior)", got, err)
		}
		up, err := s.UpdateJudgeTally(func(jt *domain.JudgeTally) { jt.Add(true, true) })
		if err != nil {
			t.Fatal(err)
		}
		up, err = s.UpdateJudgeTally(func(jt *domain.JudgeTally) { jt.Add(false, true) })
		if err != nil {
			t.Fatal(err)
		}
		var want domain.JudgeTally
		want.Add(true, true)
		want.Add(false, true)
		if up != want {
			t.Fatalf("two updates return %+v, want %+v", up, want)
		}
		if got, err := s.JudgeTally(); err != nil || got != want {
			t.Fatalf("JudgeTally after the updates = %+v, %v; want %+v", got, err, want)
		}
	})
	t.Run("Append", func(t *testing.T) {
		s := open(t, Lessons())
		if err := s.Append(); err != nil {
			t.Fatalf("Append of nothing: %v", err)
		}
		id := Lessons()[0].ID
		ms := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC).UnixMilli()
		if err := s.Append(
			domain.Event{MS: ms, Kind: domain.KindSession, Session: "contract-session"},
			domain.Event{MS: ms + 1, Kind: domain.KindAsked, Session: "contract-session", Lesson: id},
			domain.Event{MS: ms + 2, Kind: domain.KindPlacebo, Session: "contract-session", Lesson: id, W: 1},
		); err != nil {
			t.Fatalf("Append: %v", err)
		}
	})
}

// RecallerContract checks a hooks.Recaller that open makes over lessons,
// with no outcomes yet.
func RecallerContract(t *testing.T, open func(t *testing.T, lessons []domain.Lesson) hooks.Recaller) {
	ctx := context.Background()
	stored := map[string]domain.Lesson{}
	for _, l := range Lessons() {
		stored[l.ID] = l
	}
	check := func(t *testing.T, got []hooks.Recalled, k int, exclude []string) {
		t.Helper()
		if len(got) > k {
			t.Fatalf("%d lessons for K %d", len(got), k)
		}
		for _, r := range got {
			want, ok := stored[r.Lesson.ID]
			if !ok || r.Lesson.Gist != want.Gist {
				t.Fatalf("recalled %s %q: not a lesson it holds", r.Lesson.ID, r.Lesson.Gist)
			}
			if slices.Contains(exclude, r.Lesson.ID) {
				t.Fatalf("recalled %s, which the query excludes", r.Lesson.ID)
			}
		}
	}
	t.Run("Recall", func(t *testing.T) {
		r := open(t, Lessons())
		got, err := r.Recall(ctx, hooks.RecallQuery{Text: query, K: 2, Session: "contract-session"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatal("no lesson for a query three lessons bear on")
		}
		check(t, got, 2, nil)
		exclude := []string{got[0].Lesson.ID}
		again, err := r.Recall(ctx, hooks.RecallQuery{Text: query, K: 3, Session: "contract-session", Exclude: exclude})
		if err != nil {
			t.Fatal(err)
		}
		check(t, again, 3, exclude)
	})
	t.Run("ConsolidatedOnly", func(t *testing.T) {
		// Early delivery wants consolidated lessons: without outcomes
		// there are none.
		r := open(t, Lessons())
		got, err := r.Recall(ctx, hooks.RecallQuery{Text: query, K: 3, Session: "contract-session", ConsolidatedOnly: true})
		if err != nil || len(got) != 0 {
			t.Fatalf("ConsolidatedOnly without outcomes = %d lessons, %v; want none", len(got), err)
		}
	})
	t.Run("Placebo", func(t *testing.T) {
		r := open(t, Lessons())
		l, ok, err := r.Placebo(ctx, hooks.RecallQuery{Text: query, K: 3, Session: "contract-session"})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if want, held := stored[l.ID]; !held || want.Gist != l.Gist {
				t.Fatalf("placebo %s %q: not a lesson it holds", l.ID, l.Gist)
			}
		}
		empty := open(t, nil)
		if _, ok, err := empty.Placebo(ctx, hooks.RecallQuery{Text: query, K: 3}); err != nil || ok {
			t.Fatalf("placebo of no lessons: ok %v, %v", ok, err)
		}
	})
}

// MemfsStore is a fresh memfs store holding lessons, its git identity set
// and the machine's BORG_ variables unseen.
func MemfsStore(t *testing.T, lessons []domain.Lesson) *memfs.Store {
	t.Helper()
	env := map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
	s, err := memfs.Init(context.Background(), filepath.Join(t.TempDir(), "store"), "",
		memfs.WithEnv(func(k string) string { return env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lessons {
		if err := s.WriteLesson(l); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
