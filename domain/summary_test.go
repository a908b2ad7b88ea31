package domain

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
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
			case KindChanged:
				e.W = []float64{0, 0, 0.312, 0.5, 1}[r.IntN(5)]
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

// memSource is a SummarySource over records in memory, as a codec's is
// over bytes: a lesson's record is copied out when the summary asks for
// it. bad makes lesson bad's record read as corrupt (−1: none).
type memSource struct {
	recs []SummaryRecord
	bad  int
}

func (m *memSource) Len() int        { return len(m.recs) }
func (m *memSource) ID(i int) []byte { return []byte(m.recs[i].ID) }
func (m *memSource) Record(i int, r *SummaryRecord) bool {
	if i == m.bad {
		return false
	}
	*r = m.recs[i]
	r.ID = ""
	r.Repos, r.Authors, r.Uses = slices.Clone(r.Repos), slices.Clone(r.Authors), slices.Clone(r.Uses)
	return true
}
func (m *memSource) Mark([]byte) (Mark, bool) { return Mark{}, false }
func (m *memSource) Evidence([]byte) (map[string]RegretMark, map[string]map[int64]bool, bool) {
	return nil, nil, false
}

// partsOf is the summary's parts, cloned (Parts shares the summary's
// memory), with Source cleared; false when it is corrupt.
func partsOf(s *Summary) (SummaryParts, bool) {
	p, ok := s.Parts()
	if !ok {
		return p, false
	}
	p.Source = nil
	p.Vals, p.Keys, p.Passings = slices.Clone(p.Vals), slices.Clone(p.Keys), slices.Clone(p.Passings)
	p.ClockMS, p.ClockRepo, p.ClockBy = slices.Clone(p.ClockMS), slices.Clone(p.ClockRepo), slices.Clone(p.ClockBy)
	p.Lessons = slices.Clone(p.Lessons)
	for i := range p.Lessons {
		r := &p.Lessons[i]
		r.Repos, r.Authors, r.Uses = slices.Clone(r.Repos), slices.Clone(r.Authors), slices.Clone(r.Uses)
	}
	p.Regrets = maps.Clone(p.Regrets)
	p.Corrections = maps.Clone(p.Corrections)
	for k, v := range p.Corrections {
		p.Corrections[k] = maps.Clone(v)
	}
	return p, true
}

// reparse takes the summary apart and puts it together again over a
// memSource, as a codec does (memfs tests the bytes).
func reparse(t testing.TB, s *Summary) *Summary {
	t.Helper()
	p, ok := partsOf(s)
	if !ok {
		t.Fatal("Parts: the summary is corrupt")
	}
	src := &memSource{recs: p.Lessons, bad: -1}
	p.Lessons, p.Source = nil, src
	out, ok := FromParts(p)
	if !ok {
		t.Fatal("FromParts refused a summary's parts")
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
	}
	other := DefaultWeights
	other.RegretMax, other.D = 0.5, 0.4
	if got, want := s.Memories(infos, "", other), Derive(events, infos, "", other); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: summary memories under other weights\n%+v\nwant\n%+v", label, got, want)
	}
}

