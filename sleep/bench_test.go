package sleep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/scripts/benchtest"
)

// benchDate is the night the benchmarks sleep for.
var benchDate = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// genRand is a small deterministic generator (PCG-style LCG).
type genRand struct{ x uint64 }

func (r *genRand) intn(n int) int {
	r.x = r.x*6364136223846793005 + 1442695040888963407
	return int((r.x >> 33) % uint64(n))
}

// genLessons makes n synthetic lessons shaped like a team's memory: words
// from a few thousand-word vocabulary, identifiers and proper names as
// entities, about 2% near-copies, some frame claims, some expired TTLs, some
// authored links; created over the year before benchDate.
func genLessons(n int) []domain.Lesson {
	r := &genRand{x: uint64(n)}
	syll := strings.Fields("ka lo mi ne su ta ri po de va zu fe gi ho ju be")
	vocab := make([]string, 3000)
	for i := range vocab {
		var b strings.Builder
		for k := 0; k < 2+r.intn(3); k++ {
			b.WriteString(syll[r.intn(len(syll))])
		}
		vocab[i] = b.String()
	}
	word := func() string { return vocab[min(r.intn(len(vocab)), r.intn(len(vocab)))] } // skewed: low ranks common
	entity := func() string {
		switch r.intn(4) {
		case 0:
			return "svc/" + vocab[r.intn(len(vocab))] + ".go"
		case 1:
			return vocab[r.intn(len(vocab))] + "_" + vocab[r.intn(len(vocab))]
		case 2:
			w := vocab[r.intn(len(vocab))]
			return w + strings.ToUpper(w[:1]) + vocab[r.intn(len(vocab))]
		}
		w := vocab[r.intn(len(vocab))]
		return strings.ToUpper(w[:1]) + w[1:]
	}
	sentence := func(words int) string {
		ws := make([]string, words)
		for i := range ws {
			ws[i] = word()
		}
		if r.intn(2) == 0 {
			ws[1+r.intn(words-1)] = entity()
		}
		s := strings.Join(ws, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	types := []string{domain.TypeSemantic, domain.TypeProcedural, domain.TypeEpisodic, domain.TypeErrorPattern, domain.TypeArc}
	out := make([]domain.Lesson, 0, n)
	for i := 0; i < n; i++ {
		l := domain.Lesson{
			ID: fmt.Sprintf("lesson-%06d", i), Type: types[r.intn(len(types))],
			Confidence: float64(30+r.intn(70)) / 100, Importance: 1 + r.intn(10),
			Created: benchDate.Add(-time.Duration(1+r.intn(365*24)) * time.Hour).Truncate(time.Second),
			Tags:    []string{vocab[r.intn(50)]},
		}
		switch {
		case i > 0 && r.intn(50) == 0: // a near-copy of an earlier lesson
			src := out[r.intn(len(out))]
			l.Title, l.Gist, l.Body, l.Type = src.Title, src.Gist, src.Body+" "+word()+".", src.Type
		case r.intn(20) == 0: // a frame claim
			l.Gist = fmt.Sprintf("The %s %s of %s is %d %s.", vocab[r.intn(40)], vocab[r.intn(40)], vocab[r.intn(40)], r.intn(100), vocab[r.intn(10)])
		default:
			l.Gist = sentence(6 + r.intn(8))
		}
		if l.Title == "" {
			l.Title = strings.TrimSuffix(l.Gist, ".")
			if len(l.Title) > 60 {
				l.Title = l.Title[:60]
			}
			var body []string
			for k := 0; k < 1+r.intn(4); k++ {
				body = append(body, sentence(8+r.intn(10)))
			}
			l.Body = strings.Join(body, " ")
		}
		if r.intn(25) == 0 {
			l.ValidUntil = benchDate.Add(-time.Duration(r.intn(60*24)) * time.Hour).Truncate(time.Second)
		}
		if i > 10 && r.intn(5) == 0 {
			l.Links = append(l.Links, domain.LessonLink{Rel: domain.RelSupports, Target: fmt.Sprintf("lesson-%06d", r.intn(i))})
		}
		out = append(out, l)
	}
	return out
}

// genEvents makes a log over the lessons: sessions that ask some lessons,
// some changed or tested, some passings between lessons.
func genEvents(n int) []domain.Event {
	r := &genRand{x: uint64(n) + 99}
	var out []domain.Event
	start := benchDate.AddDate(0, -3, 0).UnixMilli()
	span := benchDate.UnixMilli() - start
	for s := 0; s < n/5; s++ {
		ms := start + int64(r.intn(int(span/1000)))*1000
		sess := fmt.Sprintf("s-%016x", s)
		out = append(out, domain.Event{MS: ms, Kind: domain.KindSession, Session: sess})
		for k := 0; k < 3; k++ {
			id := fmt.Sprintf("lesson-%06d", r.intn(n))
			out = append(out, domain.Event{MS: ms + 1000, Kind: domain.KindAsked, Session: sess, Lesson: id})
			switch r.intn(4) {
			case 0:
				out = append(out, domain.Event{MS: ms + 2000, Kind: domain.KindChanged, Session: sess, Lesson: id})
			case 1:
				out = append(out, domain.Event{MS: ms + 2000, Kind: domain.KindIgnored, Session: sess, Lesson: id})
			}
		}
		if r.intn(3) == 0 {
			out = append(out, domain.Event{MS: ms + 3000, Kind: domain.KindPassing, Session: sess,
				Src: fmt.Sprintf("lesson-%06d", r.intn(n)), Dst: fmt.Sprintf("lesson-%06d", r.intn(n))})
		}
	}
	return out
}

// benchTemplates caches one generated store per size for the run.
var benchTemplates = map[int]string{}

// benchStore returns a fresh copy of a generated store of n lessons: the
// lessons committed on main through one plumbing commit, the log on disk.
func benchStore(tb testing.TB, n int) *memfs.Store {
	tb.Helper()
	getenv := isolateGit(tb)
	tmpl, ok := benchTemplates[n]
	if !ok {
		root, err := os.MkdirTemp("", "borg-sleep-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		tmpl = filepath.Join(root, "store")
		st, err := memfs.Init(context.Background(), tmpl, "", memfs.WithEnv(getenv))
		if err != nil {
			tb.Fatal(err)
		}
		var changes []memfs.FileChange
		for _, l := range genLessons(n) {
			changes = append(changes, memfs.FileChange{Path: memfs.LessonPath(l.ID), Data: memfs.Render(l)})
		}
		head, err := st.ResolveRef("HEAD")
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := st.CommitOnRef("refs/heads/main", head, head, changes, "bench lessons", benchDate.AddDate(0, 0, -1)); err != nil {
			tb.Fatal(err)
		}
		var log strings.Builder
		for _, e := range genEvents(n) {
			b, _ := json.Marshal(e.WithID())
			log.Write(b)
			log.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(tmpl, "log", "bench.jsonl"), []byte(log.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		benchTemplates[n] = tmpl
	}
	dst := filepath.Join(tb.TempDir(), "store")
	if out, err := exec.Command("cp", "-a", tmpl, dst).CombinedOutput(); err != nil {
		tb.Fatalf("copy store: %v\n%s", err, out)
	}
	st, err := memfs.Open(dst, memfs.WithEnv(getenv))
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func benchSizes() []int {
	sizes := []int{1000, 10000}
	if os.Getenv("BORG_BENCH_100K") != "" {
		sizes = append(sizes, 100000)
	}
	return sizes
}

// BenchmarkSleep is a full sleep (snapshot, plan, one commit per phase, no
// apply) over generated stores; 100,000 lessons with BORG_BENCH_100K=1.
func BenchmarkSleep(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st := benchStore(b, n)
				c0, _ := benchtest.ProcessCPU()
				b.StartTimer()
				res, err := Run(context.Background(), st, Options{Date: benchDate}, nil)
				b.StopTimer()
				c1, ok := benchtest.ProcessCPU()
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Commits) == 0 {
					b.Fatal("no commits")
				}
				if ok {
					cpu += c1 - c0
				}
				b.StartTimer()
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestSleepProfile times each step of a sleep over BORG_SLEEP_PROFILE
// generated lessons (skipped when unset): snapshot, each phase's planning,
// and the commits. scripts/bench-sleep.sh runs it.
func TestSleepProfile(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BORG_SLEEP_PROFILE"))
	if n <= 0 {
		t.Skip("set BORG_SLEEP_PROFILE=<lessons> to profile a sleep")
	}
	st := benchStore(t, n)
	ctx := context.Background()
	var steps []string
	var cpuStart time.Duration
	lap := func(name string, start time.Time) {
		line := fmt.Sprintf("%-34s %8.3fs", name, time.Since(start).Seconds())
		if c, ok := benchtest.ProcessCPU(); ok {
			line += fmt.Sprintf("  cpu %7.3fs", (c - cpuStart).Seconds())
		}
		steps = append(steps, line)
	}
	mark := func() time.Time {
		cpuStart, _ = benchtest.ProcessCPU()
		return time.Now()
	}
	cpuTotal, _ := benchtest.ProcessCPU()
	total := time.Now()

	start := mark()
	snap, err := LoadSnapshot(ctx, st, "HEAD", benchDate, nil)
	if err != nil {
		t.Fatal(err)
	}
	lap("snapshot", start)
	start = mark()
	p := newPlanner(snap, PlanOptions{})
	lap("plan: ledger", start)
	var phases []PhasePlan
	for i, run := range []func() PhasePlan{p.decay, p.reprieve, p.merge, p.frames, p.edges, p.retention, p.linkAger} {
		start = mark()
		p.changes = map[string]memfs.FileChange{}
		ph := run()
		ph.Phase, ph.Number = Phases[i], i+1
		ph.Changes = p.flush()
		ph.Files = len(ph.Changes)
		if ph.Changed() {
			ph.Message = p.message(ph)
		}
		phases = append(phases, ph)
		lap("plan: "+string(Phases[i]), start)
	}
	prev, expected := snap.Base, ""
	for _, ph := range phases {
		if !ph.Changed() {
			continue
		}
		start = mark()
		h, err := st.CommitOnRef("refs/heads/borg/sleep/profile", expected, prev, ph.Changes, ph.Message, benchDate)
		if err != nil {
			t.Fatal(err)
		}
		prev, expected = h, h
		lap(fmt.Sprintf("commit: %s (%d files)", ph.Phase, ph.Files), start)
	}
	cpuStart = cpuTotal
	lap("total", total)
	counts := make([]string, 0, len(phases))
	for _, ph := range phases {
		counts = append(counts, fmt.Sprintf("%s: %s", ph.Phase, countLine(ph.Counts)))
	}
	sort.Strings(counts)
	t.Logf("sleep over %d lessons, %d events\n%s\n%s", len(snap.Lessons), len(snap.Events), strings.Join(steps, "\n"), strings.Join(counts, "\n"))
}

// TestMain removes the generated template stores after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range benchTemplates {
		_ = os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}
