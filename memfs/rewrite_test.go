package memfs

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// handWritten is a lesson as a person writes one: markup the codec reads
// and Render never writes (a link to the web, a list, a table, a comment,
// a meta of its own, attributes in another order).
const handWritten = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta content="1" name="memhtml-format">
  <meta name="memhtml-id" content="pin-go-toolchain-ab12">
  <meta name="memhtml-type" content="procedural">
  <meta name='memhtml-confidence' content='0.8'>
  <meta name="memhtml-created" content="2026-10-01T00:00:00Z">
  <meta name="memhtml-ticket" content="OPS-12">
  <link rel="relates" href="go-version-policy-cd34.html">
</head>
<body><article>
  <p><mark>Always pin the Go toolchain in go.mod</mark></p>
  <p>Why: the <a href="https://go.dev/doc/toolchain">toolchain docs</a> say so.</p>
  <ul><li>step one</li><li>step two</li></ul>
  <table><tr><td>go</td><td>1.26</td></tr></table>
  <!-- reviewer note: keep this -->
</article></body>
</html>
`

// kept are the hand-written lines every in-place rewrite must keep.
var kept = []string{
	`<a href="https://go.dev/doc/toolchain">toolchain docs</a>`,
	`<ul><li>step one</li><li>step two</li></ul>`,
	`<table><tr><td>go</td><td>1.26</td></tr></table>`,
	`<!-- reviewer note: keep this -->`,
	`<meta name="memhtml-ticket" content="OPS-12">`,
	`<meta content="1" name="memhtml-format">`,
}

func TestRewriteKeepsHandWrittenMarkup(t *testing.T) {
	base, err := Parse([]byte(handWritten))
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		edit    func(l *domain.Lesson)
		added   []string // lines the rewrite adds
		removed []string // lines of handWritten it removes
	}{
		{"decay", func(l *domain.Lesson) { l.Confidence = 0.7421 },
			[]string{`<meta name="memhtml-confidence" content="0.7421">`},
			[]string{`<meta name='memhtml-confidence' content='0.8'>`}},
		{"reprieve", func(l *domain.Lesson) { l.ValidUntil, l.Reprieves = day, 1 },
			[]string{`<meta name="memhtml-valid-until" content="2026-12-20T00:00:00Z">`, `<meta name="memhtml-reprieves" content="1">`}, nil},
		{"derived link", func(l *domain.Lesson) {
			l.Links = append(l.Links, domain.LessonLink{Rel: "supersedes", Target: "old-pin-ef56", Derived: true})
		}, []string{`<link rel="supersedes" href="old-pin-ef56.html" data-derived="true">`}, nil},
		{"link dropped", func(l *domain.Lesson) { l.Links = nil },
			nil, []string{`<link rel="relates" href="go-version-policy-cd34.html">`}},
		{"merge note", func(l *domain.Lesson) {
			l.Body += "\n\nMerged pin-go-old-9f9f into this lesson on 2026-12-07 (cosine 0.9500): Pin Go."
			l.Tags = []string{"go", "toolchain"}
		}, []string{`<p>Merged pin-go-old-9f9f into this lesson on 2026-12-07 (cosine 0.9500): Pin Go.</p>`,
			`<meta name="memhtml-tags" content="go,toolchain">`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := base
			l.Links = append([]domain.LessonLink(nil), base.Links...)
			tc.edit(&l)
			out := Rewrite([]byte(handWritten), l)
			got, err := Parse(out)
			if err != nil {
				t.Fatalf("the rewrite does not parse: %v\n%s", err, out)
			}
			if !bytes.Equal(Render(got), Render(l)) {
				t.Fatalf("the rewrite reads as\n%#v\nwant\n%#v", got, canonical(l))
			}
			for _, k := range kept {
				if !bytes.Contains(out, []byte(k)) {
					t.Errorf("lost %s:\n%s", k, out)
				}
			}
			before, after := linesOf(handWritten), linesOf(string(out))
			var gone, gained []string
			for s := range before {
				if !after[s] {
					gone = append(gone, s)
				}
			}
			for s := range after {
				if !before[s] {
					gained = append(gained, s)
				}
			}
			if !sameSet(gone, tc.removed) || !sameSet(gained, tc.added) {
				t.Errorf("removed %q, added %q; want removed %q, added %q\n%s", gone, gained, tc.removed, tc.added, out)
			}
		})
	}
}

func linesOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[strings.TrimSpace(l)] = true
	}
	return m
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, s := range a {
		m[s] = true
	}
	for _, s := range b {
		if !m[s] {
			return false
		}
	}
	return true
}

// A file as Render writes it, and an edit the file cannot take in place,
// are rendered.
func TestRewriteRenders(t *testing.T) {
	l := sampleLesson("rendered-lesson-1a2b")
	raw := Render(l)
	l.Confidence = 0.5
	if got := Rewrite(raw, l); !bytes.Equal(got, Render(l)) {
		t.Errorf("a rendered file is not rendered again:\n%s", got)
	}
	base, err := Parse([]byte(handWritten))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*domain.Lesson){
		"gist":         func(l *domain.Lesson) { l.Gist = "Pin it." },
		"body rewrite": func(l *domain.Lesson) { l.Body = "Something else." },
		"links reordered": func(l *domain.Lesson) {
			l.Links = []domain.LessonLink{{Rel: "supports", Target: "a-1111"}, base.Links[0]}
			l.Links[0], l.Links[1] = l.Links[1], l.Links[0]
		},
	} {
		x := base
		edit(&x)
		got := Rewrite([]byte(handWritten), x)
		back, err := Parse(got)
		if err != nil || !bytes.Equal(Render(back), Render(x)) {
			t.Errorf("%s: the rewrite does not read as the lesson (%v):\n%s", name, err, got)
		}
	}
	if got := Rewrite([]byte("not a lesson"), l); !bytes.Equal(got, Render(l)) {
		t.Errorf("an unreadable file is not rendered:\n%s", got)
	}
}

// FuzzRewrite: whatever the file and the edit, the rewrite reads back as
// the lesson written.
func FuzzRewrite(f *testing.F) {
	f.Add([]byte(handWritten), 0.5, uint8(2), "go,tools", "Merged x.", true)
	f.Add(Render(sampleLesson("fuzz-rewrite-0001")), 0.1, uint8(0), "", "", false)
	f.Add([]byte(strings.Replace(handWritten, "<article>", "", 1)), 0.9, uint8(1), "a", "note\n\nnext", false)
	// A link just before a meta the edit rewrites, on the next line and on
	// the same line: the new link goes in where the meta's line starts.
	f.Add([]byte(linkBeforeMeta("\n")), 0.5, uint8(1), "go", "", true)
	f.Add([]byte(linkBeforeMeta("")), 0.5, uint8(1), "go", "", true)
	f.Fuzz(func(t *testing.T, raw []byte, conf float64, rep uint8, tags, note string, link bool) {
		l, err := Parse(raw)
		if err != nil || !(conf >= 0 && conf <= 1) {
			return
		}
		l.Confidence, l.Reprieves, l.Tags = conf, int(rep%4), strings.Split(tags, ",")
		if note != "" {
			l.Body = strings.TrimSpace(l.Body + "\n\n" + note)
		}
		if link {
			l.Links = append(l.Links, domain.LessonLink{Rel: "supersedes", Target: "fuzz-target-0001", Derived: true})
		}
		if Validate(l) != nil {
			return
		}
		out := Rewrite(raw, l)
		got, err := Parse(out)
		if err != nil {
			t.Fatalf("the rewrite does not parse: %v\n%s", err, out)
		}
		if !bytes.Equal(Render(got), Render(l)) {
			t.Fatalf("the rewrite reads as\n%#v\nwant\n%#v\n%s", got, canonical(l), out)
		}
	})
}

// linkBeforeMeta is a hand-written lesson whose last link is followed,
// after sep, by the confidence meta.
func linkBeforeMeta(sep string) string {
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="memhtml-id" content="link-before-meta-ab12">
<meta name="memhtml-type" content="semantic">
<link rel="relates" href="x-lesson-0001.html">` + sep + `<meta name="memhtml-confidence" content="0.8">
</head><body><article>
<p><mark>A lesson written by hand.</mark></p>
<!-- kept -->
</article></body></html>
`
}

