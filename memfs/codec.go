package memfs

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	nethtml "golang.org/x/net/html"

	"github.com/borg-memory/borg/domain"
)

// MaxLessonBytes bounds the size of a lesson file the codec reads.
const MaxLessonBytes = 1 << 20

// The memhtml meta names (docs/formats.md, "Lessons (memhtml)").
const (
	metaPrefix     = "memhtml-"
	metaFormat     = "memhtml-format"
	metaID         = "memhtml-id"
	metaType       = "memhtml-type"
	metaConfidence = "memhtml-confidence"
	metaImportance = "memhtml-importance"
	metaReach      = "memhtml-reach"
	metaAuthor     = "memhtml-author"
	metaCreated    = "memhtml-created"
	metaValidUntil = "memhtml-valid-until"
	metaReprieves  = "memhtml-reprieves"
	metaTags       = "memhtml-tags"
	metaAnchors    = "memhtml-anchors"
)

// derivedAttr marks a link sleep mined rather than one a person authored.
const derivedAttr = "data-derived"

// hashedID reports whether s is prefix and then n lowercase hex digits:
// an engineer's hashed id ("e-", 8) or a session's ("s-", 16). A check by
// hand, not an expression: every hook checks one, and compiling one costs
// a hook more than the check.
func hashedID(s, prefix string, n int) bool {
	hex, ok := strings.CutPrefix(s, prefix)
	return ok && len(hex) == n && !strings.ContainsFunc(hex, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'f')
	})
}

// relName reports whether s names a link's relation: a lowercase letter,
// then 1 to 31 lowercase letters or hyphens.
func relName(s string) bool {
	return len(s) >= 2 && len(s) <= 32 && s[0] >= 'a' && s[0] <= 'z' && !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && r != '-'
	})
}

// htmlTags are the elements Parse reads, as selectors compiled once, on the
// first parse rather than at every start-up (goquery compiles a selector
// string on every call). goquery.Single is goquery's one way to hand out a
// compiled selector, and it changes only what Find collects (the first
// match under each child of the selection): Parse filters with these, and
// follows a Find with First.
var htmlTags = sync.OnceValue(func() (t struct{ meta, link, title, article, body, mark goquery.Matcher }) {
	t.meta, t.link, t.title = goquery.Single("meta"), goquery.Single("link"), goquery.Single("title")
	t.article, t.body, t.mark = goquery.Single("article"), goquery.Single("body"), goquery.Single("mark")
	return t
})

// forbiddenElements can run code, load content or restyle the page; the codec
// refuses them on read and never writes them.
var forbiddenElements = map[string]bool{
	"script": true, "style": true, "iframe": true, "frame": true, "frameset": true,
	"object": true, "embed": true, "applet": true, "base": true, "noscript": true,
	// Elements whose text a browser does not show (or shows only in a way
	// the page's author controls) while the codec reads it as the lesson's
	// words: the agent would read what the reviewer of the rendered page
	// never saw. Restyling (font), overriding the text's direction (bdo) and
	// foreign content (svg, math: their attributes can hide or move text).
	"template": true, "dialog": true, "noembed": true, "noframes": true,
	"canvas": true, "video": true, "audio": true, "datalist": true, "rp": true,
	"font": true, "bdo": true, "svg": true, "math": true,
	// Form controls show one value of many (select, option) or none of
	// their text (progress, meter fallback).
	"select": true, "option": true, "optgroup": true, "progress": true, "meter": true,
}

// blockElements end a paragraph of the body text.
var blockElements = map[string]bool{
	"p": true, "pre": true, "div": true, "ul": true, "ol": true, "li": true,
	"blockquote": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "section": true, "header": true, "footer": true, "table": true,
	"tr": true, "td": true, "th": true, "dl": true, "dt": true, "dd": true,
	"hr": true, "figure": true, "figcaption": true, "details": true, "summary": true,
	"article": true, "aside": true, "nav": true, "main": true,
}

// invalid builds the codec's typed error.
func invalid(format string, args ...any) error {
	return &domain.InvalidMemory{Reason: fmt.Sprintf(format, args...)}
}

