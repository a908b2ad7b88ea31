package memfs

import (
	"html"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

//go:generate go run ../scripts/genlookalikes -o lookalikes.go

// This file, with lookalikes.go (Unicode's confusables table reduced to the
// letters whose UTS #39 skeleton is ASCII), holds what the screen needs to
// match text as a reader sees it, not as its code points spell it.

// Fold returns the form of text the screen matches rules against: HTML
// entities decoded, compatibility forms folded (NFKC: fullwidth letters,
// ligatures, styled mathematical letters, Unicode spaces), combining marks
// dropped, and letters that Unicode lists as confusable with ASCII
// (Cyrillic "о", Greek "ο", …) replaced by the ASCII they look like,
// wherever they can pass for Latin text: in a word that has ASCII letters,
// or whose every letter has an ASCII look-alike. A word of a script that
// does not read as Latin (Arabic, Hebrew, CJK, most Cyrillic words) is
// kept as it is, so the rules never see letters a reader would not take
// for ASCII. Fold is for matching only: it never changes what is stored or
// shown. Text that is already plain ASCII without entities is returned as
// it is, without a copy.
func Fold(text string) string {
	if plainASCII(text) {
		return text
	}
	if strings.ContainsRune(text, '&') {
		text = html.UnescapeString(text)
	}
	text = norm.NFKD.String(text)
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !wordRune(r) {
			i += n
			switch {
			case r < utf8.RuneSelf:
				b.WriteRune(r)
			case unicode.IsSpace(r):
				b.WriteByte(' ')
			default:
				b.WriteString(lookAlike(r))
			}
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !wordRune(r) {
				break
			}
			j += n
		}
		foldWord(&b, text[i:j])
		i = j
	}
	return norm.NFC.String(b.String())
}

// wordRune reports whether r belongs to a word: a letter, a digit or a
// combining mark.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

// foldWord writes word (NFKD) to b with its combining marks dropped and,
// when the word can pass for Latin text, its look-alike letters as ASCII.
func foldWord(b *strings.Builder, word string) {
	latin, passes := false, true
	for _, r := range word {
		switch {
		case r < utf8.RuneSelf:
			latin = latin || unicode.IsLetter(r)
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		case lookAlike(r) == string(r):
			passes = false
		}
	}
	fold := latin || passes
	for _, r := range word {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			// A mark over a letter is how "i̇gnore" hides from a pattern;
			// the base letter is what is read.
		case fold:
			b.WriteString(lookAlike(r))
		default:
			b.WriteRune(r)
		}
	}
}

// lookAlike is the ASCII that r looks like by Unicode's confusables table
// (its UTS #39 skeleton), or r itself when it has no ASCII look-alike.
func lookAlike(r rune) string {
	i := sort.Search(len(lookAlikeTable), func(i int) bool { return lookAlikeTable[i].r >= r })
	if i < len(lookAlikeTable) && lookAlikeTable[i].r == r {
		return lookAlikeTable[i].to
	}
	return string(r)
}

// plainASCII reports whether text is ASCII without an entity, the form Fold
// leaves as it is.
func plainASCII(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= utf8.RuneSelf || c == '&' {
			return false
		}
	}
	return true
}

// NormalGist is the form of a gist two lessons must not share: the gist
// in Unicode normal form KC, lower case, its words one space apart. The
// same claim typed in another normal form, with another kind of space or
// in fullwidth letters has the same NormalGist, so it gets the same id and
// is refused as a duplicate.
func NormalGist(gist string) string {
	return strings.ToLower(strings.Join(strings.Fields(norm.NFKC.String(gist)), " "))
}
