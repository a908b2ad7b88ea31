package domain

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

var propSeed = flag.Uint64("domain.seed", 0, "seed for the domain property tests (0: from the clock)")

// testSeed returns the property-test seed and logs it, so a failure can be
// replayed with -domain.seed.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	s := *propSeed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("property seed %d (replay with -domain.seed=%d)", s, s)
	return s
}

func ev(kind EventKind, ms int64, session, lesson, repo, author string) Event {
	return Event{MS: ms, Kind: kind, Session: session, Lesson: lesson, Repo: repo, Author: author}.WithID()
}

// sessions returns n session events s01.. at ms 100, 200, … in repo.
func sessions(n int, repo func(i int) string) []Event {
	var out []Event
	for i := 1; i <= n; i++ {
		out = append(out, ev(KindSession, int64(i*100), fmt.Sprintf("s%02d", i), "", repo(i), "e-1"))
	}
	return out
}

// with returns a fresh slice holding base and then extra.
func with(base []Event, extra ...Event) []Event {
	return append(append([]Event(nil), base...), extra...)
}

func oneRepo(string) func(int) string { return func(int) string { return "api" } }

func memoryOf(t *testing.T, events []Event, info LessonInfo, session string) Memory {
	t.Helper()
	ms := Derive(events, []LessonInfo{info}, session, DefaultWeights)
	if len(ms) != 1 || ms[0].ID != info.ID {
		t.Fatalf("Derive returned %+v", ms)
	}
	return ms[0]
}

func approx(a, b float64) bool {
	return math.Abs(a-b) < 1e-12 || (math.IsInf(a, -1) && math.IsInf(b, -1))
}

func TestDeriveActivationClock(t *testing.T) {
	team := LessonInfo{ID: "lesson-a", Reach: "team"}
	five := sessions(5, oneRepo(""))
	createdIn := func(s string, ms int64) Event { return ev(KindCreated, ms, s, "lesson-a", "api", "e-1") }
	alternate := sessions(5, func(i int) string {
		if i%2 == 1 {
			return "api"
		}
		return "web"
	})
	tests := []struct {
		name    string
		events  []Event
		info    LessonInfo
		session string
		wantAge int
		tick    int
	}{
		{"created this session", with(sessions(1, oneRepo("")), createdIn("s01", 110)), team, "s01", 1, 1},
		{"next tick counts every later session", with(five, createdIn("s01", 110)), team, "", 5, 1},
		{"unknown session is the next tick", with(five, createdIn("s01", 110)), team, "s-unknown", 5, 1},
		{"as of a middle session", with(five, createdIn("s01", 110)), team, "s03", 3, 1},
		{"a later use is as fresh as can be", with(five, createdIn("s04", 410)), team, "s02", 1, 4},
		{"created event without a session sits by ms", with(five, createdIn("", 250)), team, "", 4, 2},
		{"no created event: CreatedMS places it", five, LessonInfo{ID: "lesson-a", CreatedMS: 250}, "", 4, 2},
		{"no created event, unknown time: the clock's start", five, LessonInfo{ID: "lesson-a"}, "", 6, 0},
		{"repo lesson ages only in its repo", with(alternate, createdIn("s01", 110)), LessonInfo{ID: "lesson-a", Reach: "repo:api"}, "", 3, 1},
		{"repo tags are case-sensitive", with(alternate, createdIn("s01", 110)), LessonInfo{ID: "lesson-a", Reach: "repo:API"}, "", 1, 1},
		{"team lesson ages everywhere", with(alternate, createdIn("s01", 110)), team, "", 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryOf(t, tt.events, tt.info, tt.session)
			want := Activation([]int{tt.wantAge}, 0.5)
			if !approx(m.Activation, want) || m.Uses != 1 || m.LastUseTick != tt.tick {
				t.Fatalf("memory %+v, want activation %v (age %d), 1 use at tick %d", m, want, tt.wantAge, tt.tick)
			}
		})
	}
}

func TestDeriveFreshLesson(t *testing.T) {
	events := with(sessions(1, oneRepo("")), ev(KindCreated, 110, "s01", "lesson-a", "api", "e-1"))
	m := memoryOf(t, events, LessonInfo{ID: "lesson-a"}, "")
	if m.Activation != 0 || m.Mean != 0.5 || m.MeanWeight != 1 || m.Weight != 1 || m.Alpha != 1 || m.Beta != 1 {
		t.Fatalf("fresh lesson %+v: want A 0, mean 0.5, weights 1", m)
	}
	s := memoryOf(t, events, LessonInfo{ID: "lesson-a"}, "s01")
	want := UsefulnessWeight(0, Draw(1, 1, Seed("s01", "lesson-a")))
	if s.Weight != want || s.MeanWeight != 1 {
		t.Fatalf("with session: weight %v, want %v", s.Weight, want)
	}
}