// TestSummaryFoldMatchesDerive folds random logs into a summary in random
// chunks, taking it apart and putting it together (Parts, FromParts) at
// random points and
// rebuilding it from the full ledger whenever Fold gives up, and compares its
// memories with Derive over every event so far.
func TestSummaryFoldMatchesDerive(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 7))
	folded, rebuilt := 0, 0
	for round := 0; round < 300; round++ {
		disorder := []float64{0, 0.02, 0.1, 0.5}[round%4]
		events := streamEvents(r, 20+r.IntN(150), disorder)
		l := NewLedger()
		s := l.StartSummary().Finish()
		for done := 0; done < len(events); {
			chunk := events[done:min(len(events), done+1+r.IntN(12))]
			done += len(chunk)
			for _, e := range chunk {
				l.Add(e)
			}
			if s.Fold(chunk) {
				folded++
			} else {
				s = l.StartSummary().Finish()
				rebuilt++
			}
			if r.IntN(3) == 0 {
				s = reparse(t, s)
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
		checkSummary(t, l.StartSummary().Finish(), events, fmt.Sprintf("round %d", round))
	}
}

// TestParsedSummaryLazy: a summary put together over a source decodes a
// lesson when first asked for; whatever lessons it is asked for, in
// whatever order, it derives the memories the summary it was taken apart
// from does, folds as it does, and comes apart into the same parts however
// few of its lessons it has decoded.
func TestParsedSummaryLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 9))
	untouched, folds := 0, 0
	for round := 0; round < 200; round++ {
		events := streamEvents(r, 20+r.IntN(300), []float64{0, 0.02, 0.1}[round%3])
		// Spread the events over many more lessons (as a function of the
		// event, so that duplicated lines stay duplicates).
		var ids []string
		for i, e := range events {
			if e.Lesson == "" {
				continue
			}
			e.Lesson = fmt.Sprintf("%s-%02d", e.Lesson, e.MS%37)
			if e.ID != "" {
				e.ID = ""
				e = e.WithID()
			}
			events[i] = e
			ids = append(ids, e.Lesson)
		}
		ids = append(ids, "", "a", "lesson-0-99", "zz") // none has evidence
		slices.Sort(ids)
		ids = slices.Compact(ids)
		cut := len(events) - r.IntN(len(events)/3+1)
		l := NewLedger()
		for _, e := range events[:cut] {
			l.Add(e)
		}
		mem := l.StartSummary().Finish()
		data, ok := partsOf(mem)
		if !ok {
			t.Fatal("Parts: corrupt")
		}
		clone := func(p SummaryParts) SummaryParts {
			s, ok := FromParts(p)
			if !ok {
				t.Fatal("FromParts refused parts")
			}
			p, _ = partsOf(s)
			return p
		}
		parse := func() *Summary {
			t.Helper()
			p := clone(data)
			p.Source, p.Lessons = &memSource{recs: p.Lessons, bad: -1}, nil
			s, ok := FromParts(p)
			if !ok {
				t.Fatalf("round %d: FromParts refused parts", round)
			}
			return s
		}
		p := parse()
		if tail := events[cut:]; len(tail) > 0 && r.IntN(2) == 0 {
			// Folded before any query: Fold decodes the lessons it touches.
			okMem, okP := mem.Fold(tail), p.Fold(tail)
			if okMem != okP {
				t.Fatalf("round %d: Fold = %v on the parsed summary, %v on its source", round, okP, okMem)
			}
			if okMem {
				folds++
			} else {
				// Rebuilt (and encoded again: a ledger's summary holds
				// its tallies in map order).
				mem = l.StartSummary().Finish()
				if data, ok = partsOf(mem); !ok {
					t.Fatal("Parts: corrupt")
				}
				p = parse()
			}
		}

		reaches := []string{"", "team", ReachRepoPrefix + "api", ReachRepoPrefix + "web"}
		for q := 0; q < 1+r.IntN(6); q++ {
			var infos []LessonInfo
			for range 1 + r.IntN(max(1, len(ids)/4)) {
				info := LessonInfo{ID: ids[r.IntN(len(ids))], Reach: reaches[r.IntN(len(reaches))]}
				if r.IntN(4) == 0 {
					info.CreatedMS = int64(1000 + r.IntN(3000))
				}
				infos = append(infos, info)
			}
			session := []string{"", "s001", "s002", "s-remote-1", "s-none"}[r.IntN(5)]
			w := DefaultWeights
			if r.IntN(4) == 0 {
				w.RegretMax, w.D = 0.5, 0.4
			}
			if got, want := p.Memories(infos, session, w), mem.Memories(infos, session, w); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d query %d: parsed summary memories\n%+v\nwant\n%+v", round, q, got, want)
			}
		}
		for i := range p.count() {
			if p.get(i) == nil {
				untouched++
			}
		}

		want, ok := partsOf(mem)
		if !ok {
			t.Fatal("Parts: corrupt")
		}
		got, ok := partsOf(p) // of a partially decoded summary
		if !ok {
			t.Fatalf("round %d: Parts: corrupt", round)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: a partially decoded summary comes apart other than its source", round)
		}
		// Untouched, a parsed summary comes apart into the parts it was put
		// together from; a few lessons touched or all, the same.
		some, all := parse(), parse()
		for range r.IntN(4) {
			if some.count() > 0 {
				some.at(r.IntN(some.count()))
			}
		}
		if !all.loadAll() {
			t.Fatalf("round %d: a summary Parts took apart reads as corrupt", round)
		}
		for _, s := range []*Summary{parse(), some, all} {
			if b, ok := partsOf(s); !ok || !reflect.DeepEqual(b, data) {
				t.Fatalf("round %d: a parsed summary does not come apart into the parts it was put together from (%v)", round, ok)
			}
		}
	}
	t.Logf("%d lessons never decoded, %d tails folded", untouched, folds)
	if untouched == 0 || folds == 0 {
		t.Fatal("the test never left a lesson undecoded or never folded")
	}
}

