package domain

import (
	"cmp"
	"math/bits"
	"slices"
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
// id 0 is always "". Its index is an open-addressing table of ids (4 bytes
// a slot, found by a string's hash and compared through strs): a big
// team's log holds millions of session ids, and a map of strings would
// keep a second 16-byte header for each beside its slot.
type strtab struct {
	strs  []string
	slots []uint32 // ids; 0 is a free slot ("" is never in the table)
	shift uint     // 64 - log2(len(slots))
}

func (t *strtab) init() {
	if t.strs == nil {
		t.strs = []string{""}
		t.slots = make([]uint32, 16)
		t.shift = 64 - 4
	}
}

// strHash is FNV-1a over s's bytes.
func strHash[S ~string | ~[]byte](s S) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// home is the first slot to look at for hash h: its top bits after a
// multiplicative mix.
func (t *strtab) home(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> t.shift) }

// find returns s's id, or 0 and the free slot where it goes.
func (t *strtab) find(s string) (id uint32, free int) {
	mask := len(t.slots) - 1
	for i := t.home(strHash(s)); ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return 0, i
		}
		if t.strs[id] == s {
			return id, i
		}
	}
}

// findBytes is find for b's bytes, with no string made.
func (t *strtab) findBytes(b []byte) (id uint32, free int) {
	mask := len(t.slots) - 1
	for i := t.home(strHash(b)); ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return 0, i
		}
		if t.strs[id] == string(b) {
			return id, i
		}
	}
}

// add puts s, which the table does not hold, at the free slot find gave
// for it, and returns its id.
func (t *strtab) add(s string, free int) uint32 {
	id := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.slots[free] = id
	if 4*len(t.strs) > 3*len(t.slots) {
		t.grow()
	}
	return id
}

// grow doubles the slots.
func (t *strtab) grow() { t.rehash(2 * len(t.slots)) }

// reserve makes room for n more strings, so that adding them grows
// nothing.
func (t *strtab) reserve(n int) {
	t.strs = slices.Grow(t.strs, n)
	size := len(t.slots)
	for 4*(len(t.strs)+n) > 3*size {
		size *= 2
	}
	if size > len(t.slots) {
		t.rehash(size)
	}
}

// rehash places every id again in size slots (a power of two).
func (t *strtab) rehash(size int) {
	t.slots = make([]uint32, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for id := 1; id < len(t.strs); id++ {
		i := t.home(strHash(t.strs[id]))
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint32(id)
	}
}

// id interns s.
func (t *strtab) id(s string) uint32 {
	if s == "" {
		return 0
	}
	id, free := t.find(s)
	if id != 0 {
		return id
	}
	// The caller's string may be a slice of a larger buffer (a log read);
	// the table keeps a copy of its own.
	return t.add(strings.Clone(s), free)
}

// bytes is b's interned string, added when new: a reader that hands its
// bytes here gets the one copy the table keeps, with no string made for a
// repeat.
func (t *strtab) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	id, free := t.findBytes(b)
	if id == 0 {
		id = t.add(string(b), free)
	}
	return t.strs[id]
}

// lookup is s's id, if the table holds it.
func (t *strtab) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	if t.slots == nil {
		return 0, false
	}
	id, _ := t.find(s)
	return id, id != 0
}

// sessionMarks holds a mark for some ids of a string table, densely by id
// in chunks of a fixed size: a log holds a session for about every fifth
// event and session ids are most of the table's strings, so a flat array
// costs a mark a string where a map costs a slot of key and mark, twice
// over while it grows. A chunk is allocated when an id in it is set, and
// growing copies chunk headers, never marks. A session's mark names its
// session, so a zero mark is an empty place.
type sessionMarks struct {
	chunks [][]mark
	n      int
}

const sessionChunkBits = 12

// get is id's mark.
func (sm *sessionMarks) get(id uint32) (mark, bool) {
	c := int(id >> sessionChunkBits)
	if c >= len(sm.chunks) || sm.chunks[c] == nil {
		return mark{}, false
	}
	m := sm.chunks[c][id&(1<<sessionChunkBits-1)]
	return m, m.session != 0
}

// set makes m id's mark; m.session is id.
func (sm *sessionMarks) set(id uint32, m mark) {
	c := int(id >> sessionChunkBits)
	for c >= len(sm.chunks) {
		sm.chunks = append(sm.chunks, nil)
	}
	if sm.chunks[c] == nil {
		sm.chunks[c] = make([]mark, 1<<sessionChunkBits)
	}
	p := &sm.chunks[c][id&(1<<sessionChunkBits-1)]
	if p.session == 0 {
		sm.n++
	}
	*p = m
}

func (sm *sessionMarks) len() int { return sm.n }

// each calls fn with every id and its mark, in id order.
func (sm *sessionMarks) each(fn func(uint32, mark)) {
	for c, chunk := range sm.chunks {
		for i, m := range chunk {
			if m.session != 0 {
				fn(uint32(c<<sessionChunkBits+i), m)
			}
		}
	}
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