// Parse reads one memhtml lesson file. It is total: any input yields either a
// lesson or a *domain.InvalidMemory naming the rule the input breaks; it never
// panics. The lesson is canonical (see Render): Parse(Render(l)) equals l for
// every canonical valid lesson l.
func Parse(data []byte) (l domain.Lesson, err error) {
	defer func() {
		// The HTML parser is total, but a lesson is read from untrusted
		// bytes: an unexpected panic is an invalid file, not a crash.
		if r := recover(); r != nil {
			l, err = domain.Lesson{}, invalid("unreadable HTML (%v)", r)
		}
	}()
	if len(data) > MaxLessonBytes {
		return domain.Lesson{}, invalid("file larger than %d bytes", MaxLessonBytes)
	}
	if !utf8.Valid(data) {
		return domain.Lesson{}, invalid("not valid UTF-8")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return domain.Lesson{}, invalid("NUL byte at offset %d", i)
	}
	if l, ok := parseRendered(data); ok {
		return l, nil // a file as Render writes it (codecfast.go)
	}
	return parseHTML(data)
}

// parseHTML is Parse through the HTML parser: any file, however written.
func parseHTML(data []byte) (l domain.Lesson, err error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
	if err != nil {
		return domain.Lesson{}, invalid("unreadable HTML: %v", err)
	}
	all := doc.Find("*")
	if err := checkMarkup(all); err != nil {
		return domain.Lesson{}, err
	}
	metas, err := readMetas(all.FilterMatcher(htmlTags().meta))
	if err != nil {
		return domain.Lesson{}, err
	}
	l, err = lessonFromMetas(metas)
	if err != nil {
		return domain.Lesson{}, err
	}
	l.Title = collapse(all.FilterMatcher(htmlTags().title).First().Text())
	if l.Links, err = readLinks(all.FilterMatcher(htmlTags().link)); err != nil {
		return domain.Lesson{}, err
	}
	l.Gist, l.Body = readText(all)
	l = canonical(l)
	if err := validateCanonical(l); err != nil {
		return domain.Lesson{}, err
	}
	return l, nil
}

// checkMarkup refuses elements and attributes that run code or hide text.
// It is the one hand loop left in the reader: a refusal names the first
// offending element or attribute in document order, and every attribute of
// every element is checked (duplicates included), which no selector says.
// It lowercases element names as Unicode does (so <SCRİPT>, with a dotted
// capital I, is refused as <script>) and stores them so: the selectors Parse
// reads with afterwards then match the elements the refusals looked at.
func checkMarkup(all *goquery.Selection) error {
	for i, n := range all.Nodes {
		name := strings.ToLower(n.Data)
		n.Data = name
		if forbiddenElements[name] {
			return invalid("forbidden markup <%s>", name)
		}
		if name == "details" {
			if _, open := all.Eq(i).Attr("open"); !open {
				// A closed <details> shows only its summary until clicked.
				return invalid("forbidden markup <details> without open (it hides its text until clicked)")
			}
		}
		for _, a := range n.Attr {
			key := strings.ToLower(a.Key)
			switch {
			case strings.HasPrefix(key, "on"):
				return invalid("forbidden event-handler attribute %s on <%s>", key, name)
			case key == "style" || key == "hidden":
				return invalid("forbidden attribute %s on <%s> (hides or restyles text)", key, name)
			case name == "meta" && key == "http-equiv" && strings.EqualFold(strings.TrimSpace(a.Val), "refresh"):
				return invalid("forbidden markup <meta http-equiv=refresh>")
			case scriptURL(a.Val):
				return invalid("forbidden script URL in %s on <%s>", key, name)
			}
		}
	}
	return nil
}

