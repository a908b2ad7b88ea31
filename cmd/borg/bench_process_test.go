package main

import (
	"bufio"
	"bytes"
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
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// The process benchmarks time borg as an agent and git run it: a fresh
// process per call, on a generated store (default 10,000 lessons and
// 1,000,000 log events; BORG_BENCH_LESSONS and BORG_BENCH_EVENTS change
// that). Each reports the median wall time per call and the same store's
// `git status` median for scale. Run them with scripts/bench-hooks.sh.

func benchSizes() (lessons, events int) {
	lessons, events = 10000, 1000000
	if n, err := strconv.Atoi(os.Getenv("BORG_BENCH_LESSONS")); err == nil && n > 0 {
		lessons = n
	}
	if n, err := strconv.Atoi(os.Getenv("BORG_BENCH_EVENTS")); err == nil && n >= 0 {
		events = n
	}
	return lessons, events
}

// benchEnv is the benchmarks' environment. The relevance floor is off: the
// generated lessons are word salad no real session covers, and the
// benchmarks time the path a Stop takes when it asks (every hit's
// relevance is still computed).
func benchEnv(store string) []string {
	return append(os.Environ(), "BORG_STORE="+store, "BORG_ENGINEER=bench@example.com", "BORG_PLACEBO_RATE=0", "BORG_FLOOR=0",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
}

// benchStore returns a generated store, cached in the temp dir across runs
// (generation takes a while at full size).
//
// BORG_BENCH_STORE names a store to use instead, as `go run
// ./scripts/genstore -out DIR` makes one (a team's: many engineers' logs,
// near-duplicates, rewritten facts); benchmarks that change it put it back.
func benchStore(b *testing.B, bin string) string {
	b.Helper()
	if dir := os.Getenv("BORG_BENCH_STORE"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, ".borg", "genstore-ready")); err != nil {
			b.Fatalf("BORG_BENCH_STORE=%s is not a finished genstore store (go run ./scripts/genstore -out %s): %v", dir, dir, err)
		}
		return dir
	}
	nl, ne := benchSizes()
	// v4: lessons in their buckets (v3's were flat); the log is committed
	// (v1 stores lost theirs to the first reset) and its events name their
	// engineer (v2's did not).
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("borg-bench-store-v4-%d-%d", nl, ne))
	env := benchEnv(dir)
	run := func(stdin string, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("borg %v: %v\n%s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".borg", "bench-ready")); err == nil {
		// A store cached by an earlier run, whose index another build may
		// have written in another format: brought up to date untimed, as a
		// hook would find it.
		run("", "recall", "warm up the index and the ledger cache")
		return dir
	}
	_ = os.RemoveAll(dir)
	run("", "init", "--store", dir)
	words := benchVocabulary()
	r := domain.NewRng(42)
	pick := func() string { return words[min(r.Intn(len(words)), r.Intn(len(words)))] }
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = pick()
		}
		return strings.Join(ws, " ")
	}
	ids := make([]string, nl)
	for i := 0; i < nl; i++ {
		l := domain.Lesson{ID: fmt.Sprintf("bench-lesson-%06d", i), Type: domain.TypeSemantic, Confidence: 0.8,
			Gist: sentence(8+r.Intn(8)) + ".", Body: sentence(20+r.Intn(40)) + "."}
		ids[i] = l.ID
		p := filepath.Join(dir, filepath.FromSlash(memfs.LessonPath(l.ID)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, memfs.Render(l), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	testGit(b, dir, env, "add", "lessons")
	testGit(b, dir, env, "commit", "-q", "-m", "bench lessons")
	st, err := memfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, st.LogPath()), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	ms := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	// Every event names its engineer, as a hook's does: a line whose
	// claimed author is not its committer's makes the summary cache
	// rebuild when borg learn commits it (attribution moves it).
	author := memfs.HashEngineer("bench@example.com")
	kinds := []domain.EventKind{domain.KindAsked, domain.KindChanged, domain.KindIgnored, domain.KindTested}
	for i, sess := 0, 0; i < ne; sess++ {
		s := fmt.Sprintf("s-%016x", sess)
		ms += 60000
		for k := 0; k < 10 && i < ne; k, i = k+1, i+1 {
			e := domain.Event{MS: ms + int64(k), Session: s, Kind: domain.KindSession, Author: author}
			if k > 0 {
				e.Kind, e.Lesson = kinds[r.Intn(len(kinds))], ids[r.Intn(len(ids))]
			}
			line, _ := json.Marshal(e.WithID())
			w.Write(line)
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	_ = f.Close()
	// Committed, as a team's log is: a benchmark that resets the store to
	// this HEAD (after a borg learn committed the log) keeps every event.
	testGit(b, dir, env, "add", "log")
	testGit(b, dir, env, "commit", "-q", "-m", "bench log")
	run("", "recall", "warm up the index and the ledger cache")
	_ = os.WriteFile(filepath.Join(dir, ".borg", "bench-ready"), nil, 0o644)
	return dir
}

func benchVocabulary() []string {
	base := strings.Fields(`migrate schema database index query cache timeout retry backoff jitter client server
request response handler router middleware token session cookie header payload json yaml config deploy release
build test flaky lint format vet race goroutine channel mutex lock deadlock context cancel error wrap panic recover
log metric trace span alert pager incident outage rollback feature flag canary shard replica leader follower
queue worker batch stream kafka redis postgres mysql sqlite bucket upload download proxy gateway payments billing
invoice ledger refund currency account user admin permission role secret vault rotate certificate tls dns port`)
	var out []string
	for _, a := range base {
		out = append(out, a)
		for _, s := range []string{"s", "ing", "er"} {
			out = append(out, a+s)
		}
	}
	return out
}

// timeCalls runs call n times and returns the median duration.
func timeCalls(n int, call func(i int)) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		call(i)
		ds[i] = time.Since(t0)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

// timeCallsAfter is timeCalls with an untimed setup before each call.
func timeCallsAfter(n int, setup func(i int) string, call func(string)) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		arg := setup(i)
		t0 := time.Now()
		call(arg)
		ds[i] = time.Since(t0)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

func gitStatusMedian(b *testing.B, dir string, n int) time.Duration {
	return timeCalls(n, func(int) {
		testGit(b, dir, nil, "status", "--porcelain")
	})
}

func report(b *testing.B, d, gitStatus time.Duration) {
	b.ReportMetric(float64(d.Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(gitStatus.Microseconds())/1000, "git-status-ms")
	b.ReportMetric(float64(d)/float64(gitStatus), "x-git-status")
}

// BenchmarkStopHookProcess: `borg hook stop` end to end (process start to
// exit), each call a session's first stop (recall, block, asked events):
//   - project: the agent works in a git project (200 files, one changed)
//     whose session started earlier (an untimed session-start hook took the
//     work tree's snapshot), so the stop reads the diff since then: the
//     case an installed agent runs;
//   - no-repo: the agent's directory is not a git repository and the stop
//     is the session's first hook (no git at all).
func BenchmarkStopHookProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	env := benchEnv(store)
	const msg = "I added a retry with backoff to the payments gateway client and a timeout to the request context."
	run := func(b *testing.B, verb, in string) string {
		cmd := exec.Command(bin, "hook", verb)
		cmd.Env, cmd.Stdin = env, strings.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || errb.Len() > 0 {
			b.Fatalf("hook %s: %v %s", verb, err, errb.String())
		}
		return out.String()
	}
	for _, tc := range []struct {
		name string
		proj func(b *testing.B) string
		// started runs the session's earlier hooks (untimed).
		started bool
	}{
		{"project", benchProject, true},
		{"no-repo", func(b *testing.B) string { return b.TempDir() }, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			proj := tc.proj(b)
			b.ResetTimer()
			d := timeCallsAfter(b.N, func(i int) string {
				session := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)
				if tc.started {
					run(b, "session-start", fmt.Sprintf(`{"session_id":%q,"cwd":%q,"source":"startup"}`, session, proj))
				}
				return session
			}, func(session string) {
				out := run(b, "stop", fmt.Sprintf(`{"session_id":%q,"cwd":%q,"last_assistant_message":%q}`, session, proj, msg))
				if !strings.Contains(out, `"decision":"block"`) {
					b.Fatalf("hook stop did not ask: %q", out)
				}
			})
			b.StopTimer()
			report(b, d, gitStatusMedian(b, store, 21))
		})
	}
}

// BenchmarkStopAfterChangeProcess: the first `borg hook stop` after a
// lesson file changed (as after a borg learn, a pull or a hand edit): the
// hook's sync re-reads that file, re-analyses and re-embeds that lesson,
// and rewrites the catalog and the sidecar. Untimed before each call: one
// lesson file rewritten through a rename (so lessons/ changes, as when borg
// writes a lesson); restored at the end.
func BenchmarkStopAfterChangeProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	env := benchEnv(store)
	path := filepath.Join(store, filepath.FromSlash(memfs.LessonPath("bench-lesson-000001")))
	if os.Getenv("BORG_BENCH_STORE") != "" {
		// A genstore store: its second lesson file.
		names, err := filepath.Glob(filepath.Join(store, "lessons", "*", "*.html"))
		if err != nil || len(names) < 2 {
			b.Fatalf("no lessons in %s: %v", store, err)
		}
		path = names[1]
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	write := func(data []byte) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	defer write(orig)
	open, shut := []byte("<mark>"), []byte("</mark>")
	i0, i1 := bytes.Index(orig, open), bytes.Index(orig, shut)
	if i0 < 0 || i1 < i0 {
		b.Fatal("bench lesson without a gist")
	}
	proj := b.TempDir()
	b.ResetTimer()
	d := timeCallsAfter(b.N, func(i int) string {
		gist := fmt.Sprintf("payments gateway retries with backoff, revision %d-%d.", i, time.Now().UnixNano())
		write(append(append(append([]byte{}, orig[:i0+len(open)]...), gist...), orig[i1:]...))
		return fmt.Sprintf("bench-change-%d-%d", time.Now().UnixNano(), i)
	}, func(session string) { stopAsks(b, bin, env, session, proj) })
	b.StopTimer()
	report(b, d, gitStatusMedian(b, store, 21))
}

// BenchmarkStopAfterLearnProcess: the first `borg hook stop` after a
// `borg learn` (the product path: learn writes and commits the lesson, so
// HEAD moves and the hook's sync reads the change from git, not a listing
// of lessons/). Untimed before each call: one borg learn of a new lesson.
// The store's HEAD and lessons/ are put back at the end (the learned
// lessons go); the log keeps the events the calls appended, as a store in
// use does: reverting it would leave the next run a log summary to rebuild.
// BenchmarkStopAfterChangeProcess is the hand-edit path (HEAD unmoved: the
// full listing).
func BenchmarkStopAfterLearnProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	env := benchEnv(store)
	head := strings.TrimSpace(testGit(b, store, env, "rev-parse", "HEAD"))
	defer func() {
		testGit(b, store, env, "reset", "-q", "--soft", head)
		testGit(b, store, env, "reset", "-q", head, "--", "lessons")
		testGit(b, store, env, "checkout", "-q", head, "--", "lessons")
		testGit(b, store, env, "clean", "-fdq", "lessons")
	}()
	proj := b.TempDir()
	b.ResetTimer()
	d := timeCallsAfter(b.N, func(i int) string {
		stamp := fmt.Sprintf("%d-%d", i, time.Now().UnixNano())
		cmd := exec.Command(bin, "learn", "Payments gateway retries need backoff and jitter, case "+stamp,
			"--body", "Seen in run "+stamp+": the client retried without a pause.")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("borg learn: %v\n%s", err, out)
		}
		return "bench-learn-" + stamp
	}, func(session string) { stopAsks(b, bin, env, session, proj) })
	b.StopTimer()
	report(b, d, gitStatusMedian(b, store, 21))
}