func TestDeriveResults(t *testing.T) {
	base := append(sessions(4, oneRepo("")), ev(KindCreated, 110, "s01", "lesson-a", "", ""))
	r := func(kind EventKind, ms int64, s string) Event { return ev(kind, ms, s, "lesson-a", "", "") }
	tests := []struct {
		name                                              string
		extra                                             []Event
		uses, changed, ignored, corrected, vetoed, tested int
		asked                                             int
		regretted                                         float64
	}{
		{"nothing", nil, 1, 0, 0, 0, 0, 0, 0, 0},
		{"a change is a use", []Event{r(KindChanged, 210, "s02")}, 2, 1, 0, 0, 0, 0, 0, 0},
		{"strongest wins: veto over change", []Event{r(KindChanged, 210, "s02"), r(KindVetoed, 220, "s02")}, 1, 0, 0, 0, 1, 0, 0, 0},
		{"strongest wins: correction over ignore", []Event{r(KindCorrected, 210, "s02"), r(KindIgnored, 220, "s02")}, 1, 0, 0, 1, 0, 0, 0, 0},
		{"change over ignore", []Event{r(KindIgnored, 210, "s02"), r(KindChanged, 220, "s02")}, 2, 1, 0, 0, 0, 0, 0, 0},
		{"one result per session", []Event{r(KindIgnored, 210, "s02"), r(KindIgnored, 220, "s02"), r(KindIgnored, 310, "s03")}, 1, 0, 2, 0, 0, 0, 0, 0},
		{"placebo, unclear and censored are no results", []Event{r(KindPlacebo, 210, "s02"), r(KindUnclear, 220, "s02"), r(KindCensored, 230, "s02")}, 1, 0, 0, 0, 0, 0, 0, 0},
		{"tested adds to a change", []Event{r(KindChanged, 210, "s02"), r(KindTested, 220, "s02"), r(KindTested, 230, "s02")}, 2, 1, 0, 0, 0, 1, 0, 0},
		{"tested is nothing beside a correction", []Event{r(KindCorrected, 210, "s02"), r(KindTested, 220, "s02")}, 1, 0, 0, 1, 0, 0, 0, 0},
		{"tested alone counts", []Event{r(KindTested, 220, "s03")}, 1, 0, 0, 0, 0, 1, 0, 0},
		{"asked per session", []Event{r(KindAsked, 205, "s02"), r(KindAsked, 206, "s02"), r(KindAsked, 305, "s03")}, 1, 0, 0, 0, 0, 0, 2, 0},
		{"a result without a session event still counts", []Event{r(KindChanged, 450, "s-remote")}, 2, 1, 0, 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryOf(t, append(append([]Event(nil), base...), tt.extra...), LessonInfo{ID: "lesson-a"}, "")
			got := []int{m.Uses, m.Changed, m.Ignored, m.Corrected, m.Vetoed, m.Tested, m.Asked}
			want := []int{tt.uses, tt.changed, tt.ignored, tt.corrected, tt.vetoed, tt.tested, tt.asked}
			if !reflect.DeepEqual(got, want) || m.Regretted != tt.regretted {
				t.Fatalf("uses/changed/ignored/corrected/vetoed/tested/asked = %v, want %v (regretted %v)", got, want, m.Regretted)
			}
			b := BeliefOf(m.Changed, m.Ignored, m.Corrected, m.Vetoed, m.Tested, m.Regretted, DefaultWeights)
			if m.Alpha != b.Alpha || m.Beta != b.Beta {
				t.Fatalf("belief α=%v β=%v, want %+v", m.Alpha, m.Beta, b)
			}
		})
	}
}

