package domain

import (
	"cmp"
	"strings"
)

// The ledger's compact keys. A team's log holds about one session per five
// events and a few results, asks and tests per session, so what a ledger
// costs per session decides what folding a long log costs. The ledger keeps
// each string once (session and lesson ids, repos, authors) and refers to
// it by a small integer; a mark is a fixed-size value with no pointers, and
// a (session, lesson) pair is one 8-byte key of a flat map, where maps of
// maps of strings took several times the memory and the collector's time.

// strtab interns a ledger's strings: strs[i] is the string of id i, and
// id 0 is always "".
type strtab struct {
	idx  map[string]uint32
	strs []string
}

func (t *strtab) init() {
	if t.idx == nil {
		t.idx = map[string]uint32{"": 0}
		t.strs = []string{""}
	}
}

// id interns s.
func (t *strtab) id(s string) uint32 {
	if i, ok := t.idx[s]; ok {
		return i
	}
	// The caller's string may be a slice of a larger buffer (a log read);
	// the table keeps a copy of its own.
	s = strings.Clone(s)
	i := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.idx[s] = i
	return i
}

// bytes is b's interned string, added when new: a reader that hands its
// bytes here gets the one copy the table keeps, with no string made for a
// repeat.
func (t *strtab) bytes(b []byte) string {
	if i, ok := t.idx[string(b)]; ok {
		return t.strs[i]
	}
	s := string(b) // a copy of its own
	t.idx[s] = uint32(len(t.strs))
	t.strs = append(t.strs, s)
	return s
}

// lookup is s's id, if the table holds it.
func (t *strtab) lookup(s string) (uint32, bool) {
	i, ok := t.idx[s]
	return i, ok
}

// pair is a (session, lesson) key by string ids.
type pair struct{ s, l uint32 }

// mark is Mark in the ledger's compact form: strings as ids, the event id
// as its 64 bits when it is 16 lowercase hex digits (as every id borg
// writes is) and as a string id otherwise.
type mark struct {
	ms                    int64
	id                    uint64
	w                     float64
	session, repo, author uint32
	kind                  uint8
	hexID                 bool
}

// markKinds are the kinds a mark can carry, by code; code 0 is any other.
var markKinds = [...]EventKind{"", KindSession, KindCreated, KindChanged, KindIgnored, KindCorrected, KindVetoed}

// kindRank orders the codes as their kinds' strings order (compareMarks).
var kindRank = func() [len(markKinds)]int {
	var r [len(markKinds)]int
	for i, k := range markKinds {
		for _, o := range markKinds {
			if o < k {
				r[i]++
			}
		}
	}
	return r
}()

func kindCode(k EventKind) uint8 {
	for i, o := range markKinds {
		if o == k {
			return uint8(i)
		}
	}
	return 0
}

// packID reads an event id of 16 lowercase hex digits as a number; two
// such ids compare as strings exactly as their numbers do.
func packID(id string) (uint64, bool) {
	if len(id) != 16 {
		return 0, false
	}
	var v uint64
	for i := range 16 {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func hexString(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// pack is m in compact form, its strings interned.
func (t *strtab) pack(m Mark) mark {
	c := mark{ms: m.MS, w: m.W, session: t.id(m.Session), repo: t.id(m.Repo), author: t.id(m.Author), kind: kindCode(m.Kind)}
	if v, ok := packID(m.ID); ok {
		c.id, c.hexID = v, true
	} else {
		c.id = uint64(t.id(m.ID))
	}
	return c
}

func (t *strtab) eventID(m mark) string {
	if m.hexID {
		return hexString(m.id)
	}
	return t.strs[m.id]
}

// unpack is the Mark m stands for.
func (t *strtab) unpack(m mark) Mark {
	return Mark{MS: m.ms, ID: t.eventID(m), Kind: markKinds[m.kind], Session: t.strs[m.session],
		Repo: t.strs[m.repo], Author: t.strs[m.author], W: m.w}
}

// compare orders compact marks exactly as compareMarks orders the marks
// they stand for.
func (t *strtab) compare(a, b mark) int {
	if c := cmp.Compare(a.ms, b.ms); c != 0 {
		return c
	}
	if a.hexID && b.hexID {
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
	} else if a.hexID != b.hexID || a.id != b.id {
		if c := strings.Compare(t.eventID(a), t.eventID(b)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(kindRank[a.kind], kindRank[b.kind]); c != 0 {
		return c
	}
	for _, p := range [3][2]uint32{{a.session, b.session}, {a.repo, b.repo}, {a.author, b.author}} {
		if p[0] != p[1] {
			if c := strings.Compare(t.strs[p[0]], t.strs[p[1]]); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(a.w, b.w)
}

// stronger is strongerResult over compact marks.
func (t *strtab) stronger(a, b mark) bool {
	sa, sb := resultStrength(markKinds[a.kind]), resultStrength(markKinds[b.kind])
	if sa != sb {
		return sa > sb
	}
	return t.compare(a, b) < 0
}
