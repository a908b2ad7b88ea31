package domain

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Summary is the part of a Ledger that Memories reads, kept so that a query
// costs O(lessons + uses) however long the log: per lesson its result counts,
// the clock positions of its uses and its creation, and the clock itself as
// plain columns. Beside that it keeps a sorted table of hashed keys (which
// sessions tick the clock, which (session, lesson) pairs have a result, a
// tested or an asked event) that Fold probes, never scans, to fold newly
// appended events exactly.
//
// A Summary gives the same memories as the Ledger it was made from and, after
// Fold, as the Ledger with those events added. When an event would need the
// full ledger to fold (a session inserted into the middle of the clock, a
// session event for a session whose results were placed by time, a change
// overturned in a session the clock does not know), Fold reports false and
// the caller rebuilds the summary from the full ledger. A codec takes a
// summary apart with Parts and puts it together again with FromParts, which
// reads its large columns in place and decodes no lesson before it is asked
// for. A Summary is not safe for concurrent use.
type Summary struct {
	// The clock in order: each session's first ms and the value indexes of
	// its repo and author.
	clockMS            col64
	clockRepo, clockBy col32
	// vals holds the repo and author values the summary refers to; vals[0]
	// is "".
	vals   []string
	valIdx map[string]uint32
	// last is the id of the clock's last session.
	last string
	// freeMS is the greatest ms of a use or creation placed on the clock by
	// its ms alone (its session does not tick); math.MinInt64 without one.
	// A session appended at or before it would move such a use.
	freeMS int64

	// lessons are the lessons with evidence, sorted by id. A summary put
	// together over a source decodes each from src on first access (at),
	// into slab, and keeps it in decoded by its index until loadAll fills
	// lessons with every one: a hook reads a few lessons of a big team's
	// summary, and a dense table of them all (800 KB at 100,000 lessons)
	// would be fresh memory faulted in a page at a time by its lookups.
	// Until then it is lazy (see lazy).
	lessons []*lessonSum
	src     SummarySource
	decoded map[int]*lessonSum
	slab    []lessonSum
	fresh   map[string]*lessonSum
	// corrupt says that a parsed summary turned out corrupt where it is
	// checked when read: a lesson's record or the order of the ids (see at),
	// or a session's clock position.
	corrupt bool

	// regrets and corrections are the ledger's, decoded on demand from
	// evidence by src (nil once decoded): a query reads each lesson's cached regret
	// credit, computed under regretMax, and recomputes only the stale ones.
	regrets     map[string]RegretMark
	corrections map[string]map[int64]bool
	evidence    []byte
	regretMax   float64
	stale       map[string]bool

	keys  keyTable
	fence []byte // keyFence of keys, when read in place (nil: none)
	more  map[sumKey]uint32

	// passings are the lesson → lesson passing events by id (LessonLinks).
	passings map[string]Event

	prefix map[string][]int32 // repo tag → eligible sessions among the first t
}

// lessonSum is one lesson's evidence.
type lessonSum struct {
	id                                                 string
	changed, ignored, corrected, vetoed, tested, asked int
	// vouched sums the changed results' credits in thousandths.
	vouched int
	// uses are the clock positions of the changed results, sorted unless
	// unsorted is set.
	uses     []int32
	unsorted bool
	// repos and authors count the changed results per non-empty repo and
	// author (as value indexes): consolidation asks whether there are two.
	repos, authors tally
	regretted      float64
	hasCreated     bool
	createdPos     int32
	created        *Mark  // nil until decoded from createdRaw
	createdRaw     []byte // the mark as the summary's source encodes it
}

// Key kinds of the summary's key table.
const (
	keySession = 's' // value: the session's clock position
	keyFree    = 'f' // a session with a use or creation but no session event
	keyResult  = 'r' // value: the result's strength
	keyTested  = 't'
	keyAsked   = 'a'
)

// sumKey is a 96-bit hash of a key kind and its strings.
type sumKey struct {
	hi uint64
	lo uint32
}

func keyOf(kind byte, a, b string) sumKey {
	var buf [160]byte
	p := append(buf[:0], kind)
	p = append(p, a...)
	p = append(p, 0)
	p = append(p, b...)
	sum := sha256.Sum256(p)
	return sumKey{hi: binary.BigEndian.Uint64(sum[:8]), lo: binary.BigEndian.Uint32(sum[8:12])}
}

func compareKeys(a, b sumKey) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// keyRecord is the encoded size of one key and its value.
const keyRecord = 16

// keyTable is a sorted run of key records: hi (8 bytes), lo (4) and value
// (4), little-endian.
type keyTable []byte

func (t keyTable) len() int { return len(t) / keyRecord }

func (t keyTable) key(i int) sumKey {
	r := t[i*keyRecord:]
	return sumKey{hi: binary.LittleEndian.Uint64(r), lo: binary.LittleEndian.Uint32(r[8:])}
}

func (t keyTable) value(i int) uint32 { return binary.LittleEndian.Uint32(t[i*keyRecord+12:]) }

