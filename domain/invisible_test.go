package domain

import "testing"

func TestInvisible(t *testing.T) {
	hidden := []rune{
		0x200B, 0x200D, 0x2060, 0xFEFF, 0x00AD, // zero-width, joiners, BOM, soft hyphen
		0x202E, 0x2066, // bidi
		0xE0041, 0xE007F, // tags
		0xFE0F, 0xE0100, 0xE01EF, // variation selectors
		0x115F, 0x1160, 0x3164, 0xFFA0, 0x034F, // Hangul fillers, combining grapheme joiner
		0xE000, 0xF8FF, 0x10FFFD, // private use
		0x2800,       // blank Braille
		0x0007, 0x1B, // controls
	}
	for _, r := range hidden {
		if !Invisible(r) {
			t.Errorf("U+%04X is not Invisible", r)
		}
	}
	for _, r := range []rune{'a', 'Z', '0', ' ', 'é', '中', '⚠', '😀', 0x2801, 'ß', '—'} {
		if Invisible(r) {
			t.Errorf("U+%04X %q is Invisible", r, r)
		}
	}
}
