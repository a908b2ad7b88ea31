package memfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// hookStream is a node's log as the hooks write it: sessions starting in
// time order from start, each with asks, results, tests, corrections and
// regrets, lessons created along the way; disorder is the chance of a
// session event out of order, a result in a session that never started and
// a duplicated line.
func hookStream(r *rand.Rand, node string, start int64, n int, disorder float64) []domain.Event {
	lessons := []string{"alpha-one", "beta-two", "gamma-three", "delta-four", "epsilon-five"}
	repos := []string{"api", "web", ""}
	var out []domain.Event
	var live []string
	ms := start
	for len(out) < n {
		ms += int64(1 + r.IntN(30))
		e := domain.Event{MS: ms, Lesson: lessons[r.IntN(len(lessons))], Repo: repos[r.IntN(len(repos))],
			Author: HashEngineer(node + "@example.com")}
		switch x := r.IntN(10); {
		case x == 0 || len(live) == 0:
			e.Kind, e.Lesson = domain.KindSession, ""
			e.Session = HashSession(fmt.Sprintf("%s-%d", node, len(live)))
			if r.Float64() < disorder {
				e.MS -= int64(r.IntN(300))
			}
			live = append(live, e.Session)
		case x == 1:
			e.Kind = domain.KindCreated
			if r.IntN(2) == 0 {
				e.Session = live[len(live)-1]
			}
		default:
			kinds := []domain.EventKind{domain.KindAsked, domain.KindAsked, domain.KindChanged, domain.KindChanged,
				domain.KindIgnored, domain.KindTested, domain.KindCorrected, domain.KindVetoed, domain.KindRegret,
				domain.KindPassing, domain.KindCensored}
			e.Kind = kinds[r.IntN(len(kinds))]
			e.Session = live[max(0, len(live)-1-r.IntN(3))]
			if r.Float64() < disorder/3 {
				e.Session = HashSession(fmt.Sprintf("%s-remote-%d", node, r.IntN(3)))
			}
			switch e.Kind {
			case domain.KindRegret:
				e.W = float64(r.IntN(4)) / 4
			case domain.KindPassing:
				e.Lesson, e.Src, e.Dst = "", "tool:a", "tool:b"
			}
		}
		out = append(out, e.WithID())
		if r.Float64() < disorder {
			out = append(out, out[r.IntN(len(out))])
		}
	}
	return out
}