// BenchmarkFirstStopNoIndexProcess: `borg hook stop` on a store whose index
// was deleted (a new store, a fresh clone), with a budget that covers every
// lesson: the hook reads, analyses and embeds all of them itself before it
// answers. Run it at the default budget's size to see that a full build of
// BORG_SYNC_BUDGET lessons fits a hook's deadline:
//
//	BORG_BENCH_LESSONS=1000 BORG_BENCH_EVENTS=100000 go test -run '^$' -bench FirstStopNoIndex -benchtime 11x ./cmd/borg
func BenchmarkFirstStopNoIndexProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	nl, _ := benchSizes()
	env := append(benchEnv(store), fmt.Sprintf("BORG_SYNC_BUDGET=%d", nl))
	ixDir := filepath.Join(store, ".borg", "index")
	b.ResetTimer()
	d := timeCallsAfter(b.N, func(i int) string {
		if err := os.RemoveAll(ixDir); err != nil {
			b.Fatal(err)
		}
		return fmt.Sprintf("bench-noindex-%d-%d", time.Now().UnixNano(), i)
	}, func(session string) {
		cmd := exec.Command(bin, "hook", "stop")
		cmd.Env = env
		cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":%q,"last_assistant_message":"I added a retry with backoff to the payments gateway client."}`, session))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || errb.Len() > 0 || !strings.Contains(out.String(), `"decision":"block"`) {
			b.Fatalf("hook stop: %v %q %s", err, out.String(), errb.String())
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(d.Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(nl), "lessons")
}

// benchProject is a git project of 200 committed files, one of them changed
// since.
func benchProject(b *testing.B) string {
	dir := b.TempDir()
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(fmt.Sprintf("package p%d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitEnv := append([]string{}, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		testGit(b, dir, gitEnv, args...)
	}
	if err := os.WriteFile(filepath.Join(dir, "f001.go"), []byte("package p1\n\n// retry the payments gateway with backoff\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkRecallProcess: `borg recall` end to end as a process, warm index.
func BenchmarkRecallProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	env := benchEnv(store)
	b.ResetTimer()
	d := timeCalls(b.N, func(i int) {
		cmd := exec.Command(bin, "recall", "payments gateway timeout and retry backoff", "--k", "5")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("recall: %v %s", err, out)
		}
	})
	b.StopTimer()
	report(b, d, gitStatusMedian(b, store, 21))
}

// BenchmarkRecallInProcess: one Search on the warm, opened index with the
// usefulness of every lesson derived from the store's summary (memfs.Summary)
// for a new session each time (its Thompson draws included).
func BenchmarkRecallInProcess(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	s, err := memfs.Open(store, memfs.WithEnv(func(k string) string { return "" }))
	if err != nil {
		b.Fatal(err)
	}
	r, err := openRetrieval(context.Background(), s, openOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := searchQuery("payments gateway timeout and retry backoff", r, memfs.HashSession(fmt.Sprintf("s-%d", i)))
		if _, err := r.ix.Search(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostCommitOverhead: `git commit` in a project with borg's
// post-commit hook installed, against the same commit without it.
func BenchmarkPostCommitOverhead(b *testing.B) {
	bin := borgBinary(b)
	store := benchStore(b, bin)
	env := benchEnv(store)
	mk := func(hook bool) string {
		dir := b.TempDir()
		for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
			testGit(b, dir, env, args...)
		}
		if hook {
			cmd := exec.Command(bin, "install", "--git", "--command", bin)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("install: %s", out)
			}
		}
		return dir
	}
	plain, hooked := mk(false), mk(true)
	commit := func(dir string, i int) {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strconv.Itoa(i)), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", "git add f.txt && git commit -q -m c")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("commit: %v %s", err, out)
		}
	}
	b.ResetTimer()
	with := timeCalls(b.N, func(i int) { commit(hooked, i) })
	without := timeCalls(b.N, func(i int) { commit(plain, i) })
	b.StopTimer()
	b.ReportMetric(float64(with.Microseconds())/1000, "commit-ms-median")
	b.ReportMetric(float64(without.Microseconds())/1000, "plain-commit-ms-median")
	b.ReportMetric(float64((with-without).Microseconds())/1000, "overhead-ms")
	b.ReportMetric(float64(gitStatusMedian(b, store, 21).Microseconds())/1000, "git-status-ms")
}

// searchQuery is a plain recall query deriving usefulness for session.
func searchQuery(text string, r *retrieval, session string) index.Query {
	return index.Query{Text: text, K: 5, UsefulFunc: r.usefulFunc(session)}
}

// stopAsks runs a session's first `borg hook stop` in proj and fails b
// unless it blocks to ask, with nothing on stderr.
func stopAsks(b *testing.B, bin string, env []string, session, proj string) {
	cmd := exec.Command(bin, "hook", "stop")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"last_assistant_message":"I added a retry with backoff to the payments gateway client."}`, session, proj))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 || !strings.Contains(out.String(), `"decision":"block"`) {
		b.Fatalf("hook stop: %v %q %s", err, out.String(), errb.String())
	}
}
