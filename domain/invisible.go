package domain

import "unicode"

// Invisible reports whether r renders as nothing (or as blank) while still
// being text a model reads: a way to hide words from the person who reviews
// a lesson. It covers control characters (tab and newline included: callers
// that keep them check first), format characters (Cf: zero-width spaces and
// joiners, bidi controls, the BOM, the soft hyphen, the tag block), the
// other default-ignorable code points (Hangul fillers, the combining
// grapheme joiner, reserved ignorables), variation selectors (which can
// carry hidden bytes after a visible character), private-use characters,
// surrogates and the blank Braille pattern.
func Invisible(r rune) bool {
	switch {
	case r == 0x2800: // BRAILLE PATTERN BLANK
		return true
	case r >= 0xE0000 && r <= 0xE0FFF: // tags, variation selectors supplement, reserved ignorables
		return true
	}
	return unicode.IsControl(r) ||
		unicode.In(r, unicode.Cf, unicode.Co, unicode.Cs, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
