package memfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// codecEvents is a hook stream over many lessons (as a function of the
// event, so that duplicated lines stay duplicates), with the ids of those
// lessons and of a few without evidence.
func codecEvents(r *rand.Rand, n int, disorder float64) ([]domain.Event, []string) {
	events := hookStream(r, "n1", 1000, n, disorder)
	ids := []string{"", "a", "alpha-one-99", "zz"} // none has evidence
	for i, e := range events {
		if e.Lesson == "" {
			continue
		}
		e.Lesson = fmt.Sprintf("%s-%02d", e.Lesson, e.MS%37)
		e.ID = ""
		events[i] = e.WithID()
		ids = append(ids, e.Lesson)
	}
	slices.Sort(ids)
	return events, slices.Compact(ids)
}

func mustEncodeSummary(t testing.TB, s *domain.Summary) []byte {
	t.Helper()
	data, err := summaryBytes(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParseSummary(t testing.TB, data []byte) *domain.Summary {
	t.Helper()
	s, err := ParseSummary(data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return s
}

// TestSummaryCodecRoundTrip: a parsed summary derives the memories the
// summary it was encoded from does, folds as it does, and encodes the same
// bytes however few of its lessons it has decoded; untouched, the bytes it
// was parsed from.
func TestSummaryCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(seedFor(t)), 9))
	folds := 0
	for round := 0; round < 150; round++ {
		events, ids := codecEvents(r, 20+r.IntN(300), []float64{0, 0.02, 0.1}[round%3])
		cut := len(events) - r.IntN(len(events)/3+1)
		l := domain.NewLedger()
		for _, e := range events[:cut] {
			l.Add(e)
		}
		mem := l.StartSummary().Finish()
		data := mustEncodeSummary(t, mem)
		p := mustParseSummary(t, data)
		if tail := events[cut:]; len(tail) > 0 && r.IntN(2) == 0 {
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
				data = mustEncodeSummary(t, mem)
				p = mustParseSummary(t, data)
			}
		}
		reaches := []string{"", "team", domain.ReachRepoPrefix + "api", domain.ReachRepoPrefix + "web"}
		var asked []domain.LessonInfo
		for q := 0; q < 1+r.IntN(4); q++ {
			var infos []domain.LessonInfo
			for range 1 + r.IntN(max(1, len(ids)/4)) {
				info := domain.LessonInfo{ID: ids[r.IntN(len(ids))], Reach: reaches[r.IntN(len(reaches))]}
				if r.IntN(4) == 0 {
					info.CreatedMS = int64(1000 + r.IntN(3000))
				}
				infos = append(infos, info)
			}
			asked = append(asked, infos...)
			w := domain.DefaultWeights
			if r.IntN(4) == 0 {
				w.RegretMax, w.D = 0.5, 0.4
			}
			if got, want := p.Memories(infos, "", w), mem.Memories(infos, "", w); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d query %d: parsed summary memories\n%+v\nwant\n%+v", round, q, got, want)
			}
		}
		if got, want := mustEncodeSummary(t, p), mustEncodeSummary(t, mem); !bytes.Equal(got, want) {
			t.Fatalf("round %d: a partially decoded summary encodes other bytes than its source", round)
		}
		// Untouched, a parsed summary encodes the bytes it was parsed from;
		// a few lessons decoded or all, the same.
		some, all := mustParseSummary(t, data), mustParseSummary(t, data)
		some.Memories(asked[:min(len(asked), 3)], "", domain.DefaultWeights)
		if _, ok := all.Parts(); !ok {
			t.Fatalf("round %d: a summary WriteSummary wrote reads as corrupt", round)
		}
		for _, s := range []*domain.Summary{mustParseSummary(t, data), some, all} {
			if b, err := summaryBytes(s); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("round %d: a parsed summary does not encode the bytes it was parsed from (%v)", round, err)
			}
		}
	}
	if folds == 0 {
		t.Fatal("the test never folded")
	}
}

// seedFor is a fixed seed per test name.
func seedFor(t *testing.T) int {
	n := 0
	for _, c := range t.Name() {
		n = 31*n + int(c)
	}
	return n
}

