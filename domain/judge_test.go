package domain

import (
	"fmt"
	"math"
	"testing"
)

func TestJudgeTallyCredit(t *testing.T) {
	cases := []struct {
		name     string
		tally    JudgeTally
		min, max float64
	}{
		// No placebos yet: the seed's evaluation, 1 − 0.38/0.55.
		{"prior", JudgeTally{}, 0.30, 0.32},
		{"prior, whatever the ask rate", JudgeTally{Asks: 1000, AsksActed: 300}, 0.30, 0.32},
		// An agent that says "applies" of everything and a word rule that
		// fires on chance: placebos read as often as real asks.
		{"yes-sayer", JudgeTally{Asks: 2000, AsksActed: 1200, Placebos: 100, PlacebosActed: 60}, 0, 0.05},
		{"placebos read more than asks", JudgeTally{Asks: 200, AsksActed: 40, Placebos: 50, PlacebosActed: 40}, 0, 0},
		// Placebos almost never read as acted on: most readings count.
		{"a discerning judge", JudgeTally{Asks: 2000, AsksActed: 1000, Placebos: 200, PlacebosActed: 10}, 0.85, 0.92},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.tally.Credit()
			if got < c.min || got > c.max || math.IsNaN(got) {
				t.Errorf("Credit(%+v) = %v, want in [%v, %v]", c.tally, got, c.min, c.max)
			}
		})
	}
}

func TestJudgeTallyAdd(t *testing.T) {
	var tl JudgeTally
	tl.Add(false, true)
	tl.Add(false, false)
	tl.Add(true, true)
	if want := (JudgeTally{Asks: 2, AsksActed: 1, Placebos: 1, PlacebosActed: 1}); tl != want {
		t.Errorf("tally %+v, want %+v", tl, want)
	}
}

func TestDefaultVerdict(t *testing.T) {
	cases := []struct {
		obs    Observation
		credit float64
		kind   EventKind
		w      float64
	}{
		{Observation{Declared: DeclaredApplies}, 0.5, KindIgnored, 0},
		{Observation{Declared: DeclaredApplies, Words: true}, 0.5, KindChanged, 0.5},
		{Observation{Declared: DeclaredNone, Words: true}, 0.31234, KindChanged, 0.312},
		{Observation{Declared: DeclaredSkip, Words: true}, 0.9, KindIgnored, 0},
		{Observation{Declared: DeclaredNone}, 0.9, KindIgnored, 0},
		// A credit of nothing still writes a w a reader takes for (almost)
		// nothing, never the 0 that reads as a full change.
		{Observation{Words: true}, 0, KindChanged, MinCredit},
		{Observation{Words: true}, math.NaN(), KindChanged, MinCredit},
		{Observation{Words: true}, 1, KindChanged, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v@%v", c.obs, c.credit), func(t *testing.T) {
			kind, w := DefaultVerdict(c.obs, c.credit)
			if kind != c.kind || w != c.w {
				t.Errorf("DefaultVerdict = %s %v, want %s %v", kind, w, c.kind, c.w)
			}
			if kind == KindChanged && Credit(w) != w {
				t.Errorf("w %v reads back as credit %v", w, Credit(w))
			}
		})
	}
}

func TestCredit(t *testing.T) {
	for _, c := range []struct{ w, want float64 }{
		{0, 1}, {1, 1}, {2, 1}, {0.25, 0.25}, {MinCredit, MinCredit}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 1},
	} {
		if got := Credit(c.w); got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("Credit(%v) = %v, want %v", c.w, got, c.want)
		}
	}
}

// TestConsolidationNeedsVouchedChanges: a lesson read as changed in many
// sessions by a judge that can vouch for little is not consolidated; the
// same sessions judged in full are; and a lesson acted on about as often as
// ignored is not, however often.
func TestConsolidationNeedsVouchedChanges(t *testing.T) {
	mk := func(n int, w float64, ignored int) []Event {
		var evs []Event
		for i := range n {
			s := fmt.Sprintf("s%03d", i)
			repo := []string{"api", "web"}[i%2]
			evs = append(evs, Event{MS: int64(10 * i), Kind: KindSession, Session: s, Repo: repo, Author: "e-1"},
				Event{MS: int64(10*i + 1), Kind: KindChanged, Session: s, Lesson: "lesson-a", Repo: repo, W: w})
		}
		for i := range ignored {
			s := fmt.Sprintf("t%03d", i)
			evs = append(evs, Event{MS: int64(10000 + 10*i), Kind: KindSession, Session: s, Repo: "api", Author: "e-1"},
				Event{MS: int64(10000 + 10*i + 1), Kind: KindIgnored, Session: s, Lesson: "lesson-a", Repo: "api"})
		}
		return evs
	}
	cases := []struct {
		name   string
		events []Event
		want   bool
	}{
		{"full changes", mk(6, 0, 0), true},
		{"a judge that vouches for a tenth", mk(6, 0.1, 0), false},
		{"enough vouched changes", mk(30, 0.5, 0), true},
		{"acted on as often as ignored", mk(40, 0, 40), false},
		{"two changes", mk(2, 0, 0), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Derive(c.events, []LessonInfo{{ID: "lesson-a"}}, "", DefaultWeights)[0]
			if m.Consolidated != c.want {
				t.Errorf("consolidated %v (changed %d, vouched %.2f, ignored %d), want %v", m.Consolidated, m.Changed, m.Vouched, m.Ignored, c.want)
			}
		})
	}
}
