package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"golang.org/x/text/unicode/norm"
)

// This file and analysis.go are the only importers of bleve: its English
// analysis (analysis.go) turns lesson text into terms. The postings those terms make live in the
// catalog (catalog.go), an immutable file a query maps and reads in place.
//
// bleve's own index (scorch) is deliberately not used: linking it slows
// every borg process before main (scorch builds its Levenshtein automata in
// an init function), a cost a hook pays on every call, and a query would
// open a bolt file that a writer locks. Analysis, the part of
// bleve this arm needs, has neither cost.

// lexicalVersion names the analyzer, the fields and the postings layout.
// Any change to them must change it: a catalog of another version is
// rebuilt.
const lexicalVersion = "borg-lexical-8"

// BM25 parameters of the lexical arm. k1 0.9 and b 0.4 are the Anserini
// defaults, measured better than Elasticsearch's 1.2/0.75 on the shared sets
// (BENCHMARKS.md).
var (
	bm25K1 = 0.9
	bm25B  = 0.4
)

// textField names one of the scored text fields.
type textField int

const (
	fieldAll   textField = iota // title, gist, body and tags together
	fieldTitle                  // the title alone
	fieldGist                   // the gist alone
	fieldTags                   // the tags as words
	numFields
)

// fieldBoost weighs each field's BM25 in the lexical score, measured on the
// shared sets: BM25 over all the text as one field, plus bonuses for
// matches in the title, gist and tags.
var fieldBoost = [numFields]float64{fieldAll: 1.0, fieldTitle: 0.3, fieldGist: 0.1, fieldTags: 0.3}

// lexDoc is the text the lexical arm indexes for one lesson.
type lexDoc struct {
	Title, Gist, Body string
	Tags              []string
}

// englishAnalyzer is the text fields' analysis: Unicode word segmentation,
// tokens of 100 runes or more dropped, English possessives stripped, each
// identifier followed by its words (identParts), lower case, English stop
// words dropped, Porter stemming.
var englishAnalyzer = sync.OnceValue(func() analysis.Analyzer {
	a := *unstemmedAnalyzer()
	a.TokenFilters = append(slices.Clip(a.TokenFilters), porterFilter{})
	return &a
})

// unstemmedAnalyzer is englishAnalyzer but for its last filter, the Porter
// stemmer, which a termCache applies once per distinct word.
var unstemmedAnalyzer = sync.OnceValue(func() *analysis.DefaultAnalyzer {
	return &analysis.DefaultAnalyzer{
		Tokenizer: unicodeTokenizer{},
		TokenFilters: []analysis.TokenFilter{
			maxLengthFilter{maxWordRunes},
			possessiveFilter{},
			identFilter{},
			lowerFilter{},
			stopFilter{englishStops()},
		},
	}
})

// identFilter follows each token that is an identifier of several words
// (identParts) with a token per word, so a lesson that names
// vehicle.positions or pay_db_stage and a session that says "vehicle
// positions" or "pay db stage" share terms, while the whole name still
// matches itself.
type identFilter struct{}

func (identFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream
	var parts [][2]int
	for i, t := range in {
		parts = identParts(parts[:0], string(t.Term))
		if len(parts) == 0 {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make(analysis.TokenStream, 0, len(in)+len(parts)), in[:i]...)
		}
		out = append(out, t)
		for _, p := range parts {
			out = append(out, &analysis.Token{Term: slices.Clone(t.Term[p[0]:p[1]]), Start: t.Start + p[0], End: t.Start + p[1],
				Position: t.Position, Type: t.Type})
		}
	}
	if out == nil {
		return in
	}
	return out
}

