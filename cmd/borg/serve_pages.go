package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html"
	"html/template"
	"math"
	"net"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/sleep"
)

// The pages' templates, rendered with html/template (every value escaped
// for its context).
//
//go:embed serve/*.html
var serveFiles embed.FS

// serveCSP lets a page load nothing but its own inline styles and data:
// images: no script of any origin, no frames, no forms posting elsewhere.
const serveCSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// serveSearchK is how many hits a search on the page shows, and
// maxServeQuery how many bytes of a query it reads.
const (
	serveSearchK  = 10
	maxServeQuery = 1000
)

// server is borg serve's handler: read-only pages over one store.
type server struct {
	e     *env
	s     *memfs.Store
	o     serveOptions
	pages map[string]*template.Template
	mux   *http.ServeMux
	// search serialises searches: each opens (and may sync) the index,
	// which takes the index's lock. dream serialises sleep plans, which
	// read and embed every lesson.
	search, dream sync.Mutex
}

func newServer(e *env, s *memfs.Store, o serveOptions) (*server, error) {
	srv := &server{e: e, s: s, o: o, pages: map[string]*template.Template{}}
	funcs := template.FuncMap{"num": fmtFloat, "inc": func(i int) int { return i + 1 }, "validID": domain.ValidID}
	for _, p := range []string{"index", "lesson", "sleep", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(serveFiles, "serve/layout.html", "serve/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("serve: parse the %s page: %w", p, err)
		}
		srv.pages[p] = t
	}
	srv.mux = http.NewServeMux()
	srv.mux.HandleFunc("GET /{$}", srv.index)
	srv.mux.HandleFunc("GET /lesson/{id}", srv.lesson)
	srv.mux.HandleFunc("GET /sleep", srv.sleep)
	srv.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		srv.fail(w, http.StatusNotFound, "no page %s here: see / for the lessons", r.URL.Path)
	})
	return srv, nil
}

// ServeHTTP sets the security headers on every answer, refuses all but GET
// and HEAD and, on loopback, a Host that does not name loopback (a DNS
// rebinding page reaching the server through its own host name).
func (srv *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", serveCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		srv.fail(w, http.StatusMethodNotAllowed, "borg serve only reads: GET pages only")
		return
	}
	if !srv.o.public && !loopbackHost(r.Host) {
		srv.fail(w, http.StatusMisdirectedRequest, "this server answers to 127.0.0.1, [::1] or localhost only")
		return
	}
	srv.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a request's Host names loopback.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// render writes a page, or a 500 when its template fails (nothing of the