func TestDeriveRegrets(t *testing.T) {
	base := append(sessions(4, oneRepo("")), ev(KindCreated, 110, "s01", "lesson-a", "", ""))
	regret := func(ms int64, s string, w float64) Event {
		return Event{MS: ms, Kind: KindRegret, Session: s, Lesson: "lesson-a", W: w}.WithID()
	}
	corr := func(ms int64, s, lesson string) Event { return ev(KindCorrected, ms, s, lesson, "", "") }
	tests := []struct {
		name  string
		extra []Event
		want  float64
	}{
		{"one share", []Event{regret(900, "s02", 0.5)}, 0.5},
		{"a share is at most RegretMax", []Event{regret(900, "s02", 1)}, 0.875},
		{"a missing share is a full one", []Event{regret(900, "s02", 0)}, 0.875},
		{"a negative share counts nothing", []Event{regret(900, "s02", -1)}, 0},
		{"an infinite share is a full one", []Event{regret(900, "s02", math.Inf(1))}, 0.875},
		{"a NaN share counts nothing", []Event{regret(900, "s02", math.NaN())}, 0},
		{"each regret once", []Event{regret(900, "s02", 0.5), regret(900, "s02", 0.5)}, 0.5},
		{"capped at one without corrections", []Event{regret(900, "s02", 0.5), regret(901, "s02", 0.5), regret(902, "s02", 0.5)}, 1},
		{"cap per deciding session", []Event{regret(900, "s02", 0.75), regret(901, "s02", 0.75), regret(902, "s03", 0.75)}, 1.75},
		{"cap grows with the session's distinct corrections", []Event{
			corr(210, "s02", "lesson-b"), corr(210, "s02", "lesson-c"), corr(230, "s02", "lesson-d"),
			regret(900, "s02", 0.75), regret(901, "s02", 0.75), regret(902, "s02", 0.75)}, 2},
		{"nothing on top of the lesson's own correction", []Event{corr(210, "s02", "lesson-a"), regret(900, "s02", 0.75)}, 0},
		{"nothing on top of a veto", []Event{ev(KindVetoed, 210, "s02", "lesson-a", "", ""), regret(900, "s02", 0.75)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryOf(t, append(append([]Event(nil), base...), tt.extra...), LessonInfo{ID: "lesson-a"}, "")
			if !approx(m.Regretted, tt.want) {
				t.Fatalf("Regretted = %v, want %v", m.Regretted, tt.want)
			}
		})
	}
}

func TestDeriveConsolidatedAndDormant(t *testing.T) {
	// Sessions a cooldown apart, so that each change is a use.
	changedIn := func(n int, repo func(i int) string, author func(i int) string) []Event {
		var out []Event
		for i := 1; i <= n; i++ {
			s, at := fmt.Sprintf("s%02d", i), int64(i)*ReinforceCooldownS*1000
			out = append(out, ev(KindSession, at, s, "", repo(i), author(i)))
			out = append(out, ev(KindChanged, at+10, s, "lesson-a", "", ""))
		}
		return append(out, ev(KindCreated, 50, "", "lesson-a", "", ""))
	}
	same := func(v string) func(int) string { return func(int) string { return v } }
	two := func(a, b string) func(int) string {
		return func(i int) string {
			if i%2 == 0 {
				return a
			}
			return b
		}
	}
	tests := []struct {
		name   string
		events []Event
		want   bool
	}{
		// Three clean changes meet the seed's count but not the proof (a
		// 99.9% bound on Beta(6, 1) is still under ½); six do.
		{"six sessions, two repos", changedIn(6, two("api", "web"), same("e-1")), true},
		{"six sessions, two engineers", changedIn(6, same("api"), two("e-1", "e-2")), true},
		{"six sessions, one repo, one engineer", changedIn(6, same("api"), same("e-1")), false},
		{"five sessions are not proof", changedIn(5, two("api", "web"), two("e-1", "e-2")), false},
		{"three sessions are not proof", changedIn(3, two("api", "web"), two("e-1", "e-2")), false},
		{"two sessions are not enough", changedIn(2, two("api", "web"), two("e-1", "e-2")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryOf(t, tt.events, LessonInfo{ID: "lesson-a"}, "")
			if m.Consolidated != tt.want {
				t.Fatalf("Consolidated = %v, want %v (%+v)", m.Consolidated, tt.want, m)
			}
		})
	}

	// A consolidated lesson decays with DConsolidated.
	m := memoryOf(t, changedIn(6, two("api", "web"), same("e-1")), LessonInfo{ID: "lesson-a"}, "")
	if want := Activation([]int{7, 6, 5, 4, 3, 2, 1}, 0.3); !approx(m.Activation, want) {
		t.Fatalf("consolidated activation %v, want %v", m.Activation, want)
	}

	dormant := []struct {
		name     string
		sessions int
		want     bool
	}{
		{"53 sessions since the use", 54, false},
		{"54 sessions since the use", 55, true},
	}
	for _, tt := range dormant {
		t.Run(tt.name, func(t *testing.T) {
			events := append(sessions(tt.sessions, oneRepo("")), ev(KindCreated, 110, "s01", "lesson-a", "", ""))
			m := memoryOf(t, events, LessonInfo{ID: "lesson-a"}, "")
			if m.Dormant != tt.want {
				t.Fatalf("Dormant = %v at activation %v, want %v", m.Dormant, m.Activation, tt.want)
			}
		})
	}
}