func appendLog(t *testing.T, s *Store, name string, events []domain.Event) {
	t.Helper()
	p := filepath.Join(s.Dir(), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString(strings.Join(eventLines(events), "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// checkSummaryMemories compares the store's summary with a full derive over
// every line of every log.
func checkSummaryMemories(t *testing.T, s *Store, step string) {
	t.Helper()
	all, _, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	infos := []domain.LessonInfo{{ID: "alpha-one"}, {ID: "beta-two", Reach: "repo:api"}, {ID: "gamma-three", CreatedMS: 1_000_500},
		{ID: "delta-four", Reach: "repo:web"}, {ID: "epsilon-five"}, {ID: "zeta-none", CreatedMS: 1_000_100}}
	for _, session := range []string{"", HashSession("node-a-2"), HashSession("node-b-1"), "s-unknown"} {
		want := domain.Derive(all, infos, session, domain.DefaultWeights)
		if got := sum.Memories(infos, session, domain.DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s, session %q: summary memories\n got %+v\nwant %+v", step, session, got, want)
		}
	}
}

// TestSummaryMatchesDerive appends hook-like logs in random chunks to several
// files (the node's shared and local logs, a teammate's log that appears
// later with older sessions, duplicated lines), reading the summary at
// random points, and rewrites and shrinks files under the cache; at every
// read the summary's memories equal a full derive over all the lines.
func TestSummaryMatchesDerive(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	rebuilds, reads := int64(0), 0
	for round := 0; round < 12; round++ {
		s := newTestStore(t)
		disorder := []float64{0, 0.02, 0.2}[round%3]
		ours := hookStream(r, "node-a", 1_000_000, 400, disorder)
		theirs := hookStream(r, "node-b", 1_000_000-50_000, 200, disorder)
		mine, local, team := "log/node-a.jsonl", ".borg/local/node-a.jsonl", "log/node-b.jsonl"
		before := summaryRebuilds.Load()
		done, shared := 0, 0
		for step := 0; done < len(ours); step++ {
			switch x := r.IntN(20); {
			case x == 0 && shared < len(theirs):
				// The teammate's log arrives (a pull), older sessions included.
				k := min(len(theirs), shared+1+r.IntN(150))
				appendLog(t, s, team, theirs[shared:k])
				shared = k
			case x == 1 && done > 0:
				// A line already folded, again in the local log.
				appendLog(t, s, local, ours[r.IntN(done):][:1])
			case x == 2:
				// A torn line: not folded until it is whole.
				line, _ := json.Marshal(ours[done])
				p := filepath.Join(s.Dir(), mine)
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.Write(line[:len(line)/2])
				_ = f.Close()
				checkSummaryMemories(t, s, fmt.Sprintf("round %d step %d (torn line)", round, step))
				reads++
				f, err = os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.Write(append(line[len(line)/2:], '\n'))
				_ = f.Close()
				done++
			default:
				k := min(len(ours), done+1+r.IntN(25))
				appendLog(t, s, mine, ours[done:k])
				done = k
			}
			if r.IntN(3) == 0 {
				checkSummaryMemories(t, s, fmt.Sprintf("round %d step %d", round, step))
				reads++
			}
		}
		checkSummaryMemories(t, s, fmt.Sprintf("round %d end", round))
		reads++
		rebuilds += summaryRebuilds.Load() - before

		// A file rewritten under the cache (a merge, a reset): shrunk, and
		// rewritten with other lines of the same length.
		p := filepath.Join(s.Dir(), mine)
		data := readFile(t, p)
		lines := strings.SplitAfter(string(data), "\n")
		if err := os.WriteFile(p, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		head, _ := s.readSummaryCache()
		before = summaryRebuilds.Load()
		checkSummaryMemories(t, s, fmt.Sprintf("round %d shrunk", round))
		if cut := int64(len(strings.Join(lines[:len(lines)/2], ""))); head.Files[mine].Offset > cut && summaryRebuilds.Load() == before {
			t.Fatalf("round %d: a log shrunk under the cache's offset did not rebuild the summary", round)
		}
		// A union merge: the teammate's lines interleaved into ours.
		lines = strings.SplitAfter(string(readFile(t, p)), "\n")
		extra := eventLines(hookStream(r, "node-c", 1_000_000, 20, 0))
		for i, l := range extra {
			at := r.IntN(len(lines))
			lines = append(lines[:at], append([]string{l + "\n"}, lines[at:]...)...)
			_ = i
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		checkSummaryMemories(t, s, fmt.Sprintf("round %d merged", round))
	}
	t.Logf("%d reads, %d rebuilds", reads, rebuilds)
	if rebuilds*2 > int64(reads) {
		t.Fatalf("%d of %d reads rebuilt the summary: the fast path is hardly used", rebuilds, reads)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSummaryCacheIsACache: deleting or corrupting the summary cache loses
// nothing, and a cache of another version is rebuilt.
func TestSummaryCacheIsACache(t *testing.T) {
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(1, 2)), "node-a", 1_000_000, 300, 0.05))
	checkSummaryMemories(t, s, "first read")
	p := filepath.Join(s.Dir(), filepath.FromSlash(summaryCacheFile))
	good := readFile(t, p)
	tests := []struct {
		name string
		data []byte
	}{
		{"deleted", nil},
		{"truncated", good[:len(good)/2]},
		{"garbage", []byte("not a cache\n")},
		{"other version", []byte(strings.Replace(string(good), fmt.Sprintf(`"version":%d`, summaryCacheVersion), `"version":999`, 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(p)
			if tt.data != nil {
				if err := os.WriteFile(p, tt.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := summaryRebuilds.Load()
			checkSummaryMemories(t, s, tt.name)
			if summaryRebuilds.Load() == before {
				t.Fatal("the summary was not rebuilt")
			}
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("no cache written: %v", err)
			}
		})
	}
}

// TestSummaryCacheCorruptRecordUnread: a corrupt lesson record in the
// summary cache that the new lines do not touch is found when the cache is
// rewritten (its record copied as it is), and the summary is built again
// from the log rather than served: its memories are still the log's.
func TestSummaryCacheCorruptRecordUnread(t *testing.T) {
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(7, 8)), "node-a", 1_000_000, 300, 0.05))
	checkSummaryMemories(t, s, "first read")
	p := filepath.Join(s.Dir(), filepath.FromSlash(summaryCacheFile))
	data := readFile(t, p)
	nl := bytes.IndexByte(data, '\n')
	_, tab, err := parseSummary(data[nl+1:]) // aliases data: corrupted in place
	if err != nil || tab == nil || tab.Len() < 2 {
		t.Fatalf("parse the cache: %v", err)
	}
	bad := string(tab.ID(1))
	rec, _ := span(tab.recOff, tab.recs, 1)
	for k := range rec {
		rec[k] = 0xff // a varint that never ends
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// More than summaryRewriteAfter of new lines, none about the lesson,
	// of sessions the cache has not seen (the fold takes them).
	var tail []domain.Event
	for _, e := range hookStream(rand.New(rand.NewPCG(9, 10)), "node-c", 3_000_000, 600, 0) {
		if e.Lesson != bad {
			tail = append(tail, e)
		}
	}
	appendLog(t, s, "log/node-a.jsonl", tail)
	before := summaryRebuilds.Load()
	checkSummaryMemories(t, s, "after the tail")
	if summaryRebuilds.Load() == before {
		t.Fatal("the summary was not rebuilt")
	}
}

// TestSummaryWithin: SummaryWithin serves the cache with new lines folded
// in, rebuilds it when the log fits its budget, and reports nil (rebuilding
// nothing) when only a rebuild from more log than the budget would do;
// Summary then rebuilds it.
func TestSummaryWithin(t *testing.T) {
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(3, 4)), "node-a", 1_000_000, 200, 0.05))
	fi, err := os.Stat(filepath.Join(s.Dir(), "log", "node-a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	before := summaryRebuilds.Load()
	for _, budget := range []int64{-1, 0, fi.Size() - 1} {
		if sum, _, err := s.SummaryWithin(budget, math.MaxInt64); err != nil || sum != nil {
			t.Fatalf("budget %d without a cache: %v %v", budget, sum, err)
		}
	}
	if summaryRebuilds.Load() != before {
		t.Fatal("SummaryWithin rebuilt the summary over its budget")
	}
	if sum, _, err := s.SummaryWithin(fi.Size(), math.MaxInt64); err != nil || sum == nil {
		t.Fatalf("budget of the log's size: %v %v", sum, err)
	}
	if summaryRebuilds.Load() != before+1 {
		t.Fatal("SummaryWithin did not rebuild the summary within its budget")
	}
	if err := os.Remove(filepath.Join(s.Dir(), filepath.FromSlash(summaryCacheFile))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(5, 6)), "node-a", 2_000_000, 5, 0.05))
	sum, _, err := s.SummaryWithin(0, math.MaxInt64)
	if err != nil || sum == nil {
		t.Fatalf("with a cache and new lines: %v %v", sum, err)
	}
	want, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	var infos []domain.LessonInfo
	for _, id := range []string{"alpha-one", "beta-two", "gamma-three", "delta-four", "epsilon-five"} {
		infos = append(infos, domain.LessonInfo{ID: id})
	}
	got := sum.Memories(infos, "", domain.DefaultWeights)
	if got[0].Asked == 0 || !reflect.DeepEqual(got, want.Memories(infos, "", domain.DefaultWeights)) {
		t.Fatal("the cached summary and the summary disagree")
	}
}

// TestSummaryRewriteDeferred: once enough lines were appended to a summary
// cache larger than the caller's bound, SummaryWithin folds them and reports the rewrite due
// instead of rewriting the cache (a hook leaves that to a background
// process), serving the same summary; Summary rewrites it; and past
// summaryRewriteLagMax SummaryWithin rewrites it itself. A cache within
// the caller's bound is rewritten at once.
func TestSummaryRewriteDeferred(t *testing.T) {
	s := newTestStore(t)
	log := filepath.Join(s.Dir(), "log", "node-a.jsonl")
	cache := filepath.Join(s.Dir(), filepath.FromSlash(summaryCacheFile))
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(3, 4)), "node-a", 1_000_000, 200, 0.05))
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
	var infos []domain.LessonInfo
	for _, id := range []string{"alpha-one", "beta-two", "gamma-three", "delta-four", "epsilon-five"} {
		infos = append(infos, domain.LessonInfo{ID: id})
	}
	// grow appends new sessions' lines until the log grew by at least n
	// bytes since the cache was written.
	start := int64(2_000_000)
	grow := func(n int64) {
		t.Helper()
		base := readFile(t, cache)
		var head summaryHead
		if err := json.Unmarshal(base[:bytes.IndexByte(base, '\n')], &head); err != nil {
			t.Fatal(err)
		}
		covered := head.Files["log/node-a.jsonl"].Offset
		for {
			fi, err := os.Stat(log)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size()-covered >= n {
				return
			}
			// New sessions asking and changing: lines Fold takes without
			// the full ledger.
			var evs []domain.Event
			for i := range 10 {
				sess := HashSession(fmt.Sprintf("grow-%d-%d", start, i))
				ms := start + int64(i)*10
				evs = append(evs,
					domain.Event{MS: ms, Kind: domain.KindSession, Session: sess, Repo: "api"}.WithID(),
					domain.Event{MS: ms + 1, Kind: domain.KindAsked, Session: sess, Lesson: infos[i%len(infos)].ID, Repo: "api"}.WithID(),
					domain.Event{MS: ms + 2, Kind: domain.KindChanged, Session: sess, Lesson: infos[i%len(infos)].ID, Repo: "api"}.WithID())
			}
			appendLog(t, s, "log/node-a.jsonl", evs)
			start += 1_000
		}
	}
	rewriteBytes := int64(math.MaxInt64)
	check := func(step string, wantDue, wantRewritten bool) {
		t.Helper()
		before := readFile(t, cache)
		sum, due, err := s.SummaryWithin(0, rewriteBytes)
		if err != nil || sum == nil {
			t.Fatalf("%s: SummaryWithin: %v %v", step, sum, err)
		}
		if due != wantDue {
			t.Errorf("%s: rewrite due %v, want %v", step, due, wantDue)
		}
		if rewritten := !bytes.Equal(before, readFile(t, cache)); rewritten != wantRewritten {
			t.Errorf("%s: cache rewritten %v, want %v", step, rewritten, wantRewritten)
		}
		all, _, err := s.ReadEvents()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sum.Memories(infos, "", domain.DefaultWeights), domain.Derive(all, infos, "", domain.DefaultWeights); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the served summary and a derive over the log disagree\n got %+v\nwant %+v", step, got, want)
		}
	}
	grow(summaryRewriteAfter)
	check("a cache within the bound", false, true)

	rewriteBytes = 0 // every cache is large
	grow(summaryRewriteAfter / 2)
	check("under the rewrite mark", false, false)
	grow(summaryRewriteAfter)
	check("a large cache, the rewrite due", true, false)
	check("due again", true, false)
	before := readFile(t, cache)
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, readFile(t, cache)) {
		t.Fatal("Summary did not rewrite the due cache")
	}
	check("after Summary's rewrite", false, false)
	grow(summaryRewriteLagMax)
	check("past the lag bound", false, true)
}

