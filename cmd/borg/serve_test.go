package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// Hostile lesson text: each would run script if a page put it in unescaped.
const (
	hostileGist  = `Never trust <script>alert(0)</script> in a lesson`
	hostileTitle = `<img src=x onerror=alert(9)>`
	hostileBody  = "Why: <script>alert(1)</script> and <img src=x onerror=alert(2)>\n\n" +
		`<a href="javascript:alert(3)">click</a> <svg onload=alert(4)></svg> <iframe src="javascript:alert(5)"></iframe>`
)

// serveStore makes a store with the adversarial suite's two lessons, a
// hostile one, and results of the migrations lesson for its chart; it
// returns the environment and the two lessons' ids.
func serveStore(t *testing.T) (vars map[string]string, migrations, hostile string) {
	t.Helper()
	vars = adversarialStore(t)
	if code, _, stderr := inProcess(t, vars, "", "learn", hostileGist, "--title", hostileTitle, "--body", hostileBody); code != 0 {
		t.Fatalf("borg learn (hostile): exit %d: %s", code, stderr)
	}
	s, err := memfs.Open(vars["BORG_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	lessons, errs := s.Lessons()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, l := range lessons {
		switch {
		case strings.HasPrefix(l.ID, "run-migrations"):
			migrations = l.ID
		case strings.HasPrefix(l.ID, "never-trust"):
			hostile = l.ID
		}
	}
	if migrations == "" || hostile == "" {
		t.Fatalf("lessons %v: no migrations or hostile lesson", lessons)
	}
	// Results of the migrations lesson in four sessions, an hour apart:
	// changed, changed, ignored, changed.
	base := time.Now().Add(-5 * time.Hour).UnixMilli()
	var events []domain.Event
	for i, k := range []domain.EventKind{domain.KindChanged, domain.KindChanged, domain.KindIgnored, domain.KindChanged} {
		sess := memfs.HashSession("serve-test-" + string(rune('a'+i)))
		ms := base + int64(i)*3_600_000
		events = append(events,
			domain.Event{MS: ms, Kind: domain.KindSession, Session: sess},
			domain.Event{MS: ms + 1, Kind: domain.KindAsked, Session: sess, Lesson: migrations},
			domain.Event{MS: ms + 2, Kind: k, Session: sess, Lesson: migrations},
			domain.Event{MS: ms + 3, Kind: domain.KindPassing, Session: sess, Src: migrations, Dst: hostile},
		)
	}
	if err := s.Append(events...); err != nil {
		t.Fatal(err)
	}
	return vars, migrations, hostile
}

// serveHandler is borg serve's handler over the store vars name, with a
// clock at now.
func serveHandler(t *testing.T, vars map[string]string, now time.Time) (*server, *bytes.Buffer) {
	t.Helper()
	var errb bytes.Buffer
	e := &env{in: strings.NewReader(""), out: io.Discard, err: &errb, now: func() time.Time { return now },
		getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return os.Getenv(k)
		}}
	s, err := memfs.Open(vars["BORG_STORE"], storeOptions(e)...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(e, s, serveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, &errb
}

func TestServeHandler(t *testing.T) {
	vars, migrations, hostile := serveStore(t)
	// A clock half a year on: tonight's sleep then decays every lesson, so
	// the sleep page has diffs to show.
	srv, errb := serveHandler(t, vars, time.Now().Add(180*24*time.Hour))
	for _, tc := range []struct {
		name, method, path, host string
		status                   int
		want, notWant            []string
	}{
		{name: "index lists the lessons", path: "/", status: 200,
			want: []string{`href="/lesson/` + migrations + `"`, `href="/lesson/` + hostile + `"`, `name="q"`}},
		{name: "search recalls as borg recall", path: "/?q=migrations+integration+tests", status: 200,
			want: []string{`class="id hit-link" href="/lesson/` + migrations + `"`}},
		{name: "search for the hostile lesson", path: "/?q=" + strings.ReplaceAll("never trust script alert", " ", "+"), status: 200,
			want: []string{`href="/lesson/` + hostile + `"`, "&lt;script&gt;alert(0)&lt;/script&gt;"}},
		{name: "hostile query", path: "/?q=%3Cscript%3Ealert(7)%3C%2Fscript%3E%22%3E%3Cimg+src%3Dx+onerror%3Dalert(8)%3E", status: 200,
			want: []string{"&lt;script&gt;alert(7)"}},
		{name: "lesson with its memory, chart and links", path: "/lesson/" + migrations, status: 200,
			want: []string{`<svg id="belief-chart"`, "<polyline", "4 result(s)", "3 changed, 1 ignored",
				`href="/lesson/` + hostile + `"`}},
		{name: "hostile lesson is shown as text", path: "/lesson/" + hostile, status: 200,
			want: []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;",
				"javascript:alert(3)", "&lt;script&gt;alert(0)&lt;/script&gt;", "&lt;img src=x onerror=alert(9)&gt;",
				`href="/lesson/` + migrations + `"`}},
		{name: "sleep plan with diffs", path: "/sleep", status: 200,
			want: []string{"1. decay", "decay <code>0.8000 -&gt; ", `class="del"`, `class="add"`, "memhtml-confidence", memfs.LessonPath(migrations)}},
		{name: "sleep plan for a date", path: "/sleep?date=2026-12-02", status: 200, want: []string{"Sleep 2026-12-02"}},
		{name: "sleep plan bad date", path: "/sleep?date=tomorrow", status: 400},
		{name: "sleep plan zero date", path: "/sleep?date=0001-01-01", status: 400},
		{name: "bad id", path: "/lesson/Not-An-Id", status: 404},
		{name: "short id", path: "/lesson/ab", status: 404},
		{name: "traversal", path: "/lesson/..%2f..%2fetc%2fpasswd", status: 404},
		{name: "unknown lesson", path: "/lesson/no-such-lesson-0000", status: 404, want: []string{"no lesson no-such-lesson-0000"}},
		{name: "unknown page", path: "/nope", status: 404},
		{name: "head answered", method: "HEAD", path: "/lesson/" + migrations, status: 200},
		{name: "post refused", method: "POST", path: "/", status: 405},
		{name: "delete refused", method: "DELETE", path: "/lesson/" + migrations, status: 405},
		{name: "foreign host refused", path: "/", host: "attacker.example", status: 421},
		{name: "localhost host", path: "/", host: "localhost:7777", status: 200},
		{name: "ipv6 loopback host", path: "/", host: "[::1]:7777", status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tc.path, nil)
			req.Host = "127.0.0.1:7777"
			if tc.host != "" {
				req.Host = tc.host
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tc.status {
				t.Fatalf("%s %s: status %d, want %d\n%s\nstderr: %s", method, tc.path, rec.Code, tc.status, body, errb)
			}
			h := rec.Header()
			if got := h.Get("Content-Security-Policy"); got != serveCSP || strings.Contains(got, "script-src") {
				t.Errorf("Content-Security-Policy %q, want %q", got, serveCSP)
			}
			if !strings.HasPrefix(serveCSP, "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:") {
				t.Errorf("the CSP lost its base: %q", serveCSP)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/html; charset=utf-8") {
				t.Errorf("Content-Type %q", ct)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q:\n%s", w, body)
				}
			}
			assertInert(t, body)
		})
	}
}