// scriptURL reports whether v is a javascript: or vbscript: URL once the
// characters a browser ignores inside a scheme are removed.
func scriptURL(v string) bool {
	var b strings.Builder
	for _, r := range v {
		if r <= ' ' || r == 0x7f || unicode.Is(unicode.Cf, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		if b.Len() >= len("javascript:") {
			break
		}
	}
	s := b.String()
	return strings.HasPrefix(s, "javascript:") || strings.HasPrefix(s, "vbscript:")
}

// readMetas collects the memhtml-* metas, refusing duplicates.
func readMetas(sel *goquery.Selection) (map[string]string, error) {
	metas := map[string]string{}
	for _, m := range sel.EachIter() {
		name := strings.ToLower(strings.TrimSpace(m.AttrOr("name", "")))
		if !strings.HasPrefix(name, metaPrefix) {
			continue
		}
		if _, dup := metas[name]; dup {
			return nil, invalid("duplicate meta %s", name)
		}
		metas[name] = strings.TrimSpace(m.AttrOr("content", ""))
	}
	return metas, nil
}

// lessonFromMetas decodes the meta fields; Validate checks their vocabulary.
func lessonFromMetas(m map[string]string) (domain.Lesson, error) {
	l := domain.Lesson{Format: domain.FormatVersion}
	if v, ok := m[metaFormat]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return l, invalid("bad %s %q", metaFormat, v)
		}
		l.Format = n
	}
	var ok bool
	if l.ID, ok = m[metaID]; !ok || l.ID == "" {
		return l, invalid("missing %s", metaID)
	}
	if l.Type, ok = m[metaType]; !ok || l.Type == "" {
		return l, invalid("missing %s", metaType)
	}
	v, ok := m[metaConfidence]
	if !ok || v == "" {
		return l, invalid("missing %s", metaConfidence)
	}
	c, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return l, invalid("bad %s %q", metaConfidence, v)
	}
	if !(c >= 0 && c <= 1) {
		return l, invalid("%s %q out of range [0,1]", metaConfidence, v)
	}
	l.Confidence = c
	if v, ok := m[metaImportance]; ok {
		if l.Importance, err = strconv.Atoi(v); err != nil {
			return l, invalid("bad %s %q", metaImportance, v)
		}
		if l.Importance < 1 || l.Importance > 10 {
			return l, invalid("%s %q out of range 1..10", metaImportance, v)
		}
	}
	l.Reach = m[metaReach]
	l.Author = m[metaAuthor]
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{metaCreated, &l.Created}, {metaValidUntil, &l.ValidUntil}} {
		v, ok := m[f.name]
		if !ok || v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return l, invalid("bad %s %q (want RFC 3339, e.g. 2026-11-29T10:00:00Z)", f.name, v)
		}
		*f.dst = t
	}
	if v, ok := m[metaReprieves]; ok && v != "" {
		if l.Reprieves, err = strconv.Atoi(v); err != nil || l.Reprieves < 0 {
			return l, invalid("bad %s %q", metaReprieves, v)
		}
	}
	l.Tags = splitList(m[metaTags])
	l.Anchors = splitList(m[metaAnchors])
	return l, nil
}

// readLinks reads the <link rel href> edges to other lessons.
func readLinks(sel *goquery.Selection) ([]domain.LessonLink, error) {
	var links []domain.LessonLink
	for _, k := range sel.EachIter() {
		rel := strings.ToLower(strings.TrimSpace(k.AttrOr("rel", "")))
		href := strings.TrimSpace(k.AttrOr("href", ""))
		target, ok := strings.CutSuffix(href, ".html")
		if !ok || !domain.ValidID(target) {
			return nil, invalid("link href %q is not a lesson (<id>.html)", href)
		}
		if !relName(rel) {
			return nil, invalid("bad link rel %q", rel)
		}
		_, derived := k.Attr(derivedAttr)
		links = append(links, domain.LessonLink{Rel: rel, Target: target, Derived: derived})
	}
	return links, nil
}