// search is the index of the first key in t[from:] not less than k.
//
// The keys are hashes, spread evenly over the key space, so a few steps
// that split the range where k falls between the keys at its ends (an
// interpolation search) bring it down to a few records before the binary
// search: a lookup in a table of millions reads a few pages near k's
// place, not one page per halving, each a fault in a hook's first read of
// the mapped table. Every step keeps what a binary search keeps (the keys
// before lo are less than k, those from hi on are not), so keys of any
// spread give the same answer, only after more steps.
func (t keyTable) search(k sumKey, from int) int {
	lo, hi := from, t.len()
	for step := 0; step < 4 && hi-lo > 32; step++ {
		a, b := t.key(lo).hi, t.key(hi-1).hi
		if k.hi <= a || k.hi > b {
			break
		}
		// (k.hi − a) / (b − a) of the way from lo to hi−1; b > a here.
		h, l := bits.Mul64(k.hi-a, uint64(hi-1-lo))
		q, _ := bits.Div64(h, l, b-a)
		m := lo + int(q)
		if compareKeys(t.key(m), k) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return t.lowerIn(k, lo, hi)
}

// lowerIn is the index of the first key in t[lo:hi] not less than k, hi
// when none is, by halving.
func (t keyTable) lowerIn(k sumKey, lo, hi int) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKeys(t.key(m), k) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (t keyTable) find(k sumKey) (uint32, bool) {
	lo := t.search(k, 0)
	if lo < t.len() && t.key(lo) == k {
		return t.value(lo), true
	}
	return 0, false
}

// KeyFenceRun is how many records of the key table one entry of its fence
// stands for: 4 KiB of records.
const KeyFenceRun = 4096 / keyRecord

// keyFence is the high half of every KeyFenceRun-th key of t, from the
// first (little-endian, 8 bytes each): in a table read in place, where
// each page first touched is a fault, a lookup finds in the fence (a 512th
// of the table, its pages soon all touched) the 4 KiB of records that may
// hold its key, and reads the table there alone. Without it, the steps of
// search land on two or three pages of the table per lookup.
func keyFence(t keyTable) []byte {
	n := t.len()
	f := make([]byte, 0, 8*((n+KeyFenceRun-1)/KeyFenceRun))
	for i := 0; i < n; i += KeyFenceRun {
		f = binary.LittleEndian.AppendUint64(f, t.key(i).hi)
	}
	return f
}

// fenceFits reports whether f can be t's fence: one entry per run, in
// order, its ends those of the keys (the pages of the first and the last
// record only are read).
func fenceFits(t keyTable, f []byte) bool {
	n := t.len()
	nf := (n + KeyFenceRun - 1) / KeyFenceRun
	if len(f) != 8*nf {
		return false
	}
	for i := 1; i < nf; i++ {
		if binary.LittleEndian.Uint64(f[8*i:]) < binary.LittleEndian.Uint64(f[8*i-8:]) {
			return false
		}
	}
	return nf == 0 || (t.key(0).hi == binary.LittleEndian.Uint64(f) &&
		t.key((nf-1)*KeyFenceRun).hi == binary.LittleEndian.Uint64(f[8*(nf-1):]))
}

// findFenced is find through fence (keyFence of t; nil: find).
func (t keyTable) findFenced(k sumKey, fence []byte) (uint32, bool) {
	if len(fence) == 0 {
		return t.find(k)
	}
	lo := t.searchFenced(k, fence)
	if lo < t.len() && t.key(lo) == k {
		return t.value(lo), true
	}
	return 0, false
}

// searchFenced is search(k, 0) through fence: the run whose first key's
// high half is the last below k's bounds the place (the records before the
// run are less than k, those from the next run on greater), the fence's
// two entries place k by interpolation within the run without reading it,
// and a search out from there by doubling steps, then halving, finds it,
// reading a few neighbouring records. A k whose high half equals a run's
// first (two keys' 64-bit hashes agreeing) is searched as search does.
func (t keyTable) searchFenced(k sumKey, fence []byte) int {
	n, nf := t.len(), len(fence)/8
	fh := func(i int) uint64 { return binary.LittleEndian.Uint64(fence[8*i:]) }
	c := sort.Search(nf, func(i int) bool { return fh(i) >= k.hi })
	if c == 0 {
		if nf > 0 && fh(0) == k.hi {
			return t.search(k, 0)
		}
		return 0 // under the first key
	}
	lo, hi := (c-1)*KeyFenceRun, n
	a, b := fh(c-1), uint64(math.MaxUint64)
	if c < nf {
		if fh(c) == k.hi {
			return t.search(k, lo)
		}
		hi, b = c*KeyFenceRun, fh(c)
	}
	// k.hi in [a, b): (k.hi − a) / (b − a) of the way from lo to hi.
	m := lo
	if b > a {
		h, l := bits.Mul64(k.hi-a, uint64(hi-lo))
		q, _ := bits.Div64(h, l, b-a)
		m = min(lo+int(q), hi-1)
	}
	// The place is in (below, above]: the last record known less than k,
	// the first known not less (hi when none is).
	below, above := lo-1, hi
	if compareKeys(t.key(m), k) < 0 {
		below = m
		for step := 1; ; step *= 2 {
			q := m + step
			if q >= hi {
				break
			}
			if compareKeys(t.key(q), k) >= 0 {
				above = q
				break
			}
			below = q
		}
	} else {
		above = m
		for step := 1; ; step *= 2 {
			q := m - step
			if q < lo {
				break
			}
			if compareKeys(t.key(q), k) < 0 {
				below = q
				break
			}
			above = q
		}
	}
	return t.lowerIn(k, below+1, above)
}

func appendKeyRecord(b []byte, k sumKey, v uint32) []byte {
	b = binary.LittleEndian.AppendUint64(b, k.hi)
	b = binary.LittleEndian.AppendUint32(b, k.lo)
	return binary.LittleEndian.AppendUint32(b, v)
}

// col64 and col32 are columns read from encoded bytes with values appended
// since in memory.
type col64 struct {
	b []byte
	x []int64
}

func (c *col64) len() int { return len(c.b)/8 + len(c.x) }

func (c *col64) at(i int) int64 {
	if n := len(c.b) / 8; i < n {
		return int64(binary.LittleEndian.Uint64(c.b[8*i:]))
	}
	return c.x[i-len(c.b)/8]
}

type col32 struct {
	b []byte
	x []uint32
}

func (c *col32) len() int { return len(c.b)/4 + len(c.x) }

func (c *col32) at(i int) uint32 {
	if n := len(c.b) / 4; i < n {
		return binary.LittleEndian.Uint32(c.b[4*i:])
	}
	return c.x[i-len(c.b)/4]
}

func newSummary() *Summary {
	return &Summary{vals: []string{""}, freeMS: math.MinInt64, fresh: map[string]*lessonSum{},
		regrets: map[string]RegretMark{}, corrections: map[string]map[int64]bool{}, regretMax: DefaultWeights.RegretMax,
		stale: map[string]bool{}, more: map[sumKey]uint32{}, passings: map[string]Event{}}
}

// NewSummary returns the summary of an empty ledger.
func NewSummary() *Summary { return newSummary() }

func (s *Summary) val(v string) uint32 {
	if v == "" {
		return 0
	}
	if s.valIdx == nil {
		s.valIdx = make(map[string]uint32, len(s.vals))
		for i, x := range s.vals {
			s.valIdx[x] = uint32(i)
		}
	}
	i, ok := s.valIdx[v]
	if !ok {
		i = uint32(len(s.vals))
		s.vals = append(s.vals, v)
		s.valIdx[v] = i
	}
	return i
}

// valAt is the value of an index read from the clock's columns, which are
// not checked when parsed (an index out of range reads as "").
func (s *Summary) valAt(i uint32) string {
	if int(i) < len(s.vals) {
		return s.vals[i]
	}
	return ""
}

func (s *Summary) lookup(k sumKey) (uint32, bool) {
	if v, ok := s.more[k]; ok {
		return v, true
	}
	return s.keys.findFenced(k, s.fence)
}

func (s *Summary) set(k sumKey, v uint32) { s.more[k] = v }

// sessionPos is the clock position of a session that ticks the clock.
func (s *Summary) sessionPos(session string) (int, bool) {
	if session == "" {
		return 0, false
	}
	v, ok := s.lookup(keyOf(keySession, session, ""))
	if ok && uint64(v) >= uint64(s.clockMS.len()) {
		s.corrupt = true // only a corrupt key table points past the clock
		return 0, false
	}
	return int(v), ok
}

// posAt is the last session that started at or before ms (−1 before the
// first).
func (s *Summary) posAt(ms int64) int {
	return sort.Search(s.clockMS.len(), func(i int) bool { return s.clockMS.at(i) > ms }) - 1
}

// stamp is Ledger's clock.stamp over the summary's clock columns.
func (s *Summary) stamp(p int) (ms int64, by uint32, ok bool) {
	if p < 0 || p >= s.clockMS.len() {
		return 0, 0, false
	}
	by = s.clockBy.at(p)
	if !knownAuthor(s.valAt(by)) {
		return 0, 0, false
	}
	return s.clockMS.at(p), by, true
}

// place is the clock position of something that happened in session at ms
// (clock.pos); one placed by ms alone is remembered for the append check.
func (s *Summary) place(session string, ms int64) int {
	if p, ok := s.sessionPos(session); ok {
		return p
	}
	s.freeMS = max(s.freeMS, ms)
	if session != "" {
		s.set(keyOf(keyFree, session, ""), 1)
	}
	return s.posAt(ms)
}

// lesson finds a lesson's evidence, adding an empty one when add is set.
func (s *Summary) lesson(id string, add bool) *lessonSum {
	if i := s.seek(id, 0); i < s.count() && s.compareID(i, id) == 0 {
		return s.at(i)
	}
	if ls := s.fresh[id]; ls != nil || !add {
		return ls
	}
	ls := &lessonSum{id: id}
	s.fresh[id] = ls
	return ls
}

// at is lesson i, decoded on first access. A record that turns out corrupt
// reads as a lesson without evidence (its id kept, when that is not corrupt
// too) and marks the summary corrupt, so that the error surfaces where a
// corrupt evidence block's does: Memories goes on (the lesson derives
// as one never used), Fold reports false (the caller rebuilds the summary
// from the full ledger) and Parts reports false. Not safe
// for concurrent use: Memories decodes before going parallel.
func (s *Summary) at(i int) *lessonSum {
	ls := s.get(i)
	if ls == nil {
		if cap(s.slab)-len(s.slab) < 1 {
			s.slab = make([]lessonSum, 0, 64)
		}
		s.slab = s.slab[:len(s.slab)+1]
		ls = &s.slab[len(s.slab)-1]
		var r SummaryRecord
		if s.src.Record(i, &r) {
			ls.setRecord(&r)
		} else {
			s.corrupt = true
		}
		ls.id = string(s.src.ID(i))
		if s.lessons != nil {
			s.lessons[i] = ls
		} else {
			s.decoded[i] = ls
		}
	}
	return ls
}

// lazy reports whether some lessons of the summary's source may not be
// decoded yet: a summary over a source before loadAll (one made in memory
// has every lesson decoded).
func (s *Summary) lazy() bool { return s.src != nil && s.lessons == nil }

// count is how many lessons with evidence the summary holds (fresh ones
// aside).
func (s *Summary) count() int {
	if s.src != nil {
		return s.src.Len()
	}
	return len(s.lessons)
}

// get is lesson i if it is decoded, else nil.
func (s *Summary) get(i int) *lessonSum {
	if s.lessons != nil {
		return s.lessons[i]
	}
	return s.decoded[i]
}

// compareID compares lesson i's id with id, without decoding the lesson
// (a decoded lesson's id is its source's).
func (s *Summary) compareID(i int, id string) int {
	if s.src == nil {
		return strings.Compare(s.lessons[i].id, id)
	}
	b := s.src.ID(i)
	switch {
	case string(b) < id:
		return -1
	case string(b) == id:
		return 0
	}
	return 1
}

// seek is the index of the first lesson at or after from whose id is not
// less than id (count when none is): a galloping search, so that
// seeking a sorted list of ids in turn costs O(k log(n/k)) comparisons.
//
// The ids of a parsed summary are not checked to be in order when parsed:
// seek checks those next to where it lands (a corrupt order marks the
// summary corrupt, see at), and loadAll all of them.
func (s *Summary) seek(id string, from int) int {
	lo, hi := from, s.count()
	for step := 1; lo+step-1 < hi; step *= 2 {
		k := lo + step - 1
		if s.compareID(k, id) >= 0 {
			hi = k
			break
		}
		lo = k + 1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.compareID(m, id) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if s.lazy() {
		for k := max(lo-1, 0); k < min(lo+1, s.count()-1); k++ {
			if bytes.Compare(s.src.ID(k), s.src.ID(k+1)) >= 0 {
				s.corrupt = true
			}
		}
	}
	return lo
}

// loadAll decodes every lesson not decoded yet and checks the ids' order;
// false when the summary is corrupt.
func (s *Summary) loadAll() bool {
	if s.lazy() {
		s.lessons = make([]*lessonSum, s.count())
		for i, ls := range s.decoded {
			s.lessons[i] = ls
		}
		s.decoded = nil
		for i := range s.lessons {
			s.at(i)
		}
		for i := 1; i < len(s.lessons); i++ {
			if s.lessons[i-1].id >= s.lessons[i].id {
				s.corrupt = true
				break
			}
		}
	}
	return !s.corrupt
}

func (ls *lessonSum) count(kind EventKind, n int) {
	switch kind {
	case KindChanged:
		ls.changed += n
	case KindIgnored:
		ls.ignored += n
	case KindCorrected:
		ls.corrected += n
	case KindVetoed:
		ls.vetoed += n
	}
}

// tally counts value indexes; 0 ("") is not counted.
type tally []ValCount

func (t *tally) add(v uint32, n int32) { t.addMilli(v, n, 0) }

// addMilli adds n results vouching milli thousandths of a change to v
// (the repos tally keeps Milli 0).
func (t *tally) addMilli(v uint32, n, milli int32) {
	if v == 0 {
		return
	}
	for i := range *t {
		if (*t)[i].V == v {
			c := (*t)[i]
			c.N += n
			c.Milli += milli
			if c.N == 0 {
				*t = slices.Delete(slices.Clone(*t), i, i+1)
			} else {
				(*t)[i] = c
			}
			return
		}
	}
	*t = append(*t, ValCount{v, n, milli})
}

// A result key's value: the strength in the low bits, and for a changed
// result in a session that ticks the clock the value indexes of the repo and
// author it was counted under (effUnknown when they do not fit or the
// session does not tick), so that overturning it needs no full ledger.
const (
	effBits    = 14
	effUnknown = 1<<effBits - 1
)

func resultValue(st, repo, author uint32) uint32 {
	return st | min(repo, effUnknown)<<3 | min(author, effUnknown)<<(3+effBits)
}

func resultStrengthOf(v uint32) uint32 { return v & 7 }

func effOf(v uint32) (repo, author uint32) {
	return v >> 3 & effUnknown, v >> (3 + effBits) & effUnknown
}

// kindOfStrength inverts resultStrength.
var kindOfStrength = [...]EventKind{1: KindIgnored, 2: KindChanged, 3: KindCorrected, 4: KindVetoed}

func severeStrength(st uint32) bool { return st >= 3 }

// A SummaryBuild is a ledger's summary with its keys listed, not yet
// hashed, sorted and encoded (Finish). It holds the ledger's strings but
// none of its maps: a caller that lets go of the ledger before Finish
// does not hold both the ledger and the summary's key table, the two
// largest things a build of a big team's log makes.
type SummaryBuild struct{ sb *summaryBuilder }

// StartSummary lists the ledger's summary, a Summary whose Memories are
// the ledger's; Finish completes it.
func (l *Ledger) StartSummary() *SummaryBuild {
	l.init()
	sb := &summaryBuilder{l: l, t: &l.strs, c: l.newClock(), s: newSummary(), lessons: map[string]*lessonSum{}}
	for _, e := range l.passings {
		if lessonPassing(e) {
			sb.s.passings[e.ID] = e
		}
	}
	sb.recs = make([]keyRec, 0, sb.size())
	sb.clock()
	sb.created()
	sb.results()
	sb.testedAndAsked()
	sb.regrets()
	// What finish needs of the ledger is its strings.
	sb.strs = l.strs.strs
	sb.l, sb.t = nil, nil
	return &SummaryBuild{sb}
}

// Finish hashes, sorts and encodes the summary's keys and returns it; a
// build finishes once.
func (b *SummaryBuild) Finish() *Summary {
	s := b.sb.finish()
	b.sb = nil
	return s
}

// summaryBuilder carries Ledger.StartSummary's state through its steps: the
// clock, the summary being filled, its lessons and the keys, which are
// listed as the steps go and hashed at the end, in parallel.
type summaryBuilder struct {
	l       *Ledger
	t       *strtab
	c       *clock
	s       *Summary
	recs    []keyRec // keys as specs until finish hashes them, in place
	lessons map[string]*lessonSum
	strs    []string // the ledger's strings, for finish
}

// size is how many keys the summary will hold.
func (sb *summaryBuilder) size() int {
	l := sb.l
	return len(sb.c.ids) + len(l.created) + len(l.tested) + len(l.asked) + len(l.results)
}

func (sb *summaryBuilder) get(id string) *lessonSum {
	ls := sb.lessons[id]
	if ls == nil {
		ls = &lessonSum{id: id}
		sb.lessons[id] = ls
	}
	return ls
}

// free places something that happened at ms in a session that does not tick
// the clock, remembering the session as one with a use or creation.
func (sb *summaryBuilder) free(session uint32, ms int64) int32 {
	sb.s.freeMS = max(sb.s.freeMS, ms)
	if session != 0 {
		sb.recs = append(sb.recs, keySpec(keyFree, session, 0, 1))
	}
	return int32(sb.c.pos(0, ms))
}

// clock copies the clock's columns and keys its sessions.
func (sb *summaryBuilder) clock() {
	s, c, t := sb.s, sb.c, sb.t
	n := len(c.ids)
	s.clockMS.x = make([]int64, n)
	s.clockRepo.x = make([]uint32, n)
	s.clockBy.x = make([]uint32, n)
	for i, id := range c.ids {
		s.clockMS.x[i], s.clockRepo.x[i], s.clockBy.x[i] = c.firstMS[i], s.val(t.strs[c.repos[i]]), s.val(t.strs[c.authors[i]])
		sb.recs = append(sb.recs, keySpec(keySession, id, 0, uint32(i)))
	}
	if n > 0 {
		s.last = t.strs[c.ids[n-1]]
	}
}

// created places each lesson's creation on the clock.
func (sb *summaryBuilder) created() {
	for id, cm := range sb.l.created {
		ls := sb.get(sb.t.strs[id])
		m := sb.t.unpack(cm)
		ls.hasCreated, ls.created = true, &m
		if i, ok := sb.c.index(cm.session); ok {
			ls.createdPos = int32(i)
		} else {
			ls.createdPos = sb.free(cm.session, cm.ms)
		}
	}
}

// results counts each (session, lesson) result; a changed one is also a use,
// with the repo and author it counts for.
func (sb *summaryBuilder) results() {
	s, t := sb.s, sb.t
	for p, m := range sb.l.results {
		lesson := t.strs[p.l]
		ls := sb.get(lesson)
		kind := markKinds[m.kind]
		st := uint32(resultStrength(kind))
		ls.count(kind, 1)
		if kind != KindChanged {
			sb.recs = append(sb.recs, keySpec(keyResult, p.s, p.l, st))
			continue
		}
		ls.vouched += creditMilli(m.w)
		at, ticks := sb.c.index(p.s)
		pos := int32(at)
		if !ticks {
			pos = sb.free(p.s, m.ms)
		}
		ls.uses = append(ls.uses, pos)
		repo, author := s.val(t.strs[m.repo]), s.val(t.strs[m.author])
		v := resultValue(st, effUnknown, effUnknown)
		if sm, known := sb.l.sessions.get(p.s); known {
			repo, author = s.val(t.strs[cmp.Or(sm.repo, m.repo)]), s.val(t.strs[cmp.Or(m.author, sm.author)])
			v = resultValue(st, repo, author)
		}
		sb.recs = append(sb.recs, keySpec(keyResult, p.s, p.l, v))
		ls.repos.add(repo, 1)
		ls.authors.addMilli(author, 1, int32(creditMilli(m.w)))
	}
}

// testedAndAsked counts the tested runs (not after a correction or a veto)
// and the asks.
func (sb *summaryBuilder) testedAndAsked() {
	l, t := sb.l, sb.t
	for p := range l.tested {
		lesson := t.strs[p.l]
		sb.recs = append(sb.recs, keySpec(keyTested, p.s, p.l, 1))
		if ls := sb.get(lesson); !l.severe(p) {
			ls.tested++
		}
	}
	for p := range l.asked {
		lesson := t.strs[p.l]
		sb.recs = append(sb.recs, keySpec(keyAsked, p.s, p.l, 1))
		sb.get(lesson).asked++
	}
}

// regrets keeps the regrets and corrections and sums each lesson's regret.
func (sb *summaryBuilder) regrets() {
	l, s := sb.l, sb.s
	byLesson := map[string][]regretRef{}
	for id, r := range l.regrets {
		s.regrets[id] = r
		if p, ok := l.pairOf(r.Session, r.Lesson); !ok || !l.severe(p) {
			byLesson[r.Lesson] = append(byLesson[r.Lesson], regretRef{id: id, RegretMark: r})
		}
	}
	for session, times := range l.corrections {
		c := make(map[int64]bool, len(times))
		for _, t := range times {
			c[t] = true
		}
		s.corrections[sb.t.strs[session]] = c
	}
	for lesson, rs := range byLesson {
		sb.get(lesson).regretted = regretted(rs, s.correctionTimes, Weights{RegretMax: s.regretMax})
	}
}

// finish sorts the lessons and their uses and builds the key table.
func (sb *summaryBuilder) finish() *Summary {
	s := sb.s
	s.lessons = make([]*lessonSum, 0, len(sb.lessons))
	for _, ls := range sb.lessons {
		slices.Sort(ls.uses)
		s.lessons = append(s.lessons, ls)
	}
	slices.SortFunc(s.lessons, func(a, b *lessonSum) int { return strings.Compare(a.id, b.id) })
	hashKeys(sb.recs, sb.strs)
	s.keys = sortedKeyTable(sb.recs)
	sb.recs = nil
	return s
}

// sortKeyRecs sorts records by key in place: the (uniformly distributed)
// hash's top 16 bits place each record in its bucket by swaps (an
// American flag sort, which needs no second copy of the records: a big
// team's table is tens of megabytes), then each small bucket is sorted.
func sortKeyRecs(recs []keyRec) {
	const bits = 16
	bucket := func(r keyRec) uint64 { return r.hi >> (64 - bits) }
	start := make([]int, 1<<bits+1)
	for _, r := range recs {
		start[bucket(r)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	next := slices.Clone(start[:1<<bits])
	for b := range 1 << bits {
		for next[b] < start[b+1] {
			r := recs[next[b]]
			d := bucket(r)
			if d == uint64(b) {
				next[b]++
				continue
			}
			// r belongs further on: it takes the next free place of its
			// own bucket, and what was there is placed in turn.
			recs[next[b]], recs[next[d]] = recs[next[d]], r
			next[d]++
		}
	}
	for b := range 1 << bits {
		slices.SortFunc(recs[start[b]:start[b+1]], func(x, y keyRec) int { return compareKeys(x.key(), y.key()) })
	}
}

// keySpec is a key before hashing, as a keyRec: its strings as the
// ledger's ids in hi, its kind in lo. A build holds millions of keys; the
// same records take the hashes in place.
func keySpec(kind byte, a, b, v uint32) keyRec {
	return keyRec{hi: uint64(a)<<32 | uint64(b), lo: uint32(kind), v: v}
}

// hashKeys hashes the keys of specs (keySpec's records) in place, in
// parallel.
func hashKeys(specs []keyRec, strs []string) {
	parts := min(runtime.GOMAXPROCS(0), 4, 1+len(specs)/4096)
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() {
			for i := k * len(specs) / parts; i < (k+1)*len(specs)/parts; i++ {
				sp := &specs[i]
				a, b := uint32(sp.hi>>32), uint32(sp.hi)
				*sp = newKeyRec(keyOf(byte(sp.lo), strs[a], strs[b]), sp.v)
			}
		})
	}
	wg.Wait()
}

// keyRec is a key and its value in 16 bytes (a sumKey beside a value
// would take 24): a build holds millions of them.
type keyRec struct {
	hi    uint64
	lo, v uint32
}

func newKeyRec(k sumKey, v uint32) keyRec { return keyRec{k.hi, k.lo, v} }

func (r keyRec) key() sumKey { return sumKey{r.hi, r.lo} }

// sortedKeyTable sorts and encodes records; of duplicate keys (only free
// markers repeat, all with the same value) one is kept.
func sortedKeyTable(recs []keyRec) keyTable {
	sortKeyRecs(recs)
	out := make([]byte, 0, len(recs)*keyRecord)
	for i, r := range recs {
		if i > 0 && recs[i-1].key() == r.key() {
			continue
		}
		out = appendKeyRecord(out, r.key(), r.v)
	}
	return out
}

// Fold adds newly appended events (in any order, duplicates allowed) to the
// summary. It reports false when one of them cannot be folded without the
// full ledger, or the summary turned out corrupt (see at); the summary is
// then unusable and must be rebuilt with Ledger.StartSummary.
func (s *Summary) Fold(events []Event) bool {
	defer runtime.KeepAlive(s) // see FromParts
	return !s.corrupt && s.fold(events) && !s.corrupt
}

func (s *Summary) fold(events []Event) bool {
	// Sessions first, in clock order: most then append to the clock, and the
	// results of a session in the same batch find it ticking.
	var sess []Event
	for _, e := range events {
		if e.Kind == KindSession && e.Session != "" {
			sess = append(sess, e)
		}
	}
	slices.SortFunc(sess, func(a, b Event) int {
		if c := cmp.Compare(a.MS, b.MS); c != 0 {
			return c
		}
		return strings.Compare(a.Session, b.Session)
	})
	for _, e := range sess {
		if !s.addSession(e) {
			return false
		}
	}
	for _, e := range events {
		if e.Kind != KindSession && !s.add(e) {
			return false
		}
	}
	return true
}

func (s *Summary) addSession(e Event) bool {
	if p, ok := s.sessionPos(e.Session); ok {
		// Only the least mark counts; its repo and author are all a memory
		// reads of it (the ms fixes the clock order).
		ms := s.clockMS.at(p)
		return e.MS > ms || (e.MS == ms && s.valAt(s.clockRepo.at(p)) == e.Repo && s.valAt(s.clockBy.at(p)) == e.Author)
	}
	if _, free := s.lookup(keyOf(keyFree, e.Session, "")); free {
		return false // its uses were placed by ms
	}
	if n := s.clockMS.len(); n > 0 {
		last := s.clockMS.at(n - 1)
		if e.MS < last || (e.MS == last && e.Session < s.last) {
			return false // into the middle of the clock
		}
	}
	if e.MS <= s.freeMS {
		return false
	}
	s.set(keyOf(keySession, e.Session, ""), uint32(s.clockMS.len()))
	s.clockMS.x = append(s.clockMS.x, e.MS)
	s.clockRepo.x = append(s.clockRepo.x, s.val(e.Repo))
	s.clockBy.x = append(s.clockBy.x, s.val(e.Author))
	s.last = e.Session
	s.prefix = nil
	return true
}

func (s *Summary) add(e Event) bool {
	switch e.Kind {
	case KindPassing:
		if lessonPassing(e) {
			s.addPassing(e.WithID())
		}
	case KindCreated:
		if e.Lesson == "" {
			return true
		}
		ls := s.lesson(e.Lesson, true)
		m := markOf(e)
		if ls.hasCreated {
			if !s.decodeCreated(ls) {
				return false
			}
			if compareMarks(m, *ls.created) >= 0 {
				return true
			}
		}
		ls.hasCreated, ls.created, ls.createdRaw = true, &m, nil
		ls.createdPos = int32(s.place(e.Session, e.MS))
	case KindChanged, KindIgnored, KindCorrected, KindVetoed:
		if e.Session == "" || e.Lesson == "" {
			return true
		}
		if e.Kind == KindCorrected && !s.addCorrection(e.Session, e.MS) {
			return false
		}
		return s.addResult(e)
	case KindTested:
		if e.Session == "" || e.Lesson == "" {
			return true
		}
		k := keyOf(keyTested, e.Session, e.Lesson)
		if _, ok := s.lookup(k); ok {
			return true
		}
		s.set(k, 1)
		if !s.severe(e.Session, e.Lesson) {
			s.lesson(e.Lesson, true).tested++
		}
	case KindAsked:
		if e.Session == "" || e.Lesson == "" {
			return true
		}
		k := keyOf(keyAsked, e.Session, e.Lesson)
		if _, ok := s.lookup(k); ok {
			return true
		}
		s.set(k, 1)
		s.lesson(e.Lesson, true).asked++
	case KindRegret:
		if e.Session == "" || e.Lesson == "" {
			return true
		}
		if !s.loadEvidence() {
			return false
		}
		r := RegretMark{Session: e.Session, Lesson: e.Lesson, W: finiteW(e.W)}
		id := e.WithID().ID
		old, ok := s.regrets[id]
		if ok && compareRegrets(r, old) >= 0 {
			return true
		}
		if ok {
			s.stale[old.Lesson] = true
		}
		s.regrets[id] = r
		s.stale[r.Lesson] = true
		s.lesson(r.Lesson, true)
	}
	return true
}

// addCorrection records a correction time of a session; a new one raises
// correctionTimes is the ms stamps of session's corrections.
func (s *Summary) correctionTimes(session string) []int64 {
	return slices.Collect(maps.Keys(s.corrections[session]))
}

// the regret cap of the session's regrets.
func (s *Summary) addCorrection(session string, ms int64) bool {
	if !s.loadEvidence() {
		return false
	}
	c := s.corrections[session]
	if c == nil {
		c = map[int64]bool{}
		s.corrections[session] = c
	}
	if c[ms] {
		return true
	}
	c[ms] = true
	for _, r := range s.regrets {
		if r.Session == session {
			s.stale[r.Lesson] = true
		}
	}
	return true
}

// loadEvidence decodes the regrets and corrections; false when corrupt.
func (s *Summary) loadEvidence() bool {
	if s.evidence == nil {
		return true
	}
	regrets, corrections, ok := s.src.Evidence(s.evidence)
	if !ok {
		return false
	}
	s.regrets, s.corrections, s.evidence = regrets, corrections, nil
	return true
}

// refreshRegrets recomputes the regret credit of the stale lessons, or of
// every lesson under another RegretMax than the cached one.
func (s *Summary) refreshRegrets(w Weights) (map[string]float64, bool) {
	all := w.RegretMax != s.regretMax && !(math.IsNaN(w.RegretMax) && math.IsNaN(s.regretMax))
	if !all && len(s.stale) == 0 {
		return nil, true
	}
	if !s.loadEvidence() {
		return nil, false
	}
	byLesson := map[string][]regretRef{}
	for id, r := range s.regrets {
		if (all || s.stale[r.Lesson]) && !s.severe(r.Session, r.Lesson) {
			byLesson[r.Lesson] = append(byLesson[r.Lesson], regretRef{id: id, RegretMark: r})
		}
	}
	out := make(map[string]float64, len(byLesson))
	for lesson, rs := range byLesson {
		out[lesson] = regretted(rs, s.correctionTimes, w)
	}
	if !all {
		for lesson := range s.stale {
			if ls := s.lesson(lesson, false); ls != nil {
				ls.regretted = out[lesson]
			}
		}
		clear(s.stale)
		return nil, true
	}
	return out, true
}

// fractional reports whether a lesson has a changed result of less than
// full credit (whose credit the summary does not keep per result).
func (s *Summary) fractional(lesson string) bool {
	ls := s.lesson(lesson, false)
	return ls != nil && ls.vouched != 1000*ls.changed
}

func (s *Summary) severe(session, lesson string) bool {
	v, ok := s.lookup(keyOf(keyResult, session, lesson))
	return ok && severeStrength(resultStrengthOf(v))
}

func (s *Summary) addResult(e Event) bool {
	k := keyOf(keyResult, e.Session, e.Lesson)
	st := uint32(resultStrength(e.Kind))
	oldV, had := s.lookup(k)
	old := resultStrengthOf(oldV)
	// The repo and author a changed result counts under.
	p, ticks := s.sessionPos(e.Session)
	repo, author := s.val(e.Repo), s.val(e.Author)
	if ticks {
		repo, author = cmp.Or(s.clockRepo.at(p), repo), cmp.Or(author, s.clockBy.at(p))
	}
	if had {
		switch {
		case st < old, st == old && e.Kind != KindChanged:
			return true // the stronger result stays; an equal one reads the same
		case st == old && (creditMilli(e.W) != 1000 || s.fractional(e.Lesson)):
			// Two changed results whose credits may differ: which one
			// counts takes the full ledger.
			return false
		case st == old:
			// Two changed results: the lesser mark wins, which matters only
			// when they would count under another repo or author (the
			// session, ticking, fixes the use's position).
			r, a := effOf(oldV)
			return ticks && r == min(repo, effUnknown) && a == min(author, effUnknown) && r != effUnknown && a != effUnknown
		}
	}
	ls := s.lesson(e.Lesson, true)
	if had && kindOfStrength[old] == KindChanged {
		// The change is overturned: its use, repo, author and credit go.
		r, a := effOf(oldV)
		if !ticks || r == effUnknown || a == effUnknown || ls.vouched != 1000*ls.changed {
			return false
		}
		ls.vouched -= 1000
		i := slices.Index(ls.uses, int32(p))
		if i < 0 {
			return false
		}
		ls.uses = slices.Delete(slices.Clone(ls.uses), i, i+1)
		ls.repos.add(r, -1)
		ls.authors.addMilli(a, -1, -1000)
	}
	if had {
		ls.count(kindOfStrength[old], -1)
	}
	if severeStrength(st) && (!had || !severeStrength(old)) {
		// A tested pair and a regret stop counting beside a correction or a
		// veto.
		if _, ok := s.lookup(keyOf(keyTested, e.Session, e.Lesson)); ok {
			ls.tested--
		}
		s.stale[e.Lesson] = true
	}
	ls.count(e.Kind, 1)
	if e.Kind != KindChanged {
		s.set(k, st)
		return true
	}
	ls.vouched += creditMilli(e.W)
	if ticks {
		s.set(k, resultValue(st, repo, author))
	} else {
		s.set(k, resultValue(st, effUnknown, effUnknown))
		p = s.place(e.Session, e.MS)
	}
	ls.uses = append(ls.uses[:len(ls.uses):len(ls.uses)], int32(p))
	ls.unsorted = true
	ls.repos.add(repo, 1)
	ls.authors.addMilli(author, 1, int32(creditMilli(e.W)))
	return true
}

// Memories derives the memory of each lesson in lessons as Ledger.Memories
// does for the ledger the summary stands for: deduplicated by id, sorted by
// id, as of session's tick (the next tick when session is empty or unknown).
func (s *Summary) Memories(lessons []LessonInfo, session string, w Weights) []Memory {
	defer runtime.KeepAlive(s) // see FromParts
	q := s.queryPos(session)
	// Regret credits under other weights, or nil for the cached ones; a
	// corrupt evidence block reads as none, as a corrupt lesson record reads
	// as no evidence (see at; Fold and Parts report both).
	regrets, _ := s.refreshRegrets(w)
	list := uniqueByID(lessons)
	// Each lesson's evidence, found (and decoded) here, one by one: the
	// parallel part below only reads.
	found := make([]*lessonSum, len(list))
	j := 0
	for i, info := range list {
		if j = s.seek(info.ID, j); j < s.count() && s.compareID(j, info.ID) == 0 {
			found[i] = s.at(j)
		} else {
			found[i] = s.fresh[info.ID]
		}
	}
	for _, info := range list {
		if tag, ok := strings.CutPrefix(info.Reach, ReachRepoPrefix); ok {
			s.prefixOf(tag) // built here: the parallel part only reads it
		}
	}
	// The lessons are independent, so they are derived in parallel.
	out := make([]Memory, len(list))
	parts := min(runtime.GOMAXPROCS(0), 4, 1+len(list)/512)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(list)/parts, (k+1)*len(list)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []int32
			for i := lo; i < hi; i++ {
				out[i], scratch = s.memoryOf(list[i], found[i], regrets, q, session, w, scratch)
			}
		}()
	}
	wg.Wait()
	return out
}

