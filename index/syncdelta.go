package index

import (
	"slices"
	"sort"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// SyncChanged's fast path: a change set applied to the delta
// segments at the cost of the change and of the delta, not of the store.
// The changed ids are found by binary search, only they are read, analysed
// and embedded, the delta segments are rewritten with the base's lessons
// untouched, and the live field length sums move by what changed. What it
// writes is what syncChanged (the same change applied to a listing of
// every lesson) writes, byte for byte (TestSyncDeltaSameFiles); when that
// path would do more than a delta (a merge it may do, a sidecar that does
// not match the catalog), it is taken instead.

// deltaChange is one changed or removed lesson as the fast path places it.
type deltaChange struct {
	id     string
	file   FileStamp
	held   int  // its global ordinal in the view, or -1
	same   bool // its file stamp is the one held: nothing to read
	gone   bool // removed, or not readable
	lesson *domain.Lesson
}

// syncDelta is SyncChanged's work when a delta can take the change; ok is
// false (nothing read, nothing written) when it cannot, and the caller
// takes syncChanged. The caller holds ix.mu and the lock; changed is
// sorted by id.
func (ix *Index) syncDelta(fs FileSync, changed []FileStamp, removed []string, read func(ids []string) []domain.Lesson, stamp string) (_ FileSync, ok bool, err error) {
	v := ix.cat
	if ix.noFastSync || ix.catBad || v.screen != ix.opts.ScreenID || v.base.len() == 0 || v.delta.verify() != nil {
		return fs, false, nil
	}
	// The vectors the deltas' lessons lack are embedded with the change
	// (none by a sync that defers them).
	var lag vectorLag
	if !ix.opts.DeferVectors {
		var ok bool
		if lag, ok = ix.vectorLag(); !ok {
			return fs, false, nil
		}
	}
	cs := placeChanges(v, changed, removed)
	var todo []string
	for i := range cs {
		if !cs[i].same && !cs[i].gone {
			todo = append(todo, cs[i].id)
		}
	}
	// A merge is decided before anything is read: a delta of every change
	// and every held delta lesson bounds the one written.
	if !ix.opts.DeferMerge && (ix.forceMerge || mergeDue(v.delta.len()+len(todo), v.ndead+len(cs), max(v.len()-len(cs), 0)) ||
		!ix.opts.DeferVectors && mergeDue(ix.vec.delta.len()+len(todo)+len(lag.todo), ix.vec.base.ndead+len(cs)+len(lag.gone), ix.vec.len()+len(todo))) {
		return fs, false, nil
	}
	if len(todo) > 0 {
		fs.Read = read(todo)
	}
	got := make(map[string]*domain.Lesson, len(fs.Read))
	for i := range fs.Read {
		if l := &fs.Read[i]; got[l.ID] == nil && slices.Contains(todo, l.ID) {
			got[l.ID] = l
		}
	}
	lagging := lag.read(cs, read)
	var fresh []syncEntry
	for i := range cs {
		c := &cs[i]
		if c.same || c.gone {
			continue
		}
		if c.lesson = got[c.id]; c.lesson == nil {
			c.gone = true // unreadable: no longer held, as a listing would drop it
			continue
		}
		fresh = append(fresh, syncEntry{id: c.id, hash: ContentHash(*c.lesson), lesson: c.lesson, file: c.file})
	}
	if !ix.opts.DeferVectors && ix.refitDue(liveAfter(v, cs)) {
		// The embedder is refitted on every lesson: syncChanged's work,
		// without reading these again.
		out, err := ix.syncChanged(fs, changed, removed, readAgain(todo, got, read), stamp)
		return out, true, err
	}
	set, err := newSyncSet(fresh, nil)
	if err != nil {
		return fs, true, err
	}
	d, removedIDs := ix.planChange(v, cs, set)
	fs.Removed = removedIDs
	fs.Lessons = d.live
	fs.SyncStats.Lessons = d.live
	fs.MergeDue = ix.forceMerge || mergeDue(len(d.docs), len(d.tomb), d.live)
	if err := ix.writeDelta(&fs.SyncStats, v, d, stamp); err != nil {
		return fs, true, err
	}
	ix.fastSyncs++
	if ix.opts.DeferVectors {
		return fs, true, nil
	}
	return fs, true, ix.syncDeltaVectors(&fs.SyncStats, set, cs, lag, lagging)
}

// liveAfter is how many lessons v holds once cs is applied (the lessons
// of cs not yet marked gone were read).
func liveAfter(v *view, cs []deltaChange) int {
	n := v.len()
	for i := range cs {
		switch c := &cs[i]; {
		case c.gone && c.held >= 0:
			n--
		case !c.gone && c.held < 0:
			n++
		}
	}
	return n
}

// readAgain is read, answering the ids of asked from got (those absent
// could not be read) without reading them again.
func readAgain(asked []string, got map[string]*domain.Lesson, read func([]string) []domain.Lesson) func([]string) []domain.Lesson {
	return func(ids []string) []domain.Lesson {
		var out []domain.Lesson
		var rest []string
		for _, id := range ids {
			switch {
			case got[id] != nil:
				out = append(out, *got[id])
			case !slices.Contains(asked, id):
				rest = append(rest, id)
			}
		}
		if len(rest) > 0 {
			out = append(out, read(rest)...)
		}
		return out
	}
}

// placeChanges looks each changed and removed lesson up in v (a binary
// search each), by id.
func placeChanges(v *view, changed []FileStamp, removed []string) []deltaChange {
	cs := make([]deltaChange, 0, len(changed)+len(removed))
	for _, f := range changed {
		c := deltaChange{id: f.ID, file: f, held: -1}
		if g, ok := v.find(f.ID); ok {
			c.held = g
			c.same = f.ModTime != 0 && v.fileStamp(g) == [2]int64{f.ModTime, f.Size}
		}
		cs = append(cs, c)
	}
	for _, id := range removed {
		if slices.ContainsFunc(changed, func(f FileStamp) bool { return f.ID == id }) {
			continue // changed wins, as syncChanged has it
		}
		c := deltaChange{id: id, held: -1, gone: true}
		if g, ok := v.find(id); ok {
			c.held = g
		}
		cs = append(cs, c)
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].id < cs[j].id })
	return slices.CompactFunc(cs, func(a, b deltaChange) bool { return a.id == b.id })
}

