package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refGrams is the n-gram hashing appendGrams replaced, kept as its
// specification: each word built as runes, each n-gram hashed afresh from
// its runes' UTF-8.
func refGrams(e *NGramEmbedder, text string) []uint32 {
	var out []uint32
	var word []rune
	hash := func(rs []rune) uint32 {
		h := uint32(fnvOffset)
		for _, r := range rs {
			h = fnvBytes(h, utf8.AppendRune(nil, r))
		}
		return fmix(h)
	}
	flush := func() {
		if len(word) == 0 || len(word) > maxWordRunes {
			word = word[:0]
			return
		}
		padded := append(append([]rune{'<'}, word...), '>')
		for n := e.minN; n <= e.maxN; n++ {
			for i := 0; i+n <= len(padded); i++ {
				out = append(out, hash(padded[i:i+n]))
			}
		}
		if len(padded) < e.minN {
			out = append(out, hash(padded))
		}
		word = word[:0]
	}
	for _, r := range text {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			word = append(word, r)
		case r >= 'A' && r <= 'Z':
			word = append(word, r+('a'-'A'))
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// gramTexts is text that exercises the word splitter: ASCII, accented and
// other scripts, words mixing them, invalid UTF-8, runs past maxWordRunes.
func gramTexts() []string {
	texts := []string{"", "a", "ab", "Run `make migrate` before go test ./integration/...",
		"Ünïcode wörds, ÅNGSTRÖM and 日本語のテキスト; mixed: naïve-café x²", "\xff\xfeab\xc3",
		"İstanbul ΣΊΣΥΦΟΣ straße", strings.Repeat("x", maxWordRunes) + " " + strings.Repeat("y", maxWordRunes+1),
		strings.Repeat("é", maxWordRunes-1) + "ab " + strings.Repeat("ü", maxWordRunes+1), "a\nb\tc d_e",
		"snake_case CamelCase 42 3.14 v1.2.3 user@example.com"}
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []rune("aZ9 -é日\u0301\n.ÄßΩ\uFFFD")
	for range 300 {
		var b strings.Builder
		for range rng.IntN(80) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		if rng.IntN(5) == 0 {
			b.WriteByte(byte(0x80 + rng.IntN(0x80))) // a stray byte
		}
		texts = append(texts, b.String())
	}
	for _, l := range newLessonGen(5, 800).lessons(40) {
		texts = append(texts, lessonText(l.Title, l.Gist, l.Body, l.Tags))
	}
	return texts
}

// TestAppendGramsMatchesReference: the byte-wise, one-pass-per-start
// hashing gives refGrams' hashes in refGrams' order, for every n-gram
// range (the order is part of the vector: its components are summed in
// it).
func TestAppendGramsMatchesReference(t *testing.T) {
	opts := map[string]NGramOptions{"default": {}, "n1-2": {MinN: 1, MaxN: 2}, "n4-4": {MinN: 4, MaxN: 4},
		"n6-9": {MinN: 6, MaxN: 9}}
	for name, o := range opts {
		t.Run(name, func(t *testing.T) {
			e := NewNGramEmbedder(o)
			var g, cached gramScratch
			cached.remember()
			for range 2 { // the cache cold, then warm
				for _, text := range gramTexts() {
					want := refGrams(e, text)
					if got := e.appendGrams(&g, nil, text); !slices.Equal(got, want) {
						t.Fatalf("appendGrams(%q): %d hashes, want %d (first difference at %d)", text, len(got), len(want), firstDiff(got, want))
					}
					if got := e.appendGrams(&cached, nil, text); !slices.Equal(got, want) {
						t.Fatalf("appendGrams(%q) with the word cache: %d hashes, want %d (first difference at %d)", text, len(got), len(want), firstDiff(got, want))
					}
				}
			}
		})
	}
}

// FuzzAppendGrams: any text hashes as refGrams hashes it.
func FuzzAppendGrams(f *testing.F) {
	for _, text := range gramTexts()[:20] {
		f.Add(text)
	}
	e := NewNGramEmbedder(NGramOptions{})
	var cached gramScratch
	cached.remember()
	f.Fuzz(func(t *testing.T, text string) {
		var g gramScratch
		want := refGrams(e, text)
		if got := e.appendGrams(&g, nil, text); !slices.Equal(got, want) {
			t.Fatalf("appendGrams(%q) differs from refGrams at %d", text, firstDiff(got, want))
		}
		if got := e.appendGrams(&cached, nil, text); !slices.Equal(got, want) {
			t.Fatalf("appendGrams(%q) with the word cache differs from refGrams at %d", text, firstDiff(got, want))
		}
	})
}

func firstDiff(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLessonGramsMatchesText: a lesson's grams taken from its parts are
// those of lessonText, the text other embedders get, and so are its
// vector and the IDF fitted on them.
func TestLessonGramsMatchesText(t *testing.T) {
	ls := newLessonGen(11, 600).lessons(200)
	ls[0].Gist = ls[0].Title
	ls[1].Gist, ls[1].Tags = "", nil
	ls[2].Tags = []string{"two words", "", "Ünï-code"}
	ls[3].Title, ls[3].Body = "", ""
	e := NewNGramEmbedder(NGramOptions{})
	var g gramScratch
	texts := make([]string, len(ls))
	for i, l := range ls {
		texts[i] = lessonText(l.Title, l.Gist, l.Body, l.Tags)
		want := e.appendGrams(&g, nil, texts[i])
		if got := e.lessonGrams(&g, nil, l.Title, l.Gist, l.Body, l.Tags); !slices.Equal(got, want) {
			t.Fatalf("lesson %d: lessonGrams differs from the grams of lessonText at %d", i, firstDiff(got, want))
		}
	}
	byText, byParts := NewNGramEmbedder(NGramOptions{}), NewNGramEmbedder(NGramOptions{})
	if err := byText.Fit(texts); err != nil {
		t.Fatal(err)
	}
	byParts.fit(len(ls), func(g *gramScratch, hs []uint32, i int) []uint32 {
		return byParts.lessonGrams(g, hs, ls[i].Title, ls[i].Gist, ls[i].Body, ls[i].Tags)
	})
	if !slices.Equal(byText.State(), byParts.State()) {
		t.Fatal("the IDF fitted on the lessons' parts differs from the one fitted on their texts")
	}
	want, err := byText.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]float32, len(ls))
	for i := range got {
		got[i] = make([]float32, byParts.Dim())
	}
	byParts.embedRows(got, func(g *gramScratch, hs []uint32, i int) []uint32 {
		return byParts.lessonGrams(g, hs, ls[i].Title, ls[i].Gist, ls[i].Body, ls[i].Tags)
	})
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("lesson %d: the vector embedded from its parts differs from Embed's", i)
		}
	}
}