// assertInert fails if page holds anything a browser would run: a script,
// frame, object or embed element, an event handler attribute, a
// javascript: URL, or a meta refresh.
func assertInert(t *testing.T, page string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "iframe", "frame", "object", "embed", "applet", "base":
				t.Errorf("the page holds a <%s> element", tok.Data)
			}
			for _, a := range tok.Attr {
				key, val := strings.ToLower(a.Key), strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(key, "on") {
					t.Errorf("<%s> has an event handler %s=%q", tok.Data, a.Key, a.Val)
				}
				if strings.HasPrefix(strings.ReplaceAll(val, " ", ""), "javascript:") {
					t.Errorf("<%s %s=%q> is a javascript: URL", tok.Data, a.Key, a.Val)
				}
				if key == "http-equiv" && val == "refresh" {
					t.Errorf("the page has a meta refresh")
				}
			}
		}
	}
}

// TestServePublicHost: with --public the server answers any Host (it is
// reached by other names), and still only reads.
func TestServePublicHost(t *testing.T) {
	vars := adversarialStore(t)
	srv, _ := serveHandler(t, vars, time.Now())
	srv.o.public = true
	for method, want := range map[string]int{"GET": 200, "POST": 405} {
		req := httptest.NewRequest(method, "/", nil)
		req.Host = "borg.internal.example:7777"
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s / from another host with --public: %d, want %d", method, rec.Code, want)
		}
	}
}

func TestServeLoopbackAddr(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		loopback bool
		bad      bool
	}{
		{addr: "127.0.0.1:7777", loopback: true},
		{addr: "127.0.0.1:0", loopback: true},
		{addr: "127.5.6.7:80", loopback: true},
		{addr: "[::1]:7777", loopback: true},
		{addr: "localhost:7777", loopback: true},
		{addr: "0.0.0.0:7777"},
		{addr: ":7777"},
		{addr: "[::]:7777"},
		{addr: "192.168.1.10:7777"},
		{addr: "example.com:7777", bad: true},
		{addr: "7777", bad: true},
		{addr: "127.0.0.1:", bad: true},
		{addr: "127.0.0.1:99999", bad: true},
		{addr: "127.0.0.1:http", bad: true},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			loop, err := loopbackAddr(tc.addr)
			if (err != nil) != tc.bad {
				t.Fatalf("loopbackAddr(%q): error %v, want bad=%v", tc.addr, err, tc.bad)
			}
			if loop != tc.loopback {
				t.Errorf("loopbackAddr(%q) = %v, want %v", tc.addr, loop, tc.loopback)
			}
		})
	}
}

