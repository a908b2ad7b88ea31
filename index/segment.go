package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// Segmented derived state. The catalog is an immutable base
// segment (catalog.bin) plus at most one delta segment (catalog.delta): the
// lessons added or changed since the base was written, in the catalog's own
// format, and the base ordinals they replaced or that were deleted
// (tombstones, Lucene's .liv, scorch's deletion bitmap). A sync that changes
// a few lessons rewrites only the delta, at a cost proportional to the
// delta, not to the store; when the delta passes mergeDue's bound, a sync
// allowed to merge (not a hook: Options.DeferMerge) writes a new base of
// every lesson and drops the delta, as a whole rebuild would.
//
// Unlike scorch or Lucene there is one delta, rewritten whole: borg's
// deltas are small (a few lessons between merges), so one file is cheaper
// to open than a tier of them, and the merge policy is one bound.
//
// Publication without a manifest: the delta names the base it applies to
// (the base's checksums, baseID), and a reader reads the delta before the
// base. A writer replaces the delta (same base) by rename, or writes a new
// base and then removes the delta. Whatever a reader interleaves with a
// writer, it sees a committed state: the delta it read with the base it
// names, or a base whose id the delta does not name (the delta is ignored,
// the new base holds everything).
//
// BM25 across segments: the delta file records the live lessons' count and
// the sums of their field lengths (base minus tombstones plus delta), and a
// term's document frequency is the live postings of both segments, so
// scores equal a whole rebuild's. The link graph across segments is the
// base's adjacency minus tombstoned lessons, plus an overlay built at open
// from the delta lessons' links and the links of the base lessons that
// name a delta lesson (backlinks, listed in the delta file).
//
// catalog.delta, little-endian:
//
//	magic "BORGDLT1" | u32 format | u64 base id | u32 live docs
//	| fields × u64 live field length sums | u32 tombstones | u32 backlinks
//	| tombstones × u32 base ordinals, increasing | backlinks × u32 base
//	ordinals, increasing | u32 CRC-32 (IEEE) of all before
//	| the delta's catalog (catalog.go's format)
const (
	deltaMagic  = "BORGDLT1"
	deltaFormat = 1
	deltaName   = "catalog.delta"
)

// Merge policy: a delta past maxDeltaDocs lessons and tombstones together,
// or past a quarter of the live lessons once it holds more than
// minDeltaDocs, is due for a merge (a small store rebuilds whole cheaply).
const (
	maxDeltaDocs = 1024
	minDeltaDocs = 64
)

// mergeDue reports whether a delta of delta lessons and dead tombstones over
// live lessons should be merged into a new base.
func mergeDue(delta, dead, live int) bool {
	n := delta + dead
	return n > maxDeltaDocs || (n > minDeltaDocs && n > live/4)
}

// view is the catalog as queries see it: the base segment minus its
// tombstones, plus the delta segment. Lessons are numbered by global
// ordinal: a base ordinal o is o, a delta ordinal d is base.len()+d.
// Tombstoned base ordinals are never returned by find. Strings a view
// returns are copies (it is the only way outside the segment code to read
// a catalog, so nothing aliases a mapping that a sync or Close releases),
// except where a method says it compares in place.
type view struct {
	base, delta *catalog
	dead        []bool // base ordinals tombstoned (nil: none)
	ndead       int
	tomb        []int // the same, increasing (nil: see tombstones)
	summed      bool  // sumLen holds the live sums (a delta file's)
	backlinks   []int // base ordinals whose links name a delta lesson
	stamp       string
	screen      string
	live        int
	sumLen      [numFields]uint64
	avgLen      [numFields]float64
	// overlay graph, global ordinals (nil without a delta)
	supBy  map[int][]int
	neighb map[int][]int
	raw    []byte // the delta file's mapping
	relRaw func()
}

// emptyView is a view of no lessons.
func emptyView() *view { return baseView(emptyCatalog()) }