// planChange is planDelta for a change: the held delta lessons untouched
// are copied, the changed ones analysed anew, and the base ordinals of
// those that changed or went join the tombstones. removed lists the held
// lessons that went, sorted.
func (ix *Index) planChange(v *view, cs []deltaChange, set *syncSet) (*deltaPlan, []string) {
	d := &deltaPlan{}
	tomb := slices.Clone(v.tombstones())
	var dropped []int // held delta ordinals changed or gone
	var removed []string
	for i := range cs {
		c := &cs[i]
		if c.held < 0 || c.same {
			continue
		}
		if c.gone {
			removed = append(removed, c.id)
			d.removed++
		}
		if c.held < v.base.len() {
			tomb = append(tomb, c.held)
		} else {
			dropped = append(dropped, c.held-v.base.len())
		}
	}
	slices.Sort(tomb)
	d.tomb = slices.Compact(tomb)
	k := 0 // into cs
	addFresh := func(c *deltaChange) {
		e := set.get(c.id)
		doc := catalogDoc{id: c.id, hash: e.hash, mtime: c.file.ModTime, size: c.file.Size}
		fillDoc(&doc, nil, 0, e.lesson)
		d.fresh = append(d.fresh, len(d.docs))
		d.docs = append(d.docs, doc)
	}
	nextFresh := func(before string, all bool) {
		for ; k < len(cs) && (all || cs[k].id < before); k++ {
			if c := &cs[k]; !c.same && !c.gone {
				addFresh(c)
			}
		}
	}
	for o := 0; o < v.delta.len(); o++ {
		id := v.delta.id(o).s
		nextFresh(id, false)
		if slices.Contains(dropped, o) {
			continue // a fresh doc of this id, if any, comes next
		}
		if k < len(cs) && cs[k].id == id && cs[k].same {
			k++
		}
		ms := v.delta.fileStamp(o)
		doc := catalogDoc{id: strings.Clone(id), hash: v.delta.hash(o).String(), mtime: ms[0], size: ms[1], from: o + 1, flag: v.delta.flag(o).String()}
		fillDoc(&doc, v.delta, o, nil)
		d.docs = append(d.docs, doc)
	}
	nextFresh("", true)
	d.live = v.base.len() - len(d.tomb) + len(d.docs)
	ix.analyse(d.docs, d.fresh, set)
	ix.screen(d.docs, d.fresh, set)
	if v.summed {
		d.sums = v.sumLen
		for _, g := range d.tomb {
			if g >= len(v.dead) || !v.dead[g] {
				d.subtract(v.base, g)
			}
		}
		for _, o := range dropped {
			d.subtract(v.delta, o)
		}
		for _, i := range d.fresh {
			for f := range d.sums {
				d.sums[f] += uint64(d.docs[i].terms[f].length)
			}
		}
		d.summed = true
	}
	return d, removed
}

