package memfs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/scripts/benchtest"
)

// BenchmarkLessons10k reads and parses 10,000 lesson files.
func BenchmarkLessons10k(b *testing.B) {
	s := newTestStore(b)
	const n = 10000
	for i := 0; i < n; i++ {
		l := sampleLesson(fmt.Sprintf("bench-lesson-%05d", i))
		l.Tags = []string{"go", "bench"}
		l.Body = "Why: the schema is not auto-applied, so the integration tests see an empty database.\n\nSee the runbook."
		writeStoreFile(b, s, LessonPath(l.ID), Render(l))
	}
	b.ResetTimer()
	for b.Loop() {
		ls, errs := s.Lessons()
		if len(ls) != n || len(errs) != 0 {
			b.Fatalf("%d lessons, %d errors", len(ls), len(errs))
		}
	}
}

// writeBenchLog writes an n-line log of plausible events.
func writeBenchLog(b *testing.B, s *Store, n int) {
	b.Helper()
	f, err := os.Create(filepath.Join(s.Dir(), LogDir, "n-bench.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	kinds := []domain.EventKind{domain.KindSession, domain.KindAsked, domain.KindChanged, domain.KindIgnored, domain.KindTested, domain.KindCreated}
	for i := 0; i < n; i++ {
		e := domain.Event{
			MS: 1_790_000_000_000 + int64(i), Kind: kinds[i%len(kinds)],
			Session: HashSession(fmt.Sprint("session-", i/20)), Repo: "api", Author: "e-0123abcd",
		}
		if e.Kind != domain.KindSession {
			e.Lesson = fmt.Sprintf("bench-lesson-%04d", i%2000)
		}
		line, _ := json.Marshal(e.WithID())
		_, _ = w.Write(line)
		_ = w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

const benchLogLines = 1_000_000

// BenchmarkReadEvents1M reads, parses and deduplicates a 1,000,000-line log.
func BenchmarkReadEvents1M(b *testing.B) {
	s := newTestStore(b)
	writeBenchLog(b, s, benchLogLines)
	b.ResetTimer()
	for b.Loop() {
		events, rep, err := s.ReadEvents()
		if err != nil || len(events) != benchLogLines || len(rep.Skipped) != 0 {
			b.Fatalf("%d events, %v", len(events), err)
		}
	}
}

// BenchmarkLoadLedgerCold folds a 1,000,000-line log into a ledger from
// scratch (no cache).
func BenchmarkLoadLedgerCold(b *testing.B) {
	s := newTestStore(b)
	writeBenchLog(b, s, benchLogLines)
	cache := filepath.Join(s.Dir(), filepath.FromSlash(ledgerCacheFile))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		_ = os.Remove(cache)
		b.StartTimer()
		if _, err := s.LoadLedger(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadLedgerWarm loads the cached ledger of a 1,000,000-line log
// after one more event was appended: the query path.
func BenchmarkLoadLedgerWarm(b *testing.B) {
	s := newTestStore(b)
	writeBenchLog(b, s, benchLogLines)
	if _, err := s.LoadLedger(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		if err := s.Append(domain.Event{MS: int64(i), Kind: domain.KindAsked, Session: "s-0000000000000001", Lesson: "bench-lesson-0001"}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.LoadLedger(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummaryRewrite1M: Summary on a 1,000,000-line log after more
// than summaryRewriteAfter bytes were appended (new sessions asking
// lessons, as hooks append them): the tail is folded in and the cache
// rewritten, which one hook call in a few dozen pays.
func BenchmarkSummaryRewrite1M(b *testing.B) {
	s := newTestStore(b)
	writeBenchLog(b, s, benchLogLines)
	if _, err := s.Summary(); err != nil {
		b.Fatal(err)
	}
	ms := int64(1_800_000_000_000)
	size := logBytes(b, s)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for grown := int64(0); grown <= summaryRewriteAfter; grown = logBytes(b, s) - size {
			ms++
			session := HashSession(fmt.Sprint("late-", ms))
			for _, e := range []domain.Event{{MS: ms, Kind: domain.KindSession, Session: session, Repo: "api"},
				{MS: ms, Kind: domain.KindAsked, Session: session, Lesson: fmt.Sprintf("bench-lesson-%04d", ms%2000)}} {
				if err := s.Append(e); err != nil {
					b.Fatal(err)
				}
			}
		}
		size = logBytes(b, s)
		cache := filepath.Join(s.Dir(), filepath.FromSlash(summaryCacheFile))
		st, err := os.Stat(cache)
		if err != nil {
			b.Fatal(err)
		}
		before := summaryRebuilds.Load()
		b.StartTimer()
		if _, err := s.Summary(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if summaryRebuilds.Load() != before {
			b.Fatal("the summary was rebuilt from the ledger, not folded and rewritten")
		}
		if now, err := os.Stat(cache); err != nil || os.SameFile(now, st) {
			b.Fatalf("the cache was not rewritten (%v)", err)
		}
		b.StartTimer()
	}
}

// logBytes is the size of the store's log files.
func logBytes(b *testing.B, s *Store) int64 {
	entries, err := os.ReadDir(filepath.Join(s.Dir(), LogDir))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkParse parses one rendered lesson.
func BenchmarkParse(b *testing.B) {
	data := Render(goldenLesson())
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitIn10k commits one new lesson in a store that already
// holds 10,000 committed lessons (tree and index included).
func BenchmarkCommitIn10k(b *testing.B) { benchCommitIn(b, 10000) }

// BenchmarkCommitIn100k is BenchmarkCommitIn10k at 100,000 lessons (borg
// learn's commit in a large store). Building the store takes a while, so it
// runs only with BORG_BENCH_100K=1.
func BenchmarkCommitIn100k(b *testing.B) {
	if os.Getenv("BORG_BENCH_100K") != "1" {
		b.Skip("set BORG_BENCH_100K=1 to build a 100,000-lesson store")
	}
	benchCommitIn(b, 100000)
}

// committedStore is a store holding n committed lessons. BORG_BENCH_GITCONFIG
// (key=value, e.g. core.splitIndex=true) is set in its git config first.
func committedStore(b *testing.B, n int) *Store {
	b.Helper()
	s := newTestStore(b)
	if kv := os.Getenv("BORG_BENCH_GITCONFIG"); kv != "" {
		k, v, _ := strings.Cut(kv, "=")
		gitCLI(b, s.Dir(), "config", k, v)
	}
	paths := make([]string, 0, n)
	for i := 0; i < n; i++ {
		l := sampleLesson(fmt.Sprintf("bench-lesson-%06d", i))
		writeStoreFile(b, s, LessonPath(l.ID), Render(l))
		paths = append(paths, LessonPath(l.ID))
	}
	if _, err := s.Commit(fmt.Sprint(n, " lessons"), paths...); err != nil {
		b.Fatal(err)
	}
	// The files were written in the second the index was: git treats such
	// entries as racily clean and rereads each at every index write. A
	// store's files are older than its index; so are these once git has
	// written the index a second later.
	time.Sleep(1100 * time.Millisecond)
	gitCLI(b, s.Dir(), "update-index", "-q", "--really-refresh")
	return s
}

func benchCommitIn(b *testing.B, n int) {
	s := committedStore(b, n)
	i := 0
	cpu, _ := benchtest.ProcessCPU()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		i++
		l := sampleLesson(fmt.Sprintf("new-lesson-%05d", i))
		if err := s.WriteLesson(l); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Commit("learn", LessonPath(l.ID)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitOnRef10kChanged commits 10,000 changed lessons of a
// 10,000-lesson store on a side ref, as sleep's decay phase does.
func BenchmarkCommitOnRef10kChanged(b *testing.B) {
	const n = 10000
	s := committedStore(b, n)
	base, err := s.ResolveRef("HEAD")
	if err != nil {
		b.Fatal(err)
	}
	changes := make([]FileChange, n)
	i := 0
	cpu, _ := benchtest.ProcessCPU()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		i++
		for k := range changes {
			l := sampleLesson(fmt.Sprintf("bench-lesson-%06d", k))
			l.Confidence = 0.5 + float64(i%40)/100
			changes[k] = FileChange{Path: LessonPath(l.ID), Data: Render(l)}
		}
		ref := fmt.Sprintf("refs/borg/bench-%d", i)
		if _, err := s.CommitOnRef(ref, "", base, changes, "decay", s.now()); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU reports the process's CPU time since start per op (all
// goroutines, the timed loop only when called after it).
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		now, _ := benchtest.ProcessCPU()
		b.ReportMetric(float64(now-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkReadDirAt10k reads lessons/ of a 10,000-lesson commit, as
// sleep's snapshot does.
func BenchmarkReadDirAt10k(b *testing.B) {
	s := committedStore(b, 10000)
	cpu, _ := benchtest.ProcessCPU()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		files, err := s.ReadDirAt("HEAD", LessonsDir)
		if err != nil || len(files) < 10000 {
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}