// baseView is the view of a base without a delta.
func baseView(c *catalog) *view {
	// The base's own mean lengths (its meta): the sums are counted only
	// when a sync writes a delta (liveSums).
	return &view{base: c, delta: emptyCatalog(), stamp: c.stamp, screen: c.screen, live: c.len(), avgLen: c.avgLen}
}

// liveSums counts the field length sums of the live lessons of base (minus
// dead) and delta, for a delta file.
func liveSums(base, delta *catalog, dead []bool) [numFields]uint64 {
	var s [numFields]uint64
	for f := range s {
		for o := 0; o < base.len(); o++ {
			if dead == nil || !dead[o] {
				s[f] += uint64(base.fieldLen(textField(f), o))
			}
		}
		for o := 0; o < delta.len(); o++ {
			s[f] += uint64(delta.fieldLen(textField(f), o))
		}
	}
	return s
}

func (v *view) setAvg() {
	for f := range v.avgLen {
		v.avgLen[f] = max(float64(v.sumLen[f])/float64(max(v.live, 1)), 1)
	}
}

func (v *view) close() {
	v.base.close()
	v.delta.close()
	if v.relRaw != nil {
		v.relRaw()
	}
	*v = view{base: emptyCatalog(), delta: emptyCatalog()}
}

// len is the number of live lessons; span bounds the global ordinals.
func (v *view) len() int  { return v.live }
func (v *view) span() int { return v.base.len() + v.delta.len() }

// seg resolves a global ordinal to its segment and ordinal there.
func (v *view) seg(g int) (*catalog, int) {
	if b := v.base.len(); g >= b {
		return v.delta, g - b
	}
	return v.base, g
}

// alive reports whether g is a live lesson.
func (v *view) alive(g int) bool {
	if g < 0 || g >= v.span() {
		return false
	}
	return g >= v.base.len() || v.dead == nil || !v.dead[g]
}

// find is the global ordinal of id.
func (v *view) find(id string) (int, bool) {
	if d, ok := v.delta.find(id); ok {
		return v.base.len() + d, true
	}
	if o, ok := v.base.find(id); ok && v.alive(o) {
		return o, true
	}
	return 0, false
}

// str is slot k of g's record (a copy).
func (v *view) str(g, k int) string {
	c, o := v.seg(g)
	return c.str(c.rec(o), k).String()
}

func (v *view) id(g int) string    { return v.str(g, slotID) }
func (v *view) hash(g int) string  { return v.str(g, slotHash) }
func (v *view) reach(g int) string { return v.str(g, slotReach) }
func (v *view) flag(g int) string  { return v.str(g, slotFlag) }

func (v *view) created(g int) int64 {
	c, o := v.seg(g)
	return c.created(o)
}

// hashIs reports whether g's content hash is h (compared in place).
func (v *view) hashIs(g int, h string) bool {
	c, o := v.seg(g)
	return c.hash(o).s == h
}

// flagged reports whether g carries a screen verdict (read in place).
func (v *view) flagged(g int) bool {
	c, o := v.seg(g)
	return c.str(c.rec(o), slotFlag).s != ""
}

// idIn reports whether g's id is a key of set (compared in place).
func (v *view) idIn(g int, set map[string]bool) bool {
	c, o := v.seg(g)
	return set[c.id(o).s]
}

// idLess orders two global ordinals by id (compared in place).
func (v *view) idLess(a, b int) bool {
	ca, oa := v.seg(a)
	cb, ob := v.seg(b)
	return ca.id(oa).s < cb.id(ob).s
}

func (v *view) fileStamp(g int) [2]int64 {
	c, o := v.seg(g)
	return c.fileStamp(o)
}

func (v *view) fieldLen(f textField, g int) uint32 {
	c, o := v.seg(g)
	return c.fieldLen(f, o)
}

func (v *view) lessonLinks(g int) []domain.LessonLink {
	c, o := v.seg(g)
	return c.lessonLinks(o)
}

