// Command genstore generates a large, realistic borg store for the scale
// benchmarks (BENCHMARKS.md): lessons written by a team, some of
// them near-duplicates of others (a teammate re-learning what was known in
// other words) and some facts rewritten months later (a value that changed),
// plus one outcome log per engineer's machine with that engineer's sessions,
// committed by that engineer, as `borg sync` would leave a team store.
//
//	go run ./scripts/genstore -out DIR [-lessons 100000] [-engineers 100] [-events 10000000] [-seed 1] [-roll 512K]
//	go run ./scripts/genstore -into STORE -append 1000
//
// The same flags give the same store, byte for byte (commit times are
// fixed). Each log rolls into segments as borg's own appends do (-roll 0
// writes one file per machine, as borg did before logs rolled). Progress
// goes to stderr. DIR must not exist yet; on success it holds
// .borg/genstore-ready.
//
// With -into, it appends that many events of new sessions to the store's
// own log instead, through borg's append (as hooks would have written
// them), without committing: what the next `borg sync` commits.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

type options struct {
	out                       string
	lessons, engineers, repos int
	events                    int
	seed                      uint64
	dupShare, factShare       float64
	roll                      string
	into                      string
	append                    int
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "", "the store to create (must not exist)")
	flag.IntVar(&o.lessons, "lessons", 100000, "lessons in lessons/")
	flag.IntVar(&o.engineers, "engineers", 100, "engineers, each with one machine's log")
	flag.IntVar(&o.repos, "repos", 20, "repositories the sessions run in")
	flag.IntVar(&o.events, "events", 10000000, "events over all logs")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed")
	flag.Float64Var(&o.dupShare, "dups", 0.06, "share of lessons that are near-duplicates of an earlier one")
	flag.Float64Var(&o.factShare, "facts", 0.02, "share of lessons that are facts rewritten later")
	flag.StringVar(&o.roll, "roll", "512K", "the size past which a machine's log rolls into a new segment (0: never)")
	flag.StringVar(&o.into, "into", "", "an existing store to append events to (with -append)")
	flag.IntVar(&o.append, "append", 0, "events to append to the -into store's own log")
	flag.Parse()
	run := generate
	switch {
	case o.into != "" && o.append > 0:
		run = appendEvents
	case o.out == "":
		fmt.Fprintln(os.Stderr, "genstore: -out DIR (or -into STORE -append N) is required")
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

// epoch is when the generated team started using borg; the store's history
// spans the year after it.
var epoch = time.Date(2025, 12, 1, 9, 0, 0, 0, time.UTC)

func generate(ctx context.Context, o options) error {
	if _, err := os.Stat(o.out); err == nil {
		return fmt.Errorf("%s exists: give a new directory", o.out)
	}
	dir, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	seedEnv := identity("seed@example.com", epoch)
	for _, kv := range seedEnv {
		k, v, _ := strings.Cut(kv, "=")
		_ = os.Setenv(k, v)
	}
	if _, err := memfs.Init(ctx, dir, "", memfs.WithClock(func() time.Time { return epoch })); err != nil {
		return err
	}
	g := newGen(o)
	ids, err := g.writeLessons(dir)
	if err != nil {
		return err
	}
	progress("committing %d lessons", len(ids))
	if err := git(dir, identity("seed@example.com", epoch), "add", memfs.LessonsDir); err != nil {
		return err
	}
	if err := git(dir, identity("seed@example.com", epoch), "commit", "-q", "--no-verify", "-m", fmt.Sprintf("genstore: %d lessons", len(ids))); err != nil {
		return err
	}
	if err := g.writeLogs(dir, ids); err != nil {
		return err
	}
	progress("done: %s", dir)
	return os.WriteFile(filepath.Join(dir, ".borg", "genstore-ready"), []byte(fmt.Sprintf("%+v\n", o)), 0o644)
}

// identity is the environment of a git commit by email at when.
func identity(email string, when time.Time) []string {
	stamp := strconv.FormatInt(when.Unix(), 10) + " +0000"
	name, _, _ := strings.Cut(email, "@")
	return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_COMMITTER_NAME=" + name,
		"GIT_COMMITTER_EMAIL=" + email, "GIT_AUTHOR_DATE=" + stamp, "GIT_COMMITTER_DATE=" + stamp}
}

func git(dir string, env []string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "genstore: "+format+"\n", args...)
}

