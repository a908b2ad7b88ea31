package memfs

import (
	"bytes"
	"html"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// parseRendered reads data when it is exactly what Render writes, line by
// line, without an HTML parser; ok is false for anything else (a file
// edited by hand, a format it does not know), which Parse then reads
// through the HTML parser. A reindex of 100,000 lessons spent 8 of its 30
// CPU seconds building a DOM for files borg wrote itself.
//
// It is exact, not a guess: the lesson it reads is canonicalised and
// validated as Parse's is, then rendered again and compared with data byte
// for byte. Render is deterministic and Parse(Render(l)) is l for every
// canonical valid lesson (FuzzRoundTrip), so when Render(l) is data,
// Parse(data) is l.
func parseRendered(data []byte) (domain.Lesson, bool) {
	rest, ok := bytes.CutPrefix(data, []byte("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"))
	if !ok {
		return domain.Lesson{}, false
	}
	line := func() ([]byte, bool) {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, false
		}
		l := rest[:i]
		rest = rest[i+1:]
		return l, true
	}
	metas := map[string]string{}
	var title string
	var links []domain.LessonLink
	cur, ok := line()
	if v, isTitle := between(cur, "<title>", "</title>"); ok && isTitle {
		title = html.UnescapeString(v)
		cur, ok = line()
	}
	for ok && bytes.HasPrefix(cur, []byte("<meta name=\"")) {
		name, content, found := strings.Cut(strings.TrimPrefix(string(cur), "<meta name=\""), "\" content=\"")
		content, closed := strings.CutSuffix(content, "\">")
		if !found || !closed {
			return domain.Lesson{}, false
		}
		metas[name] = html.UnescapeString(content)
		cur, ok = line()
	}
	for ok && bytes.HasPrefix(cur, []byte("<link rel=\"")) {
		k, good := renderedLink(string(cur))
		if !good {
			return domain.Lesson{}, false
		}
		links = append(links, k)
		cur, ok = line()
	}
	if !ok || string(cur) != "</head><body><article>" {
		return domain.Lesson{}, false
	}
	cur, ok = line()
	gist, isGist := between(cur, "<p><mark>", "</mark></p>")
	if !ok || !isGist {
		return domain.Lesson{}, false
	}
	paras, ok := renderedBody(rest)
	if !ok {
		return domain.Lesson{}, false
	}
	l, err := lessonFromMetas(metas)
	if err != nil {
		return domain.Lesson{}, false
	}
	l.Title, l.Links = title, links
	l.Gist, l.Body = html.UnescapeString(gist), strings.Join(paras, "\n\n")
	l = canonical(l)
	if validateCanonical(l) != nil || !bytes.Equal(Render(l), data) {
		return domain.Lesson{}, false
	}
	return l, true
}

// renderedBody reads the body's paragraphs and the closing tags that end
// the file, as Render writes them.
func renderedBody(rest []byte) ([]string, bool) {
	var paras []string
	for {
		// A <pre> paragraph spans lines: read up to its closing tag.
		if bytes.HasPrefix(rest, []byte("<pre>")) {
			end := bytes.Index(rest, []byte("</pre>\n"))
			if end < 0 {
				return nil, false
			}
			paras = append(paras, html.UnescapeString(string(rest[len("<pre>"):end])))
			rest = rest[end+len("</pre>\n"):]
			continue
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, false
		}
		cur := rest[:i]
		rest = rest[i+1:]
		if p, isPara := between(cur, "<p>", "</p>"); isPara {
			paras = append(paras, html.UnescapeString(p))
			continue
		}
		return paras, string(cur) == "</article></body></html>" && len(rest) == 0
	}
}

// between is the text of line between open and close, when line is exactly
// that.
func between(line []byte, open, close string) (string, bool) {
	s, ok := bytes.CutPrefix(line, []byte(open))
	if !ok {
		return "", false
	}
	s, ok = bytes.CutSuffix(s, []byte(close))
	return string(s), ok
}

// renderedLink reads a <link> line as Render writes it, checking what
// readLinks checks.
func renderedLink(line string) (domain.LessonLink, bool) {
	rest := strings.TrimPrefix(line, "<link rel=\"")
	rel, rest, ok := strings.Cut(rest, "\" href=\"")
	if !ok {
		return domain.LessonLink{}, false
	}
	href, attrs, ok := strings.Cut(rest, "\"")
	if !ok {
		return domain.LessonLink{}, false
	}
	k := domain.LessonLink{Rel: html.UnescapeString(rel)}
	switch attrs {
	case ">":
	case " " + derivedAttr + "=\"true\">":
		k.Derived = true
	default:
		return domain.LessonLink{}, false
	}
	target, ok := strings.CutSuffix(html.UnescapeString(href), ".html")
	if !ok || !domain.ValidID(target) || !relName(k.Rel) {
		return domain.LessonLink{}, false
	}
	k.Target = target
	return k, true
}