// TestParsedSummaryCorrupt: a summary put together over a source checks a
// lesson's record, and the order of the ids, when it decodes them. A
// corrupt record reads as a lesson without evidence; Fold then reports
// false and Parts too, so that the caller rebuilds rather than keeps it.
func TestParsedSummaryCorrupt(t *testing.T) {
	l := NewLedger()
	for _, e := range streamEvents(rand.New(rand.NewPCG(5, 6)), 300, 0.05) {
		l.Add(e)
	}
	clean := l.StartSummary().Finish()
	infos := propLessons()
	// corrupted puts the summary together over a source that corrupt
	// spoils at lesson-2's index.
	corrupted := func(corrupt func(src *memSource, i int)) *Summary {
		t.Helper()
		p, ok := partsOf(clean)
		if !ok {
			t.Fatal("Parts: corrupt")
		}
		src := &memSource{recs: p.Lessons, bad: -1}
		p.Source, p.Lessons = src, nil
		i := slices.IndexFunc(src.recs, func(r SummaryRecord) bool { return r.ID == "lesson-2" })
		if i < 0 {
			t.Fatal("lesson-2 has no evidence")
		}
		corrupt(src, i)
		s, ok := FromParts(p)
		if !ok {
			t.Fatal("FromParts refused parts")
		}
		return s
	}
	check := func(t *testing.T, s *Summary, want []Memory) {
		t.Helper()
		if got := s.Memories(infos, "", DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("memories\n%+v\nwant\n%+v", got, want)
		}
		if s.Fold(nil) {
			t.Fatal("Fold folded into a corrupt summary")
		}
		if _, ok := s.Parts(); ok {
			t.Fatal("Parts took a corrupt summary apart")
		}
	}

	t.Run("record", func(t *testing.T) {
		s := corrupted(func(src *memSource, i int) { src.bad = i })
		want := clean.Memories(infos, "", DefaultWeights)
		none := clean.Memories([]LessonInfo{{ID: "lesson-none", Reach: infos[2].Reach, CreatedMS: infos[2].CreatedMS}}, "", DefaultWeights)[0]
		none.ID = infos[2].ID
		want[2] = none // read as a lesson without evidence
		check(t, s, want)
	})
	t.Run("ids out of order", func(t *testing.T) {
		s := corrupted(func(src *memSource, i int) {
			src.recs[i].ID = "lesson-9" // after lesson-3
		})
		// Searched out of order, the ids find what they find (lesson-2
		// and the lessons after it are not found), but seek sees the
		// order broken next to where it lands.
		want := clean.Memories(infos[:2], "", DefaultWeights)
		for _, info := range infos[2:] {
			none := clean.Memories([]LessonInfo{{ID: "lesson-none", Reach: info.Reach, CreatedMS: info.CreatedMS}}, "", DefaultWeights)[0]
			none.ID = info.ID
			want = append(want, none)
		}
		check(t, s, want)
	})
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
		{"a second change counted under its session's author", []Event{ev(KindChanged, 210, "s2", "lesson-a", "", ""), ev(KindChanged, 205, "s2", "lesson-a", "", "e-2")}, true},
		// The result's own author counts: the lesser mark now counts under
		// e-9, which only the full ledger can tell.
		{"a second change by another author", []Event{ev(KindChanged, 210, "s2", "lesson-a", "", ""), ev(KindChanged, 205, "s2", "lesson-a", "", "e-9")}, false},
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
			s := l.StartSummary().Finish()
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
	if l.StartSummary().Finish().Fold([]Event{ev(KindSession, 260, "s-x", "", "", "")}) {
		t.Fatal("Fold accepted a session whose uses were placed by ms")
	}
	if l.StartSummary().Finish().Fold([]Event{ev(KindSession, 240, "s-y", "", "", "")}) {
		t.Fatal("Fold accepted a session starting before a use placed by ms")
	}
	if !l.StartSummary().Finish().Fold([]Event{ev(KindSession, 251, "s-y", "", "", "")}) {
		t.Fatal("Fold refused a session starting after every use")
	}
}

