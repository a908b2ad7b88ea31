package domain

import (
	"encoding/binary"
	"maps"
	"runtime"
	"slices"
	"strings"
)

// The seam through which a codec (memfs's summary cache) stores a Summary
// and reads one back in place. The format's bytes are the codec's: Parts
// takes a summary apart into plain values, FromParts puts one together over
// a SummarySource, which decodes a lesson's record only when the summary
// first asks for it. The clock's columns and the key table are the
// summary's own fixed-width representation (little-endian), which a codec
// stores as it is and hands back unread.

// ValCount is one value's count in a lesson's repos or authors tally: the
// value's index into SummaryParts.Vals (never 0), the number of changed
// results and, in an authors tally, the milli-sum of the credits they vouch.
type ValCount struct {
	V        uint32
	N, Milli int32
}

// SummaryRecord is one lesson's evidence.
type SummaryRecord struct {
	// ID is the lesson's id, set by Parts (a SummarySource gives it by ID).
	ID                                                 string
	Changed, Ignored, Corrected, Vetoed, Tested, Asked int
	// Vouched sums the changed results' credits in thousandths.
	Vouched   int
	Regretted float64
	// HasCreated says the lesson has a created event, at clock position
	// CreatedPos. Its mark is Created, or, when CreatedRaw is set, the
	// source's encoding of it (decoded by SummarySource.Mark when needed).
	HasCreated bool
	CreatedPos int32
	Created    *Mark
	CreatedRaw []byte
	// Repos and Authors tally the changed results per repo and author.
	Repos, Authors []ValCount
	// Uses are the clock positions of the changed results, ascending.
	Uses []int32
}

// SummarySource is the lessons of an encoded summary, sorted by id and read
// in place. Its methods must not fail on corrupt bytes: ID returns nil and
// Record false, and the summary reads that lesson as one without evidence
// and reports itself corrupt (Fold false, Parts false).
type SummarySource interface {
	Len() int
	// ID is lesson i's id, undecoded.
	ID(i int) []byte
	// Record fills r, the zero record, with lesson i's evidence (not its
	// ID); false when it, or the lesson's id, is corrupt.
	Record(i int, r *SummaryRecord) bool
	// Mark decodes a SummaryRecord.CreatedRaw.
	Mark(raw []byte) (Mark, bool)
	// Evidence decodes SummaryParts.EvidenceRaw.
	Evidence(raw []byte) (regrets map[string]RegretMark, corrections map[string]map[int64]bool, ok bool)
}

// SummaryKeyRecord is the size of one record of SummaryParts.Keys.
const SummaryKeyRecord = keyRecord

// SummaryParts is a Summary taken apart.
type SummaryParts struct {
	// Vals are the repo and author values the summary refers to; Vals[0]
	// is "".
	Vals []string
	// Last is the id of the clock's last session.
	Last      string
	FreeMS    int64
	RegretMax float64
	// Lessons are the lessons with evidence, sorted by id (Parts); Source,
	// when set, reads them in place instead (FromParts takes one or the
	// other). Parts sets Source to the summary's own, if any.
	Lessons []SummaryRecord
	Source  SummarySource
	// Kept are lessons of Source by index, ascending, whose records are
	// the source's as they are (PartsKeeping); Lessons are the others.
	Kept []int
	// The regrets and corrections: EvidenceRaw, the source's encoding of
	// them when set (decoded by Source.Evidence when needed), else Regrets
	// and Corrections.
	EvidenceRaw []byte
	Regrets     map[string]RegretMark
	Corrections map[string]map[int64]bool
	// The clock's columns, a row per session in clock order: its first ms
	// (8 bytes) and the value indexes of its repo and author (4 each).
	ClockMS, ClockRepo, ClockBy []byte
	// Keys is the key table: sorted records of SummaryKeyRecord bytes.
	Keys []byte
	// KeyFence is the high half of every KeyFenceRun-th key (8 bytes each,
	// little-endian), for a key table read in place: a lookup reads it to
	// find the 4 KiB of records that may hold its key. Parts sets it;
	// FromParts checks that it fits Keys, and does without it when nil.
	KeyFence []byte
	// Passings are the lesson → lesson passings, sorted by id.
	Passings []Event
}