// TestLastSummary: the last summary written serves while the cache cannot
// (a log rewritten under it), and there is none before the first.
func TestLastSummary(t *testing.T) {
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(7, 8)), "node-a", 1_000_000, 50, 0.05))
	if s.LastSummary() != nil {
		t.Fatal("a last summary before any was written")
	}
	want, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the log in place: the cache no longer matches it.
	p := filepath.Join(s.Dir(), "log", "node-a.jsonl")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	appendLog(t, s, "log/node-a.jsonl", hookStream(rand.New(rand.NewPCG(9, 10)), "node-a", 1_000_000, 50, 0.05))
	if sum, _, err := s.SummaryWithin(0, math.MaxInt64); err != nil || sum != nil {
		t.Fatalf("SummaryWithin(0) over a rewritten log: %v %v", sum, err)
	}
	last := s.LastSummary()
	if last == nil {
		t.Fatal("no last summary after one was written")
	}
	infos := []domain.LessonInfo{{ID: "alpha-one"}, {ID: "beta-two"}}
	if !reflect.DeepEqual(last.Memories(infos, "", domain.DefaultWeights), want.Memories(infos, "", domain.DefaultWeights)) {
		t.Fatal("the last summary is not the one written")
	}
}

// TestColdBuildOnce: commands started together on a store whose derived
// state is missing (a fresh clone) build it once: the others wait for the
// build and read what it wrote, whichever comes first, in this process or
// in another (the lock is a file lock).
func TestColdBuildOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(r, "node-a", 1_000_000, 3000, 0))
	appendLog(t, s, "log/node-b.jsonl", hookStream(r, "node-b", 1_000_000, 2000, 0))
	const readers = 4
	before := summaryRebuilds.Load()
	var wg sync.WaitGroup
	sums := make([]*domain.Summary, readers)
	errs := make([]error, readers)
	for i := range readers {
		// Each its own Store, as each command opens one.
		other, err := Open(s.Dir())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { sums[i], errs[i] = other.Summary() })
	}
	wg.Wait()
	for i := range readers {
		if errs[i] != nil || sums[i] == nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
	}
	if n := summaryRebuilds.Load() - before; n != 1 {
		t.Fatalf("%d builds from the whole log for %d commands started together, want 1", n, readers)
	}
	checkSummaryMemories(t, s, "after the cold build")
}

