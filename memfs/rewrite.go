package memfs

import (
	"bytes"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	nethtml "golang.org/x/net/html"

	"github.com/borg-memory/borg/domain"
)

// Rewrite is the file raw holding lesson l instead of the lesson it holds:
// the bytes a machine edit of a lesson (a sleep's decay, a merge's note, a
// derived link) writes. A file as Render writes it is rendered again. A
// file written by hand keeps every byte the edit does not concern (its
// links to the web, its lists and tables, its comments, metas of its own):
// only the metas and links whose values change are written, and new body
// paragraphs go in before the article's end. A reviewer then reads a diff of
// the changed lines alone. When the edit is one the file cannot take in
// place (the gist, title, type or author changed, the body changed other
// than by new paragraphs at its end, or the result would not read back as
// l), the file is rendered from l, as Render writes it.
func Rewrite(raw []byte, l domain.Lesson) (out []byte) {
	defer func() {
		// raw is a file as anyone wrote it, and a sleep rewrites files on
		// several goroutines: an edit in place that fails is a render,
		// never a crash.
		if recover() != nil {
			out = Render(l)
		}
	}()
	old, err := Parse(raw)
	if err != nil || bytes.Equal(raw, Render(old)) {
		return Render(l)
	}
	l = canonical(l)
	if out, ok := patchLesson(raw, old, l); ok {
		return out
	}
	return Render(l)
}

// patchLesson edits raw (holding old, canonical) in place to hold l
// (canonical), and reports whether it could.
func patchLesson(raw []byte, old, l domain.Lesson) ([]byte, bool) {
	if old.Title != l.Title || old.Gist != l.Gist || old.Type != l.Type ||
		old.Author != l.Author || old.Reach != l.Reach || !old.Created.Equal(l.Created) {
		return nil, false
	}
	added, ok := bodyAdded(old.Body, l.Body)
	if !ok {
		return nil, false
	}
	sp, ok := scanSpans(raw)
	if !ok {
		return nil, false
	}
	var eds []edit
	// Metas: each whose value changes is written where it stands, new ones
	// after the file's last meta.
	oldM, newM := metaFields(old), metaFields(l)
	for _, f := range newM {
		if v, had := fieldValue(oldM, f.name); had && v == f.content {
			continue
		}
		line := metaLine(f.name, f.content)
		if at, ok := sp.metas[f.name]; ok {
			eds = append(eds, edit{at[0], at[1], strings.TrimSuffix(line, "\n")})
		} else {
			eds = append(eds, sp.insertAfter(sp.lastMeta, line))
		}
	}
	for _, f := range oldM {
		if _, keep := fieldValue(newM, f.name); !keep {
			at, ok := sp.metas[f.name]
			if !ok {
				return nil, false
			}
			eds = append(eds, sp.deleteLine(at))
		}
	}
	// Links: the file's links are old's in order; those l drops go, and l's
	// links past the ones it keeps (in order) come after the file's last.
	keep := 0
	for i, k := range old.Links {
		if keep < len(l.Links) && l.Links[keep] == k {
			keep++
			continue
		}
		if slices.Contains(l.Links, k) {
			return nil, false // reordered: not an edit in place
		}
		eds = append(eds, sp.deleteLine(sp.links[i]))
	}
	after := sp.lastLink
	if after[1] == 0 {
		after = sp.lastMeta
	}
	for _, k := range l.Links[keep:] {
		eds = append(eds, sp.insertAfter(after, linkLine(k)))
	}
	if added != "" {
		if sp.bodyEnd < 0 {
			return nil, false
		}
		eds = append(eds, edit{sp.bodyEnd, sp.bodyEnd, bodyParagraphs(added)})
	}
	out, ok := applyEdits(raw, eds)
	if !ok {
		return nil, false
	}
	got, err := Parse(out)
	if err != nil || len(out) > MaxLessonBytes || !bytes.Equal(Render(got), Render(l)) {
		return nil, false
	}
	return out, true
}

// bodyAdded is the paragraphs body has past old (both canonical); ok is
// false when body does not begin with old's paragraphs.
func bodyAdded(old, body string) (string, bool) {
	switch {
	case old == body:
		return "", true
	case old == "":
		return body, true
	}
	added, ok := strings.CutPrefix(body, old+"\n\n")
	return added, ok
}

// metaField is one memhtml meta as Render writes it.
type metaField struct{ name, content string }

// metaFields are l's metas, in the order Render writes them.
func metaFields(l domain.Lesson) []metaField {
	f := []metaField{
		{metaFormat, strconv.Itoa(l.Format)},
		{metaID, l.ID},
		{metaType, l.Type},
		{metaConfidence, strconv.FormatFloat(l.Confidence, 'f', 4, 64)},
	}
	add := func(ok bool, name, content string) {
		if ok {
			f = append(f, metaField{name, content})
		}
	}
	add(l.Importance != 0, metaImportance, strconv.Itoa(l.Importance))
	add(l.Reach != "", metaReach, l.Reach)
	add(l.Author != "", metaAuthor, l.Author)
	add(!l.Created.IsZero(), metaCreated, l.Created.Format(createdLayout))
	add(!l.ValidUntil.IsZero(), metaValidUntil, l.ValidUntil.Format(time.RFC3339))
	add(l.Reprieves != 0, metaReprieves, strconv.Itoa(l.Reprieves))
	add(len(l.Tags) > 0, metaTags, strings.Join(l.Tags, ","))
	add(len(l.Anchors) > 0, metaAnchors, strings.Join(l.Anchors, ","))
	return f
}

