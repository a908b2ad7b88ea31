package memfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	mathrand "math/rand"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/borg-memory/borg/domain"
)

func readLines(tb testing.TB, p string) []string {
	tb.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestHashIDs(t *testing.T) {
	cases := []struct {
		name, in, session, engineer string
	}{
		{"empty stays empty", "", "", ""},
		{"raw is hashed", "session-1234", HashSession("session-1234"), HashEngineer("session-1234")},
		{"hashed passes", "s-0123456789abcdef", "s-0123456789abcdef", HashEngineer("s-0123456789abcdef")},
		{"engineer hashed passes", "e-0123abcd", HashSession("e-0123abcd"), "e-0123abcd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := HashSession(tc.in); got != tc.session {
				t.Errorf("HashSession = %q; want %q", got, tc.session)
			}
			if got := HashEngineer(tc.in); got != tc.engineer {
				t.Errorf("HashEngineer = %q; want %q", got, tc.engineer)
			}
		})
	}
	if s := HashSession("raw"); !hashedID(s, "s-", 16) || HashSession(s) != s {
		t.Errorf("HashSession(raw) = %q is not stable", s)
	}
	if e := HashEngineer(" Alice@Example.com "); e != HashEngineer("alice@example.com") || !hashedID(e, "e-", 8) {
		t.Errorf("HashEngineer is not case-insensitive: %q", e)
	}
}

func TestAppendRoutesAndHashes(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		kind   domain.EventKind
		shared bool
	}{
		{"created is shared", nil, domain.KindCreated, true},
		{"placebo stays local", nil, domain.KindPlacebo, false},
		{"sharing off keeps it local", map[string]string{"BORG_SHARE_OUTCOMES": "off"}, domain.KindCreated, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Init(t.Context(), filepath.Join(t.TempDir(), "s"), "", WithEnv(testEnv(tc.env)))
			if err != nil {
				t.Fatal(err)
			}
			e := domain.Event{MS: 1000, Kind: tc.kind, Session: "raw-session", Lesson: "abc", Author: "alice@example.com"}
			if err := s.Append(e); err != nil {
				t.Fatal(err)
			}
			path := s.LocalLogPath()
			if tc.shared {
				path = s.LogPath()
			}
			lines := readLines(t, filepath.Join(s.Dir(), path))
			if len(lines) != 1 {
				t.Fatalf("%s has %d lines", path, len(lines))
			}
			if strings.Contains(lines[0], "raw-session") || strings.Contains(lines[0], "alice") {
				t.Fatalf("raw id written: %s", lines[0])
			}
			var got domain.Event
			if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
				t.Fatal(err)
			}
			want := domain.Event{MS: 1000, Kind: tc.kind, Session: HashSession("raw-session"), Lesson: "abc", Author: HashEngineer("alice@example.com")}.WithID()
			if got != want {
				t.Fatalf("line = %+v; want %+v", got, want)
			}
			other := s.LogPath()
			if tc.shared {
				other = s.LocalLogPath()
			}
			if _, err := os.Stat(filepath.Join(s.Dir(), other)); err == nil {
				t.Fatalf("%s was written too", other)
			}
		})
	}
}