// TestBuildProgress: a build from the whole log reports its advance in
// steps, in order, ending with everything done; a build that only folds
// new lines reports nothing.
func TestBuildProgress(t *testing.T) {
	defer func(step int64) { progressStep = step }(progressStep)
	progressStep = 16 << 10
	r := rand.New(rand.NewPCG(3, 11))
	s := newTestStore(t)
	appendLog(t, s, "log/node-a.jsonl", hookStream(r, "node-a", 1_000_000, 1500, 0))
	appendLog(t, s, "log/node-b.jsonl", hookStream(r, "node-b", 1_000_000, 1000, 0))
	// Committed, so the build walks the history that added them first.
	gitAs(t, s.Dir(), "ada@example.com", "add", "log")
	gitAs(t, s.Dir(), "ada@example.com", "commit", "-qm", "the team's sessions")
	type report struct{ done, total int64 }
	var got []report
	phases := map[string][]report{}
	watched, err := Open(s.Dir(), WithProgress(func(phase string, done, total int64) {
		if phase != PhaseLog && phase != PhaseAttrib {
			t.Errorf("phase %q", phase)
		}
		if phase == PhaseLog && len(phases[PhaseAttrib]) > 0 {
			if a := phases[PhaseAttrib]; a[len(a)-1].done != a[len(a)-1].total {
				t.Errorf("the fold began before the walk of history ended: %+v", a)
			}
		}
		phases[phase] = append(phases[phase], report{done, total})
		got = append(got, report{done, total})
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watched.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{PhaseAttrib, PhaseLog} {
		if reps := phases[phase]; len(reps) < 3 {
			t.Fatalf("%s: %d reports for a build in steps of %d", phase, len(reps), progressStep)
		}
	}
	for phase, reps := range phases {
		for i, g := range reps {
			if g.total != reps[0].total || g.done > g.total || (i > 0 && g.done < reps[i-1].done) {
				t.Fatalf("%s: report %d: %+v after %+v", phase, i, g, reps[max(i-1, 0)])
			}
		}
		if last := reps[len(reps)-1]; last.done != last.total || last.total == 0 {
			t.Fatalf("%s: last report %+v, want all done", phase, last)
		}
	}
	got = nil
	appendLog(t, s, "log/node-a.jsonl", hookStream(r, "node-a", 2_000_000, 10, 0))
	if _, err := watched.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("folding new lines reported %d times", len(got))
	}
}

// TestStampedFilesAreReadAgainWhenReplaced: a log file old enough to be
// stamped is not read again while its stamp holds; one replaced by
// another file of the same size and time (as git replaces a file it checks
// out) is.
func TestStampedFilesAreReadAgainWhenReplaced(t *testing.T) {
	s := newTestStore(t)
	// The same size, told apart by their kinds ("changed", "ignored").
	one := []domain.Event{claim(1, domain.KindChanged, "s1", "ada@example.com")}
	two := []domain.Event{claim(1, domain.KindIgnored, "s2", "ada@example.com")}
	if len(eventLines(one)[0]) != len(eventLines(two)[0]) {
		t.Fatal("the two lines must be the same size")
	}
	p := filepath.Join(s.Dir(), "log", "n-other.jsonl")
	old := time.Now().Add(-time.Hour)
	writeLog(t, s, "log/n-other.jsonl", one)
	if fi, err := os.Stat(p); err != nil || fileStamp(fi) == "" {
		t.Skip("no inodes here: files are never stamped")
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	// results is what the ledger holds for the lesson: changed, ignored.
	results := func() [2]int {
		t.Helper()
		l, err := s.LoadLedger()
		if err != nil {
			t.Fatal(err)
		}
		m := l.Memories([]domain.LessonInfo{{ID: "retry-lesson"}}, "", domain.DefaultWeights)[0]
		return [2]int{m.Changed, m.Ignored}
	}
	if got := results(); got != [2]int{1, 0} {
		t.Fatalf("results %v, want the first file's change", got)
	}
	results() // now stamped in the cache
	c := s.readLedgerCache()
	if c == nil || c.Files["log/n-other.jsonl"].Stamp == "" {
		t.Fatal("an old, whole log file is not stamped")
	}
	// Replaced: same size, same time, another inode.
	if err := WriteFileAtomic(p, []byte(eventLines(two)[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if got := results(); got != [2]int{0, 1} {
		t.Fatalf("after the file was replaced: results %v, want the second file's", got)
	}
}