func fieldValue(fs []metaField, name string) (string, bool) {
	for _, f := range fs {
		if f.name == name {
			return f.content, true
		}
	}
	return "", false
}

// metaLine and linkLine are one line of Render's head.
func metaLine(name, content string) string {
	return "<meta name=\"" + name + "\" content=\"" + html.EscapeString(content) + "\">\n"
}

func linkLine(k domain.LessonLink) string {
	derived := ""
	if k.Derived {
		derived = " " + derivedAttr + "=\"true\""
	}
	return "<link rel=\"" + html.EscapeString(k.Rel) + "\" href=\"" + html.EscapeString(k.Target) + ".html\"" + derived + ">\n"
}

// bodyParagraphs are body paragraphs (canonical) as Render writes them.
func bodyParagraphs(body string) string {
	var b strings.Builder
	for _, p := range strings.Split(body, "\n\n") {
		if strings.Contains(p, "\n") {
			b.WriteString("<pre>" + html.EscapeString(p) + "</pre>\n")
		} else {
			b.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
		}
	}
	return b.String()
}

// spans are where a file's metas, links and body end lie, as byte ranges.
type spans struct {
	raw      []byte
	metas    map[string][2]int // memhtml metas by name
	links    [][2]int          // the lesson links, in order
	lastMeta [2]int            // the last meta tag of any name
	lastLink [2]int
	bodyEnd  int // the offset of the gist's container's end tag; -1: none
}

// scanSpans tokenizes raw and records the spans a rewrite edits. ok is false
// for a file the tokenizer does not read end to end.
func scanSpans(raw []byte) (spans, bool) {
	sp := spans{raw: raw, metas: map[string][2]int{}, bodyEnd: -1}
	z := nethtml.NewTokenizer(bytes.NewReader(raw))
	off, articleEnd, bodyEnd := 0, -1, -1
	for {
		tt := z.Next()
		if tt == nethtml.ErrorToken {
			if z.Err() != io.EOF || off != len(raw) {
				return sp, false
			}
			break
		}
		n := len(z.Raw())
		at := [2]int{off, off + n}
		off += n
		name, hasAttr := z.TagName()
		switch tt {
		case nethtml.StartTagToken, nethtml.SelfClosingTagToken:
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			switch string(name) {
			case "meta":
				sp.lastMeta = at
				if n := strings.ToLower(strings.TrimSpace(attrs["name"])); strings.HasPrefix(n, metaPrefix) {
					sp.metas[n] = at
				}
			case "link":
				sp.lastLink = at
				sp.links = append(sp.links, at)
			}
		case nethtml.EndTagToken:
			switch string(name) {
			case "article":
				if articleEnd < 0 {
					articleEnd = at[0]
				}
			case "body":
				if bodyEnd < 0 {
					bodyEnd = at[0]
				}
			}
		}
	}
	// The body is read from the first article, else the body.
	if bytes.Contains(bytes.ToLower(raw), []byte("<article")) {
		sp.bodyEnd = articleEnd
	} else {
		sp.bodyEnd = bodyEnd
	}
	return sp, sp.lastMeta[1] > 0
}

// edit replaces raw[at:end] with text.
type edit struct {
	at, end int
	text    string
}

// insertAfter is an edit putting line (ending in a newline) on its own line
// after the tag at.
func (sp spans) insertAfter(at [2]int, line string) edit {
	switch rest := sp.raw[at[1]:]; {
	case bytes.HasPrefix(rest, []byte("\n")):
		return edit{at[1] + 1, at[1] + 1, line}
	case bytes.HasPrefix(rest, []byte("\r\n")): // keep the file's line ends
		return edit{at[1] + 2, at[1] + 2, strings.TrimSuffix(line, "\n") + "\r\n"}
	}
	return edit{at[1], at[1], "\n" + strings.TrimSuffix(line, "\n")}
}

// deleteLine is an edit removing the tag at, with its line when the tag is
// alone on it.
func (sp spans) deleteLine(at [2]int) edit {
	start, end := at[0], at[1]
	if start == 0 || sp.raw[start-1] == '\n' {
		switch rest := sp.raw[end:]; {
		case bytes.HasPrefix(rest, []byte("\n")):
			end++
		case bytes.HasPrefix(rest, []byte("\r\n")): // a file with Windows line ends
			end += 2
		}
	}
	return edit{start, end, ""}
}

// applyEdits applies edits in the order of their offsets: at one offset,
// inserts (in the order given) before the replacement of what starts
// there (a link inserted after the last link, which a meta follows, goes
// before that meta's new line). ok is false when two edits overlap.
func applyEdits(raw []byte, eds []edit) (out []byte, ok bool) {
	slices.SortStableFunc(eds, func(a, b edit) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return (a.end - a.at) - (b.end - b.at) // zero-width first
	})
	var b bytes.Buffer
	last := 0
	for _, e := range eds {
		if e.at < last {
			return nil, false
		}
		b.Write(raw[last:e.at])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(raw[last:])
	return b.Bytes(), true
}