// TestRewriteLinkBeforeMeta: an edit that rewrites a meta right after the
// last link and adds a link (a decay and a derived link; a sync's new id
// and its conflicts-with link) panicked, the two edits meeting at one
// offset.
func TestRewriteLinkBeforeMeta(t *testing.T) {
	for _, sep := range []string{"\n", ""} {
		raw := []byte(linkBeforeMeta(sep))
		l, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		l.Confidence = 0.5
		l.Links = append(l.Links, domain.LessonLink{Rel: "supersedes", Target: "old-lesson-0002", Derived: true})
		out := Rewrite(raw, l)
		got, err := Parse(out)
		if err != nil || !bytes.Equal(Render(got), Render(l)) || !bytes.Contains(out, []byte("<!-- kept -->")) {
			t.Errorf("sep %q: the rewrite reads as %+v (%v):\n%s", sep, got, err, out)
		}
	}
}

// TestRewriteCRLF: a file with Windows line ends keeps them: a removed
// link takes its line ending with it, and a new line ends as the others.
func TestRewriteCRLF(t *testing.T) {
	raw := []byte(strings.ReplaceAll(handWritten, "\n", "\r\n"))
	l, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	l.Links = nil
	l.Reprieves = 1
	out := Rewrite(raw, l)
	got, err := Parse(out)
	if err != nil || !bytes.Equal(Render(got), Render(l)) {
		t.Fatalf("the rewrite reads as %+v (%v)", got, err)
	}
	if bytes.Contains(out, []byte("\r\n\r\n")) || bytes.Contains(bytes.ReplaceAll(out, []byte("\r\n"), nil), []byte("\n")) {
		t.Errorf("a blank line, or a bare line feed:\n%q", out)
	}
}