// subtract takes ordinal o of c out of d's live field length sums.
func (d *deltaPlan) subtract(c *catalog, o int) {
	for f := range d.sums {
		d.sums[f] -= uint64(c.fieldLen(textField(f), o))
	}
}

// tombstones lists v's dead base ordinals, increasing.
func (v *view) tombstones() []int {
	if v.tomb != nil || v.ndead == 0 {
		return v.tomb
	}
	out := make([]int, 0, v.ndead)
	for o, dead := range v.dead {
		if dead {
			out = append(out, o)
		}
	}
	return out
}

// vectorLag is what the sidecar lacks of the catalog's lessons since a
// sync left it behind (Options.DeferVectors): the live delta lessons
// without a vector of their content (todo, with their catalog hashes), and
// the lessons no longer live that still have a vector (gone). Both are
// found in the deltas alone, as the fast path assumes of the lessons it
// does not touch: the bases are written together by one merge, and every
// other change goes through a delta.
type vectorLag struct {
	todo, hashes []string
	gone         []string
}

// vectorLag reports the sidecar's lag behind the catalog; ok is false when
// the sidecar does not follow the catalog otherwise, which the counts tell
// (a base of another catalog, or a lesson an embedder failed on before
// lags were read this way): the caller then takes the path that compares
// every lesson.
func (ix *Index) vectorLag() (lag vectorLag, ok bool) {
	v, vec := ix.cat, ix.vec
	if vec.dim <= 0 || ix.vecBad || vec.base.len() == 0 {
		return lag, false
	}
	missing := 0
	for o := 0; o < v.delta.len(); o++ {
		id, want := v.delta.id(o).s, v.delta.hash(o).s
		h, has := vec.hash(id)
		if has && h == want {
			continue
		}
		lag.todo, lag.hashes = append(lag.todo, strings.Clone(id)), append(lag.hashes, strings.Clone(want))
		if !has {
			missing++
		}
	}
	for r, id := range vec.delta.ids {
		g, live := v.find(id)
		switch {
		case !live:
			lag.gone = append(lag.gone, id)
		case g < v.base.len() && !v.hashIs(g, vec.delta.hashes[r]):
			return lag, false // a base lesson's vector of other content: not a lag
		}
	}
	if len(lag.todo) == 0 && len(lag.gone) == 0 && vec.len() == v.len() {
		return lag, true // nothing lags (a sync that embeds left it)
	}
	for _, g := range v.tombstones() {
		id := v.idOf(g)
		if _, live := v.find(id); live {
			continue // rewritten: its delta entry says what it lacks
		}
		if _, has := vec.base.find(id); has && !slices.Contains(lag.gone, id) {
			lag.gone = append(lag.gone, strings.Clone(id))
		}
	}
	return lag, vec.len()-len(lag.gone) == v.len()-missing
}