// ordered lists the live global ordinals in id order.
func (v *view) ordered() []int {
	out := make([]int, 0, v.live)
	b, d := 0, 0
	nb, nd := v.base.len(), v.delta.len()
	for b < nb || d < nd {
		if b < nb && !v.alive(b) {
			b++
			continue
		}
		if d >= nd || (b < nb && v.base.id(b).s < v.delta.id(d).s) {
			out = append(out, b)
			b++
			continue
		}
		out = append(out, nb+d)
		d++
	}
	return out
}

// lookup finds each of ids (any order, no duplicates needed) by a merge in
// id order with the view's lessons: the global ordinal, or -1 when the
// view does not hold it. A sync looks every lesson up: a merge is linear
// where a binary search per lesson is not.
func (v *view) lookup(ids []string) []int {
	out := make([]int, len(ids))
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
		out[i] = -1
	}
	if !slices.IsSortedFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) }) {
		slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	}
	live := v.ordered()
	k := 0
	for _, i := range order {
		for k < len(live) && v.idOf(live[k]) < ids[i] {
			k++
		}
		if k < len(live) && v.idOf(live[k]) == ids[i] {
			out[i] = live[k]
		}
	}
	return out
}

// missing lists, sorted, the view's lessons that entries (sorted by id)
// lack: a merge.
func (v *view) missing(entries []syncEntry) []string {
	var out []string
	k := 0
	for _, g := range v.ordered() {
		id := v.idOf(g)
		for k < len(entries) && entries[k].id < id {
			k++
		}
		if k >= len(entries) || entries[k].id != id {
			out = append(out, v.id(g))
		}
	}
	return out
}

// idOf is g's id in place (compared, never kept).
func (v *view) idOf(g int) string {
	c, o := v.seg(g)
	return c.id(o).s
}

func (v *view) hasGraph() bool { return v.base.hasGraph() || len(v.neighb) > 0 }

// neighbours lists g's neighbours in the undirected link graph (a set: its
// order and repeats carry nothing).
func (v *view) neighbours(g int) []int {
	var out []int
	if g < v.base.len() {
		for _, n := range v.base.neighbours(g) {
			if v.alive(n) {
				out = append(out, n)
			}
		}
	}
	return append(out, v.neighb[g]...)
}

// supersededBy lists the lessons superseding g, in id order.
func (v *view) supersededBy(g int) []int {
	var out []int
	if g < v.base.len() {
		for _, n := range v.base.supersededBy(g) {
			if v.alive(n) {
				out = append(out, n)
			}
		}
	}
	extra := v.supBy[g]
	if len(extra) == 0 {
		return out
	}
	out = append(out, extra...)
	sort.SliceStable(out, func(i, j int) bool { return v.idLess(out[i], out[j]) })
	return out
}

// buildOverlay adds the graph edges that involve a delta lesson: its own
// links, and the links of the base lessons naming one (backlinks).
func (v *view) buildOverlay() {
	v.supBy, v.neighb = map[int][]int{}, map[int][]int{}
	add := func(src int, links []domain.LessonLink, onlyDelta bool) {
		for _, k := range links {
			t, ok := v.find(k.Target)
			if !ok || t == src || (onlyDelta && t < v.base.len()) {
				continue
			}
			if k.Rel == domain.RelSupersedes && domain.EarnedSupersedes(v.str(src, slotGist), v.str(t, slotGist), v.tagHolds(src)) {
				v.supBy[t] = append(v.supBy[t], src)
			}
			v.neighb[src] = append(v.neighb[src], t)
			v.neighb[t] = append(v.neighb[t], src)
		}
	}
	for d := 0; d < v.delta.len(); d++ {
		g := v.base.len() + d
		add(g, v.lessonLinks(g), false)
	}
	for _, s := range v.backlinks {
		if v.alive(s) {
			add(s, v.lessonLinks(s), true)
		}
	}
	if len(v.neighb) == 0 {
		v.supBy, v.neighb = nil, nil
	}
}

// verify checks both segments' checksums.
func (v *view) verify() error {
	if err := v.base.verify(); err != nil {
		return err
	}
	return v.delta.verify()
}

