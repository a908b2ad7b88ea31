package domain

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// streamEvents is a log as hooks write it: sessions starting in time order,
// each with its asks, results, tests, corrections and regrets, lessons
// created along the way; with some probability of disorder (a session event
// late or early, a result for a session never started), duplicated lines and
// events of every kind.
func streamEvents(r *rand.Rand, n int, disorder float64) []Event {
	repos := []string{"api", "web", ""}
	authors := []string{"e-1", "e-2", ""}
	var out []Event
	ms := int64(1000)
	var live []string
	for len(out) < n {
		ms += int64(1 + r.IntN(20))
		switch x := r.IntN(10); {
		case x == 0 || len(live) == 0:
			s := fmt.Sprintf("s%03d", len(live)+r.IntN(3))
			at := ms
			if r.Float64() < disorder {
				at -= int64(r.IntN(200))
			}
			out = append(out, Event{MS: at, Kind: KindSession, Session: s, Repo: repos[r.IntN(3)], Author: authors[r.IntN(3)]})
			live = append(live, s)
		case x == 1:
			s := ""
			if len(live) > 0 && r.IntN(2) == 0 {
				s = live[r.IntN(len(live))]
			}
			out = append(out, Event{MS: ms, Kind: KindCreated, Session: s, Lesson: fmt.Sprintf("lesson-%d", r.IntN(7)), Repo: repos[r.IntN(3)]})
		default:
			s := live[max(0, len(live)-1-r.IntN(3))]
			if r.Float64() < disorder/3 {
				s = fmt.Sprintf("s-remote-%d", r.IntN(4))
			}
			kinds := []EventKind{KindAsked, KindAsked, KindChanged, KindChanged, KindIgnored, KindTested,
				KindCorrected, KindVetoed, KindRegret, KindPassing, KindUnclear}
			e := Event{MS: ms, Kind: kinds[r.IntN(len(kinds))], Session: s, Lesson: fmt.Sprintf("lesson-%d", r.IntN(7)),
				Repo: repos[r.IntN(3)], Author: authors[r.IntN(3)]}
			switch e.Kind {
			case KindRegret:
				e.W = []float64{0, 0.25, 0.5, 1}[r.IntN(4)]
			case KindPassing:
				e.Src, e.Dst, e.Lesson = "a", "b", ""
			}
			out = append(out, e)
		}
		if r.Float64() < disorder && len(out) > 0 {
			out = append(out, out[r.IntN(len(out))]) // a duplicated line
		}
	}
	for i := range out {
		if r.IntN(4) > 0 {
			out[i] = out[i].WithID()
		}
	}
	return out
}

// checkSummary compares the summary's memories with Derive over events.
func checkSummary(t *testing.T, s *Summary, events []Event, label string) {
	t.Helper()
	infos := append(propLessons(), LessonInfo{ID: "lesson-5", Reach: "repo:api", CreatedMS: 1500},
		LessonInfo{ID: "lesson-6", Reach: "repo:web"}, LessonInfo{ID: "lesson-9", CreatedMS: 99999})
	shuffled := append([]LessonInfo{infos[3]}, infos...) // unsorted, one duplicate
	doubled := slices.SortedStableFunc(slices.Values(append(slices.Clone(infos), LessonInfo{ID: infos[2].ID, Reach: "repo:other"})),
		func(a, b LessonInfo) int { return strings.Compare(a.ID, b.ID) }) // sorted, one duplicate
	for _, session := range []string{"", "s002", "s-remote-1", "s-none"} {
		want := Derive(events, infos, session, DefaultWeights)
		if got := s.Memories(infos, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s session %q: summary memories\n%+v\nwant\n%+v", label, session, got, want)
		}
		if got := s.Memories(shuffled, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s session %q: summary memories of an unsorted list differ", label, session)
		}
		if got := s.Memories(doubled, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s session %q: summary memories of a sorted list with a duplicate differ", label, session)
		}
		s.Warm(session, DefaultWeights)
		if got := s.Memories(infos, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s session %q: summary memories after Warm differ", label, session)
		}
	}
	s.Warm("s001", DefaultWeights) // for another session: not read
	other := DefaultWeights
	other.RegretMax, other.D = 0.5, 0.4
	if got, want := s.Memories(infos, "", other), Derive(events, infos, "", other); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: summary memories under other weights\n%+v\nwant\n%+v", label, got, want)
	}
}