// analyze returns text's terms in order, repeats included.
func analyze(text string) []string {
	if text == "" {
		return nil
	}
	toks := englishAnalyzer().Analyze([]byte(norm.NFC.String(text)))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// termCache is analyze for many texts (one goroutine's share of a sync):
// each distinct word is stemmed once, and its term is one string shared by
// every lesson holding it. A rebuild of 100,000 lessons stemmed every word
// of every lesson and kept a string per occurrence. ASCII text is split
// into words here (asciiWords), without bleve's tokens: their allocation
// was most of what a rebuild allocated.
type termCache struct {
	stems map[string]string // a word as the stemmer gets it → its term ("": a stop word)
	stops map[string]bool
	low   []byte   // a word lower-cased
	parts [][2]int // an identifier's words (identParts)
	// marks, when marking, gets one entry per term appended: whether it is
	// a word of an identifier appended after the identifier's own term.
	marks   []bool
	marking bool
	buf     []string // a doc's terms (analyzeDocWith)
	counts  []termFreq
	merged  [3][]termFreq
}

// maxCachedTerms bounds a termCache: past it, new words are stemmed every
// time (same terms).
const maxCachedTerms = 1 << 20

func newTermCache() *termCache {
	return &termCache{stems: map[string]string{}, stops: englishStops()}
}

// englishStops is the English stop word list of the analyzers, as a set.
var englishStops = sync.OnceValue(func() map[string]bool {
	stops := make(map[string]bool, len(englishStopWordList))
	for _, w := range englishStopWordList {
		stops[w] = true
	}
	return stops
})

// appendTerms appends the terms of text to out.
func (c *termCache) appendTerms(out []string, text string) []string {
	if !utf8.ValidString(text) {
		// The segmenter's answer past an invalid byte depends on what
		// follows it, so such a text is split by bleve whole.
		return c.bleveWords(out, text)
	}
	// Runs of ASCII between ASCII spaces (a space followed by ASCII: the
	// word segmentation breaks on both sides of it, and a rule across it
	// would need a letter, digit or mid-word mark in its place) are split
	// here; text holding other runes goes to bleve's tokenizer, one such
	// run at a time.
	for len(text) > 0 {
		end, ascii := 0, true
		for end < len(text) && !(asciiSpace(text[end]) && (end+1 == len(text) || text[end+1] < utf8.RuneSelf)) {
			ascii = ascii && text[end] < utf8.RuneSelf
			end++
		}
		if ascii {
			out = c.asciiWords(out, text[:end])
		} else {
			out = c.bleveWords(out, text[:end])
		}
		text = text[min(end+1, len(text)):]
	}
	return out
}

// mark records, when c is marking, whether the n terms just appended are
// an identifier's words.
func (c *termCache) mark(n int, part bool) {
	if c.marking {
		for range n {
			c.marks = append(c.marks, part)
		}
	}
}

// appendWords appends the terms of text as appendTerms does, but an
// identifier's term alone, without the terms of its words (those mark
// tells): the sequence of what text says one word after another.
func (c *termCache) appendWords(out []string, text string) []string {
	c.marking, c.marks = true, c.marks[:0]
	n := len(out)
	out = c.appendTerms(out, text)
	c.marking = false
	k := n
	for i, part := range c.marks {
		if !part {
			out[k] = out[n+i]
			k++
		}
	}
	return out[:k]
}

// bleveWords appends the terms of text analysed by bleve's chain. Text is
// read in its composed form (NFC), as analyze reads a query: "é" typed as
// e and a combining accent (as macOS tools often write it) is the é a
// lesson holds.
func (c *termCache) bleveWords(out []string, text string) []string {
	prev := -1
	for _, t := range unstemmedAnalyzer().Analyze([]byte(norm.NFC.String(text))) {
		term, ok := c.stems[string(t.Term)]
		if !ok {
			term = c.stemWord(t.Term) // bleve has dropped the stop words
		}
		out = append(out, term)
		// identFilter gives an identifier's words the identifier's position.
		c.mark(1, t.Position == prev)
		prev = t.Position
	}
	return out
}

// asciiSpace reports whether b is ASCII white space.
func asciiSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// Word-break classes of the ASCII characters (Unicode UAX #29) that
// asciiWords tells apart; every other character is one of its own.
const (
	wbOther   = iota
	wbLetter  // A-Z, a-z (ALetter)
	wbNumeric // 0-9
	wbExtend  // _ (ExtendNumLet)
	wbMidLet  // : (MidLetter)
	wbMidBoth // . and ' (MidNumLet, Single_Quote)
	wbMidNum  // , and ; (MidNum)
	wbNewline // \n \r \v \f
	wbSpace   // ' ', \t
)

var wbClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = wbLetter
		case c >= '0' && c <= '9':
			t[c] = wbNumeric
		}
	}
	t['_'], t[':'], t['.'], t['\''], t[','], t[';'] = wbExtend, wbMidLet, wbMidBoth, wbMidBoth, wbMidNum, wbMidNum
	return t
}()