// TestParsedSummaryCorrupt: a parsed summary checks a lesson's record, and
// the order of the ids, when it decodes them (the other lessons read the
// same); a corrupt record reads as a lesson without evidence, Fold then
// reports false and WriteSummary ErrSummaryCorrupt, so that the caller
// rebuilds rather than keeps it.
func TestParsedSummaryCorrupt(t *testing.T) {
	events, _ := codecEvents(rand.New(rand.NewPCG(5, 6)), 400, 0.05)
	l := domain.NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	data := mustEncodeSummary(t, l.StartSummary().Finish())
	clean := mustParseSummary(t, data)
	const bad = 2
	// corrupted parses a copy of data and corrupts lesson bad in place (the
	// summary reads it in place) before it is decoded.
	corrupted := func(corrupt func(tab *lessonTable)) (*domain.Summary, []domain.LessonInfo) {
		t.Helper()
		s, tab, err := parseSummary(slices.Clone(data))
		if err != nil {
			t.Fatal(err)
		}
		if tab.Len() < bad+3 {
			t.Fatal("too few lessons")
		}
		var infos []domain.LessonInfo
		for i := range tab.Len() {
			infos = append(infos, domain.LessonInfo{ID: string(tab.ID(i)), Reach: []string{"", "repo:api"}[i%2]})
		}
		corrupt(tab)
		return s, infos
	}
	check := func(t *testing.T, s *domain.Summary) {
		t.Helper()
		if s.Fold(nil) {
			t.Fatal("Fold folded into a corrupt summary")
		}
		if _, err := summaryBytes(s); !errors.Is(err, ErrSummaryCorrupt) {
			t.Fatalf("WriteSummary: %v, want ErrSummaryCorrupt", err)
		}
	}

	t.Run("record", func(t *testing.T) {
		s, infos := corrupted(func(tab *lessonTable) {
			rec, _ := span(tab.recOff, tab.recs, bad)
			for k := range rec {
				rec[k] = 0xff // a varint that never ends
			}
		})
		want := clean.Memories(infos, "", domain.DefaultWeights)
		none := clean.Memories([]domain.LessonInfo{{ID: "~none", Reach: infos[bad].Reach}}, "", domain.DefaultWeights)[0]
		none.ID = infos[bad].ID
		want[bad] = none // read as a lesson without evidence
		if got := s.Memories(infos, "", domain.DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("memories\n%+v\nwant\n%+v", got, want)
		}
		check(t, s)
	})
	t.Run("ids out of order", func(t *testing.T) {
		s, infos := corrupted(func(tab *lessonTable) {
			id := tab.ID(bad)
			copy(id, bytes.Repeat([]byte{'z'}, len(id))) // after the next
		})
		s.Memories(infos[bad:bad+1], "", domain.DefaultWeights)
		check(t, s)
	})
	// Never decoded, the corrupt lesson is copied as it is when the summary
	// is written (PartsKeeping): the copy checks it as a decode would.
	for _, tc := range []struct {
		name    string
		corrupt func(tab *lessonTable)
	}{
		{"record never decoded", func(tab *lessonTable) {
			rec, _ := span(tab.recOff, tab.recs, bad)
			for k := range rec {
				rec[k] = 0xff
			}
		}},
		{"ids out of order never decoded", func(tab *lessonTable) {
			id := tab.ID(bad)
			copy(id, bytes.Repeat([]byte{'z'}, len(id)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, infos := corrupted(tc.corrupt)
			s.Memories(infos[bad+2:bad+3], "", domain.DefaultWeights) // another lesson only
			if _, err := summaryBytes(s); !errors.Is(err, ErrSummaryCorrupt) {
				t.Fatalf("WriteSummary: %v, want ErrSummaryCorrupt", err)
			}
			// What the copy found, the summary knows too.
			if s.Fold(nil) {
				t.Fatal("Fold folded into a summary WriteSummary found corrupt")
			}
		})
	}
}

func TestParseSummaryRejectsJunk(t *testing.T) {
	events, _ := codecEvents(rand.New(rand.NewPCG(1, 2)), 200, 0.1)
	l := domain.NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	data := mustEncodeSummary(t, l.StartSummary().Finish())
	type junk struct {
		name string
		data []byte
	}
	tests := []junk{
		{"empty", nil},
		{"wrong magic", append([]byte("XXXX"), data[4:]...)},
		{"truncated", data[:len(data)-5]},
		{"trailing bytes", append(append([]byte(nil), data...), 0)},
		{"half", data[:len(data)/2]},
	}
	// The key table's fence: a byte of it changed (its checksum fails),
	// and a fence that passes its checksum but not the table's keys.
	sum := l.StartSummary().Finish()
	pre, keys, post, err := encodeSummary(sum)
	if err != nil {
		t.Fatal(err)
	}
	nf, n := binary.Uvarint(post)
	if nf == 0 || n <= 0 {
		t.Fatalf("no fence after a key table of %d bytes", len(keys))
	}
	fence := post[n : n+8*int(nf)]
	withPost := func(edit func(post []byte)) []byte {
		p := append([]byte(nil), post...)
		edit(p)
		return append(append(append([]byte(nil), pre...), keys...), p...)
	}
	tests = append(tests,
		junk{"fence byte changed", withPost(func(p []byte) { p[n] ^= 1 })},
		junk{"fence not the table's", withPost(func(p []byte) {
			f := p[n : n+len(fence)]
			f[0] ^= 1
			binary.LittleEndian.PutUint32(p[n+len(fence):], crc32.ChecksumIEEE(f))
		})})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseSummary(tt.data); err == nil {
				t.Fatal("ParseSummary accepted junk")
			}
		})
	}
	if _, err := ParseSummary(withPost(func([]byte) {})); err != nil {
		t.Fatalf("the summary as written: %v", err)
	}
}

