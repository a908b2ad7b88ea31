package index

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"github.com/blevesearch/segment"
)

// The English analysis chain, on bleve's own parts: its token types, its
// UAX #29 word segmenter and its Porter stemmer. The tokenizer and filters
// that join them are written here to bleve's specification rather than
// imported: each of bleve's filter and tokenizer packages registers itself
// in bleve's registry, and the registry links bleve's search and geo
// packages (and a JSON library beside them) into every borg process, whose
// initialisers a hook would pay for before main. TestAnalyzerMatchesBleve
// and FuzzAnalyzerMatchesBleve hold this chain to bleve's, term for term.

// unicodeTokenizer splits text into its words (UAX #29): every segment the
// segmenter gives a word type (letters, numbers, ideographs, kana), in
// order, its bytes the term, as bleve's "unicode" tokenizer does.
type unicodeTokenizer struct{}

func (unicodeTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var out analysis.TokenStream
	seg := segment.NewWordSegmenterDirect(input)
	start, pos := 0, 1
	for seg.Segment() {
		b := seg.Bytes()
		end := start + len(b)
		if typ := seg.Type(); typ != segment.None {
			out = append(out, &analysis.Token{Term: b, Start: start, End: end, Position: pos, Type: tokenType(typ)})
			pos++
		}
		start = end
	}
	return out
}

func tokenType(segmentType int) analysis.TokenType {
	switch segmentType {
	case segment.Ideo, segment.Kana:
		return analysis.Ideographic
	case segment.Number:
		return analysis.Numeric
	}
	return analysis.AlphaNumeric
}

// maxLengthFilter drops the tokens of more than max runes.
type maxLengthFilter struct{ max int }

func (f maxLengthFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0]
	for _, t := range in {
		if utf8.RuneCount(t.Term) <= f.max {
			out = append(out, t)
		}
	}
	return out
}

// possessiveFilter strips an English possessive: a final s or S after an
// apostrophe, a right single quotation mark or a full-width apostrophe.
type possessiveFilter struct{}

func (possessiveFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		last, n := utf8.DecodeLastRune(t.Term)
		if last != 's' && last != 'S' {
			continue
		}
		switch mark, m := utf8.DecodeLastRune(t.Term[:len(t.Term)-n]); mark {
		case '\'', '’', '＇':
			t.Term = t.Term[:len(t.Term)-n-m]
		}
	}
	return in
}

// lowerFilter lower-cases each token rune by rune (unicode.ToLower), a
// capital sigma that ends the token becoming a final sigma.
type lowerFilter struct{}

func (lowerFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		t.Term = lowerInPlace(t.Term)
	}
	return in
}

// lowerInPlace lower-cases s over itself, or into a new slice from the
// first rune whose lower case is wider.
func lowerInPlace(s []byte) []byte {
	j := 0
	for i := 0; i < len(s); {
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(s[i:])
		}
		l := unicode.ToLower(r)
		if l == r {
			i += w
			j += w
			continue
		}
		if l == 'σ' && i+2 == len(s) {
			l = 'ς'
		}
		lw := utf8.RuneLen(l)
		if lw > w {
			// From here bytes.ToLower, as bleve's filter does (only Ⱥ and
			// Ⱦ lower-case wider).
			rest := bytes.ToLower(s[i:])
			out := make([]byte, j+len(rest))
			copy(out, s[:j])
			copy(out[j:], rest)
			return out
		}
		utf8.EncodeRune(s[j:], l)
		i += w
		j += lw
	}
	return s[:j]
}

// stopFilter drops the tokens that are stop words.
type stopFilter struct{ stops map[string]bool }

func (f stopFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0]
	for _, t := range in {
		if !f.stops[string(t.Term)] {
			out = append(out, t)
		}
	}
	return out
}

// porterFilter stems each token (Porter), its term already lower case.
type porterFilter struct{}

func (porterFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		t.Term = []byte(porterStem(string(t.Term)))
	}
	return in
}

// porterStem is the Porter stem of a lower-case word.
func porterStem(word string) string {
	return string(porterstemmer.StemWithoutLowerCasing([]rune(word)))
}