type gen struct {
	o    options
	r    *domain.Rng
	eng  []engineer
	roll int64 // bytes; 0: logs never roll
}

type engineer struct {
	email, author, node string
	ms                  int64 // the time of its last session, unix ms
	sessions            int
	segment             int // the log segment appended to
}

func newGen(o options) *gen {
	g := &gen{o: o, r: domain.NewRng(o.seed)}
	if o.roll != "0" {
		g.roll, _ = memfs.ParseSize(o.roll)
	}
	for i := 0; i < o.engineers; i++ {
		email := fmt.Sprintf("engineer-%03d@example.com", i)
		g.eng = append(g.eng, engineer{email: email, author: memfs.HashEngineer(email), node: fmt.Sprintf("n-%012x", uint64(i)*0x9e3779b97f4a7c15>>16&0xffffffffffff)})
	}
	return g
}

// writeLessons writes o.lessons lesson files and returns their ids in the
// order they were learned. Most are a topic's words in a sentence of their
// own; o.dupShare re-say an earlier lesson with a word or two changed; and
// o.factShare are facts ("The X of Service runs at V.") of which the later
// half rewrite the value of an earlier one.
func (g *gen) writeLessons(dir string) ([]string, error) {
	n := g.o.lessons
	ids := make([]string, 0, n)
	facts := max(2, int(float64(n)*g.o.factShare)) &^ 1
	gists := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var l domain.Lesson
		switch {
		case i < facts/2:
			l = g.fact(i, false)
		case i >= n-facts/2:
			l = g.fact(i-(n-facts/2), true)
		case i > 100 && g.r.Float64() < g.o.dupShare:
			l = g.nearDuplicate(gists[g.r.Intn(len(gists))])
		default:
			l = g.fresh()
		}
		l.ID = fmt.Sprintf("gen-%06d-%s", i, slug(l.Gist))
		author := g.eng[g.r.Intn(len(g.eng))]
		l.Author = author.author
		l.Confidence = 0.5 + 0.45*g.r.Float64()
		l.Importance = 1 + g.r.Intn(10)
		l.Created = epoch.Add(time.Duration(float64(300*24*time.Hour) * float64(i) / float64(n)))
		if g.r.Intn(4) == 0 {
			l.Reach = domain.ReachRepoPrefix + repoTag(g.r.Intn(g.o.repos))
		}
		p := filepath.Join(dir, filepath.FromSlash(memfs.LessonPath(l.ID)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, memfs.Render(l), 0o644); err != nil {
			return nil, err
		}
		ids = append(ids, l.ID)
		gists = append(gists, l.Gist)
		if (i+1)%10000 == 0 {
			progress("lessons %d/%d", i+1, n)
		}
	}
	return ids, nil
}

func (g *gen) fresh() domain.Lesson {
	t := vocab[g.r.Intn(len(vocab))]
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			if g.r.Intn(3) == 0 {
				ws[i] = common[g.r.Intn(len(common))]
			} else {
				ws[i] = t.words[g.r.Intn(len(t.words))]
			}
		}
		return strings.Join(ws, " ")
	}
	gist := capitalise(words(8+g.r.Intn(8))) + "."
	return domain.Lesson{Type: types[g.r.Intn(len(types))], Gist: gist, Body: capitalise(words(20+g.r.Intn(40))) + ".",
		Tags: []string{t.name}}
}

// nearDuplicate re-says gist: one or two words swapped for others of the
// vocabulary, sometimes one added.
func (g *gen) nearDuplicate(gist string) domain.Lesson {
	ws := strings.Fields(strings.TrimSuffix(gist, "."))
	for k := 1 + g.r.Intn(2); k > 0; k-- {
		ws[g.r.Intn(len(ws))] = common[g.r.Intn(len(common))]
	}
	if g.r.Intn(2) == 0 {
		ws = append(ws, common[g.r.Intn(len(common))])
	}
	return domain.Lesson{Type: domain.TypeSemantic, Gist: capitalise(strings.ToLower(strings.Join(ws, " "))) + ".",
		Body: "Learned again in another session."}
}