// half-rendered page is sent).
func (srv *server) render(w http.ResponseWriter, status int, page string, data any) {
	var b bytes.Buffer
	if err := srv.pages[page].Execute(&b, data); err != nil {
		fmt.Fprintf(srv.e.err, "borg serve: render %s: %v\n", page, err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

type errorPage struct {
	Title, Message string
	Status         int
}

func (srv *server) fail(w http.ResponseWriter, status int, format string, args ...any) {
	srv.render(w, status, "error", errorPage{Title: http.StatusText(status), Status: status, Message: fmt.Sprintf(format, args...)})
}

// indexPage is /: the search box, its hits and every lesson.
type indexPage struct {
	Title    string
	Query    string
	Searched bool
	Hits     []index.Hit
	Error    string
	Lessons  []domain.Lesson
	Skipped  int
	// SupersededBy maps each listed lesson another one supersedes to
	// those (supersededMarks), by their ids as listed.
	SupersededBy map[string][]string
}

func (srv *server) index(w http.ResponseWriter, r *http.Request) {
	p := indexPage{Title: "borg", Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	if len(p.Query) > maxServeQuery {
		p.Query = strings.ToValidUTF8(p.Query[:maxServeQuery], "")
	}
	if p.Query != "" {
		p.Searched = true
		hits, err := srv.recall(r, p.Query)
		if err != nil {
			p.Error = err.Error()
		}
		p.Hits = hits
	}
	lessons, errs := srv.s.Lessons()
	marks, err := supersededMarks(srv.s, lessons, "")
	if err != nil {
		srv.fail(w, http.StatusInternalServerError, "the log's summary: %v (borg doctor names what is wrong with the log)", err)
		return
	}
	for i := range lessons {
		lessons[i], _ = redacted(lessons[i]) // a secret is never shown, not even here
	}
	sort.Slice(lessons, func(i, j int) bool { return lessons[i].ID < lessons[j].ID })
	p.Lessons, p.Skipped, p.SupersededBy = lessons, len(errs), marks
	srv.render(w, http.StatusOK, "index", p)
}

// recall searches as borg recall does (no session: the belief mean orders
// lessons over the bar; the hooks' floor marks what is weak).
func (srv *server) recall(r *http.Request, text string) ([]index.Hit, error) {
	srv.search.Lock()
	defer srv.search.Unlock()
	ret, err := openRetrieval(r.Context(), srv.s, openOptions{progress: srv.e.err})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ret.Close() }()
	return ret.recall(r.Context(), index.Query{Text: text, K: serveSearchK, Repo: srv.o.repo, Floor: hookFloor(srv.e.getenv)})
}

// lessonPage is /lesson/<id>.
type lessonPage struct {
	Title  string
	Lesson domain.Lesson
	Reach  string
	Body   []template.HTML // paragraphs, escaped
	Memory domain.Memory
	// Factor is what ranking multiplies the lesson's text score by
	// (rankingFactor), from Results session results.
	Factor   float64
	Results  int
	Chart    beliefChart
	Links    []lessonLinkRow
	Edges    []lessonEdgeRow
	LinksErr string
	// Withheld says why the screen keeps the lesson from agents ("" for
	// none).
	Withheld string
	// Archived says that a sleep retired the lesson to archive/ and where
	// ("" for a live lesson).
	Archived string
	// SupersededBy names the newer lessons that rewrite this one's fact,
	// which the hooks ask instead, as borg show names them.
	SupersededBy []string
	// UpdatedBy, when none does, is the lesson's likely update, as a
	// search reads it.
	UpdatedBy string
}

// lessonLinkRow is one link from or to the lesson, as borg links derives it.
type lessonLinkRow struct {
	Dir      string // "from" (this lesson → other) or "to" (other → this lesson)
	Other    string
	IsLesson bool // Other is a lesson id with a page
	State    string
	Weight   float64
	Uses     int
}

// lessonEdgeRow is one <link rel> a lesson file declares: this lesson's
// (Incoming false: this lesson Rel Target), or another lesson's that names
// this one (Incoming true: Target Rel this lesson). Derived marks a link
// sleep wrote (data-derived).
type lessonEdgeRow struct {
	Rel, Target string
	IsLesson    bool
	Derived     bool
	Incoming    bool
}

func (srv *server) lesson(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !domain.ValidID(id) {
		srv.fail(w, http.StatusNotFound, "no lesson here: lesson ids look like run-migrations-before-tests-7f3a")
		return
	}
	l, err := srv.s.Lesson(id)
	archived := ""
	if errors.Is(err, memfs.ErrNotFound) {
		// A lesson a sleep retired (merged into another, evicted) is shown
		// as it was archived, as borg show shows it: the links the sleep
		// wrote (a keeper's supersedes) and its plan's items name it.
		if l, err = srv.s.ArchivedLesson(id); err == nil {
			archived = memfs.ArchivePath(memfs.SafeID(id))
		}
	}
	if errors.Is(err, memfs.ErrNotFound) {
		srv.fail(w, http.StatusNotFound, "no lesson %s in the store", id)
		return
	}
	if err != nil {
		srv.fail(w, http.StatusInternalServerError, "read lesson %s: %v (run borg doctor)", id, err)
		return
	}
	mems, err := srv.s.Memories([]domain.Lesson{l}, "", domain.DefaultWeights)
	if err != nil {
		srv.fail(w, http.StatusInternalServerError, "derive the memory of %s: %v", id, err)
		return
	}
	// The memory and the chart are the lesson's, by its own id; the page
	// shows the lesson redacted, and says why no agent is handed it.
	orig := l
	l, verdict := redacted(l)
	p := lessonPage{Title: l.ID, Lesson: l, Reach: reachOf(l), Body: paragraphs(l.Body), Memory: mems[0],
		Factor: rankingFactor(mems[0]), Results: sessionResults(mems[0])}
	if verdict != "" {
		p.Withheld = "This lesson is never quoted to an agent: " + verdict + " (borg doctor says how to fix it)."
	}
	if archived == "" {
		srv.search.Lock() // the index's lock, as a search takes it
		p.SupersededBy, p.UpdatedBy = successorsOf(r.Context(), srv.e, srv.s, id)
		srv.search.Unlock()
	}
	if archived != "" {
		p.Archived = "Archived: a sleep retired this lesson to " + archived + ", and no hook asks it; git log -- " + archived + " in the store says when and why."
	}
	for _, k := range l.Links {
		p.Edges = append(p.Edges, lessonEdgeRow{Rel: k.Rel, Target: k.Target, IsLesson: domain.ValidID(k.Target), Derived: k.Derived})
	}
	// The links other lessons' files declare to this one (a successor's
	// supersedes, a supports): read from every lesson, as a reader of the
	// store would find them. Unreadable files are doctor's to report.
	others, _ := srv.s.Lessons()
	sort.Slice(others, func(i, j int) bool { return others[i].ID < others[j].ID })
	for _, o := range others {
		if o.ID == id {
			continue
		}
		for _, k := range o.Links {
			if k.Target == id {
				p.Edges = append(p.Edges, lessonEdgeRow{Rel: k.Rel, Target: o.ID, IsLesson: true, Derived: k.Derived, Incoming: true})
			}
		}
	}
	events, _, err := srv.s.ReadEvents()
	if err != nil {
		p.LinksErr = err.Error()
	} else {
		p.Chart = makeBeliefChart(beliefSeries(events, orig))
		now := srv.e.now().UnixMilli()
		for _, k := range domain.AgeLinks(domain.FoldLinks(events), now).Links {
			row := lessonLinkRow{State: string(k.State), Weight: k.WeightAt(now), Uses: k.Uses}
			switch id {
			case k.Src:
				row.Dir, row.Other = "from", endpoint(k.Dst, k.DstV)
				row.IsLesson = domain.ValidID(k.Dst) && k.DstV != domain.ProtoVersion
				if row.IsLesson {
					row.Other = k.Dst
				}
			case k.Dst:
				row.Dir, row.Other = "to", endpoint(k.Src, k.SrcV)
				row.IsLesson = domain.ValidID(k.Src)
				if row.IsLesson {
					row.Other = k.Src
				}
			default:
				continue
			}
			p.Links = append(p.Links, row)
		}
	}
	srv.render(w, http.StatusOK, "lesson", p)
}

// paragraphs renders a lesson's body: each paragraph escaped as text, its
// line breaks made <br>. The codec already refuses script and event
// handlers; the escape is the second wall, and the only markup a page's
// body holds is the <p> and <br> added here (TestParagraphsHoldNoMarkup).
func paragraphs(body string) []template.HTML {
	var out []template.HTML
	for _, para := range strings.Split(body, "\n\n") {
		if strings.TrimSpace(para) == "" {
			continue
		}
		safe := "<p>" + strings.ReplaceAll(html.EscapeString(para), "\n", "<br>") + "</p>"
		out = append(out, template.HTML(safe)) // escaped just above
	}
	return out
}

// sleepPage is /sleep: a dry run of tonight's sleep (or ?date=YYYY-MM-DD's).
type sleepPage struct {
	Title  string
	Error  string
	Plan   sleep.Plan
	Phases []sleepPhaseView
	// Pending are the sleep branches written and not merged yet, each
	// waiting for its review.
	Pending []pendingSleep
}

// pendingSleep is a sleep branch waiting for review, as the sleep page
// lists it: its name, and its night's date when the name holds one.
type pendingSleep struct {
	Name, Date string
}

type sleepPhaseView struct {
	sleep.PhasePlan
	Diffs []fileDiff
}

func (srv *server) sleep(w http.ResponseWriter, r *http.Request) {
	p := sleepPage{Title: "sleep plan"}
	opts := sleep.Options{Now: srv.e.now(), DryRun: true}
	if d := r.URL.Query().Get("date"); d != "" {
		t, err := time.Parse(time.DateOnly, d)
		if err != nil || t.IsZero() {
			// (The zero date is sleep's "today": asked for by name, it is
			// no night to plan.)
			srv.fail(w, http.StatusBadRequest, "date %q: want YYYY-MM-DD", d)
			return
		}
		opts.Date = t
	}
	if pending, err := sleep.PendingBranches(r.Context(), srv.s, "HEAD"); err == nil {
		for _, b := range pending {
			ps := pendingSleep{Name: b.Name}
			if !b.Date.IsZero() {
				ps.Date = b.Date.Format(time.DateOnly)
			}
			p.Pending = append(p.Pending, ps)
		}
	}
	srv.dream.Lock()
	res, err := sleep.Run(r.Context(), srv.s, opts, nil)
	srv.dream.Unlock()
	if err != nil {
		p.Error = err.Error()
		srv.render(w, http.StatusOK, "sleep", p)
		return
	}
	p.Plan = res.Plan
	// What the plan says of files it skipped names them and quotes their
	// text, a secret's too: shown as the diffs are, redacted.
	p.Plan.Note = redactLines(p.Plan.Note)
	p.Plan.Skipped = slices.Clone(p.Plan.Skipped)
	for i, sk := range p.Plan.Skipped {
		file, why, _ := strings.Cut(sk, ": ")
		p.Plan.Skipped[i] = redactPath(file) + ": " + redactLines(why)
	}
	// Each phase's diff is against the files as the phases before it left
	// them, as the sleep branch's commits would show it.
	current := map[string]string{}
	read := func(path string) string {
		if v, ok := current[path]; ok {
			return v
		}
		data, err := srv.s.ReadFileAt(res.Base, path)
		if err != nil {
			return ""
		}
		return string(data)
	}
	for _, ph := range res.Plan.Phases {
		ph.Items = slices.Clone(ph.Items)
		for i, it := range ph.Items {
			// An id may itself be a secret (a hand-written file's name),
			// and a reason quotes ids.
			ph.Items[i].Lesson, ph.Items[i].Other = memfs.SafeID(it.Lesson), memfs.SafeID(it.Other)
			ph.Items[i].Why = redactLines(it.Why)
		}
		ph.Notes = slices.Clone(ph.Notes)
		for i, n := range ph.Notes {
			ph.Notes[i] = redactLines(n)
		}
		v := sleepPhaseView{PhasePlan: ph}
		changes := slices.Clone(ph.Changes)
		sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
		for _, c := range changes {
			old, now := read(c.Path), string(c.Data)
			if c.Delete {
				now = ""
			}
			current[c.Path] = now
			v.Diffs = append(v.Diffs, diffFile(redactPath(c.Path), redactLines(old), redactLines(now), c.Delete))
		}
		p.Phases = append(p.Phases, v)
	}
	srv.render(w, http.StatusOK, "sleep", p)
}

// redactLines replaces each line of a file that holds a secret with a note
// naming its kind: a page shows no secret, in a diff either. A secret that
// spans lines (a private key block: its header and its first line of key are
// each harmless alone) has every line of the shortest run that holds it
// replaced, and a key block every line to its END line.
func redactLines(text string) string {
	if _, found := memfs.FindSecretFolded(text); !found {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	note := func(i int, kind string) {
		nl := ""
		if strings.HasSuffix(lines[i], "\n") {
			nl = "\n"
		}
		lines[i] = fmt.Sprintf("[redacted: a secret (%s)]", kind) + nl
	}
	for i, line := range lines {
		if kind, found := memfs.FindSecretFolded(line); found {
			note(i, kind)
		}
	}
	// What is left holds a secret only across lines. A run of lines that
	// holds one still does when it grows, so the shortest prefix that holds
	// it, then the shortest tail of that prefix, are each a binary search.
	holds := func(from, to int) bool { // lines[from:to]
		_, found := memfs.FindSecretFolded(strings.Join(lines[from:to], ""))
		return found
	}
	for n := 0; holds(0, len(lines)); n++ {
		if n == len(lines) { // cannot happen: each run redacts a line not yet redacted
			for i := range lines {
				note(i, "unlocated")
			}
			break
		}
		end := sort.Search(len(lines), func(e int) bool { return holds(0, e+1) }) + 1
		from := sort.Search(end, func(f int) bool { return !holds(f+1, end) })
		kind, _ := memfs.FindSecretFolded(strings.Join(lines[from:end], ""))
		// A key block is found by its header and first line of key: the
		// rest of the key, to its END line (or the file's end), goes too.
		if strings.Contains(lines[from], "-----BEGIN") {
			for end < len(lines) && !strings.Contains(lines[end-1], "-----END") {
				end++
			}
		}
		for i := from; i < end; i++ {
			note(i, kind)
		}
	}
	return strings.Join(lines, "")
}

// redactPath is a lesson file's path with its id fit to print (SafeID).
func redactPath(p string) string {
	dir, base := path.Split(p)
	if id, ok := strings.CutSuffix(base, ".html"); ok {
		return dir + memfs.SafeID(id) + ".html"
	}
	return p
}

// beliefPoint is the belief's mean after one result of the lesson.
type beliefPoint struct {
	MS   int64
	Mean float64
	Kind domain.EventKind
}

// maxBeliefPoints bounds the chart's points (and its derivations).
const maxBeliefPoints = 200

// beliefSeries is the lesson's belief over time: its Beta mean derived from
// the log's events up to and including each of its results, in order of ms,
// starting from the prior at its creation.
func beliefSeries(events []domain.Event, l domain.Lesson) []beliefPoint {
	var mine []domain.Event
	for _, ev := range events {
		if ev.Lesson == l.ID && ev.Kind != domain.KindPassing {
			mine = append(mine, ev)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].MS < mine[j].MS })
	var at []int // indexes in mine after which the belief is read
	for i, ev := range mine {
		switch ev.Kind {
		case domain.KindChanged, domain.KindIgnored, domain.KindCorrected, domain.KindVetoed,
			domain.KindTested, domain.KindRegret:
			if i+1 < len(mine) && mine[i+1].MS == ev.MS {
				continue // read once after every event of this instant
			}
			at = append(at, i)
		}
	}
	if len(at) > maxBeliefPoints {
		thin := make([]int, 0, maxBeliefPoints)
		for k := range maxBeliefPoints {
			thin = append(thin, at[k*(len(at)-1)/(maxBeliefPoints-1)])
		}
		at = thin
	}
	infos := []domain.LessonInfo{{ID: l.ID, Reach: l.Reach}}
	// The prior, at the lesson's creation or its first event, the earlier
	// (a hand-written lesson's date may postdate its first use).
	start := int64(0)
	if !l.Created.IsZero() {
		start = l.Created.UnixMilli()
	}
	if len(mine) > 0 && (start == 0 || mine[0].MS < start) {
		start = mine[0].MS
	}
	pts := []beliefPoint{{MS: start, Mean: domain.BeliefOf(0, 0, 0, 0, 0, 0, domain.DefaultWeights).Mean(), Kind: domain.KindCreated}}
	for _, i := range at {
		m := domain.Derive(mine[:i+1], infos, "", domain.DefaultWeights)[0]
		pts = append(pts, beliefPoint{MS: mine[i].MS, Mean: m.Mean, Kind: mine[i].Kind})
	}
	return pts
}

// beliefChart is the belief series laid out as an inline SVG (drawn by the
// template; no script).
type beliefChart struct {
	W, H, Left, Right, Top, Bottom float64
	Points                         string // the polyline's points
	Dots                           []chartDot
	Results                        int
	Last                           float64
	From, To                       string // the first and last points' dates
}

type chartDot struct {
	X, Y  float64
	Label string
}

func makeBeliefChart(pts []beliefPoint) beliefChart {
	c := beliefChart{W: 480, H: 180, Left: 40, Right: 470, Top: 10, Bottom: 160, Results: len(pts) - 1}
	if len(pts) == 0 {
		return c
	}
	c.Last = pts[len(pts)-1].Mean
	lo, hi := pts[0].MS, pts[len(pts)-1].MS
	c.From, c.To = msDate(lo), msDate(hi)
	var b strings.Builder
	for i, p := range pts {
		var fx float64
		switch {
		case len(pts) == 1:
			fx = 0.5
		case hi > lo:
			fx = float64(p.MS-lo) / float64(hi-lo)
		default:
			fx = float64(i) / float64(len(pts)-1)
		}
		x := c.Left + fx*(c.Right-c.Left)
		y := c.Bottom - clamp01(p.Mean)*(c.Bottom-c.Top)
		x, y = math.Round(x*10)/10, math.Round(y*10)/10
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%g,%g", x, y)
		c.Dots = append(c.Dots, chartDot{X: x, Y: y, Label: fmt.Sprintf("%s %s: mean %.3f", msDate(p.MS), p.Kind, p.Mean)})
	}
	c.Points = b.String()
	return c
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return math.Max(0, math.Min(1, x))
}

// msDate prints unix milliseconds as a UTC date and time ("" for 0).
func msDate(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04")
}