// uniqueByID is lessons sorted by id with the first of each id kept (lessons
// itself when it already is).
func uniqueByID(lessons []LessonInfo) []LessonInfo {
	if slices.IsSortedFunc(lessons, func(a, b LessonInfo) int {
		if a.ID == b.ID {
			return -1 // a duplicate: not strictly sorted
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		return lessons
	}
	list := slices.Clone(lessons)
	slices.SortStableFunc(list, func(a, b LessonInfo) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(list, func(a, b LessonInfo) bool { return a.ID == b.ID })
}

// queryPos is the clock position Memories derives at: the session's own, or
// the last for an empty or unknown one.
func (s *Summary) queryPos(session string) int {
	if p, ok := s.sessionPos(session); ok {
		return p
	}
	return s.clockMS.len() - 1
}

// eligible counts the sessions in positions (i, q] that a lesson of the given
// repo tag ages with (clock.eligible).
func (s *Summary) eligible(tag string, i, q int) int {
	if i >= q {
		return 0
	}
	if tag == "" {
		return q - i
	}
	p := s.prefixOf(tag)
	return int(p[q+1] - p[i+1])
}

// prefixOf is, for a repo tag, the number of sessions of that repo among
// the clock's first t, by t (built on first use).
func (s *Summary) prefixOf(tag string) []int32 {
	p, ok := s.prefix[tag]
	if !ok {
		want, known := uint32(0), false
		for k, v := range s.vals {
			if k > 0 && v == tag {
				want, known = uint32(k), true
				break
			}
		}
		n := s.clockMS.len()
		p = make([]int32, n+1)
		if known {
			// The encoded part of the column, then the part appended since
			// (a fresh summary's column is all one or the other).
			c, enc := int32(0), s.clockRepo.b[:4*(len(s.clockRepo.b)/4)]
			for k := 0; k < len(enc); k += 4 {
				if binary.LittleEndian.Uint32(enc[k:]) == want {
					c++
				}
				p[k/4+1] = c
			}
			for k, v := range s.clockRepo.x {
				if v == want {
					c++
				}
				p[len(enc)/4+k+1] = c
			}
		}
		if s.prefix == nil {
			s.prefix = map[string][]int32{}
		}
		s.prefix[tag] = p
	}
	return p
}

// memoryOf is Ledger.memoryOf over a lesson's summary (nil: no evidence).
func (s *Summary) memoryOf(info LessonInfo, ls *lessonSum, regrets map[string]float64, q int, session string, w Weights, scratch []int32) (Memory, []int32) {
	if ls == nil {
		ls = &lessonSum{}
	}
	m := Memory{
		ID: info.ID, Changed: ls.changed, Ignored: ls.ignored, Corrected: ls.corrected,
		Vetoed: ls.vetoed, Tested: ls.tested, Asked: ls.asked, Vouched: float64(ls.vouched) / 1000,
	}
	created := int32(-1)
	if ls.hasCreated {
		created = ls.createdPos
	} else if info.CreatedMS != 0 {
		created = int32(s.posAt(info.CreatedMS))
	}
	uses := ls.uses
	if len(uses) > 1 {
		// Sorted, then cooled (coolUses) as Ledger.memoryOf cools them;
		// a single use always counts.
		buf := scratch[:0]
		if ls.unsorted {
			buf = append(buf, uses...)
			slices.Sort(buf)
			uses = buf
		}
		uses = coolUses(uses, buf[:0], s.stamp)
		scratch = uses
	}
	m.Uses = len(uses) + 1
	m.LastUseTick = int(created) + 1
	if len(uses) > 0 {
		m.LastUseTick = int(max(created, uses[len(uses)-1])) + 1
	}

	m.Regretted = ls.regretted
	if regrets != nil {
		m.Regretted = regrets[info.ID]
	}
	m.TopVouchers = topVouchers(func(yield func(string, int) bool) {
		for _, c := range ls.authors {
			a := s.valAt(c.V)
			if a == UnattributedAuthor {
				m.Unattributed = float64(c.Milli) / 1000
			}
			if !yield(a, int(c.Milli)) {
				return
			}
		}
	}, ls.vouched)
	authors := len(ls.authors)
	if slices.ContainsFunc(ls.authors, func(c ValCount) bool { return s.valAt(c.V) == UnattributedAuthor }) {
		authors-- // as Ledger.Memories: an unknown committer is no second engineer
	}
	var d float64
	m.Consolidated, d = consolidation(m, len(ls.repos), authors, w)
	tag, repoReach := strings.CutPrefix(info.Reach, ReachRepoPrefix)
	if !repoReach {
		tag = "" // a team lesson ages with every session
	}
	// Σ over the uses in ascending order, the creation merged in, as
	// Ledger.memoryOf sums them.
	var sum float64
	merged := false
	for _, p := range uses {
		if !merged && created <= p {
			sum += agePow(s.eligible(tag, int(created), q)+1, d)
			merged = true
		}
		sum += agePow(s.eligible(tag, int(p), q)+1, d)
	}
	if !merged {
		sum += agePow(s.eligible(tag, int(created), q)+1, d)
	}
	m.Activation = math.Log(sum)
	m.settle(session, w)
	return m, scratch
}

// lessonPassing reports whether a passing event links two lessons (tools
// and protos' destinations are no lesson ids): the links the summary keeps
// for the lateral arm.
func lessonPassing(e Event) bool {
	return e.Kind == KindPassing && ValidID(e.Src) && ValidID(e.Dst) &&
		strings.HasPrefix(e.SrcV, LessonVersionPrefix) && strings.HasPrefix(e.DstV, LessonVersionPrefix)
}

// LessonVersionPrefix starts a lesson's version in a passing (a hash of its
// content): what tells a lesson → lesson passing from one between tools
// whose names happen to look like lesson ids.
const LessonVersionPrefix = "c-"

// addPassing keeps one passing per id, the lesser should two differ (as
// Ledger.addPassing does).
func (s *Summary) addPassing(e Event) {
	e.W = 0
	if old, ok := s.passings[e.ID]; ok {
		ka := [5]string{e.Src, e.SrcV, e.Dst, e.DstV, e.Session}
		kb := [5]string{old.Src, old.SrcV, old.Dst, old.DstV, old.Session}
		if c := cmp.Compare(e.MS, old.MS); c > 0 || (c == 0 && slices.Compare(ka[:], kb[:]) >= 0) {
			return
		}
	}
	s.passings[e.ID] = e
}

// LessonLinks are the links sessions made between lessons (lessons acted
// on together), as graph edges at their weight at nowMS: what the lateral
// arm walks beside the links lessons write (docs/design.md, Links).
func (s *Summary) LessonLinks(nowMS int64) []GraphEdge {
	if len(s.passings) == 0 {
		return nil
	}
	events := make([]Event, 0, len(s.passings))
	for _, e := range s.passings {
		events = append(events, e)
	}
	return LinkEdges(FoldLinks(events), nowMS)
}

// decodeCreated fills a lesson's created from createdRaw; false when it is
// corrupt.
func (s *Summary) decodeCreated(ls *lessonSum) bool {
	if ls.createdRaw == nil {
		return true
	}
	m, ok := s.src.Mark(ls.createdRaw)
	if !ok {
		return false
	}
	ls.created, ls.createdRaw = &m, nil
	return true
}