func TestReadEventsSkipsAndDedups(t *testing.T) {
	s := newTestStore(t)
	a := domain.Event{MS: 2, Kind: domain.KindCreated, Lesson: "abc"}.WithID()
	b := domain.Event{MS: 1, Kind: domain.KindSession, Session: "s-0000000000000001"}
	aLine, _ := json.Marshal(a)
	bLine := `{"ms":1,"kind":"session","session":"s-0000000000000001"}`
	content := string(aLine) + "\n" +
		"garbage\n" +
		"\n" +
		bLine + "\n" +
		string(aLine) + "\n" +
		`{"ms":3}` + "\n" +
		`[1,2]` + "\n" +
		`{"ms":4,"kind":"changed","lesson":"abc","sess`
	if err := os.WriteFile(filepath.Join(s.Dir(), "log", "n-other.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir(), ".borg", "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), ".borg", "local", "n-other.jsonl"), append(aLine, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	events, rep, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.Event{b.WithID(), a}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events = %+v; want %+v", events, want)
	}
	var skipped []string
	for _, sk := range rep.Skipped {
		skipped = append(skipped, fmt.Sprintf("%s:%d %s", sk.File, sk.Line, sk.Reason))
	}
	wantSkipped := []string{
		"log/n-other.jsonl:2 not a JSON object",
		"log/n-other.jsonl:6 no kind",
		"log/n-other.jsonl:7 not a JSON object",
		"log/n-other.jsonl:8 torn last line (no newline): bad JSON",
	}
	if len(skipped) != len(wantSkipped) {
		t.Fatalf("skipped = %q", skipped)
	}
	for i := range wantSkipped {
		if !strings.HasPrefix(skipped[i], wantSkipped[i]) {
			t.Errorf("skipped[%d] = %q; want prefix %q", i, skipped[i], wantSkipped[i])
		}
	}
	if rep.Files != 2 || rep.Lines != 8 || rep.Duplicates != 2 || rep.Events != 2 {
		t.Errorf("report = %+v", rep)
	}
	// The next append repairs the torn line's end so the new line is whole.
	if err := appendLines(filepath.Join(s.Dir(), "log", "n-other.jsonl"), [][]byte{[]byte(`{"ms":5,"kind":"session","session":"s-0000000000000002"}` + "\n")}); err != nil {
		t.Fatal(err)
	}
	events, _, err = s.ReadEvents()
	if err != nil || len(events) != 3 {
		t.Fatalf("after repair: %d events, %v", len(events), err)
	}
}

// randomEvents makes a plausible log for one node.
func randomEvents(r *rand.Rand, node string, n int) []domain.Event {
	lessons := []string{"alpha-one", "beta-two", "gamma-three", "delta-four"}
	kinds := []domain.EventKind{domain.KindSession, domain.KindCreated, domain.KindAsked, domain.KindChanged,
		domain.KindIgnored, domain.KindCorrected, domain.KindVetoed, domain.KindTested, domain.KindRegret, domain.KindCensored,
		domain.KindPassing}
	var out []domain.Event
	for i := 0; i < n; i++ {
		e := domain.Event{
			MS:      int64(r.IntN(1000)),
			Kind:    kinds[r.IntN(len(kinds))],
			Session: HashSession(fmt.Sprintf("%s-%d", node, r.IntN(8))),
			Lesson:  lessons[r.IntN(len(lessons))],
			Repo:    []string{"api", "web"}[r.IntN(2)],
			Author:  HashEngineer(node + "@example.com"),
		}
		if e.Kind == domain.KindSession {
			e.Lesson = ""
		}
		if e.Kind == domain.KindChanged {
			e.W = []float64{0, 0, 0.309, 1}[r.IntN(4)]
		}
		if e.Kind == domain.KindRegret {
			e.W = float64(r.IntN(4)) / 4
		}
		if e.Kind == domain.KindPassing {
			e.Lesson = ""
			e.Src, e.Dst = "tool:"+lessons[r.IntN(len(lessons))], "tool:"+lessons[r.IntN(len(lessons))]
			e.SrcV, e.DstV = "v1", fmt.Sprint("v", r.IntN(3))
		}
		out = append(out, e.WithID())
	}
	return out
}

func eventLines(events []domain.Event) []string {
	var out []string
	for _, e := range events {
		b, _ := json.Marshal(e)
		out = append(out, string(b))
	}
	return out
}