// readText extracts the gist (the first <mark> of the article, or of the
// body without an article) and the body (every other paragraph); all is
// every element of the document.
func readText(all *goquery.Selection) (gist, body string) {
	t := htmlTags()
	root := all.FilterMatcher(t.article).First()
	if root.Length() == 0 {
		root = all.FilterMatcher(t.body).First()
	}
	w := &textWalker{}
	if mark := root.FindMatcher(t.mark).First(); mark.Length() > 0 {
		w.mark, gist = mark.Get(0), collapse(mark.Text())
	}
	w.walk(root, false)
	w.flush()
	return gist, strings.Join(w.paras, "\n\n")
}

// textWalker splits an element's text into paragraphs at block elements.
type textWalker struct {
	mark  *nethtml.Node
	cur   strings.Builder
	pre   bool // the current paragraph came from <pre>: keep its lines
	paras []string
}

func (w *textWalker) flush() {
	s := w.cur.String()
	w.cur.Reset()
	if !w.pre {
		s = collapse(s)
	}
	w.pre = false
	if strings.TrimSpace(s) != "" {
		w.paras = append(w.paras, s)
	}
}

// walk reads the text and elements under s (Contents: text nodes included)
// in document order.
func (w *textWalker) walk(s *goquery.Selection, inPre bool) {
	for _, c := range s.Contents().EachIter() {
		n, name := c.Get(0), goquery.NodeName(c)
		switch {
		case n.Type == nethtml.TextNode:
			w.cur.WriteString(n.Data)
			w.pre = w.pre || inPre
		case n.Type != nethtml.ElementNode || n == w.mark:
		case name == "br":
			w.cur.WriteByte('\n')
		case blockElements[name]:
			w.flush()
			w.walk(c, inPre || name == "pre")
			w.flush()
		default:
			w.walk(c, inPre)
		}
	}
}

// Render writes a lesson as memhtml. It is deterministic (same lesson, same
// bytes), writes one meta per line so that changing one field changes one
// line, escapes every text, omits absent optional fields and never writes
// forbidden markup. It renders the canonical form of l: single-line gist and
// title with collapsed spaces, confidence to 4 decimals, times in UTC to the
// second, tags and anchors trimmed, body paragraphs separated by one blank
// line (a one-line paragraph collapsed, a multi-line one kept as <pre>).
func Render(l domain.Lesson) []byte {
	l = canonical(l)
	var b bytes.Buffer
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	if l.Title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(l.Title))
	}
	meta := func(name, content string) {
		fmt.Fprintf(&b, "<meta name=\"%s\" content=\"%s\">\n", name, html.EscapeString(content))
	}
	meta(metaFormat, strconv.Itoa(l.Format))
	meta(metaID, l.ID)
	meta(metaType, l.Type)
	meta(metaConfidence, strconv.FormatFloat(l.Confidence, 'f', 4, 64))
	if l.Importance != 0 {
		meta(metaImportance, strconv.Itoa(l.Importance))
	}
	if l.Reach != "" {
		meta(metaReach, l.Reach)
	}
	if l.Author != "" {
		meta(metaAuthor, l.Author)
	}
	if !l.Created.IsZero() {
		meta(metaCreated, l.Created.Format(createdLayout))
	}
	if !l.ValidUntil.IsZero() {
		meta(metaValidUntil, l.ValidUntil.Format(time.RFC3339))
	}
	if l.Reprieves != 0 {
		meta(metaReprieves, strconv.Itoa(l.Reprieves))
	}
	if len(l.Tags) > 0 {
		meta(metaTags, strings.Join(l.Tags, ","))
	}
	if len(l.Anchors) > 0 {
		meta(metaAnchors, strings.Join(l.Anchors, ","))
	}
	for _, k := range l.Links {
		derived := ""
		if k.Derived {
			derived = " " + derivedAttr + "=\"true\""
		}
		fmt.Fprintf(&b, "<link rel=\"%s\" href=\"%s.html\"%s>\n",
			html.EscapeString(k.Rel), html.EscapeString(k.Target), derived)
	}
	b.WriteString("</head><body><article>\n")
	fmt.Fprintf(&b, "<p><mark>%s</mark></p>\n", html.EscapeString(l.Gist))
	if l.Body != "" {
		for _, p := range strings.Split(l.Body, "\n\n") {
			if strings.Contains(p, "\n") {
				fmt.Fprintf(&b, "<pre>%s</pre>\n", html.EscapeString(p))
			} else {
				fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
			}
		}
	}
	b.WriteString("</article></body></html>\n")
	return b.Bytes()
}