// FromParts puts together the summary p describes, over p.Source. It takes
// p's slices and maps as its own, and keeps referring to the bytes p holds (the clock, the key table,
// and whatever p.Source reads), so they must neither change nor go away
// while the summary is reachable; every method that reads them keeps the
// summary alive until it returns, so a caller may release them when the
// summary is collected (runtime.AddCleanup). False when the parts do not
// fit together; the lessons' records, and the order of their ids, are
// checked when decoded (see Summary.at and loadAll).
func FromParts(p SummaryParts) (*Summary, bool) {
	if (p.Source != nil && len(p.Lessons) > 0) || len(p.Kept) > 0 || len(p.Vals) == 0 || p.Vals[0] != "" || len(p.ClockMS)%8 != 0 ||
		len(p.ClockRepo) != len(p.ClockMS)/2 || len(p.ClockBy) != len(p.ClockMS)/2 || len(p.Keys)%keyRecord != 0 {
		return nil, false
	}
	s := newSummary()
	s.vals, s.last, s.freeMS, s.regretMax = p.Vals, p.Last, p.FreeMS, p.RegretMax
	for _, e := range p.Passings {
		if !lessonPassing(e) {
			return nil, false
		}
		s.passings[e.ID] = e
	}
	if p.EvidenceRaw != nil {
		if p.Source == nil {
			return nil, false
		}
		s.evidence = p.EvidenceRaw
	} else {
		s.regrets = cmpOrMap(p.Regrets)
		s.corrections = cmpOrMap(p.Corrections)
	}
	s.clockMS.b, s.clockRepo.b, s.clockBy.b = p.ClockMS, p.ClockRepo, p.ClockBy
	s.keys = keyTable(p.Keys)
	if p.KeyFence != nil {
		if !fenceFits(s.keys, p.KeyFence) {
			return nil, false
		}
		s.fence = p.KeyFence
	}
	if p.Source != nil {
		s.src = p.Source
		s.decoded = map[int]*lessonSum{}
	}
	for _, r := range p.Lessons {
		if r.CreatedRaw != nil && p.Source == nil {
			return nil, false
		}
		ls := &lessonSum{}
		ls.setRecord(&r)
		ls.id = r.ID
		s.lessons = append(s.lessons, ls)
	}
	return s, true
}

func cmpOrMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// setRecord sets the lesson's evidence (not its id) from r.
func (ls *lessonSum) setRecord(r *SummaryRecord) {
	ls.changed, ls.ignored, ls.corrected, ls.vetoed = r.Changed, r.Ignored, r.Corrected, r.Vetoed
	ls.tested, ls.asked, ls.vouched, ls.regretted = r.Tested, r.Asked, r.Vouched, r.Regretted
	ls.hasCreated, ls.createdPos, ls.created, ls.createdRaw = r.HasCreated, r.CreatedPos, r.Created, r.CreatedRaw
	ls.repos, ls.authors, ls.uses = r.Repos, r.Authors, r.Uses
}

// record is the lesson's evidence as a SummaryRecord.
func (ls *lessonSum) record() SummaryRecord {
	uses := ls.uses
	if ls.unsorted {
		uses = slices.Sorted(slices.Values(uses))
	}
	return SummaryRecord{ID: ls.id, Changed: ls.changed, Ignored: ls.ignored, Corrected: ls.corrected, Vetoed: ls.vetoed,
		Tested: ls.tested, Asked: ls.asked, Vouched: ls.vouched, Regretted: ls.regretted,
		HasCreated: ls.hasCreated, CreatedPos: ls.createdPos, Created: ls.created, CreatedRaw: ls.createdRaw,
		Repos: ls.repos, Authors: ls.authors, Uses: uses}
}

// Parts takes the summary apart for a codec: every lesson decoded (a
// parsed summary's raw fields kept as they were read) and the keys added
// since merged into the key table. False when the summary turned out
// corrupt (see at). The parts share the summary's memory: they are to be
// encoded, not changed, nor handed to FromParts while the summary is used.
func (s *Summary) Parts() (SummaryParts, bool) { return s.parts(false) }

// PartsKeeping is Parts for a codec that copies a record of its own source
// as it is: the lessons this summary never decoded, and so never changed,
// are listed by their index in Source in Kept (ascending) and left
// undecoded, and Lessons holds the others. Rewriting a big team's summary
// after a few events then decodes the few lessons they touched, not every
// lesson. The codec checks what Parts would have: each kept record, and
// the order of all the ids.
func (s *Summary) PartsKeeping() (SummaryParts, bool) { return s.parts(true) }