// asciiWords appends the terms of text, ASCII without white space, as
// unstemmedAnalyzer and the stemmer make them: words are what UAX #29's
// rules join (letters, digits and underscores run together; a mid-word
// mark between two letters, or between two digits, stays in the word);
// words of more than maxWordRunes bytes are dropped, a possessive 's
// stripped, an identifier followed by its words (identParts), each of
// them lower-cased, stop words dropped, and stemmed.
func (c *termCache) asciiWords(out []string, text string) []string {
	for i := 0; i < len(text); {
		k := wbClass[text[i]]
		if k != wbLetter && k != wbNumeric && k != wbExtend {
			i++
			continue
		}
		j := i + 1
		for j < len(text) {
			switch p, q := wbClass[text[j-1]], wbClass[text[j]]; {
			case q == wbLetter || q == wbNumeric || q == wbExtend:
				j++
				continue
			case j+1 < len(text) && p == wbLetter && (q == wbMidLet || q == wbMidBoth) && wbClass[text[j+1]] == wbLetter,
				j+1 < len(text) && p == wbNumeric && (q == wbMidNum || q == wbMidBoth) && wbClass[text[j+1]] == wbNumeric:
				j += 2
				continue
			}
			break
		}
		word := text[i:j]
		i = j
		if len(word) > maxWordRunes {
			continue
		}
		if n := len(word); n >= 2 && (word[n-1] == 's' || word[n-1] == 'S') && word[n-2] == '\'' {
			word = word[:n-2]
		}
		n := len(out)
		out = c.asciiTerm(out, word)
		c.mark(len(out)-n, false)
		c.parts = identParts(c.parts[:0], word)
		for _, p := range c.parts {
			n := len(out)
			out = c.asciiTerm(out, word[p[0]:p[1]])
			c.mark(len(out)-n, true)
		}
	}
	return out
}

// asciiTerm appends the term of an ASCII word: lower-cased, nothing for a
// stop word, stemmed.
func (c *termCache) asciiTerm(out []string, word string) []string {
	c.low = c.low[:0]
	for k := 0; k < len(word); k++ {
		b := word[k]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		c.low = append(c.low, b)
	}
	term, ok := c.stems[string(c.low)]
	if !ok {
		term = c.stemWord(c.low)
	}
	if term != "" {
		out = append(out, term)
	}
	return out
}

// stemWord is the term of a lower-cased word the cache does not hold
// ("" for a stop word), cached when there is room.
func (c *termCache) stemWord(low []byte) string {
	word := string(low)
	term := ""
	if !c.stops[word] && word != "" {
		term = porterStem(word)
	}
	if len(c.stems) < maxCachedTerms {
		c.stems[word] = term
	}
	return term
}

// termFreq is one term of a field with its count.
type termFreq struct {
	term string
	tf   uint32
}

// fieldTerms is one field of one document: its distinct terms sorted, and
// its length in terms.
type fieldTerms struct {
	terms  []termFreq
	length uint32
}

// docTerms is a document's analysed fields.
type docTerms [numFields]fieldTerms

// analyzeDocWith analyses d's text fields by way of c (nil: none, bleve's
// analysis throughout: the reference the tests hold the cache to). The
// whole-text field is the concatenation of the others' token streams (with
// the body's), which is what analysing the joined text gives: the tokenizer
// splits at the joins. Each field's terms
// are sorted in place in a buffer and counted, the whole text's counts
// merged from the fields' (no copy of every term sorted again), and the
// doc's term lists share one allocation of their exact size: a rebuild of
// 100,000 lessons allocated half a gigabyte cloning, sorting and growing
// them.
func analyzeDocWith(c *termCache, d lexDoc) docTerms {
	if c == nil {
		c = &termCache{}
	}
	buf := c.analyzeInto(c.buf[:0], d.Title)
	nt := len(buf)
	buf = c.analyzeInto(buf, d.Gist)
	ng := len(buf)
	buf = c.analyzeInto(buf, d.Body)
	nb := len(buf)
	buf = c.analyzeInto(buf, strings.Join(d.Tags, " "))
	c.buf = buf
	title, gist, body, tags := buf[:nt:nt], buf[nt:ng:ng], buf[ng:nb:nb], buf[nb:]
	for _, ts := range [...][]string{title, gist, body, tags} {
		slices.Sort(ts)
	}
	// Counted into scratch: title, gist, tags, then body; then the whole
	// text's, merged from them.
	cnt := appendCounts(c.counts[:0], title)
	ct := len(cnt)
	cnt = appendCounts(cnt, gist)
	cg := len(cnt)
	cnt = appendCounts(cnt, tags)
	cs := len(cnt)
	cnt = appendCounts(cnt, body)
	c.counts = cnt
	m := mergeCounts(c.merged[0][:0], cnt[:ct], cnt[ct:cg])
	m2 := mergeCounts(c.merged[1][:0], m, cnt[cg:cs])
	all := mergeCounts(c.merged[2][:0], cnt[cs:], m2)
	c.merged = [3][]termFreq{m, m2, all}
	slab := make([]termFreq, cs+len(all))
	copy(slab, cnt[:cs])
	copy(slab[cs:], all)
	field := func(terms []termFreq, length int) fieldTerms {
		ft := fieldTerms{length: clampU32(length)}
		if len(terms) > 0 {
			ft.terms = terms
		}
		return ft
	}
	var dt docTerms
	dt[fieldTitle] = field(slab[:ct:ct], len(title))
	dt[fieldGist] = field(slab[ct:cg:cg], len(gist))
	dt[fieldTags] = field(slab[cg:cs:cs], len(tags))
	dt[fieldAll] = field(slab[cs:], len(buf))
	return dt
}

