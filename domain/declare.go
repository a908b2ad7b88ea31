package domain

import "strings"

// Declaration words the drone answers a question with.
const (
	DeclareApplies = "applies"
	DeclareSkip    = "skip"
)

// declaration is one "<id>: applies|skip" found in a text: [start, end) is
// the byte range to strip (the id, what stands between, the word and the
// brackets around them), applies the word.
type declaration struct {
	start, end int
	applies    bool
}

// Declared reads the drone's own declaration for lesson id in message:
// "<id>: applies" gives (true, true), "<id>: skip" gives (false, true), and
// no declaration gives ok false. Matching ignores ASCII case; brackets,
// backticks, asterisks, quotes, a dash (-, – or —), an arrow or a colon may
// stand between the id and the word (at least one of them, on the same line),
// and the last declaration in the message wins. The id must stand alone: "my-id" is not declared by "my-id-2: skip".
func Declared(message, id string) (applies bool, ok bool) {
	ds := findDeclarations(message, id)
	if len(ds) == 0 {
		return false, false
	}
	return ds[len(ds)-1].applies, true
}

// StripDeclaration removes every declaration of lesson id that Declared reads
// from text (the id and the word both, with the brackets around them), so a
// judge can read the rest of the evidence without it. Other lessons'
// declarations and the rest of the text stay. It removes until none is left,
// so Declared never finds one in the result.
func StripDeclaration(text, id string) string {
	for {
		ds := findDeclarations(text, id)
		if len(ds) == 0 {
			return text
		}
		var b strings.Builder
		b.Grow(len(text))
		prev := 0
		for _, d := range ds {
			b.WriteString(text[prev:d.start])
			prev = d.end
		}
		b.WriteString(text[prev:])
		text = b.String()
	}
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isSepByte is a byte that may stand between an id and its word; sepMark
// marks the ones that make it a declaration (spaces alone do not).
func isSepByte(c byte) bool {
	return c == ' ' || c == '\t' || sepMark(c)
}

func sepMark(c byte) bool {
	switch c {
	case ':', '-', '[', ']', '(', ')', '`', '*', '"', '\'', '=', '>':
		return true
	}
	return false
}

func isOpenWrap(c byte) bool {
	switch c {
	case '[', '(', '`', '*', '"', '\'':
		return true
	}
	return false
}

func isCloseWrap(c byte) bool {
	switch c {
	case ']', ')', '`', '*', '"', '\'':
		return true
	}
	return false
}

// hasFoldPrefix reports whether s starts with lower (ASCII lowercase) under
// ASCII case folding.
func hasFoldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// findDeclarations lists the declarations of id in text, in text order and
// without overlaps.
func findDeclarations(text, id string) []declaration {
	id = asciiLower(strings.TrimSpace(id))
	if id == "" {
		return nil
	}
	var out []declaration
	lastEnd := 0
	for i := 0; i+len(id) <= len(text); {
		if !hasFoldPrefix(text[i:], id) || (i > 0 && isIDByte(text[i-1])) {
			i++
			continue
		}
		d, ok := declarationAt(text, i, len(id), lastEnd)
		if !ok {
			i++
			continue
		}
		out = append(out, d)
		i, lastEnd = d.end, d.end
	}
	return out
}

// declarationAt tries to read a declaration whose id occupies
// text[i:i+n]; the stripped range never reaches back before floor.
func declarationAt(text string, i, n, floor int) (declaration, bool) {
	j := i + n
	// The id must end here: a following id byte continues a longer id,
	// unless it is a dash that a separator (not an id byte) follows.
	if j < len(text) && isIDByte(text[j]) && !(text[j] == '-' && (j+1 == len(text) || !isIDByte(text[j+1]))) {
		return declaration{}, false
	}
	k, marked := j, false
	for k < len(text) {
		if isSepByte(text[k]) {
			marked = marked || sepMark(text[k])
			k++
			continue
		}
		if strings.HasPrefix(text[k:], "–") || strings.HasPrefix(text[k:], "—") { // en and em dash
			marked = true
			k += len("—")
			continue
		}
		break
	}
	if !marked {
		return declaration{}, false
	}
	var applies bool
	var w int
	switch {
	case hasFoldPrefix(text[k:], DeclareApplies):
		applies, w = true, len(DeclareApplies)
	case hasFoldPrefix(text[k:], DeclareSkip):
		applies, w = false, len(DeclareSkip)
	default:
		return declaration{}, false
	}
	end := k + w
	if end < len(text) && isWordByte(text[end]) {
		return declaration{}, false
	}
	for end < len(text) && isCloseWrap(text[end]) {
		end++
	}
	start := i
	for start > floor && isOpenWrap(text[start-1]) {
		start--
	}
	return declaration{start: start, end: end, applies: applies}, true
}