func (s *Summary) parts(keep bool) (SummaryParts, bool) {
	defer runtime.KeepAlive(s) // see FromParts
	keep = keep && s.lazy()
	if keep && s.corrupt || !keep && !s.loadAll() {
		return SummaryParts{}, false
	}
	if _, ok := s.refreshRegrets(Weights{RegretMax: s.regretMax}); !ok {
		return SummaryParts{}, false
	}
	p := SummaryParts{Vals: s.vals, Last: s.last, FreeMS: s.freeMS, RegretMax: s.regretMax, Source: s.src}
	if keep {
		// The few decoded lessons; the others are kept as they are.
		p.Lessons = make([]SummaryRecord, 0, len(s.decoded)+len(s.fresh))
		p.Kept = make([]int, 0, s.count()-len(s.decoded))
		next := 0
		for _, i := range slices.Sorted(maps.Keys(s.decoded)) {
			for ; next < i; next++ {
				p.Kept = append(p.Kept, next)
			}
			p.Lessons = append(p.Lessons, s.decoded[i].record())
			next = i + 1
		}
		for ; next < s.count(); next++ {
			p.Kept = append(p.Kept, next)
		}
	} else {
		p.Lessons = make([]SummaryRecord, 0, len(s.lessons)+len(s.fresh))
		for _, ls := range s.lessons { // loadAll decoded them all
			p.Lessons = append(p.Lessons, ls.record())
		}
	}
	for _, ls := range s.fresh {
		p.Lessons = append(p.Lessons, ls.record())
	}
	slices.SortFunc(p.Lessons, func(a, b SummaryRecord) int { return strings.Compare(a.ID, b.ID) })
	if s.evidence != nil {
		p.EvidenceRaw = s.evidence
	} else {
		p.Regrets, p.Corrections = s.regrets, s.corrections
	}
	p.ClockMS, p.ClockRepo, p.ClockBy = s.clockBytes()
	p.Keys = s.mergedKeys()
	p.KeyFence = keyFence(p.Keys)
	p.Passings = make([]Event, 0, len(s.passings))
	for _, id := range slices.Sorted(maps.Keys(s.passings)) {
		p.Passings = append(p.Passings, s.passings[id])
	}
	return p, true
}

// clockBytes are the clock's columns as bytes (those read in place when no
// session was added since).
func (s *Summary) clockBytes() (ms, repo, by []byte) {
	if len(s.clockMS.x) == 0 && len(s.clockRepo.x) == 0 && len(s.clockBy.x) == 0 {
		return s.clockMS.b, s.clockRepo.b, s.clockBy.b
	}
	n := s.clockMS.len()
	ms, repo, by = make([]byte, 0, 8*n), make([]byte, 0, 4*n), make([]byte, 0, 4*n)
	for i := range n {
		ms = binary.LittleEndian.AppendUint64(ms, uint64(s.clockMS.at(i)))
		repo = binary.LittleEndian.AppendUint32(repo, s.clockRepo.at(i))
		by = binary.LittleEndian.AppendUint32(by, s.clockBy.at(i))
	}
	return ms, repo, by
}

// mergedKeys is the key table merged with the keys added since, which win
// (the table itself when none was).
func (s *Summary) mergedKeys() []byte {
	if len(s.more) == 0 {
		return s.keys
	}
	more := make([]keyRec, 0, len(s.more))
	for k, v := range s.more {
		more = append(more, newKeyRec(k, v))
	}
	slices.SortFunc(more, func(a, b keyRec) int { return compareKeys(a.key(), b.key()) })
	// Each added key's place is found by binary search and the run of old
	// keys before it copied whole (a few added keys among a million).
	nb := s.keys.len()
	out := make([]byte, 0, len(s.keys)+keyRecord*len(more))
	i := 0
	for _, r := range more {
		at := s.keys.search(r.key(), i)
		out = append(out, s.keys[i*keyRecord:at*keyRecord]...)
		i = at
		if i < nb && s.keys.key(i) == r.key() {
			i++
		}
		out = appendKeyRecord(out, r.key(), r.v)
	}
	return append(out, s.keys[i*keyRecord:]...)
}