// TestLogsDeriveSameMemory: two nodes' logs, shuffled, duplicated and
// concatenated in any order, derive the same memory.
func TestLogsDeriveSameMemory(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	a := randomEvents(r, "node-a", 120)
	b := randomEvents(r, "node-b", 120)
	infos := []domain.LessonInfo{{ID: "alpha-one"}, {ID: "beta-two", Reach: "repo:api"}, {ID: "gamma-three"}, {ID: "delta-four", Reach: "repo:web"}}
	want := domain.Derive(append(slices.Clone(a), b...), infos, "", domain.DefaultWeights)
	for round := 0; round < 20; round++ {
		s := newTestStore(t)
		lines := append(eventLines(a), eventLines(b)...)
		// Duplicate a random third, shuffle, split across 1..3 files.
		for _, l := range lines[:len(lines)/3] {
			lines = append(lines, l)
		}
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		nfiles := 1 + r.IntN(3)
		files := make([][]string, nfiles)
		for _, l := range lines {
			k := r.IntN(nfiles)
			files[k] = append(files[k], l)
		}
		for k, f := range files {
			data := strings.Join(f, "\n") + "\n"
			if err := os.WriteFile(filepath.Join(s.Dir(), "log", fmt.Sprintf("n-%d.jsonl", k)), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		events, rep, err := s.ReadEvents()
		if err != nil || len(rep.Skipped) != 0 {
			t.Fatalf("ReadEvents: %v %+v", err, rep.Skipped)
		}
		got := domain.Derive(events, infos, "", domain.DefaultWeights)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: memory differs\n got %+v\nwant %+v", round, got, want)
		}
		l, err := s.LoadLedger()
		if err != nil {
			t.Fatal(err)
		}
		if cached := l.Memories(infos, "", domain.DefaultWeights); !reflect.DeepEqual(cached, want) {
			t.Fatalf("round %d: LoadLedger memory differs\n got %+v\nwant %+v", round, cached, want)
		}
	}
}

func TestLoadLedgerIncremental(t *testing.T) {
	s := newTestStore(t)
	r := rand.New(rand.NewPCG(7, 7))
	events := randomEvents(r, "node-a", 300)
	infos := []domain.LessonInfo{{ID: "alpha-one"}, {ID: "beta-two"}, {ID: "gamma-three"}, {ID: "delta-four"}}
	check := func(step string) {
		t.Helper()
		all, _, err := s.ReadEvents()
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.LoadLedger()
		if err != nil {
			t.Fatal(err)
		}
		want := domain.Derive(all, infos, "", domain.DefaultWeights)
		if got := l.Memories(infos, "", domain.DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: cached memory differs from a full derive", step)
		}
	}
	if err := s.Append(events[:100]...); err != nil {
		t.Fatal(err)
	}
	check("first load")
	if err := s.Append(events[100:200]...); err != nil {
		t.Fatal(err)
	}
	check("after appends")
	// A torn line is not folded until it is whole.
	p := filepath.Join(s.Dir(), s.LogPath())
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(events[200])
	if _, err := f.Write(line[:len(line)/2]); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	check("torn tail")
	if err := s.Append(events[201:250]...); err != nil {
		t.Fatal(err)
	}
	check("after repair")
	// Rewritten under the offset (a merge): rebuilt.
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, MergeLines(data, []byte(strings.Join(eventLines(events[250:]), "\n"))), 0o644); err != nil {
		t.Fatal(err)
	}
	check("after rewrite")
	// Shrunk: rebuilt.
	if err := os.WriteFile(p, []byte(strings.Join(eventLines(events[:10]), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("after shrink")
	// Vanished: rebuilt.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	check("after removal")
}

func TestMergeLinesProperties(t *testing.T) {
	toLog := func(xs []uint8) []byte {
		var b bytes.Buffer
		for _, x := range xs {
			fmt.Fprintf(&b, "{\"ms\":%d,\"kind\":\"session\"}\n", x%16)
		}
		return b.Bytes()
	}
	seed := time.Now().UnixNano()
	t.Logf("quick seed %d", seed)
	cfg := &quick.Config{Rand: mathrand.New(mathrand.NewSource(seed)), MaxCount: 300}
	props := map[string]any{
		"commutative": func(a, b []uint8) bool {
			return bytes.Equal(MergeLines(toLog(a), toLog(b)), MergeLines(toLog(b), toLog(a)))
		},
		"idempotent": func(a, b []uint8) bool {
			m := MergeLines(toLog(a), toLog(b))
			return bytes.Equal(MergeLines(m, m), m) && bytes.Equal(MergeLines(m, toLog(b)), m)
		},
		"order-insensitive": func(a []uint8, seed int64) bool {
			shuffled := slices.Clone(a)
			rr := rand.New(rand.NewPCG(uint64(seed), 0))
			rr.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			return bytes.Equal(MergeLines(toLog(a), nil), MergeLines(nil, toLog(shuffled)))
		},
		"union": func(a, b []uint8) bool {
			m := string(MergeLines(toLog(a), toLog(b)))
			for _, l := range strings.Split(string(toLog(a))+string(toLog(b)), "\n") {
				if l != "" && !strings.Contains(m, l+"\n") {
					return false
				}
			}
			return true
		},
	}
	for name, p := range props {
		t.Run(name, func(t *testing.T) {
			if err := quick.Check(p, cfg); err != nil {
				t.Fatal(err)
			}
		})
	}
	if got := string(MergeLines([]byte("b\na"), []byte("c\r\n\nb\n"))); got != "a\nb\nc\n" {
		t.Errorf("MergeLines = %q", got)
	}
}

// TestScanEventsFromFile: reading a log file from an offset, with a buffer
// sized to what is left of it (scanBuffer), gives what reading the same
// bytes from memory with the full buffer gives, long lines and a torn last
// line included.
func TestScanEventsFromFile(t *testing.T) {
	var data []byte
	for i := range 40 {
		e := domain.Event{MS: int64(i + 1), Kind: domain.KindAsked, Session: "s-1", Lesson: "lesson-" + strings.Repeat("x", i%7)}
		if i == 17 {
			e.Lesson = "lesson-" + strings.Repeat("y", 9<<10) // a line longer than the smallest buffer
		}
		line, _ := json.Marshal(e.WithID())
		data = append(append(data, line...), '\n')
	}
	data = append(data, `{"ms":99,"kind":"ask`...) // torn
	p := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	type read struct {
		offs  []int64
		kinds []string
		end   int64
	}
	scan := func(r io.Reader, start int64, partial bool) read {
		var got read
		end, err := scanEvents(r, start, nil, func(_ int, off int64, e domain.Event, reason string) {
			got.offs = append(got.offs, off)
			got.kinds = append(got.kinds, string(e.Kind)+reason)
		}, partial)
		if err != nil {
			t.Fatal(err)
		}
		got.end = end
		return got
	}
	for _, start := range []int64{0, int64(bytes.IndexByte(data, '\n') + 1), int64(len(data)) - 200, int64(len(data)) - 20, int64(len(data))} {
		start = int64(bytes.LastIndexByte(data[:start], '\n') + 1) // a line's start
		for _, partial := range []bool{false, true} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(start, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			got := scan(f, start, partial)
			f.Close()
			if want := scan(bytes.NewReader(data[start:]), start, partial); !reflect.DeepEqual(got, want) {
				t.Errorf("from %d (partial %v): the file read\n%+v\nthe bytes\n%+v", start, partial, got, want)
			}
		}
	}
	for _, tc := range []struct {
		r     io.Reader
		start int64
		want  int
	}{
		{bytes.NewReader(data), 0, 256 << 10},
		{io.NewSectionReader(bytes.NewReader(data), 0, 100), 0, 4 << 10},
		{io.NewSectionReader(bytes.NewReader(make([]byte, 1<<20)), 0, 1<<20), 0, 256 << 10},
		{io.NewSectionReader(bytes.NewReader(data), 0, 10000), 0, 10001},
	} {
		if got := scanBuffer(tc.r, tc.start); got != tc.want {
			t.Errorf("scanBuffer(%T, %d) = %d, want %d", tc.r, tc.start, got, tc.want)
		}
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := scanBuffer(f, int64(len(data))-20), 4<<10; got != want {
		t.Errorf("scanBuffer(a file, 20 bytes before its end) = %d, want %d", got, want)
	}
	if got, want := scanBuffer(f, 0), len(data)+1; got != want {
		t.Errorf("scanBuffer(a file of %d bytes, 0) = %d, want %d", len(data), got, want)
	}
}

func FuzzReadEvents(f *testing.F) {
	e, _ := json.Marshal(domain.Event{MS: 5, Kind: domain.KindCreated, Lesson: "abc"}.WithID())
	f.Add(append(e, '\n'))
	f.Add([]byte("junk\n{\"ms\":1,\"kind\":\"session\",\"session\":\"s-1\"}\n{\"ms\":2,\"ki"))
	f.Add([]byte("\n\n\r\n{}\n[]\nnull\n{\"kind\":1}\n"))
	f.Add(bytes.Repeat([]byte("x"), 300<<10))
	f.Fuzz(func(t *testing.T, data []byte) {
		var events []domain.Event
		var lines, skipped int
		var reasons []string
		end, err := scanEvents(bytes.NewReader(data), 0, nil, func(n int, _ int64, e domain.Event, reason string) {
			lines++
			if reason != "" {
				skipped++
				reasons = append(reasons, reason)
				return
			}
			if e.ID == "" || e.Kind == "" {
				t.Fatalf("line %d: event without id or kind: %+v", n, e)
			}
			events = append(events, e)
		}, true)
		if err != nil {
			t.Fatalf("scanEvents: %v", err)
		}
		if end != int64(len(data)) {
			t.Fatalf("read %d of %d bytes", end, len(data))
		}
		for i, r := range reasons {
			if strings.HasPrefix(r, "torn") && i != len(reasons)-1 {
				t.Fatalf("a torn line that is not the last: %q", reasons)
			}
		}
		// Without the partial last line, the reader stops after the last newline.
		whole, err := scanEvents(bytes.NewReader(data), 0, nil, func(int, int64, domain.Event, string) {}, false)
		if err != nil || whole != int64(bytes.LastIndexByte(data, '\n')+1) {
			t.Fatalf("whole-line offset %d, %v; want %d", whole, err, bytes.LastIndexByte(data, '\n')+1)
		}
		// A ledger folded from the events derives what Derive does.
		l := domain.NewLedger()
		var infos []domain.LessonInfo
		for _, e := range events {
			l.Add(e)
			if domain.ValidID(e.Lesson) {
				infos = append(infos, domain.LessonInfo{ID: e.Lesson})
			}
		}
		want := domain.Derive(events, infos, "", domain.DefaultWeights)
		if got := l.Memories(infos, "", domain.DefaultWeights); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ledger differs from Derive:\n%v\n%v", got, want)
		}
	})
}

func TestLoadLedgerUsesCache(t *testing.T) {
	s := newTestStore(t)
	r := rand.New(rand.NewPCG(3, 3))
	events := randomEvents(r, "node-a", 50)
	if err := s.Append(events[:40]...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(s.Dir(), filepath.FromSlash(ledgerCacheFile))
	first, err := os.ReadFile(cache)
	if err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// A cached ledger is trusted: plant a marker in it and see it come back.
	c := s.readLedgerCache()
	if c == nil {
		t.Fatal("cache unreadable")
	}
	c.Ledger.Add(domain.Event{MS: 1, Kind: domain.KindChanged, Session: "planted-session", Lesson: "planted-marker"})
	planted := func(l *domain.Ledger) bool {
		return l.Memories([]domain.LessonInfo{{ID: "planted-marker"}}, "", domain.DefaultWeights)[0].Changed == 1
	}
	var buf bytes.Buffer
	if err := writeCache(&buf, c); err != nil {
		t.Fatal(err)
	}
	plantedCache := buf.Bytes()
	if err := os.WriteFile(cache, plantedCache, 0o644); err != nil {
		t.Fatal(err)
	}
	// A small append is folded in memory; the cache file is left as it is.
	if err := s.Append(events[40:]...); err != nil {
		t.Fatal(err)
	}
	l, err := s.LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	if !planted(l) {
		t.Fatal("LoadLedger ignored its cache")
	}
	if after, _ := os.ReadFile(cache); !bytes.Equal(after, plantedCache) || bytes.Equal(after, first) {
		t.Fatal("the cache was rewritten for a small append")
	}
	// The appended events are folded in: every lesson but the marker has
	// the memory of all the events.
	var infos []domain.LessonInfo
	for _, e := range events {
		if e.Lesson != "" {
			infos = append(infos, domain.LessonInfo{ID: e.Lesson})
		}
	}
	if got, want := l.Memories(infos, "", domain.DefaultWeights), domain.Derive(events, infos, "", domain.DefaultWeights); !reflect.DeepEqual(got, want) {
		t.Fatalf("the cached ledger with the appended events derives\n%+v\nwant\n%+v", got, want)
	}
	// A cache of another version is ignored.
	stale := bytes.Replace(plantedCache, []byte(fmt.Sprintf(`"version":%d`, ledgerCacheVersion)), []byte(`"version":999`), 1)
	if err := os.WriteFile(cache, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = s.LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	if planted(l) {
		t.Fatal("a cache of another version was trusted")
	}
}

// TestReadEventsAfterBOM holds the first event of a log file an editor
// saved with a byte order mark (and CRLF line ends) to being read, not
// skipped as "not a JSON object".
func TestReadEventsAfterBOM(t *testing.T) {
	s := newTestStore(t)
	a := domain.Event{MS: 2, Kind: domain.KindCreated, Lesson: "abc"}.WithID()
	b := domain.Event{MS: 3, Kind: domain.KindCreated, Lesson: "abd"}.WithID()
	aLine, _ := json.Marshal(a)
	bLine, _ := json.Marshal(b)
	content := "\xef\xbb\xbf" + string(aLine) + "\r\n" + string(bLine) + "\r\n"
	if err := os.WriteFile(filepath.Join(s.Dir(), "log", "n-other.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	events, rep, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 || len(events) != 2 {
		t.Fatalf("events = %+v, skipped %+v; want both events", events, rep.Skipped)
	}
}

// TestIncompleteEventsSkipped: a line whose event lacks what its kind is
// about (a result without its lesson, a session event without its session,
// a link event without both ends) is junk, skipped and counted with its
// reason; a kind this borg does not know is read as written.
func TestIncompleteEventsSkipped(t *testing.T) {
	for _, tc := range []struct {
		line, why string
	}{
		{`{"id":"zz","kind":"vetoed"}`, "a vetoed event without its lesson"},
		{`{"ms":5,"kind":"changed","session":"s-0123456789abcdef"}`, "a changed event without its lesson"},
		{`{"ms":5,"kind":"session","author":"e-01234567"}`, "a session event without its session"},
		{`{"ms":5,"kind":"passing","src":"cmd:make"}`, "a link event without both ends"},
		{`{"ms":5}`, "no kind"},
		{`{"ms":5,"kind":"changed","lesson":"a-lesson-0001","session":"s-0123456789abcdef"}`, ""},
		{`{"ms":5,"kind":"session","session":"s-0123456789abcdef"}`, ""},
		{`{"ms":5,"kind":"passing","src":"cmd:make","dst":"a-lesson-0001"}`, ""},
		{`{"ms":5,"kind":"a-kind-from-a-newer-borg"}`, ""},
	} {
		_, why := decodeLine([]byte(tc.line))
		if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
			t.Errorf("decodeLine(%s) says %q; want %q", tc.line, why, tc.why)
		}
	}
}