// canonical returns the form of l that Render writes and Parse returns.
func canonical(l domain.Lesson) domain.Lesson {
	if l.Format == 0 {
		l.Format = domain.FormatVersion
	}
	l.ID = strings.TrimSpace(l.ID)
	l.Type = strings.TrimSpace(l.Type)
	l.Title = collapse(l.Title)
	l.Gist = collapse(l.Gist)
	l.Body = canonicalBody(l.Body)
	l.Reach = strings.TrimSpace(l.Reach)
	l.Author = strings.TrimSpace(l.Author)
	if !math.IsNaN(l.Confidence) && !math.IsInf(l.Confidence, 0) {
		l.Confidence = math.Round(l.Confidence*1e4) / 1e4
	}
	l.Created = canonicalTime(l.Created)
	l.ValidUntil = canonicalTime(l.ValidUntil)
	l.Tags = splitList(strings.Join(l.Tags, ","))
	for i, t := range l.Tags {
		// A tag is a word or a phrase: whitespace inside it, a line
		// break included, is one space, so the tags meta stays on its
		// line and the line reader takes it.
		l.Tags[i] = collapse(t)
	}
	l.Anchors = splitList(strings.Join(l.Anchors, ","))
	if len(l.Links) == 0 {
		l.Links = nil
	} else {
		links := make([]domain.LessonLink, len(l.Links))
		for i, k := range l.Links {
			k.Rel = strings.ToLower(strings.TrimSpace(k.Rel))
			k.Target = strings.TrimSpace(k.Target)
			links[i] = k
		}
		l.Links = links
	}
	return l
}

func canonicalTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

// createdLayout is RFC 3339 with milliseconds when there are any: a whole
// second is written as before ("…T10:00:00Z"), and two lessons learned in
// one second still say which came first (a rewrite of a fact is the newer
// of the two).
const createdLayout = "2006-01-02T15:04:05.999Z07:00"

// canonicalBody normalises line ends and splits the body into paragraphs at
// blank lines: a one-line paragraph has its spaces collapsed, a multi-line
// one keeps its lines without trailing spaces.
func canonicalBody(s string) string {
	if bodyCanonical(s) {
		return s // most bodies already are: no copy
	}
	return canonicalBodyCopy(s)
}

