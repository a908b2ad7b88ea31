package domain

import (
	"sort"
	"strings"
	"unicode"
)

// MinDistinctiveLen is the shortest word the word rule counts as distinctive:
// shorter words ("go", "the", "fix") are shared by chance.
const MinDistinctiveLen = 4

// commonWords are words too common in engineering prose to show that a lesson
// was acted on, even when long enough to count.
var commonWords = map[string]bool{
	"about": true, "after": true, "again": true, "also": true, "always": true,
	"before": true, "because": true, "being": true, "both": true, "change": true,
	"code": true, "could": true, "does": true, "done": true, "each": true,
	"every": true, "file": true, "files": true, "first": true, "from": true,
	"have": true, "here": true, "into": true, "just": true, "like": true,
	"make": true, "more": true, "most": true, "much": true, "must": true,
	"need": true, "never": true, "only": true, "other": true, "over": true,
	"should": true, "some": true, "such": true, "than": true, "that": true,
	"their": true, "them": true, "then": true, "there": true, "these": true,
	"they": true, "this": true, "those": true, "through": true, "under": true,
	"until": true, "used": true, "using": true, "very": true, "want": true,
	"were": true, "what": true, "when": true, "where": true, "which": true,
	"while": true, "will": true, "with": true, "without": true, "work": true,
	"would": true, "your": true,
}

// Words splits text into lowercase words: runs of letters, digits and
// underscores (so identifiers stay whole).
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	})
}

// DistinctiveWords are a text's words that could show it was acted on: at
// least MinDistinctiveLen runes, not a common word, not a bare number;
// deduplicated and sorted.
func DistinctiveWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range Words(text) {
		if seen[w] || len([]rune(w)) < MinDistinctiveLen || commonWords[w] || isNumber(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// NovelWordCount is how many of lesson's distinctive words appear in after
// but not in before: the words the drone's work gained.
func NovelWordCount(lesson, before, after string) int {
	had := map[string]bool{}
	for _, w := range Words(before) {
		had[w] = true
	}
	has := map[string]bool{}
	for _, w := range Words(after) {
		has[w] = true
	}
	n := 0
	for _, w := range DistinctiveWords(lesson) {
		if has[w] && !had[w] {
			n++
		}
	}
	return n
}

// WordRule is the word rule: at least novelWords (at least one) of
// lesson's distinctive words are new in the work (in after, not in before).
// It measures shared vocabulary, so it is never an outcome by itself: the
// default judge credits it by its placebo rate (DefaultVerdict), and it
// decides whether an early-delivered lesson counts as acted on.
func WordRule(lesson, before, after string, novelWords int) bool {
	return NovelWordCount(lesson, before, after) >= max(novelWords, 1)
}