// TestSummaryFoldMatchesDerive folds random logs into a summary in random
// chunks, round-tripping it through its encoding at random points and
// rebuilding it from the full ledger whenever Fold gives up, and compares its
// memories with Derive over every event so far.
func TestSummaryFoldMatchesDerive(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 7))
	folded, rebuilt := 0, 0
	for round := 0; round < 300; round++ {
		disorder := []float64{0, 0.02, 0.1, 0.5}[round%4]
		events := streamEvents(r, 20+r.IntN(150), disorder)
		l := NewLedger()
		s := l.Summary()
		for done := 0; done < len(events); {
			chunk := events[done:min(len(events), done+1+r.IntN(12))]
			done += len(chunk)
			for _, e := range chunk {
				l.Add(e)
			}
			if s.Fold(chunk) {
				folded++
			} else {
				s = l.Summary()
				rebuilt++
			}
			if r.IntN(3) == 0 {
				data, err := s.AppendBinary(nil)
				if err != nil {
					t.Fatal(err)
				}
				if s, err = ParseSummary(data); err != nil {
					t.Fatalf("round %d: parse: %v", round, err)
				}
			}
			if r.IntN(2) == 0 || done == len(events) {
				checkSummary(t, s, events[:done], fmt.Sprintf("round %d (disorder %v) after %d events", round, disorder, done))
			}
		}
	}
	t.Logf("%d chunks folded, %d rebuilt", folded, rebuilt)
	if folded < 4*rebuilt {
		t.Fatalf("Fold gave up on %d of %d chunks: the fast path is hardly used", rebuilt, folded+rebuilt)
	}
}

// TestSummaryFromShuffledLedger: a summary made from any ledger of the same
// events, in any order and with duplicates, derives the same memories.
func TestSummaryFromShuffledLedger(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 8))
	for round := 0; round < 100; round++ {
		events := randomEvents(r, 1+r.IntN(80))
		shuffled := append([]Event(nil), events...)
		shuffled = append(shuffled, events[:len(events)/3]...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		l := NewLedger()
		for _, e := range shuffled {
			l.Add(e)
		}
		checkSummary(t, l.Summary(), events, fmt.Sprintf("round %d", round))
	}
}

func TestSummaryFoldCases(t *testing.T) {
	base := []Event{
		ev(KindSession, 100, "s1", "", "api", "e-1"),
		ev(KindCreated, 110, "s1", "lesson-a", "", ""),
		ev(KindChanged, 120, "s1", "lesson-a", "", ""),
		ev(KindIgnored, 130, "s1", "lesson-b", "", ""),
		ev(KindSession, 200, "s2", "", "web", "e-2"),
	}
	tests := []struct {
		name   string
		tail   []Event
		folded bool
	}{
		{"a session appended", []Event{ev(KindSession, 300, "s3", "", "api", "e-1")}, true},
		{"the same session again", []Event{base[0]}, true},
		{"a session inserted before the last", []Event{ev(KindSession, 150, "s9", "", "api", "e-1")}, false},
		{"an earlier mark of a known session", []Event{ev(KindSession, 90, "s2", "", "api", "e-1")}, false},
		{"a new result", []Event{ev(KindChanged, 210, "s2", "lesson-b", "", "")}, true},
		{"a weaker result", []Event{ev(KindIgnored, 125, "s1", "lesson-a", "", "")}, true},
		{"a stronger result over an ignore", []Event{ev(KindVetoed, 135, "s1", "lesson-b", "", "")}, true},
		{"a veto overturning a change", []Event{ev(KindVetoed, 135, "s1", "lesson-a", "", "")}, true},
		{"a veto overturning a change of a session that never started", []Event{ev(KindChanged, 250, "s-x", "lesson-a", "", ""), ev(KindVetoed, 260, "s-x", "lesson-a", "", "")}, false},
		{"a second change counted elsewhere", []Event{ev(KindChanged, 210, "s2", "lesson-a", "", ""), ev(KindChanged, 205, "s2", "lesson-a", "", "e-9")}, true},
		{"a duplicate change in a session with repo and author", []Event{ev(KindChanged, 121, "s1", "lesson-a", "", "")}, true},
		{"a result in a session that never started", []Event{ev(KindChanged, 250, "s-x", "lesson-a", "", "")}, true},
		{"a session and its result in one batch", []Event{ev(KindChanged, 250, "s-x", "lesson-a", "", ""), ev(KindSession, 260, "s-x", "", "", "")}, true},
		{"a session starting before a use placed by ms", []Event{ev(KindCreated, 400, "", "lesson-c", "", ""), ev(KindSession, 300, "s3", "", "", "")}, true},
		{"asked, tested, regret, correction", []Event{ev(KindAsked, 210, "s2", "lesson-a", "", ""), ev(KindTested, 220, "s2", "lesson-a", "", ""),
			ev(KindRegret, 230, "s1", "lesson-b", "", ""), ev(KindCorrected, 240, "s1", "lesson-c", "", "")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger()
			for _, e := range base {
				l.Add(e)
			}
			s := l.Summary()
			if got := s.Fold(tt.tail); got != tt.folded {
				t.Fatalf("Fold = %v, want %v", got, tt.folded)
			}

			if !tt.folded {
				return
			}
			all := with(base, tt.tail...)
			infos := []LessonInfo{{ID: "lesson-a"}, {ID: "lesson-b", Reach: "repo:api"}, {ID: "lesson-c"}}
			for _, session := range []string{"", "s1", "s3"} {
				if got, want := s.Memories(infos, session, DefaultWeights), Derive(all, infos, session, DefaultWeights); !reflect.DeepEqual(got, want) {
					t.Fatalf("session %q: memories\n%+v\nwant\n%+v", session, got, want)
				}
			}
		})
	}
}