// fact is the k-th fact: the same subject and relation for the old and the
// new version, another value for the new one.
func (g *gen) fact(k int, rewritten bool) domain.Lesson {
	subject := fmt.Sprintf("%s %s", capitalise(services[k%len(services)]), relations[(k/len(services))%len(relations)])
	value := 1 + (k*7)%23
	if rewritten {
		value = 1 + (value+5)%23
	}
	gist := fmt.Sprintf("The nightly %s of batch %d runs at %02d:30 UTC.", subject, k/(len(services)*len(relations)), value)
	return domain.Lesson{Type: domain.TypeSemantic, Gist: gist, Body: "Checked against the scheduler's configuration."}
}

// writeLogs writes o.events events over the engineers' logs: sessions (a
// session event, then lessons asked and their results, sometimes a test
// run) in time order over the year after epoch, lessons asked mostly among
// the recent ones. Each engineer's file is committed by that engineer once
// a quarter (as their syncs would), after the quarter's last event.
func (g *gen) writeLogs(dir string, ids []string) error {
	per := g.o.events / len(g.eng)
	const quarters = 4
	year := 365 * 24 * time.Hour
	for q := 1; q <= quarters; q++ {
		end := epoch.Add(year * time.Duration(q) / quarters)
		for ei := range g.eng {
			if err := g.writeQuarter(dir, ids, ei, per*q/quarters-per*(q-1)/quarters, end); err != nil {
				return err
			}
		}
		progress("logs: quarter %d/%d committed (%d engineers, %d events each in all)", q, quarters, len(g.eng), per)
	}
	return nil
}