// analyzeInto appends text's terms to buf: by way of the cache when c has
// one, else analyze's.
func (c *termCache) analyzeInto(buf []string, text string) []string {
	if c.stems == nil {
		return append(buf, analyze(text)...)
	}
	return c.appendTerms(buf, text)
}

// appendCounts appends the (term, count) pairs of sorted to out.
func appendCounts(out []termFreq, sorted []string) []termFreq {
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		out = append(out, termFreq{term: sorted[i], tf: clampU32(j - i)})
		i = j
	}
	return out
}

// mergeCounts appends to out the union of two term counts sorted by term,
// a term in both counted once with the sum of its counts.
func mergeCounts(out, a, b []termFreq) []termFreq {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].term < b[0].term:
			out, a = append(out, a[0]), a[1:]
		case b[0].term < a[0].term:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, termFreq{term: a[0].term, tf: clampU32(int(a[0].tf) + int(b[0].tf))})
			a, b = a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// scoredOrd is a catalog document (by ordinal) with a score.
type scoredOrd struct {
	ord   int
	score float64
}

// lexicalSearch scores every live lesson holding a query term by BM25 (k1
// bm25K1, b bm25B, Robertson–Spärck Jones IDF), summed over the text fields
// with their boosts, and returns the n best that keep accepts, best first
// (ties by id). Both segments' postings are read, tombstoned base lessons
// skipped: a term's document frequency, the lesson count and the mean
// field lengths are the live lessons', so the scores are a whole
// rebuild's.
func (v *view) lexicalSearch(ctx context.Context, text string, n int, keep func(ord int) bool) ([]scoredOrd, error) {
	return v.lexicalSearchTerms(ctx, analyze(text), n, keep)
}

// lexicalSearchTerms is lexicalSearch of a text analysed into terms.
//
// The scores are summed a block of lexicalBlock lessons at a time: each
// (field, term) list's postings are sorted by ordinal, so one cursor per
// list walks them once in all, and a lesson's score is added up in the
// same (field, term) order however the blocks fall. The block's best join
// a heap of the 2n+16 best; keep is asked of those in order, and only
// when it rejects too many are the scores summed again with keep asked of
// each lesson that would enter a heap of n (bestKept's rule, streamed).
func (v *view) lexicalSearchTerms(ctx context.Context, terms []string, n int, keep func(ord int) bool) ([]scoredOrd, error) {
	return v.lexicalSearchBlocks(ctx, terms, n, keep, lexicalBlock)
}

// lexicalSearchBlocks is lexicalSearchTerms summing block lessons at a time.
func (v *view) lexicalSearchBlocks(ctx context.Context, terms []string, n int, keep func(ord int) bool, block int) ([]scoredOrd, error) {
	if n <= 0 || v.len() == 0 {
		return nil, nil
	}
	if len(terms) == 0 {
		return nil, nil
	}
	order, qtf := queryTerms(terms)
	N := float64(v.len())
	segs := [2]*catalog{v.base, v.delta}
	var lists []termList
	for f := textField(0); f < numFields; f++ {
		avg := v.avgLen[f]
		if fieldBoost[f] <= 0 || !(avg > 0) {
			continue
		}
		for _, t := range order {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lexical search: %w", err)
			}
			l := termList{f: f, avg: avg}
			df := 0
			for i, c := range segs {
				l.post[i] = c.postings(f, t)
				df += v.livePostings(i, l.post[i])
			}
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
			l.w = fieldBoost[f] * idf * float64(qtf[t])
			lists = append(lists, l)
		}
	}
	if len(lists) == 0 {
		return nil, nil
	}
	// Higher score first, then id.
	better := func(a, b scoredOrd) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return v.idLess(a.ord, b.ord)
	}
	want := 2*n + 16
	top := newTopK(want, better)
	touched, err := v.sumBlocks(ctx, lists, block, top.offer)
	if err != nil {
		return nil, err
	}
	ranked := top.sorted()
	out := make([]scoredOrd, 0, min(n, len(ranked)))
	for _, c := range ranked {
		if keep != nil && !keep(c.ord) {
			continue
		}
		if out = append(out, c); len(out) == n {
			return out, nil
		}
	}
	if touched <= want { // every lesson touched was ranked
		return out, nil
	}
	kept := newTopK(n, better)
	if _, err := v.sumBlocks(ctx, lists, block, func(c scoredOrd) {
		if kept.wouldKeep(c) && keep(c.ord) {
			kept.offer(c)
		}
	}); err != nil {
		return nil, err
	}
	return kept.sorted(), nil
}