// TestSummaryFoldLateSession: a session event arriving after a result of
// its session was placed by ms would move that use; only the full ledger can.
func TestSummaryFoldLateSession(t *testing.T) {
	l := NewLedger()
	for _, e := range []Event{ev(KindSession, 100, "s1", "", "api", "e-1"), ev(KindChanged, 250, "s-x", "lesson-a", "", "")} {
		l.Add(e)
	}
	if l.Summary().Fold([]Event{ev(KindSession, 260, "s-x", "", "", "")}) {
		t.Fatal("Fold accepted a session whose uses were placed by ms")
	}
	if l.Summary().Fold([]Event{ev(KindSession, 240, "s-y", "", "", "")}) {
		t.Fatal("Fold accepted a session starting before a use placed by ms")
	}
	if !l.Summary().Fold([]Event{ev(KindSession, 251, "s-y", "", "", "")}) {
		t.Fatal("Fold refused a session starting after every use")
	}
}

func TestParseSummaryRejectsJunk(t *testing.T) {
	l := NewLedger()
	for _, e := range streamEvents(rand.New(rand.NewPCG(1, 2)), 200, 0.1) {
		l.Add(e)
	}
	data, err := l.Summary().AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"wrong magic", append([]byte("XXXX"), data[4:]...)},
		{"truncated", data[:len(data)-5]},
		{"trailing bytes", append(append([]byte(nil), data...), 0)},
		{"half", data[:len(data)/2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseSummary(tt.data); err == nil {
				t.Fatal("ParseSummary accepted junk")
			}
		})
	}
}

func FuzzParseSummary(f *testing.F) {
	l := NewLedger()
	for _, e := range streamEvents(rand.New(rand.NewPCG(3, 4)), 60, 0.1) {
		l.Add(e)
	}
	data, err := l.Summary().AppendBinary(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(summaryMagic))
	infos := append(propLessons(), LessonInfo{ID: "lesson-6", Reach: "repo:web"})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSummary(data)
		if err != nil {
			return
		}
		// Whatever parses must be usable: derive, fold and encode again.
		s.Memories(infos, "s001", DefaultWeights)
		s.Fold([]Event{ev(KindSession, 1<<40, "s-new", "", "api", ""), ev(KindChanged, 1<<40, "s-new", "lesson-1", "", ""),
			ev(KindCreated, 5, "", "lesson-2", "", "")})
		if _, err := s.AppendBinary(nil); err != nil {
			t.Fatal(err)
		}
	})
}

// benchSummary is the summary of a 1M-event log.
func benchSummary(b *testing.B) (*Summary, []LessonInfo) {
	events, _ := benchLog(1_000_000)
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	lessons := make([]LessonInfo, 10_000)
	for i := range lessons {
		lessons[i] = LessonInfo{ID: fmt.Sprintf("lesson-%04d", i%2000)}
		if i >= 2000 {
			lessons[i].ID = fmt.Sprintf("lesson-x%05d", i)
		}
	}
	data, err := l.Summary().AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := ParseSummary(data)
	if err != nil {
		b.Fatal(err)
	}
	return s, lessons
}

func BenchmarkSummaryMemories10kLessons1M(b *testing.B) {
	s, lessons := benchSummary(b)
	b.ResetTimer()
	for b.Loop() {
		if ms := s.Memories(lessons, "s-0000000000000010", DefaultWeights); len(ms) != len(lessons) {
			b.Fatal(len(ms))
		}
	}
}

func BenchmarkParseSummary1M(b *testing.B) {
	s, _ := benchSummary(b)
	data, err := s.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseSummary(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSummaryWarmManyLessons: Warm derives in parallel over many lessons and
// gives the memories Derive does.
func TestSummaryWarmManyLessons(t *testing.T) {
	events, lessons := benchLog(40_000)
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	s := l.Summary()
	for _, session := range []string{"", "s-0000000000000010"} {
		if got, want := s.Memories(lessons, session, DefaultWeights), l.Memories(lessons, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("session %q: memories differ from the ledger's", session)
		}
		s.Warm(session, DefaultWeights)
		if got, want := s.Memories(lessons, session, DefaultWeights), l.Memories(lessons, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("session %q: warmed memories differ from the ledger's", session)
		}
	}
}