// CatchUpVectors embeds what syncs that deferred the vectors
// (Options.DeferVectors) left the sidecar without, reading those lessons
// with read, and drops the vectors of lessons they removed: a command
// whose catalog is up to date calls it before it searches with the vector
// arm. refit reports an embedder due for a refit on the lessons as they
// are now (the deferred syncs changed their number past the bound), which
// reads every lesson: the caller syncs from a listing (SyncFiles), which
// does it. A sidecar that does not follow the catalog otherwise is left as
// it is; a sync that compares every lesson mends it.
func (ix *Index) CatchUpVectors(read func(ids []string) []domain.Lesson) (st SyncStats, refit bool, err error) {
	ix.ensureVectors()
	ix.mu.RLock()
	lag, ok := ix.vectorLag()
	ix.mu.RUnlock()
	if !ok || lag.empty() {
		return st, false, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, unlock, err := ix.begin(0)
	if err != nil {
		return st, false, err
	}
	defer unlock()
	// Again under the lock: another process may have caught up meanwhile.
	if lag, ok = ix.vectorLag(); !ok || lag.empty() {
		return st, false, nil
	}
	if ix.refitDue(ix.cat.len()) {
		return st, true, nil
	}
	set, err := newSyncSet(nil, nil)
	if err != nil {
		return st, false, err
	}
	st.Lessons = ix.cat.len()
	return st, false, ix.syncDeltaVectors(&st, set, nil, lag, lag.read(nil, read))
}

// empty reports whether nothing lags.
func (l vectorLag) empty() bool { return len(l.todo) == 0 && len(l.gone) == 0 }

// read reads the lagging lessons the change cs does not hold (those it
// changes are embedded as part of it), keeping those whose content is the
// catalog's: entries for syncDeltaVectors' set.
func (l vectorLag) read(cs []deltaChange, read func([]string) []domain.Lesson) []syncEntry {
	var ids []string
	want := map[string]string{}
	for i, id := range l.todo {
		// A lesson the change reads is embedded as part of it.
		if k, ok := slices.BinarySearchFunc(cs, id, func(c deltaChange, id string) int { return strings.Compare(c.id, id) }); !ok || cs[k].same {
			ids = append(ids, id)
			want[id] = l.hashes[i]
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var out []syncEntry
	got := read(ids)
	for i := range got {
		if h, ok := want[got[i].ID]; ok && ContentHash(got[i]) == h {
			delete(want, got[i].ID)
			out = append(out, syncEntry{id: got[i].ID, hash: h, lesson: &got[i]})
		}
	}
	return out
}

// syncDeltaVectors is syncVectors for a change: the changed lessons whose
// vector is not of their content are embedded into the delta, with those
// the sidecar lagged behind on (lag; lagging holds the ones read for it),
// and the base rows they had or of lessons that went are tombstoned.
func (ix *Index) syncDeltaVectors(st *SyncStats, set *syncSet, cs []deltaChange, lag vectorLag, lagging []syncEntry) error {
	var todo, gone []string
	for i := range cs {
		c := &cs[i]
		switch {
		case c.gone:
			if _, ok := ix.vec.hash(c.id); ok {
				gone = append(gone, c.id)
			}
		case !c.same:
			if h, ok := ix.vec.hash(c.id); !ok || h != set.get(c.id).hash {
				todo = append(todo, c.id)
			}
		}
	}
	gone = append(gone, lag.gone...)
	if len(lagging) > 0 {
		entries := make([]syncEntry, 0, len(set.es)+len(lagging))
		for _, e := range set.es {
			entries = append(entries, *e)
		}
		var err error
		if set, err = newSyncSet(append(entries, lagging...), nil); err != nil {
			return err
		}
		for _, e := range lagging {
			todo = append(todo, e.id)
		}
	}
	if len(todo) == 0 && len(gone) == 0 {
		return nil
	}
	dead := ix.vec.base.deadRows()
	for _, id := range gone {
		ix.removeVector(id, false, &dead)
	}
	for _, id := range todo {
		if r, ok := ix.vec.base.find(id); ok {
			dead = append(dead, r)
		}
	}
	ix.embed(st, set, todo, ix.vec.delta)
	return ix.writeVecDelta(dead)
}