// queryTerms are a query's distinct terms in their first order, and how
// many times the query holds each.
func queryTerms(terms []string) (order []string, count map[string]int) {
	count = make(map[string]int, len(terms))
	for _, t := range terms {
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	return order, count
}

// termList is one (field, term) of a query: its BM25 weight (field boost ×
// IDF × the term's count in the query), the field's mean length, and its
// postings in each segment (base, delta).
type termList struct {
	f    textField
	w    float64
	avg  float64
	post [2][]byte
}

// lexicalBlock is how many lessons' scores sumBlocks adds up at once. A
// dense array of every lesson's score (800 KB at 100,000 lessons) is fresh
// memory a short-lived hook process faults in a page at a time, each fault
// dearer than the additions on it; a block's stays in the cache.
const lexicalBlock = 4096

// sumBlocks sums lists' BM25 scores of every live lesson in them, block
// lessons at a time, and offers each lesson touched with its score (in
// ordinal order); it returns how many it offered.
func (v *view) sumBlocks(ctx context.Context, lists []termList, block int, offer func(scoredOrd)) (int, error) {
	sums := make([]float64, block)
	hit := make([]bool, block)
	touched := make([]int32, 0, block)
	rest := make([][]byte, len(lists))
	offered := 0
	for i, c := range [2]*catalog{v.base, v.delta} {
		first, dead := 0, v.dead
		if i == 1 {
			first, dead = v.base.len(), nil
		}
		for li := range lists {
			rest[li] = lists[li].post[i]
		}
		for lo := 0; lo < c.len(); lo += block {
			if err := ctx.Err(); err != nil {
				return offered, fmt.Errorf("lexical search: %w", err)
			}
			hi := min(lo+block, c.len())
			for li, l := range lists {
				rest[li], touched = scorePostings(sums, hit, touched, c.lens[l.f], rest[li], dead, l.w, l.avg, lo, hi)
			}
			for _, j := range touched {
				offer(scoredOrd{ord: first + lo + int(j), score: sums[j]})
				sums[j], hit[j] = 0, false
			}
			offered += len(touched)
			touched = touched[:0]
		}
	}
	return offered, nil
}

// livePostings counts the postings of segment i (0 base, 1 delta) whose
// lesson is live.
func (v *view) livePostings(i int, post []byte) int {
	n := len(post) / postingSize
	if i == 1 || v.dead == nil {
		return n
	}
	for p := 0; p+postingSize <= len(post); p += postingSize {
		if d := int(le32(post[p:])); d < len(v.dead) && v.dead[d] {
			n--
		}
	}
	return n
}

// scorePostings adds one term's BM25 over the postings of post whose
// ordinals lie in [lo, hi) to sums (the block's, from lo), marking in hit
// and appending to touched (block offsets) each lesson it adds to first,
// and returns the postings from hi on. A tombstoned lesson is skipped; so
// is an ordinal out of order (a corrupt file: its postings are sorted).
func scorePostings(sums []float64, hit []bool, touched []int32, lens, post []byte, dead []bool, w, avg float64, lo, hi int) ([]byte, []int32) {
	for ; len(post) >= postingSize; post = post[postingSize:] {
		d := int(le32(post))
		if d >= hi {
			break
		}
		if d < lo || (dead != nil && dead[d]) {
			continue
		}
		tf := float64(le32(post[4:]))
		dl := avg
		if 4*d+4 <= len(lens) {
			if l := le32(lens[4*d:]); l > 0 {
				dl = float64(l)
			}
		}
		j := d - lo
		if !hit[j] {
			hit[j] = true
			touched = append(touched, int32(j))
		}
		sums[j] += w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
	}
	return post, touched
}