// canonicalBodyCopy is canonicalBody's work on a body that needs it.
func canonicalBodyCopy(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	var paras []string
	var cur []string
	end := func() {
		switch len(cur) {
		case 0:
		case 1:
			paras = append(paras, collapse(cur[0]))
		default:
			paras = append(paras, strings.Join(cur, "\n"))
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if strings.TrimSpace(line) == "" {
			end()
			continue
		}
		cur = append(cur, line)
	}
	end()
	return strings.Join(paras, "\n\n")
}

// bodyCanonical reports whether canonicalBody would return s as it is, for
// the common shape: one-line paragraphs, collapsed, one blank line apart.
func bodyCanonical(s string) bool {
	for p := range strings.SplitSeq(s, "\n\n") {
		if p == "" && s != "" || !collapsed(p) {
			return false
		}
	}
	return true
}

// collapse joins the words of s with single spaces (one line).
func collapse(s string) string {
	if collapsed(s) {
		return s // most text already is: no copy
	}
	return strings.Join(strings.Fields(s), " ")
}

// collapsed reports whether collapse would return s as it is: ASCII words
// with single spaces between them (anything else is left to strings.Fields
// and its Unicode spaces).
func collapsed(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80 || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// splitList splits a comma-separated meta into trimmed, non-empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Validate checks a lesson against the memhtml vocabulary: a well-formed id
// and type, confidence in [0,1], importance 1..10 when present, reach team or
// repo:<tag>, a hashed author, a gist, link targets that are lesson ids, and
// no hidden or bidi control characters in any text. It returns a
// *domain.InvalidMemory naming the first rule broken. It checks the
// canonical form of l, the one Render writes.
func Validate(l domain.Lesson) error { return validateCanonical(canonical(l)) }

// validateCanonical is Validate of a lesson already canonical (Parse's: it
// canonicalised it, and canonical is idempotent).
func validateCanonical(l domain.Lesson) error {
	switch {
	case l.Format != domain.FormatVersion:
		return invalid("unsupported %s %d (this borg reads %d)", metaFormat, l.Format, domain.FormatVersion)
	case l.ID == "":
		return invalid("missing %s", metaID)
	case !domain.ValidID(l.ID):
		return invalid("bad id %q (want ^[a-z][a-z0-9-]{2,63}$)", l.ID)
	case l.Type == "":
		return invalid("missing %s", metaType)
	case !domain.ValidType(l.Type):
		return invalid("bad type %q (want a lowercase word such as procedural)", l.Type)
	case !(l.Confidence >= 0 && l.Confidence <= 1):
		return invalid("confidence %v out of range [0,1]", l.Confidence)
	case l.Importance < 0 || l.Importance > 10:
		return invalid("importance %d out of range 1..10", l.Importance)
	case l.Reprieves < 0:
		return invalid("negative reprieves %d", l.Reprieves)
	case l.Author != "" && !hashedID(l.Author, "e-", 8):
		return invalid("bad author %q (want a hashed engineer id e-xxxxxxxx)", l.Author)
	case l.Gist == "":
		return invalid("no gist (the <mark> text)")
	}
	if l.Reach != "" && l.Reach != domain.ReachTeam {
		if !domain.ValidRepoTag(l.RepoTag()) {
			return invalid("bad reach %q (want team or repo:<tag>, the tag a repository's directory name)", l.Reach)
		}
	}
	for _, k := range l.Links {
		if !domain.ValidID(k.Target) {
			return invalid("link target %q is not a lesson id", k.Target)
		}
		if !relName(k.Rel) {
			return invalid("bad link rel %q", k.Rel)
		}
	}
	fields := []struct{ name, text string }{
		{"gist", l.Gist}, {"body", l.Body}, {"title", l.Title}, {"reach", l.Reach},
		{"tags", strings.Join(l.Tags, ",")}, {"anchors", strings.Join(l.Anchors, ",")},
	}
	for _, a := range l.Anchors {
		if strings.ContainsAny(a, "\n\r") {
			return invalid("anchor %q holds a line break (want path@symbol on one line)", a)
		}
	}
	for _, f := range fields {
		if !utf8.ValidString(f.text) {
			return invalid("%s is not valid UTF-8", f.name)
		}
		if r, ok := hiddenRune(f.text); ok {
			return invalid("hidden or control character U+%04X in %s", r, f.name)
		}
	}
	return nil
}

// hiddenRune finds a character that hides or reorders text
// (domain.Invisible) other than tab, newline and the two variation
// selectors that only choose an emoji's text or picture form (U+FE0E, U+FE0F,
// as in "⚠️"; the others can carry hidden bytes).
func hiddenRune(s string) (rune, bool) {
	ascii := asciiHidden()
	for i := 0; i < len(s); {
		// ASCII by table (domain.Invisible's own verdicts): a lesson's
		// text is mostly ASCII, and unicode's range tables cost a rebuild
		// of 100,000 lessons a second.
		if c := s[i]; c < utf8.RuneSelf {
			if ascii[c] {
				return rune(c), true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\n' || r == '\t' || r == 0xFE0E || r == 0xFE0F:
		case domain.Invisible(r):
			return r, true
		}
	}
	return 0, false
}

// asciiHidden is hiddenRune's verdict on each ASCII character.
var asciiHidden = sync.OnceValue(func() (t [utf8.RuneSelf]bool) {
	for c := range rune(utf8.RuneSelf) {
		t[c] = c != '\n' && c != '\t' && domain.Invisible(c)
	}
	return t
})
