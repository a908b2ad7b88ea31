package memfs

import (
	"encoding/binary"
	"io"
	"math/bits"
)

// lineSet holds the lines a refresh adds to the line table: each line's key
// and the index of the commit that first added it. A walk from scratch
// puts every line of the log into it, millions of them, and then labels
// every line of the files by it, so it is built for that:
//
//   - Its slots are kept in key order. A key's home slot is its place in
//     the key space scaled to the table ((hi * slots) >> 64 of its first
//     64 bits, uniform as a hash's are), and a key sits at its home or
//     after it, behind the smaller keys that got there first (linear
//     probing that keeps each run of taken slots sorted). Looking a key up
//     or finding where it goes reads a few neighbouring slots, and the
//     taken slots in order are the records sorted as the table's files
//     hold them: writing the table sorts nothing.
//   - A record is 20 bytes in a flat slice, with no per-entry overhead: at
//     about 8/7 of the records' size, against twice that for a map.
type lineSet struct {
	recs []lineRec
	// slots is the home range: keys are homed in recs[:slots], and the
	// slots after it take the runs that spill over its end.
	slots int
	n     int
}

// lineRec is one line: its key and its commit index plus one (0: a free
// slot).
type lineRec struct {
	k lineKey
	c uint32
}

// lineSetLoad bounds the share of home slots taken: at 7/8 a run is a few
// records, and a look that misses stops at the first larger key, so
// finding a line reads a cache line or two. lineSetSpill is the room past
// the home range.
const (
	lineSetLoadNum, lineSetLoadDen = 7, 8
	lineSetSpill                   = 64
)

// newLineSet returns a set with room for n lines before it grows.
func newLineSet(n int) *lineSet {
	slots := max(16, n*lineSetLoadDen/lineSetLoadNum)
	return &lineSet{recs: make([]lineRec, slots+lineSetSpill+slots/64), slots: slots}
}

func (t *lineSet) len() int { return t.n }

func (t *lineSet) home(k lineKey) int {
	hi, _ := bits.Mul64(binary.BigEndian.Uint64(k[:8]), uint64(t.slots))
	return int(hi)
}

// find returns where k is (found) or where it goes: the first slot from
// its home that is free or holds a larger key. pos == len(t.recs) when
// the run reaches the end.
func (t *lineSet) find(k lineKey) (pos int, found bool) {
	// A key orders as its two big-endian halves do.
	hi, lo := binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint64(k[8:])
	home, _ := bits.Mul64(hi, uint64(t.slots))
	for i := int(home); i < len(t.recs); i++ {
		r := &t.recs[i]
		if r.c == 0 {
			return i, false
		}
		rhi := binary.BigEndian.Uint64(r.k[:8])
		if rhi < hi {
			continue
		}
		if rhi > hi {
			return i, false
		}
		switch rlo := binary.BigEndian.Uint64(r.k[8:]); {
		case rlo == lo:
			return i, true
		case rlo > lo:
			return i, false
		}
	}
	return len(t.recs), false
}

// get is the commit index of k.
func (t *lineSet) get(k lineKey) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	if i, ok := t.find(k); ok {
		return t.recs[i].c - 1, true
	}
	return 0, false
}

// insertAt puts k, which the set does not hold, at pos (find's answer for
// k, the set unchanged since): the run from pos shifts one slot on.
func (t *lineSet) insertAt(pos int, k lineKey, c uint32) {
	if t.n+1 > t.slots*lineSetLoadNum/lineSetLoadDen {
		t.grow()
		pos, _ = t.find(k)
	}
	free := pos
	for free < len(t.recs) && t.recs[free].c != 0 {
		free++
	}
	if free == len(t.recs) {
		// The run spills past the room after the home range.
		t.grow()
		pos, _ = t.find(k)
		t.insertAt(pos, k, c)
		return
	}
	copy(t.recs[pos+1:free+1], t.recs[pos:free])
	t.recs[pos] = lineRec{k, c + 1}
	t.n++
}

// grow doubles the home range. The records go over in key order, so each
// lands at its new home or just after the one before it.
func (t *lineSet) grow() {
	old := t.recs
	slots := 2 * t.slots
	t.recs = make([]lineRec, slots+lineSetSpill+slots/64)
	t.slots = slots
	next := 0
	for _, r := range old {
		if r.c == 0 {
			continue
		}
		i := max(t.home(r.k), next)
		if i >= len(t.recs) {
			t.recs = append(t.recs, make([]lineRec, i+1-len(t.recs))...)
		}
		t.recs[i] = r
		next = i + 1
	}
}

// each calls fn with every line in key order.
func (t *lineSet) each(fn func(lineKey, uint32)) {
	for _, r := range t.recs {
		if r.c != 0 {
			fn(r.k, r.c-1)
		}
	}
}

// records is the set as the line table's files hold it: sorted records.
func (t *lineSet) records() []byte {
	out := make([]byte, 0, attribRecord*t.n)
	t.each(func(k lineKey, c uint32) { out = appendLineRecord(out, k, c) })
	return out
}

// writeRecords writes the set's records to w, a chunk at a time.
func (t *lineSet) writeRecords(w io.Writer) error {
	buf := make([]byte, 0, 1<<20)
	var err error
	t.each(func(k lineKey, c uint32) {
		if buf = appendLineRecord(buf, k, c); len(buf) >= 1<<20-attribRecord && err == nil {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
	})
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

func appendLineRecord(b []byte, k lineKey, c uint32) []byte {
	return binary.LittleEndian.AppendUint32(append(b, k[:]...), c)
}