// baseID names a base catalog: its header and body checksums.
func (c *catalog) baseID() uint64 { return uint64(c.headSum)<<32 | uint64(c.bodySum) }

// readView reads the catalog segments in dir: the delta first, then the
// base (see the publication order above). ok is false when the base is
// missing or unreadable; a delta that is corrupt or names another base is
// ignored.
func readView(dir string) (*view, bool) {
	draw, drel, derr := fsutil.Map(filepath.Join(dir, deltaName))
	base, ok := readCatalog(filepath.Join(dir, catalogName))
	if !ok {
		if derr == nil {
			drel()
		}
		return emptyView(), false
	}
	if derr != nil {
		return baseView(base), true
	}
	v, err := parseDelta(draw, base)
	if err == nil {
		// The whole delta is checked (it is small): it is written without
		// an fsync (deltaWrite), so a power cut may leave it torn.
		err = v.delta.verify()
	}
	if err != nil {
		drel()
		return baseView(base), true
	}
	v.raw, v.relRaw = draw, drel
	return v, true
}

// errOtherBase reports a delta written over another base: a merge's
// leftover, ignored (the base holds everything) and replaced by the next
// sync.
var errOtherBase = errors.New("decode catalog delta: written over another base")

// verifyDelta reads dir's delta over base c whole (borg doctor) and
// returns the view they make; a missing delta, or one over another base,
// is no problem. The view aliases c and the delta's bytes, read into
// memory: it lives as long as c.
func verifyDelta(dir string, c *catalog) (*view, error) {
	path := filepath.Join(dir, deltaName)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return baseView(c), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, err := parseDelta(raw, c)
	if errors.Is(err, errOtherBase) {
		return baseView(c), nil
	}
	if err == nil {
		err = v.delta.verify()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w (delete %s to rebuild the index)", path, err, dir)
	}
	for d := 1; d < v.delta.len(); d++ {
		if v.delta.id(d-1).s >= v.delta.id(d).s {
			return nil, fmt.Errorf("%s: lessons out of order at %q", path, v.delta.id(d).s)
		}
	}
	return v, nil
}

// parseDelta reads a delta file over base.
func parseDelta(raw []byte, base *catalog) (*view, error) {
	r := &sliceReader{b: raw}
	if string(r.take(len(deltaMagic))) != deltaMagic || r.u32() != deltaFormat {
		return nil, errors.New("decode catalog delta: bad magic or format")
	}
	id, live := r.u64(), int(r.u32())
	var sums [numFields]uint64
	for f := range sums {
		sums[f] = r.u64()
	}
	nt, nb := int(r.u32()), int(r.u32())
	if r.err != nil || nt > base.len() || nb > base.len() {
		return nil, errors.New("decode catalog delta: truncated header")
	}
	if id != base.baseID() {
		return nil, errOtherBase
	}
	tomb, back := r.ords(nt, base.len()), r.ords(nb, base.len())
	end := r.off
	sum := r.u32()
	if r.err != nil || crc32.ChecksumIEEE(raw[:end]) != sum {
		return nil, errors.New("decode catalog delta: checksum mismatch")
	}
	delta, err := parseCatalog(raw[r.off:])
	if err != nil {
		return nil, fmt.Errorf("decode catalog delta: %w", err)
	}
	return deltaView(base, delta, live, sums, tomb, back)
}

// deltaView is the view of delta over base with the header's live count,
// live field length sums, tombstones and backlinks (increasing).
func deltaView(base, delta *catalog, live int, sums [numFields]uint64, tomb, back []int) (*view, error) {
	if delta.screen != base.screen || live != base.len()-len(tomb)+delta.len() {
		return nil, errors.New("decode catalog delta: inconsistent with its base")
	}
	v := &view{base: base, delta: delta, live: live, sumLen: sums, backlinks: back, stamp: delta.stamp, screen: base.screen, ndead: len(tomb)}
	v.tomb, v.summed = tomb, true
	if len(tomb) > 0 {
		v.dead = make([]bool, base.len())
		for _, o := range tomb {
			v.dead[o] = true
		}
	}
	v.setAvg()
	v.buildOverlay()
	return v, nil
}