// benchSummary is the summary of a 1M-event log, put together over a
// source.
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
	return reparse(b, l.StartSummary().Finish()), lessons
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

// TestSummaryManyLessons: Memories derives in parallel over many lessons and
// gives the memories the ledger does.
func TestSummaryManyLessons(t *testing.T) {
	events, lessons := benchLog(40_000)
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	s := l.StartSummary().Finish()
	for _, session := range []string{"", "s-0000000000000010"} {
		if got, want := s.Memories(lessons, session, DefaultWeights), l.Memories(lessons, session, DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("session %q: memories differ from the ledger's", session)
		}
	}
}

// TestSummaryLessonLinks: the lesson → lesson links a summary gives the
// lateral arm are those the ledger's passings fold to, whether the summary
// was made from the ledger, folded event by event, or encoded and parsed;
// passings from or to a tool or a proto are not lesson links.
func TestSummaryLessonLinks(t *testing.T) {
	const day = 86_400_000
	events := []Event{
		{MS: 1 * day, Kind: KindPassing, Session: "s-1", Src: "retry-backoff-0001", SrcV: "c-a1", Dst: "timeouts-ctx-0002", DstV: "c-b1"},
		{MS: 2 * day, Kind: KindPassing, Session: "s-2", Src: "retry-backoff-0001", SrcV: "c-a1", Dst: "timeouts-ctx-0002", DstV: "c-b1"},
		{MS: 2 * day, Kind: KindPassing, Session: "s-2", Src: "timeouts-ctx-0002", SrcV: "c-b1", Dst: "pool-size-0003", DstV: "c-c1"},
		{MS: 3 * day, Kind: KindPassing, Session: "s-3", Src: "Bash:go", Dst: "Edit"},
		{MS: 3 * day, Kind: KindPassing, Session: "s-3", Src: "Bash:make", Dst: "make:migrate", DstV: ProtoVersion},
		{MS: 3 * day, Kind: KindSession, Session: "s-3"},
	}
	for i := range events {
		events[i] = events[i].WithID()
	}
	now := int64(4 * day)
	want := LinkEdges(FoldLinks(events[:3]), now)
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	fromLedger := l.StartSummary().Finish()
	folded := NewSummary()
	for _, e := range events {
		if !folded.Fold([]Event{e}) {
			t.Fatal("a passing could not be folded")
		}
	}
	parsed := reparse(t, fromLedger)
	for name, s := range map[string]*Summary{"ledger": fromLedger, "folded": folded, "parsed": parsed} {
		if got := s.LessonLinks(now); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LessonLinks = %+v, want %+v", name, got, want)
		}
	}
	if len(want) != 2 {
		t.Fatalf("want two lesson links, got %+v", want)
	}
}

// TestSortKeyRecs: the in-place bucket sort orders records as a plain sort
// does, whether the keys spread over every bucket, crowd into a few or
// repeat.
func TestSortKeyRecs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	spread := func(n int) []keyRec {
		recs := make([]keyRec, n)
		for i := range recs {
			recs[i] = keyRec{r.Uint64(), r.Uint32(), uint32(i)}
		}
		return recs
	}
	crowded := func(n int) []keyRec {
		recs := make([]keyRec, n)
		for i := range recs {
			// Three buckets, and keys that differ only in lo.
			recs[i] = keyRec{uint64(r.IntN(3))<<48 | uint64(r.IntN(4)), r.Uint32() % 50, uint32(i)}
		}
		return recs
	}
	for _, tc := range []struct {
		name string
		recs []keyRec
	}{
		{"empty", nil},
		{"one", spread(1)},
		{"spread", spread(200_000)},
		{"crowded", crowded(5_000)},
		{"descending", func() []keyRec {
			recs := spread(10_000)
			slices.SortFunc(recs, func(a, b keyRec) int { return compareKeys(b.key(), a.key()) })
			return recs
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.recs)
			sortKeyRecs(got)
			if !slices.IsSortedFunc(got, func(a, b keyRec) int { return compareKeys(a.key(), b.key()) }) {
				t.Fatal("not sorted")
			}
			// The same records, each once: sort both by value too and compare.
			want := slices.Clone(tc.recs)
			byAll := func(a, b keyRec) int {
				if c := compareKeys(a.key(), b.key()); c != 0 {
					return c
				}
				return int(a.v) - int(b.v)
			}
			slices.SortFunc(want, byAll)
			slices.SortFunc(got, byAll)
			if !slices.Equal(got, want) {
				t.Fatal("records lost or changed")
			}
		})
	}
}