func FuzzParseSummary(f *testing.F) {
	events, ids := codecEvents(rand.New(rand.NewPCG(3, 4)), 60, 0.1)
	l := domain.NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	f.Add(mustEncodeSummary(f, l.StartSummary().Finish()))
	f.Add([]byte(summaryMagic))
	f.Add(mustEncodeSummary(f, domain.NewSummary()))
	// Queried for some of its lessons (the others stay undecoded).
	var infos []domain.LessonInfo
	for i, id := range ids {
		if i%2 == 0 {
			infos = append(infos, domain.LessonInfo{ID: id, Reach: []string{"", "repo:web"}[i%4/2]})
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSummary(data)
		if err != nil {
			return
		}
		// Whatever parses must be usable: derive (decoding the lessons
		// asked for), fold and encode again.
		s.Memories(infos, "s001", domain.DefaultWeights)
		s.Fold([]domain.Event{
			{MS: 1 << 40, Kind: domain.KindSession, Session: "s-new", Repo: "api"},
			{MS: 1 << 40, Kind: domain.KindChanged, Session: "s-new", Lesson: ids[len(ids)/2]},
			{MS: 5, Kind: domain.KindCreated, Lesson: ids[len(ids)/3]},
		})
		out, err := summaryBytes(s)
		if err != nil {
			// Only what is checked when decoded, a lesson's record and the
			// ids' order, may turn out corrupt after parsing (Fold then
			// reports it too).
			if !errors.Is(err, ErrSummaryCorrupt) || s.Fold(nil) {
				t.Fatal(err)
			}
			return
		}
		// What it encodes parses, derives the same memories decoded lazily
		// or all at once, and encodes to the same bytes.
		lazy, err := ParseSummary(out)
		if err != nil {
			t.Fatalf("parse of an encoded summary: %v", err)
		}
		eager, _ := ParseSummary(out)
		if _, ok := eager.Parts(); !ok {
			t.Fatal("an encoded summary reads as corrupt")
		}
		got, want := lazy.Memories(infos, "s-new", domain.DefaultWeights), eager.Memories(infos, "s-new", domain.DefaultWeights)
		if fmt.Sprint(got) != fmt.Sprint(want) { // NaN-proof
			t.Fatalf("lazily decoded memories\n%+v\nwant\n%+v", got, want)
		}
		if again, err := summaryBytes(lazy); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("an encoded summary encodes other bytes (%v)", err)
		}
	})
}