func TestDeriveLessonsList(t *testing.T) {
	events := append(sessions(2, oneRepo("")), ev(KindChanged, 210, "s02", "lesson-x", "", ""))
	ms := Derive(events, []LessonInfo{{ID: "lesson-c"}, {ID: "lesson-a"}, {ID: "lesson-c"}}, "", DefaultWeights)
	if len(ms) != 2 || ms[0].ID != "lesson-a" || ms[1].ID != "lesson-c" {
		t.Fatalf("Derive = %+v, want lesson-a, lesson-c", ms)
	}
	if got := Derive(nil, nil, "", DefaultWeights); len(got) != 0 {
		t.Fatalf("Derive of nothing = %v", got)
	}
}

func TestLedgerClock(t *testing.T) {
	l := NewLedger()
	l.Add(ev(KindSession, 300, "s-b", "", "api", ""))
	l.Add(ev(KindSession, 100, "s-c", "", "api", ""))
	l.Add(ev(KindSession, 300, "s-a", "", "api", ""))
	l.Add(ev(KindSession, 50, "s-b", "", "api", "")) // the first ms counts
	l.Add(ev(KindTested, 10, "s-t", "lesson-a", "", ""))
	l.Add(ev(KindSession, 10, "", "", "", ""))
	var got []string
	for _, id := range l.newClock().ids {
		got = append(got, l.strs.strs[id])
	}
	if want := []string{"s-b", "s-c", "s-a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("clock = %v, want %v", got, want)
	}
}

// randomEvents builds a log of n events over a few sessions and lessons.
func randomEvents(r *rand.Rand, n int) []Event {
	kinds := []EventKind{KindSession, KindCreated, KindAsked, KindChanged, KindIgnored, KindCorrected,
		KindVetoed, KindTested, KindRegret, KindCensored, KindUnclear, KindPlacebo, KindPassing}
	out := make([]Event, 0, n)
	for i := 0; i < n; i++ {
		e := Event{
			MS:      int64(r.IntN(50)),
			Kind:    kinds[r.IntN(len(kinds))],
			Session: fmt.Sprintf("s%d", r.IntN(8)),
			Lesson:  fmt.Sprintf("lesson-%d", r.IntN(5)),
			Repo:    []string{"api", "web", "API", ""}[r.IntN(4)],
			Author:  []string{"e-1", "e-2", "e-3", UnattributedAuthor, ""}[r.IntN(5)],
		}
		switch e.Kind {
		case KindRegret:
			e.W = []float64{0, 0.25, 0.5, 1}[r.IntN(4)]
		case KindChanged:
			e.W = []float64{0, 0, 0.312, 0.5, 1}[r.IntN(5)]
		}
		if r.IntN(2) == 0 {
			e = e.WithID()
		}
		out = append(out, e)
	}
	return out
}

func propLessons() []LessonInfo {
	return []LessonInfo{{ID: "lesson-0"}, {ID: "lesson-1", Reach: "repo:api"}, {ID: "lesson-2", Reach: "repo:web", CreatedMS: 20},
		{ID: "lesson-3", CreatedMS: 5}, {ID: "lesson-4", Reach: "team"}}
}

func TestDeriveOrderAndDuplicateInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	for round := 0; round < 200; round++ {
		events := randomEvents(r, 1+r.IntN(80))
		for _, session := range []string{"", "s3", "s-none"} {
			want := Derive(events, propLessons(), session, DefaultWeights)
			shuffled := append([]Event(nil), events...)
			for i := 0; i < len(events)/2+1; i++ { // duplicates
				shuffled = append(shuffled, events[r.IntN(len(events))])
			}
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := Derive(shuffled, propLessons(), session, DefaultWeights); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d session %q: shuffled and duplicated log derives\n%+v\nwant\n%+v", round, session, got, want)
			}

			// The ledger of a first part, through its codec (as memfs
			// caches it), folding in the rest with an overlap, derives the
			// same.
			cut := r.IntN(len(events) + 1)
			a := NewLedger()
			for _, e := range events[:cut] {
				a.Add(e)
			}
			b, err := ParseLedger(appendLedger(nil, a))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events[max(0, cut-3):] {
				b.Add(e)
			}
			if got := b.Memories(propLessons(), session, DefaultWeights); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: a cached ledger folding the rest derives\n%+v\nwant\n%+v", round, got, want)
			}
		}
	}
}

