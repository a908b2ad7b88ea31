package index

import (
	"math/rand/v2"
	"slices"
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
		"3.14", "1,000", "e.g.", "a:b", "x_y", "__init__", "v1.2.3", "don't", "é", "\u00a0", "\u2019s", "\u0301",
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

// TestTermCacheMatchesBleve: the cache's own splitting of ASCII gives
// bleve's terms, on text built to exercise every rule it implements.
func TestTermCacheMatchesBleve(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	c := newTermCache()
	for _, text := range termTexts(rng, 20000) {
		if got, want := c.analyze(text), analyze(text); !slices.Equal(got, want) {
			t.Fatalf("termCache.analyze(%q) = %q, want %q", text, got, want)
		}
	}
}

// FuzzTermCache: any text gives the terms analyze gives.
func FuzzTermCache(f *testing.F) {
	for _, text := range termTexts(rand.New(rand.NewPCG(1, 1)), 30) {
		f.Add(text)
	}
	c := newTermCache()
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := c.analyze(text), analyze(text); !slices.Equal(got, want) {
			t.Fatalf("termCache.analyze(%q) = %q, want %q", text, got, want)
		}
	})
}
