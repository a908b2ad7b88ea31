package domain

import (
	"fmt"
	"reflect"
	"testing"
)

// vouching builds a log where each author in by changes lesson-t in n
// sessions of their own (sessions in two repos), plus extra events.
func vouching(by map[string]int, extra ...Event) []Event {
	var out []Event
	i := 0
	for _, a := range []string{"e-a", "e-b", "e-c", "e-f", UnattributedAuthor, ""} {
		for range by[a] {
			i++
			s := fmt.Sprintf("s%03d", i)
			repo := []string{"api", "web"}[i%2]
			out = append(out, ev(KindSession, int64(i*100), s, "", repo, a),
				ev(KindAsked, int64(i*100+1), s, "lesson-t", repo, a),
				ev(KindChanged, int64(i*100+2), s, "lesson-t", repo, a))
		}
	}
	return append(out, extra...)
}

func TestEarlyTrusted(t *testing.T) {
	tests := []struct {
		name         string
		events       []Event
		engineer     string
		consolidated bool
		trusted      bool
	}{
		{"a single forger's made-up sessions", vouching(map[string]int{"e-f": 8}), "e-a", true, false},
		{"a single forger, unknown engineer", vouching(map[string]int{"e-f": 8}), "", true, false},
		{"a forger and one real session of another", vouching(map[string]int{"e-f": 12, "e-b": 1}), "e-a", true, false},
		{"two real authors", vouching(map[string]int{"e-a": 6, "e-b": 6}), "e-c", true, true},
		{"three authors, the largest removed", vouching(map[string]int{"e-a": 10, "e-b": 3, "e-c": 3}), "e-f", true, true},
		{"the engineer's own evidence stays", vouching(map[string]int{"e-a": 7}), "e-a", true, true},
		{"the engineer's own beside a forger's", vouching(map[string]int{"e-a": 6, "e-f": 20}), "e-a", true, true},
		{"changes no one is known to have made count as one author", vouching(map[string]int{"": 8}), "e-a", true, false},
		{"not consolidated", vouching(map[string]int{"e-a": 2, "e-b": 2}), "e-c", false, false},
		// A forger's lines, half attributed before a hook's last refresh
		// and half after: the unattributed half cannot pass for a second
		// pusher.
		{"a forger split by a refresh", vouching(map[string]int{"e-f": 6, UnattributedAuthor: 6}), "e-a", true, false},
		{"unattributed changes beside two real authors", vouching(map[string]int{"e-a": 6, "e-b": 6, UnattributedAuthor: 6}), "e-c", true, true},
		{"against-evidence weighs on the rest", vouching(map[string]int{"e-a": 6, "e-b": 6},
			ev(KindIgnored, 9000, "s900", "lesson-t", "api", "e-c"), ev(KindIgnored, 9001, "s901", "lesson-t", "api", "e-c")), "e-c", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := LessonInfo{ID: "lesson-t"}
			l := NewLedger()
			for _, e := range tt.events {
				l.Add(e)
			}
			m := l.Memories([]LessonInfo{info}, "", DefaultWeights)[0]
			if m.Consolidated != tt.consolidated {
				t.Fatalf("Consolidated = %v, want %v (%+v)", m.Consolidated, tt.consolidated, m)
			}
			if got := EarlyTrusted(m, tt.engineer, DefaultWeights); got != tt.trusted {
				t.Fatalf("EarlyTrusted(%q) = %v, want %v (top %+v)", tt.engineer, got, tt.trusted, m.TopVouchers)
			}
			// The summary, taken apart and put together, says the same.
			p := reparse(t, l.StartSummary().Finish())
			if sm := p.Memories([]LessonInfo{info}, "", DefaultWeights)[0]; !reflect.DeepEqual(sm, m) {
				t.Fatalf("summary memory\n%+v\nwant\n%+v", sm, m)
			}
		})
	}
}

func TestTopVouchersOrder(t *testing.T) {
	events := vouching(map[string]int{"e-a": 2, "e-b": 3, "e-c": 3})
	events = append(events, Event{MS: 99999, Kind: KindChanged, Session: "s-half", Lesson: "lesson-t", W: 0.5, Author: "e-c"}.WithID())
	m := Derive(events, []LessonInfo{{ID: "lesson-t"}}, "", DefaultWeights)[0]
	want := [2]AuthorVouch{{"e-c", 3.5}, {"e-b", 3}}
	if m.TopVouchers != want {
		t.Fatalf("TopVouchers = %+v, want %+v", m.TopVouchers, want)
	}
}