// TestServeRefusesPublicAddr: an --addr beyond loopback is refused (exit 3,
// naming --public) before anything listens.
func TestServeRefusesPublicAddr(t *testing.T) {
	vars := adversarialStore(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		code, stdout, stderr := inProcess(t, vars, "", "serve", "--addr", addr)
		if code != exitRefused || !strings.Contains(stderr, "--public") || strings.Contains(stdout, "http://") {
			t.Errorf("serve --addr %s: exit %d, stdout %q, stderr %q; want a refusal naming --public", addr, code, stdout, stderr)
		}
	}
	if code, _, stderr := inProcess(t, vars, "", "serve", "--addr", "nonsense"); code != exitUsage {
		t.Errorf("serve --addr nonsense: exit %d (%s), want %d", code, stderr, exitUsage)
	}
}

// syncBuffer is a bytes.Buffer safe for a server goroutine and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var serveURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`)

// startServe runs `borg serve --addr 127.0.0.1:0` in-process over the
// store vars name and returns its URL and a stop that cancels its context
// and returns its exit code.
func startServe(t *testing.T, vars map[string]string, args ...string) (url string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &syncBuffer{}, &syncBuffer{}
	e := &env{in: strings.NewReader(""), out: out, err: errb, now: time.Now,
		getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return os.Getenv(k)
		}}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"borg", "serve", "--addr", "127.0.0.1:0"}, args...), e) }()
	var once sync.Once
	code := -1
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("borg serve did not stop within 30 s of its context's cancel")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if u := serveURL.FindString(out.String()); u != "" {
			return u, stop
		}
		select {
		case c := <-done:
			t.Fatalf("borg serve exited %d before serving: %s", c, errb)
		default:
		}
	}
	t.Fatalf("borg serve printed no URL in 30 s: stdout %q, stderr %q", out, errb)
	return "", nil
}

