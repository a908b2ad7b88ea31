package index

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// syncSet is the lessons a sync keeps, sorted by id: no map of every
// lesson (a sync of 100,000 lessons would pay for it on every change).
type syncSet struct {
	ids  []string
	es   []*syncEntry // es[i].id == ids[i]
	read func([]string) []domain.Lesson
}

func newSyncSet(entries []syncEntry, read func([]string) []domain.Lesson) (*syncSet, error) {
	s := &syncSet{es: make([]*syncEntry, len(entries)), ids: make([]string, len(entries)), read: read}
	for i := range entries {
		s.es[i] = &entries[i]
	}
	byID := func(a, b *syncEntry) int { return strings.Compare(a.id, b.id) }
	if !slices.IsSortedFunc(s.es, byID) {
		slices.SortStableFunc(s.es, byID)
	}
	for i, e := range s.es {
		if i > 0 && s.ids[i-1] == e.id {
			return nil, fmt.Errorf("sync index: duplicate lesson id %q", e.id)
		}
		s.ids[i] = e.id
	}
	return s, nil
}

// get is id's entry, or nil.
func (s *syncSet) get(id string) *syncEntry {
	if i, ok := slices.BinarySearch(s.ids, id); ok {
		return s.es[i]
	}
	return nil
}

// fill reads the lessons of todo that an entry lacks (when read is set),
// keeping those whose content hash is the entry's.
func (s *syncSet) fill(todo []string) {
	var missing []string
	for _, id := range todo {
		if s.get(id).lesson == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 || s.read == nil {
		return
	}
	got := s.read(missing)
	for i := range got {
		if e := s.get(got[i].ID); e != nil && e.lesson == nil && ContentHash(got[i]) == e.hash {
			e.lesson = &got[i]
		}
	}
}

// apply makes entries the index's content. The catalog gets a new delta
// segment of the lessons added or changed (writeDelta), or, when no delta
// can serve (no base yet, a corrupt or other-screen catalog, a refit) or
// the delta is due for a merge and merging is allowed, a new base of every
// lesson (writeBase). The vectors of new or changed lessons are embedded
// likewise (syncVectors). read, when set, supplies the lessons an entry
// lacks when their text is needed; whole has the base's checksum checked
// (see verified). The caller holds ix.mu and the lock.
func (ix *Index) apply(st *SyncStats, entries []syncEntry, read func([]string) []domain.Lesson, stamp string, whole bool) error {
	set, err := newSyncSet(entries, read)
	if err != nil {
		return err
	}
	st.Lessons = len(set.ids)
	v := ix.verified(st, whole)
	refit := false
	if !ix.opts.DeferVectors {
		ix.vectorsVerified(st)
		refit = ix.refitDue(len(set.ids))
	}
	full := ix.catBad || v.screen != ix.opts.ScreenID || v.base.len() == 0
	merged := false
	if !full {
		d, err := ix.planDelta(v, set)
		if err != nil {
			return err
		}
		due := ix.forceMerge || mergeDue(len(d.docs), len(d.tomb), d.live)
		if due && !ix.opts.DeferMerge && ix.canMerge(v, set) {
			full = true
		} else {
			st.MergeDue = due
			if ix.opts.DeferVectors {
				if err := ix.markVectorsBehind(changedIn(v, d, set)); err != nil {
					return err
				}
			}
			if err := ix.writeDelta(st, v, d, stamp); err != nil {
				return err
			}
		}
	}
	if ix.opts.DeferVectors {
		if !full {
			return nil // the sidecar lags: see Options.DeferVectors
		}
		// New bases are written together: the vectors follow.
		ix.ensureVectors()
		ix.vectorsVerified(st)
		refit = ix.refitDueAt(len(set.ids))
	}
	if full {
		// A new base copies the old base's postings: its checksum is
		// checked first (a corrupt base is rebuilt from the lessons).
		v = ix.verified(st, true)
		if !serialForTest && ix.vectorsApart(set, refit) {
			err = ix.writeBoth(st, v, set, stamp, refit)
		} else if merged, err = ix.writeBase(st, v, set, stamp); err == nil {
			err = ix.syncVectors(st, set, refit, merged)
		}
	} else {
		err = ix.syncVectors(st, set, refit, merged)
	}
	if err == nil {
		// Every lesson's vector was compared with the catalog.
		ix.caughtUp(*st)
	}
	return err
}

// changedIn lists the lessons d changes against v: those it analyses anew
// and those of v that set no longer holds.
func changedIn(v *view, d *deltaPlan, set *syncSet) []string {
	var ids []string
	for _, i := range d.fresh {
		ids = append(ids, d.docs[i].id)
	}
	if d.removed > 0 {
		for _, g := range v.ordered() {
			if id := v.idOf(g); set.get(id) == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// vectorsApart reports whether syncVectors can run beside writeBase: it
// writes a new sidecar base whatever writeBase does (no sidecar yet, a
// dropped one, a refit), and every lesson is read, so neither reads any
// more (set.fill) and they share nothing but set, which both only read.
func (ix *Index) vectorsApart(set *syncSet, refit bool) bool {
	if ix.vec.dim <= 0 || !(ix.vecBad || ix.vec.base.len() == 0 || refit) {
		return false
	}
	for _, e := range set.es {
		if e.lesson == nil {
			return false
		}
	}
	return true
}

// writeBoth is writeBase and syncVectors at once (a rebuild: the catalog's
// encoding and the sidecar's, each mostly one goroutine's work, overlap
// the other's analysis and embedding). They write different fields of st.
func (ix *Index) writeBoth(st *SyncStats, v *view, set *syncSet, stamp string, refit bool) error {
	var verr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		verr = ix.syncVectors(st, set, refit, true)
	}()
	_, err := ix.writeBase(st, v, set, stamp)
	<-done
	if err != nil {
		return err
	}
	return verr
}

// refitDue reports whether the embedder is corpus-fitted and due for a
// refit on a corpus of n lessons (an n-gram embedder without IDF never is:
// its Fit does nothing).
func (ix *Index) refitDue(n int) bool {
	// A sync that defers the vectors leaves a refit to one that embeds.
	return !ix.opts.DeferVectors && ix.refitDueAt(n)
}

// refitDueAt is refitDue whatever the sync defers: a sync that writes new
// bases syncs the vectors, refit included.
func (ix *Index) refitDueAt(n int) bool {
	if ng, ok := ix.emb.(*NGramEmbedder); ok && !ng.useIDF {
		return false
	}
	f, ok := ix.emb.(CorpusFitter)
	return ok && ix.vec.dim > 0 && needsRefit(f.FittedDocs(), n)
}

// canMerge reports whether every lesson the delta holds can be read again
// (a merge re-analyses them: the base keeps only its own postings).
func (ix *Index) canMerge(v *view, set *syncSet) bool {
	var need []string
	for d := 0; d < v.delta.len(); d++ {
		if id := v.delta.id(d).String(); set.get(id) != nil {
			need = append(need, id)
		}
	}
	set.fill(need)
	for _, id := range need {
		if set.get(id).lesson == nil {
			return false
		}
	}
	return true
}

// deltaPlan is a delta segment to write.
type deltaPlan struct {
	docs    []catalogDoc // by id; from refers to the old delta
	fresh   []int        // docs analysed anew
	tomb    []int        // base ordinals no longer live
	live    int
	removed int
	// sums, when summed, are the live lessons' field length sums, moved by
	// the change from the old delta's (else writeDelta counts them).
	sums   [numFields]uint64
	summed bool
}

// planDelta places each lesson: unchanged in the base (it stays there),
// unchanged in the delta (its postings are copied from the old delta), or
// new or changed (analysed into the new delta; the base ordinal it had is
// tombstoned). A lesson whose file stamp moved without its content goes
// to the delta too: the base's records are never rewritten.
func (ix *Index) planDelta(v *view, set *syncSet) (*deltaPlan, error) {
	d := &deltaPlan{}
	keep := make([]bool, v.base.len())
	matched := 0
	at := v.lookup(set.ids)
	for i, id := range set.ids {
		e := set.es[i]
		g, ok := at[i], at[i] >= 0
		same := ok && v.hashIs(g, e.hash) && v.fileStamp(g) == [2]int64{e.file.ModTime, e.file.Size}
		if ok {
			matched++
		}
		if same && g < v.base.len() {
			keep[g] = true
			continue
		}
		doc := catalogDoc{id: id, hash: e.hash, mtime: e.file.ModTime, size: e.file.Size}
		if same {
			o := g - v.base.len()
			doc.from, doc.flag = o+1, v.delta.flag(o).String()
			fillDoc(&doc, v.delta, o, e.lesson)
		} else {
			if e.lesson == nil {
				return nil, fmt.Errorf("sync index: lesson %q is neither read nor held", id)
			}
			fillDoc(&doc, nil, 0, e.lesson)
			d.fresh = append(d.fresh, len(d.docs))
		}
		d.docs = append(d.docs, doc)
	}
	for o, k := range keep {
		if !k {
			d.tomb = append(d.tomb, o)
		}
	}
	d.removed = v.len() - matched
	d.live = v.base.len() - len(d.tomb) + len(d.docs)
	ix.analyse(d.docs, d.fresh, set)
	ix.screen(d.docs, d.fresh, set)
	return d, nil
}

// fillDoc sets doc's title, gist, type, reach and links from l, or from
// ordinal o of c when l is nil. Those read from c stay in place (no copy of
// every lesson in a merge): doc lives only until encodeCatalog has copied
// them, before the sync releases c.
func fillDoc(doc *catalogDoc, c *catalog, o int, l *domain.Lesson) {
	if l != nil {
		doc.title, doc.gist, doc.typ, doc.reach, doc.links = l.Title, l.Gist, l.Type, l.Reach, l.Links
		if !l.Created.IsZero() {
			doc.created = l.Created.UnixMilli()
		}
		return
	}
	doc.created = c.created(o)
	rec := c.rec(o)
	doc.title, doc.gist = c.str(rec, slotTitle).s, c.str(rec, slotGist).s
	doc.typ, doc.reach = c.str(rec, slotType).s, c.str(rec, slotReach).s
	doc.links = c.lessonLinks(o)
}

// analyse runs the lexical analysis of docs[i] for i in fresh.
func (ix *Index) analyse(docs []catalogDoc, fresh []int, set *syncSet) {
	var caches [parallelParts]*termCache
	parallel(len(fresh), func(part, lo, hi int) {
		if caches[part] == nil {
			caches[part] = newTermCache()
		}
		c := caches[part]
		for _, i := range fresh[lo:hi] {
			l := set.get(docs[i].id).lesson
			docs[i].terms = analyzeDocWith(c, lexDoc{Title: l.Title, Gist: l.Gist, Body: l.Body, Tags: l.Tags})
		}
	})
}

// screen asks Options.Screen about docs[i] for i in todo.
func (ix *Index) screen(docs []catalogDoc, todo []int, set *syncSet) {
	screen := ix.opts.Screen
	if screen == nil {
		return
	}
	parallel(len(todo), func(_, lo, hi int) {
		for _, i := range todo[lo:hi] {
			docs[i].flag = screen(*set.get(docs[i].id).lesson)
		}
	})
}

// writeDelta writes the delta segment d over v's base (when anything
// changed) and makes it the index's catalog.
func (ix *Index) writeDelta(st *SyncStats, v *view, d *deltaPlan, stamp string) error {
	st.Indexed, st.Removed, st.DeltaDocs = len(d.fresh), d.removed, len(d.docs)
	if len(d.fresh) == 0 && d.removed == 0 && stamp == v.stamp && len(d.tomb) == v.ndead {
		return nil
	}
	raw, err := encodeCatalog(d.docs, stamp, ix.opts.ScreenID, v.delta)
	if err != nil {
		return fmt.Errorf("sync index: %w", err)
	}
	dcat, err := parseCatalog(raw)
	if err != nil {
		return fmt.Errorf("sync index: %w", err)
	}
	var dead []bool
	if len(d.tomb) > 0 {
		dead = make([]bool, v.base.len())
		for _, o := range d.tomb {
			dead[o] = true
		}
	}
	ids := make(map[string]bool, len(d.docs))
	for _, doc := range d.docs {
		ids[doc.id] = true
	}
	back := findBacklinks(v.base, dead, ids)
	sums := d.sums
	if !d.summed {
		sums = liveSums(v.base, dcat, dead)
	}
	next, err := deltaView(v.base, dcat, d.live, sums, d.tomb, back)
	if err != nil {
		return fmt.Errorf("sync index: %w", err)
	}
	if ix.dir != "" && !ix.fallback {
		// The head and the catalog go to the file one after the other:
		// the catalog, most of the file, is not copied again to join them.
		head := deltaHeader(v.base, d.live, sums, d.tomb, back)
		write := func(f *os.File) error {
			if _, err := f.Write(head); err != nil {
				return err
			}
			_, err := f.Write(raw)
			return err
		}
		// Not synced (deltaWrite): a delta lost or torn by a power cut is
		// refused at open, and the older state it leaves is synced again.
		if err := fsutil.WriteFileAtomicFunc(filepath.Join(ix.dir, deltaName), 0o644, write, deltaWrite); err != nil {
			return fmt.Errorf("sync index: %w (delete %s to rebuild the index)", err, ix.dir)
		}
	}
	// The new view takes over the base; the old delta goes.
	v.delta.close()
	if v.relRaw != nil {
		v.relRaw()
	}
	ix.cat, ix.catBad = next, false
	ix.infosOnce, ix.infos = sync.Once{}, nil
	return nil
}

// writeBase writes a new base of every lesson (when anything changed) and
// drops the delta: the base's unchanged lessons keep their postings, the
// rest is analysed. merged reports that a base was written.
func (ix *Index) writeBase(st *SyncStats, v *view, set *syncSet, stamp string) (merged bool, err error) {
	docs := make([]catalogDoc, len(set.ids))
	var fresh, unscreened []int
	sameScreen := v.screen == ix.opts.ScreenID
	var need []string
	at := v.lookup(set.ids)
	for i, id := range set.ids {
		if g := at[i]; g < 0 || g >= v.base.len() || !v.hashIs(g, set.es[i].hash) {
			need = append(need, id)
		}
	}
	set.fill(need)
	matched := 0
	for i, id := range set.ids {
		e := set.es[i]
		docs[i] = catalogDoc{id: id, hash: e.hash, mtime: e.file.ModTime, size: e.file.Size}
		g, ok := at[i], at[i] >= 0
		if ok {
			matched++
		}
		switch {
		case ok && g < v.base.len() && v.hashIs(g, e.hash):
			docs[i].from = g + 1 // its postings and lengths stay
			if sameScreen || e.lesson == nil {
				docs[i].flag = v.flag(g)
			} else {
				unscreened = append(unscreened, i)
			}
			fillDoc(&docs[i], v.base, g, e.lesson)
			continue
		case e.lesson == nil:
			return false, fmt.Errorf("sync index: lesson %q is neither read nor held", id)
		case ok && v.hashIs(g, e.hash) && sameScreen:
			docs[i].flag = v.flag(g) // held by the delta: analysed again, verdict kept
		default:
			unscreened = append(unscreened, i)
		}
		fillDoc(&docs[i], nil, 0, e.lesson)
		fresh = append(fresh, i)
	}
	ix.analyse(docs, fresh, set)
	ix.screen(docs, unscreened, set)
	removed := v.len() - matched
	st.Indexed, st.Removed = len(fresh), removed
	changed := len(fresh) > 0 || len(unscreened) > 0 || removed > 0 || v.stamp != stamp || ix.catBad ||
		!sameScreen || v.delta.len() > 0 || v.ndead > 0 || !sameFiles(v.base, docs)
	if !changed {
		return false, nil
	}
	raw, err := encodeCatalog(docs, stamp, ix.opts.ScreenID, v.base)
	if err != nil {
		return false, fmt.Errorf("sync index: %w", err)
	}
	next, err := parseCatalog(raw)
	if err != nil {
		return false, fmt.Errorf("sync index: %w", err)
	}
	if ix.dir != "" && !ix.fallback {
		if err := fsutil.WriteFileAtomic(filepath.Join(ix.dir, catalogName), raw, 0o644); err != nil {
			return false, fmt.Errorf("sync index: %w (delete %s to rebuild the index)", err, ix.dir)
		}
		if err := removeDelta(ix.dir); err != nil {
			return false, fmt.Errorf("sync index: %w", err)
		}
	}
	v.close()
	ix.cat, ix.catBad = baseView(next), false
	ix.infosOnce, ix.infos = sync.Once{}, nil
	st.Merged = true
	return true, nil
}

// syncVectors brings the vector arm in line with set: a refit re-embeds
// every lesson into a new base; otherwise the new or changed lessons are
// embedded into the delta, which is folded into a new base when the
// catalog was merged (merged) or when the delta is due and merging is
// allowed. An embedder without a dimension (an endpoint that could not be
// reached to probe it) leaves the sidecar untouched.
func (ix *Index) syncVectors(st *SyncStats, set *syncSet, refit, merged bool) error {
	if ix.vec.dim <= 0 {
		st.EmbedError = "embedder unavailable (no dimension)"
		return nil
	}
	changed := ix.vecBad
	full := ix.vecBad || merged || ix.vec.base.len() == 0
	ix.vecBad = false
	if refit {
		if err := ix.refit(set); err != nil {
			return err
		}
		st.Refit, changed, full = true, true, true
	}
	hashes, gone := ix.vec.join(set.ids)
	var todo []string
	for i, id := range set.ids {
		if hashes[i] != set.es[i].hash {
			todo = append(todo, id)
		}
	}
	set.fill(todo)
	todo = slices.DeleteFunc(todo, func(id string) bool { return set.get(id).lesson == nil })
	delta := ix.vec.delta.len() + len(todo)
	if !full && !ix.opts.DeferMerge && (ix.forceMerge || mergeDue(delta, ix.vec.base.ndead+len(gone)+len(todo), ix.vec.len())) {
		full = true
	}
	target := ix.vec.delta
	if full {
		changed = changed || ix.vec.delta.len() > 0 || ix.vec.base.ndead > 0
		ix.vec.base.fold(ix.vec.delta)
		ix.vec.delta = newVectorStore(ix.vec.base.embedderID, ix.vec.dim)
		target = ix.vec.base
	}
	dead := ix.vec.base.deadRows()
	for _, id := range gone {
		ix.removeVector(id, full, &dead)
	}
	for _, id := range todo {
		if !full {
			if r, ok := ix.vec.base.find(id); ok {
				dead = append(dead, r)
			}
		}
	}
	ix.embed(st, set, todo, target)
	changed = changed || st.Embedded > 0 || len(gone) > 0 || len(todo) > 0
	if !changed {
		return nil
	}
	if full {
		ix.vec.base.setDead(nil)
		if ix.dir != "" && !ix.fallback {
			if err := ix.vec.base.save(filepath.Join(ix.dir, sidecarName)); err != nil {
				return fmt.Errorf("sync index: %w", err)
			}
			return ix.removeVecDelta()
		}
		return nil
	}
	return ix.writeVecDelta(dead)
}

// writeVecDelta marks the base's dead rows (dead may repeat and be in any
// order) and writes the vector delta with them.
func (ix *Index) writeVecDelta(dead []int) error {
	sort.Ints(dead)
	dead = slices.Compact(dead)
	ix.vec.base.setDead(dead)
	if ix.dir == "" || ix.fallback {
		return nil
	}
	file, err := encodeVecDelta(ix.vec.base, ix.vec.delta, dead)
	if err == nil {
		err = fsutil.WriteFileAtomic(filepath.Join(ix.dir, vecDeltaName), file, 0o644, deltaWrite)
	}
	if err != nil {
		return fmt.Errorf("sync index: %w (delete %s to rebuild the index)", err, ix.dir)
	}
	return nil
}

// removeVector drops id's vector: from the delta, and from the base (a
// mutable base in a merge, a tombstone otherwise).
func (ix *Index) removeVector(id string, full bool, dead *[]int) {
	ix.vec.delta.remove(id)
	if full {
		ix.vec.base.remove(id)
		return
	}
	if r, ok := ix.vec.base.find(id); ok {
		*dead = append(*dead, r)
	}
}

// refit fits the corpus embedder on every lesson and empties the sidecar.
func (ix *Index) refit(set *syncSet) error {
	f := ix.emb.(CorpusFitter)
	set.fill(set.ids)
	var ls []*domain.Lesson
	for _, e := range set.es {
		if l := e.lesson; l != nil {
			ls = append(ls, l)
		}
	}
	if ng, ok := ix.emb.(*NGramEmbedder); ok {
		// Fitted on the lessons' parts, without joining their texts.
		ng.fit(len(ls), func(g *gramScratch, hs []uint32, i int) []uint32 {
			return ng.lessonGrams(g, hs, ls[i].Title, ls[i].Gist, ls[i].Body, ls[i].Tags)
		})
	} else {
		texts := make([]string, len(ls))
		for i, l := range ls {
			texts[i] = lessonText(l.Title, l.Gist, l.Body, l.Tags)
		}
		if err := f.Fit(texts); err != nil {
			return fmt.Errorf("sync index: fit embedder: %w", err)
		}
	}
	ix.vec.base.setDead(nil)
	ix.vec.base.reset()
	ix.vec.delta = newVectorStore(ix.vec.base.embedderID, ix.vec.dim)
	ix.vec.base.state = f.State()
	return nil
}

// embed embeds the lessons of todo in batches into target. An embedder
// error stops it: st.EmbedError says so and the next sync retries.
func (ix *Index) embed(st *SyncStats, set *syncSet, todo []string, target *vectorStore) {
	if len(todo) > 0 {
		target.reserve(len(todo))
	}
	ng, _ := ix.emb.(*NGramEmbedder)
	var rows [][]float32 // the n-gram embedder's, reused from batch to batch
	// Sized to the work: a Stop's sync embeds one lesson, not a batch.
	batchLen := min(ix.opts.EmbedBatch, len(todo))
	hashes := make([]string, 0, batchLen)
	for start := 0; start < len(todo); start += ix.opts.EmbedBatch {
		batch := todo[start:min(start+ix.opts.EmbedBatch, len(todo))]
		var vecs [][]float32
		var err error
		if ng != nil {
			// Embedded from the lessons' parts into the same rows each
			// batch: no text joined, no vectors allocated.
			if rows == nil {
				block := make([]float32, batchLen*ng.dim)
				rows = make([][]float32, batchLen)
				for i := range rows {
					rows[i] = block[i*ng.dim : (i+1)*ng.dim : (i+1)*ng.dim]
				}
			}
			vecs = rows[:len(batch)]
			for _, v := range vecs {
				clear(v)
			}
			ng.embedRows(vecs, func(g *gramScratch, hs []uint32, i int) []uint32 {
				l := set.get(batch[i]).lesson
				return ng.lessonGrams(g, hs, l.Title, l.Gist, l.Body, l.Tags)
			})
		} else {
			texts := make([]string, len(batch))
			for i, id := range batch {
				l := set.get(id).lesson
				texts[i] = lessonText(l.Title, l.Gist, l.Body, l.Tags)
			}
			vecs, err = ix.emb.Embed(texts)
		}
		if err == nil && len(vecs) != len(batch) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(batch))
		}
		for i := range vecs {
			if err == nil && len(vecs[i]) != ix.vec.dim {
				err = fmt.Errorf("embedder returned dim %d, want %d", len(vecs[i]), ix.vec.dim)
			}
		}
		if err != nil {
			st.EmbedError = err.Error()
			return
		}
		hashes = hashes[:0]
		for i, id := range batch {
			hashes = append(hashes, set.get(id).hash)
			vecs[i] = normalized(vecs[i])
		}
		target.putRows(batch, hashes, vecs)
		st.Embedded += len(batch)
	}
}

// removeVecDelta drops the vector delta after a new base was written.
func (ix *Index) removeVecDelta() error {
	if err := removeFile(filepath.Join(ix.dir, vecDeltaName)); err != nil {
		return fmt.Errorf("sync index: %w (delete %s to rebuild the index)", err, ix.dir)
	}
	return nil
}