func TestLedgerCodecWithOddValues(t *testing.T) {
	l := NewLedger()
	l.Add(Event{MS: 1, Kind: KindRegret, Session: "s1", Lesson: "lesson-a", W: math.NaN()})
	l.Add(Event{MS: 2, Kind: KindRegret, Session: "s1", Lesson: "lesson-a", W: math.Inf(-1)})
	l.Add(Event{MS: 3, Kind: KindPassing, Src: "a", Dst: "b", W: math.Inf(1)})
	l.Add(Event{ID: "not-hex", MS: 4, Kind: KindChanged, Session: "s1", Lesson: "lesson-a", W: math.Inf(1)})
	if _, err := ParseLedger(appendLedger(nil, l)); err != nil {
		t.Fatalf("ledger not encodable: %v", err)
	}
}

func TestLedgerZeroValue(t *testing.T) {
	var l Ledger // the zero value is an empty ledger
	l.Add(ev(KindChanged, 1, "s1", "lesson-a", "", ""))
	if ms := l.Memories([]LessonInfo{{ID: "lesson-a"}}, "", DefaultWeights); ms[0].Changed != 1 {
		t.Fatalf("memories of the zero ledger: %+v", ms)
	}
	var empty Ledger
	if got, err := ParseLedger(appendLedger(nil, &empty)); err != nil || len(got.Memories([]LessonInfo{{ID: "x"}}, "", DefaultWeights)) != 1 {
		t.Fatalf("the zero ledger round trip: %v", err)
	}
}

// benchLog builds a realistic log of about n events: 50 per session over
// 2,000 lessons in five repos.
func benchLog(n int) ([]Event, []LessonInfo) {
	r := rand.New(rand.NewPCG(1, 2))
	const nLessons = 2000
	lessons := make([]LessonInfo, nLessons)
	events := make([]Event, 0, n)
	repos := []string{"api", "web", "infra", "docs", "cli"}
	for i := range lessons {
		lessons[i] = LessonInfo{ID: fmt.Sprintf("lesson-%04d", i)}
		if i%3 == 0 {
			lessons[i].Reach = "repo:" + repos[i%5]
		}
		events = append(events, Event{ID: fmt.Sprintf("c%015x", i), MS: int64(i), Kind: KindCreated, Lesson: lessons[i].ID})
	}
	results := []EventKind{KindChanged, KindIgnored, KindIgnored, KindCorrected, KindVetoed, KindUnclear, KindCensored}
	for s := 0; len(events) < n; s++ {
		session := fmt.Sprintf("s-%016x", s)
		ms := int64(10_000 + s*1000)
		repo, author := repos[s%5], fmt.Sprintf("e-%08x", s%17)
		events = append(events, Event{ID: fmt.Sprintf("a%015x", len(events)), MS: ms, Kind: KindSession, Session: session, Repo: repo, Author: author})
		for k := 0; k < 16 && len(events) < n; k++ {
			lesson := lessons[r.IntN(nLessons)].ID
			events = append(events,
				Event{ID: fmt.Sprintf("b%015x", len(events)), MS: ms + int64(k), Kind: KindAsked, Session: session, Lesson: lesson, Repo: repo},
				Event{ID: fmt.Sprintf("b%015x", len(events)+1), MS: ms + int64(k) + 1, Kind: results[r.IntN(len(results))], Session: session, Lesson: lesson, Repo: repo})
			if k%5 == 0 {
				events = append(events, Event{ID: fmt.Sprintf("b%015x", len(events)+2), MS: ms + 500, Kind: KindTested, Session: session, Lesson: lesson})
			}
			if k%11 == 0 {
				events = append(events, Event{ID: fmt.Sprintf("b%015x", len(events)+3), MS: ms + 900, Kind: KindRegret, Session: session, Lesson: lesson, W: 0.5})
			}
		}
	}
	return events[:n], lessons
}

func BenchmarkDerive1M(b *testing.B) {
	events, lessons := benchLog(1_000_000)
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		ms := Derive(events, lessons, "s-0000000000000100", DefaultWeights)
		if len(ms) != len(lessons) {
			b.Fatal(len(ms))
		}
	}
}

func BenchmarkMemories10kLessons(b *testing.B) {
	events, _ := benchLog(300_000)
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
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		if ms := l.Memories(lessons, "s-0000000000000010", DefaultWeights); len(ms) != len(lessons) {
			b.Fatal(len(ms))
		}
	}
}