// summaryBenchLog is domain's benchmark log: n events over 2,000 lessons
// (one in three of repo reach), sessions of 16 asks and results.
func summaryBenchLog(n int) ([]domain.Event, []domain.LessonInfo) {
	r := rand.New(rand.NewPCG(1, 2))
	const nLessons = 2000
	lessons := make([]domain.LessonInfo, nLessons)
	events := make([]domain.Event, 0, n)
	repos := []string{"api", "web", "infra", "docs", "cli"}
	for i := range lessons {
		lessons[i] = domain.LessonInfo{ID: fmt.Sprintf("lesson-%04d", i)}
		if i%3 == 0 {
			lessons[i].Reach = "repo:" + repos[i%5]
		}
		events = append(events, domain.Event{ID: fmt.Sprintf("c%015x", i), MS: int64(i), Kind: domain.KindCreated, Lesson: lessons[i].ID})
	}
	results := []domain.EventKind{domain.KindChanged, domain.KindIgnored, domain.KindIgnored, domain.KindCorrected,
		domain.KindVetoed, domain.KindUnclear, domain.KindCensored}
	for s := 0; len(events) < n; s++ {
		session := fmt.Sprintf("s-%016x", s)
		ms := int64(10_000 + s*1000)
		repo, author := repos[s%5], fmt.Sprintf("e-%08x", s%17)
		events = append(events, domain.Event{ID: fmt.Sprintf("a%015x", len(events)), MS: ms, Kind: domain.KindSession, Session: session, Repo: repo, Author: author})
		for k := 0; k < 16 && len(events) < n; k++ {
			lesson := lessons[r.IntN(nLessons)].ID
			events = append(events,
				domain.Event{ID: fmt.Sprintf("b%015x", len(events)), MS: ms + int64(k), Kind: domain.KindAsked, Session: session, Lesson: lesson, Repo: repo},
				domain.Event{ID: fmt.Sprintf("b%015x", len(events)+1), MS: ms + int64(k) + 1, Kind: results[r.IntN(len(results))], Session: session, Lesson: lesson, Repo: repo})
			if k%5 == 0 {
				events = append(events, domain.Event{ID: fmt.Sprintf("b%015x", len(events)+2), MS: ms + 500, Kind: domain.KindTested, Session: session, Lesson: lesson})
			}
			if k%11 == 0 {
				events = append(events, domain.Event{ID: fmt.Sprintf("b%015x", len(events)+3), MS: ms + 900, Kind: domain.KindRegret, Session: session, Lesson: lesson, W: 0.5})
			}
		}
	}
	return events[:n], lessons
}

// benchSummaryBytes is the encoded summary of a 1M-event log and 10,000
// lessons to ask it for (8,000 without evidence).
func benchSummaryBytes(b *testing.B) ([]byte, []domain.LessonInfo) {
	events, _ := summaryBenchLog(1_000_000)
	l := domain.NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	lessons := make([]domain.LessonInfo, 10_000)
	for i := range lessons {
		lessons[i] = domain.LessonInfo{ID: fmt.Sprintf("lesson-%04d", i%2000)}
		if i >= 2000 {
			lessons[i].ID = fmt.Sprintf("lesson-x%05d", i)
		}
	}
	return mustEncodeSummary(b, l.StartSummary().Finish()), lessons
}

func BenchmarkParseSummary1M(b *testing.B) {
	data, _ := benchSummaryBytes(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseSummary(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsedSummaryMemories10kLessons1M: Memories of 10,000 lessons
// on a parsed summary (decoded on the first call).
func BenchmarkParsedSummaryMemories10kLessons1M(b *testing.B) {
	data, lessons := benchSummaryBytes(b)
	s := mustParseSummary(b, data)
	b.ResetTimer()
	for b.Loop() {
		if ms := s.Memories(lessons, "s-0000000000000010", domain.DefaultWeights); len(ms) != len(lessons) {
			b.Fatal(len(ms))
		}
	}
}

// BenchmarkParseSummaryMemories is a hook's access pattern: parse the cached
// summary, then derive the memories of a few candidate lessons (one in
// three of repo reach).
func BenchmarkParseSummaryMemories(b *testing.B) {
	data, lessons := benchSummaryBytes(b)
	for _, n := range []int{5, 100} {
		var want []domain.LessonInfo
		for i := 0; i < 2000; i += 2000 / n {
			info := lessons[i]
			if len(want)%3 == 1 {
				info.Reach = domain.ReachRepoPrefix + "api"
			}
			want = append(want, info)
		}
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			for b.Loop() {
				s, err := ParseSummary(data)
				if err != nil {
					b.Fatal(err)
				}
				if ms := s.Memories(want, "s-0000000000000010", domain.DefaultWeights); len(ms) != len(want) {
					b.Fatal(len(ms))
				}
			}
		})
	}
}

// summaryBytes is WriteSummary's encoding of s.
func summaryBytes(s *domain.Summary) ([]byte, error) {
	var b bytes.Buffer
	err := WriteSummary(&b, s)
	return b.Bytes(), err
}
