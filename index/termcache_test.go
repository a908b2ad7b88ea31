package index

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// termTexts mixes what asciiWords must split as bleve's Unicode tokenizer
// does: letters, digits and underscores, the mid-word marks between and
// beside them, possessives, white space of every kind, stop words, long
// words, and runes beyond ASCII next to all of them.
func termTexts(rng *rand.Rand, n int) []string {
	pieces := []string{"a", "B", "z", "7", "0", "_", ":", ".", "'", ",", ";", "-", "/", "\"", "!", "(", " ", "  ",
		"\t", "\n", "\r\n", "\v", "\f", "'s", "'S", "s", "The", "and", "is", "run", "RUNNING", "runner's",
		"3.14", "1,000", "e.g.", "a:b", "x_y", "__init__", "v1.2.3", "don't",
		"retryPolicy", "HTTPServer", "s3Bucket", "PAY_DB", "flags.yaml", "Ab", "aB", "ÉtéX", "xÉ", "é", "\u00a0", "\u2019s", "\u0301",
		"日本", "\u200d", "\xff", "\u2028", "ß", strings.Repeat("w", maxWordRunes), strings.Repeat("q", maxWordRunes-1) + "'s"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		out[i] = b.String()
	}
	return out
}

// countTerms groups terms into sorted (term, count) pairs: the counting
// analyzeDocWith did before it merged the fields' counts, kept as its
// specification.
func countTerms(terms []string) fieldTerms {
	ft := fieldTerms{length: clampU32(len(terms))}
	if len(terms) == 0 {
		return ft
	}
	sorted := slices.Clone(terms)
	sort.Strings(sorted)
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		ft.terms = append(ft.terms, termFreq{term: sorted[i], tf: clampU32(j - i)})
		i = j
	}
	return ft
}

// refAnalyzeDoc is analyzeDoc as it was: every field counted from its
// terms, the whole text from the fields' terms concatenated.
func refAnalyzeDoc(d lexDoc) docTerms {
	title, gist, body := analyze(d.Title), analyze(d.Gist), analyze(d.Body)
	tags := analyze(strings.Join(d.Tags, " "))
	all := slices.Concat(title, gist, body, tags)
	var dt docTerms
	dt[fieldAll] = countTerms(all)
	dt[fieldTitle] = countTerms(title)
	dt[fieldGist] = countTerms(gist)
	dt[fieldTags] = countTerms(tags)
	return dt
}

// TestAnalyzeDocMatchesReference: the merged counts, in their shared
// slab, are refAnalyzeDoc's, with and without a term cache (one cache
// over many docs, as a sync's goroutine uses it).
func TestAnalyzeDocMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	texts := termTexts(rng, 400)
	docs := []lexDoc{{}, {Title: "the"}, {Tags: []string{"two words", "", "Go"}}, {Body: "run run RUN runs"}}
	for _, l := range newLessonGen(33, 900).lessons(300) {
		docs = append(docs, lexDoc{Title: l.Title, Gist: l.Gist, Body: l.Body, Tags: l.Tags})
	}
	for i := 0; i+4 <= len(texts); i += 4 {
		docs = append(docs, lexDoc{Title: texts[i], Gist: texts[i+1], Body: texts[i+2], Tags: strings.Fields(texts[i+3])})
	}
	c := newTermCache()
	for _, d := range docs {
		want := refAnalyzeDoc(d)
		if got := analyzeDocWith(c, d); !reflect.DeepEqual(got, want) {
			t.Fatalf("analyzeDocWith(cache, %+v) =\n%v\nwant\n%v", d, got, want)
		}
		if got := analyzeDoc(d); !reflect.DeepEqual(got, want) {
			t.Fatalf("analyzeDoc(%+v) =\n%v\nwant\n%v", d, got, want)
		}
	}
}
