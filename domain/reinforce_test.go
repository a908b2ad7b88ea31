package domain

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestShouldBumpAccess(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { s := now.Add(-d); return &s }
	tests := []struct {
		name string
		last *time.Time
		want bool
	}{
		{"never accessed", nil, true},
		{"exactly 900 s old", at(900 * time.Second), true},
		{"a nanosecond short", at(900*time.Second - 1), false},
		{"long ago", at(24 * time.Hour), true},
		{"just now", at(0), false},
		{"in the future", at(-time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShouldBumpAccess(tt.last, now, ReinforceCooldown); got != tt.want {
				t.Fatalf("ShouldBumpAccess = %v, want %v", got, tt.want)
			}
		})
	}
	if ReinforceCooldown != 900*time.Second {
		t.Fatal("cooldown moved")
	}
}

// TestReinforceCooldownUses: one engineer's changed sessions count as uses
// once per cooldown; another engineer's, or the same one's a cooldown
// later, count again; the belief counts every change. The ledger and the
// summary (built, and taken apart and put together) agree.
func TestReinforceCooldownUses(t *testing.T) {
	const minute = 60 * 1000 // ms
	type session struct {
		at     int64 // ms after the lesson was created
		author string
	}
	tests := []struct {
		name     string
		sessions []session
		uses     int // the creation included
	}{
		{"one author, two sessions a minute apart", []session{{60 * minute, "e-1"}, {61 * minute, "e-1"}}, 2},
		{"one author, a cooldown apart", []session{{60 * minute, "e-1"}, {75 * minute, "e-1"}}, 3},
		{"one author, a millisecond short of it", []session{{60 * minute, "e-1"}, {75*minute - 1, "e-1"}}, 2},
		{"two authors a minute apart", []session{{60 * minute, "e-1"}, {61 * minute, "e-2"}}, 3},
		{"a loop of short sessions", []session{{60 * minute, "e-1"}, {62 * minute, "e-1"}, {64 * minute, "e-1"}, {70 * minute, "e-1"}, {76 * minute, "e-1"}, {77 * minute, "e-1"}}, 3},
		{"cooled from the last counted use, not the last session", []session{{60 * minute, "e-1"}, {70 * minute, "e-1"}, {74 * minute, "e-1"}, {76 * minute, "e-1"}}, 3},
		{"sessions of no known engineer always count", []session{{60 * minute, ""}, {61 * minute, ""}, {62 * minute, UnattributedAuthor}}, 4},
		{"the creation does not cool its author's first use", []session{{0, "e-1"}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := int64(1_000_000_000)
			events := []Event{ev(KindCreated, base, "", "lesson-a", "api", "e-1")}
			for i, s := range tt.sessions {
				id, at := fmt.Sprintf("s%02d", i), base+max(s.at, 1)
				events = append(events, ev(KindSession, at, id, "", "api", s.author),
					ev(KindChanged, at+10, id, "lesson-a", "api", s.author))
			}
			info := []LessonInfo{{ID: "lesson-a"}}
			m := Derive(events, info, "", DefaultWeights)[0]
			if m.Uses != tt.uses || m.Changed != len(tt.sessions) {
				t.Fatalf("ledger: %d uses and %d changes, want %d uses and %d changes", m.Uses, m.Changed, tt.uses, len(tt.sessions))
			}
			l := NewLedger()
			for _, e := range events {
				l.Add(e)
			}
			for _, s := range []*Summary{l.StartSummary().Finish(), reparse(t, l.StartSummary().Finish())} {
				if got := s.Memories(info, "", DefaultWeights)[0]; !reflect.DeepEqual(got, m) {
					t.Fatalf("summary memory\n%+v\nwant the ledger's\n%+v", got, m)
				}
			}
		})
	}
}
