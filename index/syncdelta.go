package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
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
	// A sync that defers the vectors does not look at them; one that
	// embeds brings every vector in line: the change's alone when the
	// sidecar is in step, the change's and those deferring syncs left
	// behind when it is marked (catchUp), else the path that compares
	// them all.
	behind, marked := []string(nil), false
	if !ix.opts.DeferVectors {
		if behind, marked = ix.behindIDs(); !marked && !ix.vectorsMatch() {
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
		!ix.opts.DeferVectors && mergeDue(ix.vec.delta.len()+len(todo), ix.vec.base.ndead+len(cs), ix.vec.len()+len(todo))) {
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
	if ix.refitDue(liveAfter(v, cs)) {
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
	if ix.opts.DeferVectors {
		var ids []string
		for i := range cs {
			if !cs[i].same {
				ids = append(ids, cs[i].id)
			}
		}
		if err := ix.markVectorsBehind(ids); err != nil {
			return fs, true, err
		}
	}
	if err := ix.writeDelta(&fs.SyncStats, v, d, stamp); err != nil {
		return fs, true, err
	}
	ix.fastSyncs++
	switch {
	case ix.opts.DeferVectors:
		return fs, true, nil
	case marked:
		for i := range cs {
			behind = append(behind, cs[i].id)
		}
		return fs, true, ix.catchUp(&fs.SyncStats, behind, fs.Read, read)
	}
	return fs, true, ix.syncDeltaVectors(&fs.SyncStats, set, cs)
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
	d := &deltaPlan{docs: make([]catalogDoc, 0, v.delta.len()+len(cs))}
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

// vectorsMatch reports whether the sidecar holds a vector of every live
// lesson's content and no other, as the fast path assumes of the lessons
// it does not touch: the counts agree, and every lesson of either delta
// has its vector of its content. (A base sidecar and a base catalog are
// written by one merge; only an embedder's failure since leaves a lesson
// without its vector, and that one is missing from the count.)
func (ix *Index) vectorsMatch() bool {
	v, vec := ix.cat, ix.vec
	if vec.dim <= 0 || ix.vecBad || vec.base.len() == 0 || vec.len() != v.len() {
		return false
	}
	for o := 0; o < v.delta.len(); o++ {
		if h, ok := vec.hash(v.delta.id(o).s); !ok || h != v.delta.hash(o).s {
			return false
		}
	}
	for r, id := range vec.delta.ids {
		if g, ok := v.find(id); !ok || !v.hashIs(g, vec.delta.hashes[r]) {
			return false
		}
	}
	return true
}

// syncDeltaVectors is syncVectors for a change: the changed lessons whose
// vector is not of their content are embedded into the delta, and the
// base rows they had or of lessons that went are tombstoned.
func (ix *Index) syncDeltaVectors(st *SyncStats, set *syncSet, cs []deltaChange) error {
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
	return ix.embedIntoDelta(st, set, todo, gone)
}

// embedIntoDelta drops the vectors of gone and embeds todo (each with its
// lesson in set) into the vector delta, tombstoning the base rows either
// had, and writes the delta.
func (ix *Index) embedIntoDelta(st *SyncStats, set *syncSet, todo, gone []string) error {
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

// vectorsBehindName marks an index whose vectors syncs that deferred
// them (Options.DeferVectors) left behind its catalog, and lists the
// lessons those syncs changed or removed, one id a line ("*" for every
// lesson: a sync from a listing). A deferring sync writes it before its
// catalog delta; a sync that embeds brings those lessons' vectors in line
// (and every lesson's when the sidecar still does not match the catalog,
// vectorsMatch) and removes it. Its absence says that the sidecar followed
// the catalog as of the last sync that embedded.
const vectorsBehindName = "vectors.behind"

// everyLesson is the mark's line for "any lesson may lag".
const everyLesson = "*"

// behindIDs reads the mark: the ids it lists, sorted, and whether it is
// set. A mark that cannot be read lists every lesson.
func (ix *Index) behindIDs() (ids []string, marked bool) {
	if ix.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(ix.dir, vectorsBehindName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		return []string{everyLesson}, true
	}
	ids = strings.Fields(string(b))
	slices.Sort(ids)
	return slices.Compact(ids), true
}

// vectorsBehind reports whether the mark is set.
func (ix *Index) vectorsBehind() bool {
	if ix.dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(ix.dir, vectorsBehindName))
	return err == nil
}

// markVectorsBehind adds ids to the mark, before the catalog moves past
// their vectors. The caller holds the lock.
func (ix *Index) markVectorsBehind(ids []string) error {
	if ix.dir == "" || ix.fallback || len(ids) == 0 {
		return nil
	}
	old, _ := ix.behindIDs()
	if slices.Contains(old, everyLesson) {
		return nil
	}
	all := append(old, ids...)
	slices.Sort(all)
	all = slices.Compact(all)
	if slices.Equal(all, old) {
		return nil
	}
	data := []byte(strings.Join(all, "\n") + "\n")
	if err := fsutil.WriteFileAtomic(filepath.Join(ix.dir, vectorsBehindName), data, 0o644, deltaWrite); err != nil {
		return fmt.Errorf("sync index: %w (delete %s to rebuild the index)", err, ix.dir)
	}
	return nil
}

// caughtUp removes the mark after a sync that brought every vector in
// line, unless an embedder failed on one (the next command tries again).
// The caller holds the lock.
func (ix *Index) caughtUp(st SyncStats) {
	if ix.dir == "" || ix.fallback || st.EmbedError != "" {
		return
	}
	_ = os.Remove(filepath.Join(ix.dir, vectorsBehindName)) // none: nothing lagged
}

// lessonsOf finds a lesson of have by id when it is of the content hash
// the catalog holds (have: the lessons a sync already read).
func lessonsOf(have []domain.Lesson) func(id, hash string) *domain.Lesson {
	byID := make(map[string]*domain.Lesson, len(have))
	for i := range have {
		byID[have[i].ID] = &have[i]
	}
	return func(id, hash string) *domain.Lesson {
		if l := byID[id]; l != nil && ContentHash(*l) == hash {
			return l
		}
		return nil
	}
}

// catchUp brings the vectors of the lessons ids (the mark's, and the
// change's of a sync that embeds) in line with the catalog as it is: each
// live one whose vector is missing or of other content is embedded (taken
// from have when there, read with read otherwise), the vector of each one
// gone is dropped. When the sidecar then still does not match the
// catalog (a lesson an embedder failed on before, a mark that lists every
// lesson), every lesson's vector is compared (syncVectors over all). The
// caller holds ix.mu and the lock.
func (ix *Index) catchUp(st *SyncStats, ids []string, have []domain.Lesson, read func([]string) []domain.Lesson) error {
	if ix.vec.dim <= 0 {
		st.EmbedError = "embedder unavailable (no dimension)"
		return nil
	}
	held := lessonsOf(have)
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	v := ix.cat
	every := slices.Contains(ids, everyLesson)
	var entries []syncEntry
	var gone []string
	if !every {
		for _, id := range ids {
			g, live := v.find(id)
			if !live {
				if _, ok := ix.vec.hash(id); ok {
					gone = append(gone, id)
				}
				continue
			}
			h := v.hash(g)
			if vh, ok := ix.vec.hash(id); ok && vh == h {
				continue
			}
			entries = append(entries, syncEntry{id: id, hash: h, lesson: held(id, h)})
		}
	}
	if len(entries) > 0 || len(gone) > 0 {
		set, err := newSyncSet(entries, read)
		if err != nil {
			return err
		}
		todo := slices.Clone(set.ids)
		set.fill(todo)
		todo = slices.DeleteFunc(todo, func(id string) bool { return set.get(id).lesson == nil })
		if err := ix.embedIntoDelta(st, set, todo, gone); err != nil {
			return err
		}
	}
	if every || st.EmbedError == "" && !ix.vectorsMatch() {
		ix.wholeVecs++
		return ix.syncVectorsWhole(st, have, read)
	}
	ix.caughtUp(*st)
	return nil
}

// syncVectorsWhole brings the sidecar in line with the catalog as it is:
// each live lesson whose vector is missing or of other content is embedded
// (taken from have when there, read with read otherwise), and the vectors
// of lessons no longer live are dropped (syncVectors over every lesson).
// The caller holds ix.mu and the lock.
func (ix *Index) syncVectorsWhole(st *SyncStats, have []domain.Lesson, read func([]string) []domain.Lesson) error {
	v := ix.cat
	ords := v.ordered()
	entries := make([]syncEntry, len(ords))
	held := lessonsOf(have)
	for i, g := range ords {
		id, h := v.idOf(g), v.hash(g)
		entries[i] = syncEntry{id: id, hash: h, lesson: held(id, h)}
	}
	set, err := newSyncSet(entries, read)
	if err != nil {
		return err
	}
	if err := ix.syncVectors(st, set, false, false); err != nil {
		return err
	}
	ix.caughtUp(*st)
	return nil
}

// CatchUpVectors brings the vectors in line with a catalog that is up to
// date but that syncs which deferred the vectors (Options.DeferVectors)
// moved past them: a command that searches with the vector arm calls it
// first, and read reads the lessons to embed. It costs a stat when nothing
// lags, and what the deferring syncs changed when something does. refit
// reports an embedder due for a refit on the lessons as they are now,
// which reads every lesson: the caller syncs from a listing (SyncFiles),
// which does it.
func (ix *Index) CatchUpVectors(read func(ids []string) []domain.Lesson) (st SyncStats, refit bool, err error) {
	if ix.opts.DeferVectors || !ix.vectorsBehind() {
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
	ids, marked := ix.behindIDs()
	if !marked {
		return st, false, nil
	}
	if ix.refitDue(ix.cat.len()) {
		return st, true, nil
	}
	st.Lessons = ix.cat.len()
	return st, false, ix.catchUp(&st, ids, nil, read)
}