// ords reads n strictly increasing u32 ordinals below limit.
func (r *sliceReader) ords(n, limit int) []int {
	out := make([]int, 0, n)
	for range n {
		o := int(r.u32())
		if r.err != nil || o >= limit || (len(out) > 0 && o <= out[len(out)-1]) {
			r.err = errors.New("bad ordinal")
			return nil
		}
		out = append(out, o)
	}
	return out
}

func (r *sliceReader) u64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

// deltaHeader is the head of a delta file over base, up to and with its
// checksum: the encoded catalog of the delta follows it.
func deltaHeader(base *catalog, live int, sums [numFields]uint64, tomb, back []int) []byte {
	le := binary.LittleEndian
	out := make([]byte, 0, len(deltaMagic)+4+8+4+8*int(numFields)+4+4+4*(len(tomb)+len(back))+4)
	out = append(out, deltaMagic...)
	out = le.AppendUint32(out, deltaFormat)
	out = le.AppendUint64(out, base.baseID())
	out = le.AppendUint32(out, uint32(live))
	for _, s := range sums {
		out = le.AppendUint64(out, s)
	}
	out = le.AppendUint32(out, uint32(len(tomb)))
	out = le.AppendUint32(out, uint32(len(back)))
	for _, o := range tomb {
		out = le.AppendUint32(out, uint32(o))
	}
	for _, o := range back {
		out = le.AppendUint32(out, uint32(o))
	}
	return le.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// findBacklinks lists the live base ordinals with a link to one of ids
// (sorted): a pass over the base's link records alone (a lesson's links
// are a run of them, in ordinal order, so a matching link's lesson is
// found by binary search), not over its lessons.
func findBacklinks(base *catalog, dead []bool, ids map[string]bool) []int {
	if len(ids) == 0 || len(base.links) == 0 {
		return nil
	}
	minLen, maxLen := maxCatalogStr, 0
	for id := range ids {
		minLen, maxLen = min(minLen, len(id)), max(maxLen, len(id))
	}
	var out []int
	o := 0 // the lesson of the last match: matches come in link order
	for i := 0; (i+1)*linkRecord <= len(base.links); i++ {
		l := base.links[i*linkRecord : (i+1)*linkRecord]
		if n := int(u32at(l, 3)); n < minLen || n > maxLen || !ids[base.str(l, 2).s] {
			continue
		}
		o += sort.Search(base.len()-o, func(k int) bool {
			rec := base.rec(o + k)
			return int(u32at(rec, slotLinks))+int(u32at(rec, slotLinks+1)) > i
		})
		if o >= base.len() || int(u32at(base.rec(o), slotLinks)) > i {
			continue // a link record no lesson's run holds (corrupt)
		}
		if (dead == nil || !dead[o]) && (len(out) == 0 || out[len(out)-1] != o) {
			out = append(out, o)
		}
	}
	return out
}

// deltaWrite is how the delta segments are written: atomically (rename)
// but without an fsync, which cost a hook's sync after one change two
// fsyncs per delta, each a disk round trip, for state a sync recreates. A delta a power cut lost or tore is refused when read (its
// checksums cover it whole: readView, decodeVecDelta): the index is then
// its base, or the older delta, with the older stamp, and the caller's
// next sync applies the change again. The bases stay synced: they are
// written once per merge and a lost base costs a rebuild.
var deltaWrite = fsutil.NoSync()

// removeDelta drops the delta segment after a new base was written.
func removeDelta(dir string) error {
	if err := removeFile(filepath.Join(dir, deltaName)); err != nil {
		return fmt.Errorf("%w (delete %s to rebuild the index)", err, dir)
	}
	return nil
}

// removeFile removes path; a missing file is no error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", filepath.Base(path), err)
	}
	return nil
}