// refEmbed is the embedding as the embedder first computed it, kept as its
// specification: refGrams' n-grams counted per bucket in first-occurrence
// order, each bucket's weight added into its component in that order.
func refEmbed(e *NGramEmbedder, text string) []float32 {
	v := make([]float32, e.dim)
	count := map[uint32]uint16{}
	var order []uint32
	for _, h := range refGrams(e, text) {
		b := h & (idfBuckets - 1)
		if count[b] == 0 {
			order = append(order, b)
		}
		if count[b] < math.MaxUint16 {
			count[b]++
		}
	}
	for _, b := range order {
		w := float32(1)
		if tf := count[b]; tf > 1 {
			w = 1 + float32(math.Log(float64(tf)))
		}
		if e.useIDF && e.fitted() {
			w *= e.idfAt(b)
		}
		m := b * 0x9e3779b1
		if m&(1<<31) != 0 {
			w = -w
		}
		v[(m>>8)%uint32(e.dim)] += w
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// TestEmbedMatchesReference: Embed's vectors are refEmbed's bit for bit,
// fitted or not, with the IDF decoded or read from a loaded state, for a
// batch (pooled scratch, word cache) and for a query's few texts, and for
// a text whose n-grams repeat past a uint16 count.
func TestEmbedMatchesReference(t *testing.T) {
	texts := append(gramTexts(), strings.Repeat("aaa ", 70000), strings.Repeat("ab", 40)+" x")
	fitted := NewNGramEmbedder(NGramOptions{})
	if err := fitted.Fit(texts); err != nil {
		t.Fatal(err)
	}
	loaded := NewNGramEmbedder(NGramOptions{})
	if err := loaded.LoadState(fitted.State()); err != nil {
		t.Fatal(err)
	}
	embs := map[string]*NGramEmbedder{"unfitted": NewNGramEmbedder(NGramOptions{}), "fitted": fitted, "loaded": loaded,
		"noidf-d64": NewNGramEmbedder(NGramOptions{Dim: 64, NoIDF: true}), "n2-6": NewNGramEmbedder(NGramOptions{MinN: 2, MaxN: 6})}
	for name, e := range embs {
		t.Run(name, func(t *testing.T) {
			batch, err := e.Embed(texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				want := refEmbed(e, text)
				if !slices.Equal(batch[i], want) {
					t.Fatalf("text %d (%.40q): the batch's vector differs from refEmbed's", i, text)
				}
				one, err := e.Embed([]string{text})
				if err != nil || !slices.Equal(one[0], want) {
					t.Fatalf("text %d (%.40q): a query's vector differs from refEmbed's (%v)", i, text, err)
				}
			}
		})
	}
}
