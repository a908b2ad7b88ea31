package memfs

import (
	"strconv"
	"unicode/utf8"

	"github.com/borg-memory/borg/domain"
)

// fastDecode parses a log line in the shape json.Marshal writes a
// domain.Event: one flat object of known lowercase keys with plain string
// values (no escapes) and plain numbers. It reports false for anything
// else, and the caller falls back to encoding/json, so it never accepts a
// line encoding/json would read differently; it only makes the common line
// several times cheaper than reflection. It is long (about 100 lines) on
// purpose: one pass over the line with the key switch inline, on the path
// that reads a million log lines; split into helpers it pays calls per
// field.
//
// in, when not nil, shares the strings that repeat from line to line (a
// session's id, a lesson's, the repo, the author, the kind): a log of
// millions of events then holds each once per file read, not once per
// line.
func fastDecode(line []byte, in *interner) (domain.Event, bool) {
	var e domain.Event
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return e, false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return e, skipSpace(line, i+1) == len(line)
	}
	for {
		key, j, ok := plainString(line, i)
		if !ok {
			return e, false
		}
		i = skipSpace(line, j)
		if i >= len(line) || line[i] != ':' {
			return e, false
		}
		i = skipSpace(line, i+1)
		if i >= len(line) {
			return e, false
		}
		if line[i] == '"' {
			val, j, ok := plainString(line, i)
			if !ok {
				return e, false
			}
			var dst *string
			shared := true
			switch string(key) {
			case "id":
				dst, shared = &e.ID, false
			case "kind":
				e.Kind = domain.EventKind(in.str(val))
			case "session":
				dst = &e.Session
			case "lesson":
				dst = &e.Lesson
			case "repo":
				dst = &e.Repo
			case "author":
				dst = &e.Author
			case "src":
				dst = &e.Src
			case "dst":
				dst = &e.Dst
			case "srcv":
				dst = &e.SrcV
			case "dstv":
				dst = &e.DstV
			default:
				return e, false
			}
			if dst != nil {
				if shared {
					*dst = in.str(val)
				} else {
					*dst = string(val)
				}
			}
			i = j
		} else {
			j := i
			for j < len(line) && isNumberByte(line[j]) {
				j++
			}
			num := line[i:j]
			if !jsonNumber(num) {
				return e, false
			}
			switch string(key) {
			case "ms":
				n, err := strconv.ParseInt(string(num), 10, 64)
				if err != nil {
					return e, false
				}
				e.MS = n
			case "w":
				f, err := strconv.ParseFloat(string(num), 64)
				if err != nil {
					return e, false
				}
				e.W = f
			default:
				return e, false
			}
			i = j
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return e, false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return e, skipSpace(line, i+1) == len(line)
		default:
			return e, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string at b[i] that has no escapes and no
// control characters and is valid UTF-8; it returns its content and the
// index after the closing quote.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			if !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// jsonNumber checks the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// interner hands out one string for equal bytes, up to a bound (past it,
// new strings are no longer kept: the memory it saves must not turn into
// memory it holds).
type interner struct {
	m map[string]string
	// table, when set, interns instead: a ledger's own string table
	// (domain.Ledger.Intern), which keeps every string once anyway.
	table func([]byte) string
}

const internMax = 1 << 16

func newInterner() *interner { return &interner{m: map[string]string{}} }

// str is b as a string, the same one for equal bytes (a nil interner
// copies each time).
func (in *interner) str(b []byte) string {
	if in == nil {
		return string(b)
	}
	if in.table != nil {
		return in.table(b)
	}
	if v, ok := in.m[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(in.m) < internMax {
		in.m[v] = v
	}
	return v
}
