package main

import (
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/borg-memory/borg/domain"
)

// termSafe wraps w so that text borg did not write itself (a file name in
// the store, a lesson id from a teammate's push, a git error quoting either)
// cannot drive the terminal it is printed to: an escape sequence could
// retitle the window, rewrite earlier lines or hide what follows, and a bidi
// control could reorder a path on screen. Every control character but
// newline, tab and carriage return (progress lines redraw with it), and
// every invisible one (domain.Invisible, bar the emoji presentation
// selectors), is written as a \u escape instead. That escape is also how
// JSON spells the character, so JSON output stays valid and means the same.
//
// Hook output is not wrapped: it is a protocol the agent reads, already
// JSON-escaped or filtered (hooks' quoteSafe).
func termSafe(w io.Writer) io.Writer {
	if _, ok := w.(*termSafeWriter); ok {
		return w
	}
	return &termSafeWriter{w: w}
}

type termSafeWriter struct {
	w io.Writer
	// carry holds the first bytes of a character split across two writes.
	carry []byte
}

func (t *termSafeWriter) Write(p []byte) (int, error) {
	buf := make([]byte, 0, len(t.carry)+len(p)+8)
	data := append(t.carry, p...)
	t.carry = nil
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(data) {
			// An incomplete character at the end: wait for the rest.
			t.carry = append([]byte(nil), data...)
			break
		}
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			buf = append(buf, byte(r))
		case r == utf8.RuneError && size == 1:
			buf = fmt.Appendf(buf, `\x%02x`, data[0])
		case r == 0xFE0E || r == 0xFE0F || !domain.Invisible(r):
			buf = append(buf, data[:size]...)
		case r > 0xFFFF:
			// As JSON writes it: a surrogate pair.
			hi, lo := utf16.EncodeRune(r)
			buf = fmt.Appendf(buf, `\u%04x\u%04x`, hi, lo)
		default:
			buf = fmt.Appendf(buf, `\u%04x`, r)
		}
		data = data[size:]
	}
	if _, err := t.w.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