// BenchmarkSummaryKeyFind: one lookup in the key table of a 1M-event
// summary, for keys it holds and keys it does not, as a fold of a log's
// tail makes them (each event's session and (session, lesson) keys).
func BenchmarkSummaryKeyFind(b *testing.B) {
	s, _ := benchSummary(b)
	r := rand.New(rand.NewPCG(5, 6))
	keys := make([]sumKey, 4096)
	for i := range keys {
		if i%2 == 0 {
			keys[i] = s.keys.key(r.IntN(s.keys.len()))
		} else {
			keys[i] = keyOf(keyAsked, fmt.Sprintf("s-%d", r.Int()), "lesson-0001")
		}
	}
	fence := keyFence(s.keys)
	for _, fenced := range []bool{false, true} {
		b.Run(fmt.Sprintf("fence=%v", fenced), func(b *testing.B) {
			f := fence
			if !fenced {
				f = nil
			}
			i := 0
			for b.Loop() {
				_, ok := s.keys.findFenced(keys[i%len(keys)], f)
				if ok != (i%2 == 0) {
					b.Fatalf("find %d: %v", i, ok)
				}
				i++
			}
		})
	}
}

// TestKeyTableSearch: search (interpolation steps, then halving) finds the
// place a plain binary search finds, from any start, in tables of hashed
// keys as the summary makes them and in tables whose keys crowd into part
// of the key space or repeat their high half, where interpolation guesses
// badly; so does searchFenced, through the table's fence.
func TestKeyTableSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 300 {
		n := r.IntN(3000)
		keys := make([]sumKey, n)
		for i := range keys {
			switch round % 3 {
			case 0: // hashed
				keys[i] = keyOf(keyAsked, fmt.Sprint(r.Int()), "")
			case 1: // crowded: a narrow band and a few far outliers
				keys[i] = sumKey{hi: 1<<40 + r.Uint64N(1<<20), lo: r.Uint32()}
				if r.IntN(100) == 0 {
					keys[i].hi = r.Uint64()
				}
			case 2: // few high halves, told apart by the low
				keys[i] = sumKey{hi: uint64(r.IntN(3)) << 62, lo: r.Uint32()}
			}
		}
		slices.SortFunc(keys, compareKeys)
		keys = slices.Compact(keys)
		var table keyTable
		for i, k := range keys {
			table = appendKeyRecord(table, k, uint32(i))
		}
		fence := keyFence(table)
		if !fenceFits(table, fence) {
			t.Fatalf("round %d: the table's own fence does not fit it", round)
		}
		for range 200 {
			k := keyOf(keyTested, fmt.Sprint(r.Int()), "")
			if len(keys) > 0 && r.IntN(2) == 0 {
				k = keys[r.IntN(len(keys))]
				if r.IntN(3) == 0 {
					k.lo++ // a neighbour that is not there
				}
			}
			from := 0
			if len(keys) > 0 {
				from = r.IntN(len(keys) + 1)
			}
			want := from + sort.Search(len(keys)-from, func(i int) bool { return compareKeys(keys[from+i], k) >= 0 })
			if got := table.search(k, from); got != want {
				t.Fatalf("round %d: search(%v, %d) = %d, want %d (%d keys)", round, k, from, got, want, len(keys))
			}
			at, found := slices.BinarySearchFunc(keys, k, compareKeys)
			if v, ok := table.find(k); ok != found || (ok && v != uint32(at)) {
				t.Fatalf("round %d: find(%v) = %d, %v; want %d, %v", round, k, v, ok, at, found)
			}
			if got := table.searchFenced(k, fence); got != at {
				t.Fatalf("round %d: searchFenced(%v) = %d, want %d (%d keys)", round, k, got, at, len(keys))
			}
			if v, ok := table.findFenced(k, fence); ok != found || (ok && v != uint32(at)) {
				t.Fatalf("round %d: findFenced(%v) = %d, %v; want %d, %v", round, k, v, ok, at, found)
			}
		}
	}
}