// writeQuarter appends n events of engineer ei's sessions, spread up to
// end, to its log (rolling into segments past the roll size) and commits
// them at end.
func (g *gen) writeQuarter(dir string, ids []string, ei, n int, end time.Time) error {
	e := &g.eng[ei]
	var f *os.File
	var w *bufio.Writer
	var written int64
	open := func() error {
		rel := segmentPath(e.node, e.segment)
		var err error
		if f, err = os.OpenFile(filepath.Join(dir, filepath.FromSlash(rel)), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		written, w = fi.Size(), bufio.NewWriterSize(f, 1<<20)
		return nil
	}
	closeSegment := func() error {
		if err := w.Flush(); err != nil {
			return err
		}
		return f.Close()
	}
	if err := open(); err != nil {
		return err
	}
	var werr error
	g.sessions(ei, n, end, ids, func(ev domain.Event) {
		if werr != nil {
			return
		}
		if g.roll > 0 && written >= g.roll {
			if werr = closeSegment(); werr != nil {
				return
			}
			e.segment++
			if werr = open(); werr != nil {
				return
			}
		}
		line, _ := json.Marshal(ev.WithID())
		_, _ = w.Write(line)
		_ = w.WriteByte('\n')
		written += int64(len(line)) + 1
	})
	if werr != nil {
		return werr
	}
	if err := closeSegment(); err != nil {
		return err
	}
	when := end.Add(time.Duration(ei) * time.Second)
	if err := git(dir, identity(e.email, when), "add", memfs.LogDir); err != nil {
		return err
	}
	return git(dir, identity(e.email, when), "commit", "-q", "--no-verify", "-m", "log: "+e.node)
}

// segmentPath is segment k of node's log, as borg names it (memfs/logroll.go).
func segmentPath(node string, k int) string {
	if k == 0 {
		return memfs.LogDir + "/" + node + ".jsonl"
	}
	return fmt.Sprintf("%s/%s~%04d.jsonl", memfs.LogDir, node, k)
}

// sessions makes n events of engineer ei's sessions, spread up to end, and
// passes each to emit.
func (g *gen) sessions(ei, n int, end time.Time, ids []string, emit func(domain.Event)) {
	e := &g.eng[ei]
	if e.ms == 0 {
		e.ms = epoch.UnixMilli() + int64(ei)*1000
	}
	// About 5.4 events a session (one session event, two asks on average
	// with a result each, a test run every fifth): n/5 slots until end.
	step := max(int64(10000), (end.UnixMilli()-e.ms-60000)/int64(max(1, n/5)))
	kinds := []domain.EventKind{domain.KindChanged, domain.KindIgnored, domain.KindIgnored, domain.KindCensored}
	for i := 0; i < n; e.sessions++ {
		sess := memfs.HashSession(fmt.Sprintf("%s/%d", e.email, e.sessions))
		repo := repoTag(g.r.Intn(g.o.repos))
		e.ms += step
		one := func(ev domain.Event) {
			ev.Session, ev.Repo, ev.Author = sess, repo, e.author
			emit(ev)
			i++
		}
		one(domain.Event{MS: e.ms, Kind: domain.KindSession})
		for k := 1 + g.r.Intn(3); k > 0 && i < n; k-- {
			// Recent lessons are asked more: the square of a uniform draw
			// leans toward the end of the list.
			u := g.r.Float64()
			lesson := ids[len(ids)-1-int(u*u*float64(len(ids)-1))]
			at := e.ms + int64(k)*5000 // each ask of the session at its own time
			one(domain.Event{MS: at + 1000, Kind: domain.KindAsked, Lesson: lesson})
			if i < n {
				one(domain.Event{MS: at + 2000, Kind: kinds[g.r.Intn(len(kinds))], Lesson: lesson})
			}
			if i < n && g.r.Intn(5) == 0 {
				one(domain.Event{MS: at + 3000, Kind: domain.KindTested, Lesson: lesson})
			}
		}
	}
}

// appendEvents appends o.append events of new sessions by the store's own
// engineer to its log, through Store.Append.
func appendEvents(ctx context.Context, o options) error {
	s, err := memfs.Open(o.into, memfs.WithEnv(os.Getenv))
	if err != nil {
		return err
	}
	lessons, _ := s.Lessons() // the lessons that read; ids are all it needs
	if len(lessons) == 0 {
		return fmt.Errorf("%s has no lessons to ask", o.into)
	}
	ids := make([]string, len(lessons))
	for i, l := range lessons {
		ids[i] = l.ID
	}
	o.engineers = 1
	g := newGen(o)
	g.eng[0].email = "appender@example.com"
	g.eng[0].author = memfs.HashEngineer(g.eng[0].email)
	var batch []domain.Event
	var aerr error
	g.sessions(0, o.append, time.Now(), ids, func(ev domain.Event) {
		if batch = append(batch, ev); len(batch) == 64 && aerr == nil {
			aerr, batch = s.Append(batch...), batch[:0]
		}
	})
	if aerr == nil && len(batch) > 0 {
		aerr = s.Append(batch...)
	}
	if aerr != nil {
		return aerr
	}
	progress("appended %d events to %s", o.append, s.LogPath())
	return nil
}

func repoTag(i int) string { return fmt.Sprintf("repo-%02d", i) }

func slug(gist string) string {
	var b strings.Builder
	for _, w := range strings.Fields(strings.ToLower(gist)) {
		w = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, w)
		if w == "" {
			continue
		}
		if b.Len()+len(w)+1 > 30 {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(w)
	}
	if b.Len() == 0 {
		return "lesson"
	}
	return b.String()
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var types = []string{domain.TypeSemantic, domain.TypeProcedural, domain.TypeProcedural, domain.TypeEpisodic, domain.TypeTask}

type topicWords struct {
	name  string
	words []string
}

var common = strings.Fields(`always never before after when the run check use avoid keep set make sure
first then only every each instead because otherwise fails breaks works expects needs returns`)

var vocab = []topicWords{
	{"migrations", strings.Fields("schema migration database table migrate integration apply order seed fresh rollback revert backfill column lock alter")},
	{"testing", strings.Fields("test tests suite assert flaky retry timeout race fixture golden testdata snapshot mock fake stub inject")},
	{"caching", strings.Fields("cache ttl stale redis invalidate evict key version stampede jitter singleflight warm memcached")},
	{"deploys", strings.Fields("deploy rollout canary helm chart kubernetes pod replica drain rollback image tag registry manifest")},
	{"auth", strings.Fields("token oauth session cookie refresh expiry scope jwt signature rotate secret vault login")},
	{"queues", strings.Fields("queue kafka consumer producer offset partition retry deadletter idempotent ack batch lag")},
	{"builds", strings.Fields("build make target compile linker flags cgo module vendor proxy checksum cache artifact")},
	{"http", strings.Fields("http client server handler middleware timeout keepalive header status retry backoff proxy tls")},
	{"observability", strings.Fields("log metric trace span sampling dashboard alert pager latency histogram label cardinality")},
	{"frontend", strings.Fields("react component render state hook props bundle webpack vite css hydration router")},
}

var services = strings.Fields("billing search ledger payments invoices accounts reports exports identity catalog inventory shipping")

var relations = strings.Fields("export backup reindex compaction rotation rollup sweep snapshot")