// TestServeRunsAndStops: borg serve prints its URL, answers over real
// HTTP, and stops cleanly (exit 0) when its context is cancelled.
func TestServeRunsAndStops(t *testing.T) {
	vars, migrations, _ := serveStore(t)
	before, err := gitOut(vars["BORG_STORE"], "status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, vars)
	for _, p := range []string{"", "?q=migrations", "lesson/" + migrations, "sleep"} {
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != serveCSP {
			t.Errorf("GET /%s: %d, CSP %q\n%s", p, resp.StatusCode, resp.Header.Get("Content-Security-Policy"), body)
		}
	}
	if code := stop(); code != 0 {
		t.Fatalf("borg serve exit %d after cancel, want 0", code)
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("borg serve still answers after it stopped")
	}
	// Nothing the pages did wrote to the store's files or branches.
	if after, err := gitOut(vars["BORG_STORE"], "status", "--porcelain"); err != nil || after != before {
		t.Errorf("the store changed under borg serve: git status %q, was %q (%v)", after, before, err)
	}
	if refs, _ := gitOut(vars["BORG_STORE"], "for-each-ref", "refs/heads/borg/"); strings.TrimSpace(refs) != "" {
		t.Errorf("borg serve left a sleep branch: %s", refs)
	}
}

func gitOut(dir string, args ...string) (string, error) {
	out, err := memfs.Git{Dir: dir}.Run(context.Background(), nil, args...)
	return string(out), err
}

func TestServeBeliefSeries(t *testing.T) {
	created := time.UnixMilli(1_000_000)
	l := domain.Lesson{ID: "run-migrations-first-0000", Created: created}
	ev := func(ms int64, k domain.EventKind, session, lesson string) domain.Event {
		return domain.Event{MS: ms, Kind: k, Session: memfs.HashSession(session), Lesson: lesson}
	}
	events := []domain.Event{
		// out of order on purpose: the series reads them by ms
		ev(4_000_000, domain.KindIgnored, "c", l.ID),
		ev(2_000_000, domain.KindChanged, "a", l.ID),
		ev(3_000_000, domain.KindChanged, "b", l.ID),
		ev(2_500_000, domain.KindChanged, "x", "another-lesson-0000"),
		ev(1_500_000, domain.KindAsked, "a", l.ID),
	}
	pts := beliefSeries(events, l)
	want := []float64{0.5, 2.0 / 3, 3.0 / 4, 3.0 / 5}
	if len(pts) != len(want) {
		t.Fatalf("%d points %v, want %d", len(pts), pts, len(want))
	}
	for i, p := range pts {
		if math.Abs(p.Mean-want[i]) > 1e-9 {
			t.Errorf("point %d: mean %.4f, want %.4f", i, p.Mean, want[i])
		}
		if i > 0 && p.MS < pts[i-1].MS {
			t.Errorf("point %d at %d before point %d at %d", i, p.MS, i-1, pts[i-1].MS)
		}
	}
	if pts[0].MS != created.UnixMilli() {
		t.Errorf("the prior sits at %d, want the creation %d", pts[0].MS, created.UnixMilli())
	}
	c := makeBeliefChart(pts)
	if len(c.Dots) != 4 || strings.Count(c.Points, ",") != 4 || c.Results != 3 {
		t.Errorf("chart %+v: want 4 dots and points, 3 results", c)
	}
	for _, d := range c.Dots {
		if d.X < c.Left || d.X > c.Right || d.Y < c.Top || d.Y > c.Bottom {
			t.Errorf("dot %+v outside the plot", d)
		}
	}
}

func TestServeDiff(t *testing.T) {
	for _, tc := range []struct {
		name, old, now string
		deleted        bool
		status         string
		want           []string // the lines as Op+Text
	}{
		{name: "one line changed", old: "a\nb\nc\nd\ne\nf\ng\n", now: "a\nb\nc\nD\ne\nf\ng\n", status: "modified",
			want: []string{" b", " c", "-d", "+D", " e", " f"}},
		{name: "two hunks", old: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", now: "x\n2\n3\n4\n5\n6\n7\n8\ny\n", status: "modified",
			want: []string{"-1", "+x", " 2", " 3", "~…", " 7", " 8", "-9", "+y"}},
		{name: "added", old: "", now: "a\nb\n", status: "added", want: []string{"+a", "+b"}},
		{name: "deleted", old: "a\n", now: "", deleted: true, status: "deleted", want: []string{"-a"}},
		{name: "same", old: "a\n", now: "a\n", status: "modified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diffFile("lessons/x.html", tc.old, tc.now, tc.deleted)
			if d.Status != tc.status {
				t.Errorf("status %q, want %q", d.Status, tc.status)
			}
			var got []string
			for _, l := range d.Lines {
				got = append(got, l.Op+l.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

// TestServeDeclaredLinks: a lesson's page lists the links lesson files
// declare, its own and those of lessons that name it, beside the ones the
// hooks derive, and says "none" only when there are none of a kind.
func TestServeDeclaredLinks(t *testing.T) {
	vars, migrations, hostile := serveStore(t)
	s, err := memfs.Open(vars["BORG_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lesson(hostile)
	if err != nil {
		t.Fatal(err)
	}
	l.Links = append(l.Links, domain.LessonLink{Rel: "supersedes", Target: migrations})
	if err := s.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("test: declare a supersedes link", memfs.LessonPath(hostile)); err != nil {
		t.Fatal(err)
	}
	srv, errb := serveHandler(t, vars, time.Now())
	for _, tc := range []struct {
		name, id      string
		want, notWant []string
	}{
		{name: "the declaring lesson", id: hostile,
			want:    []string{`this lesson supersedes <a class="id" href="/lesson/` + migrations + `"`},
			notWant: []string{"None: no lesson file declares"}},
		{name: "the lesson it names", id: migrations,
			want:    []string{`<a class="id" href="/lesson/` + hostile + `">` + hostile + `</a> supersedes this lesson`, `id="links"`},
			notWant: []string{"None: no lesson file declares", "None yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveGet(srv, "/lesson/"+tc.id)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s\nstderr: %s", rec.Code, body, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(body, w) {
					t.Errorf("the page holds %q:\n%s", w, body)
				}
			}
		})
	}
}

// TestServeListMarksSuperseded: the lesson list on / marks a lesson an
// earned supersedes link replaces, with a link to its successor, and not
// one a link between two subjects names (TestServeDeclaredLinks' kind).
func TestServeListMarksSuperseded(t *testing.T) {
	vars, migrations, hostile := serveStore(t)
	for _, gist := range []string{"The staging database of the payments service is pay-db-stage-1.", "The staging database of the payments service is pay-db-stage-2."} {
		if code, _, stderr := inProcess(t, vars, "", "learn", gist); code != 0 {
			t.Fatalf("borg learn: exit %d: %s", code, stderr)
		}
	}
	s, err := memfs.Open(vars["BORG_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	const older, newer = "staging-database-payments-service-pay-5bcb", "staging-database-payments-service-pay-efff"
	for _, link := range [][2]string{{newer, older}, {hostile, migrations}} {
		l, err := s.Lesson(link[0])
		if err != nil {
			t.Fatal(err)
		}
		l.Links = append(l.Links, domain.LessonLink{Rel: domain.RelSupersedes, Target: link[1]})
		if err := s.WriteLesson(l); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit("test: declare a supersedes link", memfs.LessonPath(link[0])); err != nil {
			t.Fatal(err)
		}
	}
	srv, errb := serveHandler(t, vars, time.Now())
	rec := serveGet(srv, "/")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s\nstderr: %s", rec.Code, body, errb)
	}
	want := `pay-db-stage-1. <span class="muted superseded">(superseded by <a href="/lesson/` + newer + `">` + newer + `</a>)</span>`
	if !strings.Contains(body, want) {
		t.Errorf("the list lacks %q:\n%s", want, body)
	}
	if n := strings.Count(body, "(superseded by"); n != 1 {
		t.Errorf("%d lessons marked superseded, want 1 (the migrations lesson's link is not earned):\n%s", n, body)
	}
}

// TestServeRankingFactor: show, list --json and serve report the factor
// recall multiplies a lesson's text score by, the same one recall reports
// as a hit's mean_weight, beside the seed's weight, labelled as not ranking.
func TestServeRankingFactor(t *testing.T) {
	vars, migrations, _ := serveStore(t)
	code, out, stderr := inProcess(t, vars, "", "recall", "--json", "--repo", "", "migrations before the integration tests")
	if code != 0 {
		t.Fatalf("recall: exit %d: %s", code, stderr)
	}
	want := math.NaN()
	for _, m := range regexp.MustCompile(`"id":\s*"([^"]+)"[^{}]*?"mean_weight":\s*([0-9.e+-]+)`).FindAllStringSubmatch(out, -1) {
		if m[1] == migrations {
			fmt.Sscan(m[2], &want)
		}
	}
	if math.IsNaN(want) || want <= 1 {
		t.Fatalf("recall --json: no mean_weight over 1 for %s (3 changed, 1 ignored):\n%s", migrations, out)
	}
	factorRe := func(key string) *regexp.Regexp {
		return regexp.MustCompile(`"id":\s*"` + migrations + `"[\s\S]*?"` + key + `":\s*([0-9.e+-]+)`)
	}
	for _, tc := range []struct {
		name string
		args []string
		re   *regexp.Regexp
	}{
		{name: "show --json", args: []string{"show", "--json", migrations}, re: factorRe("ranking_factor")},
		{name: "list --json", args: []string{"list", "--json"}, re: factorRe("ranking_factor")},
		{name: "show", args: []string{"show", migrations}, re: regexp.MustCompile(`ranking factor:\s+([0-9.]+) \(1 \+ \(mean − ½\)·r/\(r \+ 2\), r = 4 session results`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := inProcess(t, vars, "", tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			m := tc.re.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no ranking factor for %s in:\n%s", migrations, out)
			}
			var got float64
			fmt.Sscan(m[1], &got)
			if math.Abs(got-want) > 1e-4 {
				t.Errorf("ranking factor %v, recall's mean_weight %v", got, want)
			}
			if tc.name == "show" && !strings.Contains(out, "not used in ranking") {
				t.Errorf("show does not label the seed's weight:\n%s", out)
			}
		})
	}
	srv, _ := serveHandler(t, vars, time.Now())
	rec := serveGet(srv, "/lesson/"+migrations)
	if w := fmt.Sprintf(`id="ranking-factor">%.4f`, want); !strings.Contains(rec.Body.String(), w) {
		t.Errorf("the lesson page lacks %q:\n%s", w, rec.Body.String())
	}
	// The search shows each hit's relevance, on the scale the floor is on,
	// and no raw fusion score (a few thousandths, meaningless to a reader).
	rec = serveGet(srv, "/?q=migrations+before+the+integration+tests")
	body := rec.Body.String()
	if !strings.Contains(body, ">relevance</th>") || !regexp.MustCompile(`<td class="n">[01]\.\d\d( <span class="muted">weak</span>)?</td>`).MatchString(body) {
		t.Errorf("the search lacks a relevance column:\n%s", body)
	}
	if m := regexp.MustCompile(`\b0\.0\d{3,}\b`).FindString(body); m != "" {
		t.Errorf("the search shows %s, a raw fusion score:\n%s", m, body)
	}
	// The hooks' floor marks what is weak: with none (BORG_FLOOR=0),
	// nothing is.
	const weak = `<span class="muted">weak</span>`
	if !strings.Contains(body, weak) {
		t.Fatalf("the search marks no hit weak under the default floor:\n%s", body)
	}
	none := maps.Clone(vars)
	none["BORG_FLOOR"] = "0"
	srv, _ = serveHandler(t, none, time.Now())
	rec = serveGet(srv, "/?q=migrations+before+the+integration+tests")
	if body := rec.Body.String(); strings.Contains(body, weak) || !strings.Contains(body, ">relevance</th>") {
		t.Errorf("with BORG_FLOOR=0 the search still marks a hit weak:\n%s", body)
	}
}

// TestParagraphsHoldNoMarkup: whatever a lesson's body holds, its rendered
// paragraphs carry no markup but the <p> and <br> paragraphs adds, and
// unescaped they give back the body's text.
func TestParagraphsHoldNoMarkup(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	pieces := []string{"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\"", "'", "&amp;", "&", "<", ">",
		"\n", "\n\n", "<p>", "</p>", "<br>", "javascript:", "plain words", "é", "\u2028", "<!--", "]]>", "`"}
	bodies := []string{"", "one", "a\n\nb", "<b>bold</b>\nnext"}
	for range 500 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		bodies = append(bodies, b.String())
	}
	for _, body := range bodies {
		var want []string
		for _, para := range strings.Split(body, "\n\n") {
			if strings.TrimSpace(para) != "" {
				want = append(want, para)
			}
		}
		got := paragraphs(body)
		if len(got) != len(want) {
			t.Fatalf("%q: %d paragraphs, want %d", body, len(got), len(want))
		}
		for i, p := range got {
			s := string(p)
			if !strings.HasPrefix(s, "<p>") || !strings.HasSuffix(s, "</p>") {
				t.Fatalf("%q: paragraph %q is not one <p>", body, s)
			}
			inner := strings.TrimSuffix(strings.TrimPrefix(s, "<p>"), "</p>")
			bare := strings.ReplaceAll(inner, "<br>", "")
			if strings.ContainsAny(bare, "<>\"'") {
				t.Fatalf("%q: paragraph %q holds markup", body, s)
			}
			if back := html.UnescapeString(strings.ReplaceAll(inner, "<br>", "\n")); back != want[i] {
				t.Fatalf("%q: paragraph %q reads back as %q, want %q", body, s, back, want[i])
			}
		}
	}
}

// TestServeArchivedLesson: the page of a lesson a sleep archived (a merge's
// dropped copy, which the keeper's supersedes link names) shows it and says
// it is archived, as borg show does; an id in neither place is a 404.
func TestServeArchivedLesson(t *testing.T) {
	vars, migrations, _ := serveStore(t)
	store := vars["BORG_STORE"]
	from, to := memfs.LessonPath(migrations), memfs.ArchivePath(migrations)
	if err := os.MkdirAll(filepath.Join(store, filepath.Dir(to)), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mv", from, to}, {"commit", "-q", "-m", "test: archive a lesson"}} {
		if out, err := gitOut(store, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv, errb := serveHandler(t, vars, time.Now())
	get := func(path string) (int, string) {
		rec := serveGet(srv, path)
		return rec.Code, rec.Body.String()
	}
	code, body := get("/lesson/" + migrations)
	if code != http.StatusOK {
		t.Fatalf("status %d for an archived lesson\n%s\nstderr: %s", code, body, errb)
	}
	for _, w := range []string{`id="archived"`, to, `<mark id="gist">Run migrations before the integration tests`} {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %q:\n%s", w, body)
		}
	}
	if code, _ := get("/lesson/no-such-lesson-0000"); code != http.StatusNotFound {
		t.Errorf("status %d for a lesson in neither lessons/ nor archive/, want 404", code)
	}
}

// pemKey is a private key block: its header line and each line of key hold
// no secret alone, the lines together do.
const pemKey = "-----BEGIN RSA PRIVATE KEY-----\n" +
	"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n" +
	"+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQz\n" +
	"-----END RSA PRIVATE KEY-----"

// TestServeRedactsMultilineSecret: the sleep page's diff of a lesson file
// whose secret spans lines (a private key block in its body) shows none of
// the key, though no one line of it is a secret alone.
func TestServeRedactsMultilineSecret(t *testing.T) {
	got := redactLines("<p>before\n" + pemKey + "</p>\nafter\n")
	if _, found := memfs.FindSecretFolded(got); found || strings.Contains(got, "MIIEow") || strings.Contains(got, "+qKhbw") {
		t.Errorf("redactLines left the key:\n%s", got)
	}
	if !strings.HasPrefix(got, "<p>before\n") || !strings.HasSuffix(got, "\nafter\n") || !strings.Contains(got, "[redacted: a secret (") {
		t.Errorf("redactLines redacted too much or said nothing:\n%s", got)
	}

	// A hand-written lesson past its date, of little importance: tonight's
	// sleep archives it, and the page diffs the whole file twice.
	vars, _, _ := serveStore(t)
	store, id := vars["BORG_STORE"], "old-vpn-key-77aa"
	file := `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="memhtml-id" content="` + id + `">
<meta name="memhtml-type" content="episodic">
<meta name="memhtml-confidence" content="0.4000">
<meta name="memhtml-importance" content="1">
<meta name="memhtml-created" content="2026-01-01T09:00:00Z">
<meta name="memhtml-valid-until" content="2026-02-01T00:00:00Z">
</head><body><article>
<p><mark>The old VPN gateway took this key until February.</mark></p>
<p>` + pemKey + `</p>
</article></body></html>
`
	path := filepath.Join(store, memfs.LessonPath(id))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "test: a lesson with a private key"}} {
		if out, err := gitOut(store, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv, errb := serveHandler(t, vars, time.Now().Add(180*24*time.Hour))
	rec := serveGet(srv, "/sleep")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s\nstderr: %s", rec.Code, body, errb)
	}
	if !strings.Contains(body, memfs.ArchivePath(id)) {
		t.Fatalf("the plan does not archive %s:\n%s", id, body)
	}
	for _, line := range strings.Split(pemKey, "\n")[1:3] {
		if strings.Contains(body, line[:40]) {
			t.Errorf("the sleep page shows the private key's line %q", line[:40])
		}
	}
	if !strings.Contains(body, "[redacted: a secret (") {
		t.Errorf("the sleep page does not say it redacted the key")
	}
}

// servePages is one of each kind of page borg serve answers, by path.
func servePages(migrations string) []string {
	return []string{"/", "/?q=migrations", "/lesson/" + migrations, "/sleep", "/nope"}
}

// TestServeNoFaviconRequest: every page names its (empty) icon, so a
// browser asks for no /favicon.ico, which would be a 404 logged as an error
// in its console on each page.
func TestServeNoFaviconRequest(t *testing.T) {
	vars, migrations, _ := serveStore(t)
	srv, errb := serveHandler(t, vars, time.Now())
	for _, path := range servePages(migrations) {
		rec := serveGet(srv, path)
		head, _, _ := strings.Cut(rec.Body.String(), "</head>")
		if !strings.Contains(head, `<link rel="icon" href="data:,">`) {
			t.Errorf("%s (status %d) names no icon in its head, so the browser asks /favicon.ico:\n%s\nstderr: %s", path, rec.Code, head, errb)
		}
	}
}

// TestServeOutline: each page has one h1 for a screen reader to find it by,
// its links to the other pages in a nav landmark, and a labelled search box.
func TestServeOutline(t *testing.T) {
	vars, migrations, _ := serveStore(t)
	srv, errb := serveHandler(t, vars, time.Now())
	for _, path := range servePages(migrations) {
		rec := serveGet(srv, path)
		body := rec.Body.String()
		if n := strings.Count(body, "<h1"); n != 1 {
			t.Errorf("%s (status %d) has %d h1 element(s), want 1\nstderr: %s", path, rec.Code, n, errb)
		}
		if !strings.Contains(body, `<nav aria-label="pages"><a href="/">search</a> <a href="/sleep">sleep plan</a></nav>`) {
			t.Errorf("%s has no nav landmark over the pages' links", path)
		}
		if strings.HasPrefix(path, "/?") || path == "/" {
			if !regexp.MustCompile(`<input type="search" name="q" id="q"[^>]* aria-label="[^"]+"`).MatchString(body) {
				t.Errorf("%s: the search box has no label", path)
			}
		}
	}
}

// TestServeDiffMonospace: the sleep page sets its diffs in a monospace
// font, so the columns of a lesson file line up as in git diff.
func TestServeDiffMonospace(t *testing.T) {
	b, err := serveFiles.ReadFile("serve/layout.html")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?m)^\.diff \{[^}]*font-family: ui-monospace, monospace`)
	if !rule.Match(b) {
		t.Errorf("the .diff rule sets no monospace font:\n%s", b)
	}
}

// TestServeSupersededFact: the page of a fact a newer lesson rewrites says
// so at its top and links the newer one, as borg show does; the newer
// one's page says nothing of the kind.
func TestServeSupersededFact(t *testing.T) {
	vars, _, _ := serveStore(t)
	ids := map[string]string{}
	for _, v := range []string{"pay-db-stage-1", "pay-db-stage-2"} {
		code, out, stderr := inProcess(t, vars, "", "learn", "--json", "The staging database of the payments service is "+v+".")
		if code != 0 {
			t.Fatalf("learn %s: exit %d: %s", v, code, stderr)
		}
		m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("learn %s printed no id: %s", v, out)
		}
		ids[v] = m[1]
		time.Sleep(5 * time.Millisecond)
	}
	old, now := ids["pay-db-stage-1"], ids["pay-db-stage-2"]
	srv, errb := serveHandler(t, vars, time.Now())
	get := func(path string) string {
		rec := serveGet(srv, path)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d\n%s\nstderr: %s", path, rec.Code, rec.Body, errb)
		}
		return rec.Body.String()
	}
	want := `<p class="err" id="superseded">Superseded by <a class="id" href="/lesson/` + now + `">` + now + `</a>`
	if body := get("/lesson/" + old); !strings.Contains(body, want) {
		t.Errorf("the old fact's page lacks %q:\n%s\nstderr: %s", want, body, errb)
	}
	if body := get("/lesson/" + now); strings.Contains(body, `id="superseded"`) {
		t.Errorf("the newer fact's page says it is superseded:\n%s", body)
	}
}

// TestLikelyUpdateShown: a fact a newer lesson says has changed, in other
// words than a slot rule reads, is marked "likely updated by" the newer one
// in borg recall, in serve's search and on its page, and the newer one
// comes first.
func TestLikelyUpdateShown(t *testing.T) {
	vars, _, _ := serveStore(t)
	var ids []string
	for _, g := range []string{"Refund disputes are escalated to the payments on-call engineer.",
		"Since the reorganisation, refund disputes now go to the finance operations desk rather than the payments on-call engineer."} {
		code, out, stderr := inProcess(t, vars, "", "learn", "--json", g)
		if code != 0 {
			t.Fatalf("learn: exit %d: %s", code, stderr)
		}
		m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("learn printed no id: %s", out)
		}
		ids = append(ids, m[1])
		time.Sleep(5 * time.Millisecond)
	}
	old, now := ids[0], ids[1]
	query := "A refund dispute came in and I escalated it to the payments on-call engineer."
	code, out, stderr := inProcess(t, vars, "", "recall", query)
	if code != 0 {
		t.Fatalf("recall: exit %d: %s", code, stderr)
	}
	if i, j := strings.Index(out, now), strings.Index(out, old); i < 0 || j < 0 || i > j || !strings.Contains(out, "(likely updated by "+now+")") {
		t.Errorf("recall does not put the update first and mark the old fact:\n%s", out)
	}
	srv, errb := serveHandler(t, vars, time.Now())
	rec := serveGet(srv, "/?q="+url.QueryEscape(query))
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `(likely updated by <a href="/lesson/`+now+`">`+now+`</a>)`) {
		t.Errorf("serve's search: status %d, no mark of the update:\n%s\nstderr: %s", rec.Code, body, errb)
	}
	want := `<p class="err" id="updated">Likely updated by <a class="id" href="/lesson/` + now + `">` + now + `</a>`
	if rec := serveGet(srv, "/lesson/"+old); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("the old fact's page: status %d, lacks %q:\n%s\nstderr: %s", rec.Code, want, rec.Body, errb)
	}
	if rec := serveGet(srv, "/lesson/"+now); strings.Contains(rec.Body.String(), `id="updated"`) {
		t.Errorf("the update's own page says it is updated:\n%s", rec.Body)
	}
}

// serveGet answers a GET of path as the server answers a browser on its
// default address.
func serveGet(srv http.Handler, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:7777"
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// TestServePendingSleeps: the sleep page lists the sleep branches written
// and not merged yet, each linked to its night's plan, so a reviewer need
// not guess the date; a merged one is not listed.
func TestServePendingSleeps(t *testing.T) {
	vars, _, _ := serveStore(t)
	store := vars["BORG_STORE"]
	for _, args := range [][]string{
		{"branch", "borg/sleep/2026-12-20"},
		{"commit", "-q", "--allow-empty", "-m", "test: moves the store's branch past a merged sleep branch"},
	} {
		if out, err := gitOut(store, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{
		{"switch", "-q", "-c", "borg/sleep/2026-12-21"},
		{"commit", "-q", "--allow-empty", "-m", "test: a sleep waiting for review"},
		{"switch", "-q", "-"},
	} {
		if out, err := gitOut(store, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv, errb := serveHandler(t, vars, time.Now())
	rec := serveGet(srv, "/sleep")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `<code>borg/sleep/2026-12-21</code>: <a href="/sleep?date=2026-12-21">`) {
		t.Fatalf("status %d; the page does not list the pending sleep branch:\n%s\nstderr: %s", rec.Code, body, errb)
	}
	if strings.Contains(body, "borg/sleep/2026-12-20") {
		t.Errorf("the page lists a sleep branch the store's branch has merged")
	}
}
