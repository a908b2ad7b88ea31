package index

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// DefaultLockWait is how long Sync waits for another process writing the
// same index before it works in memory instead (SyncStats.FallbackLexical). A hook must
// never hang on it; a query never takes the lock at all.
const DefaultLockWait = 250 * time.Millisecond

// refitDrift is the relative change in lesson count after which a corpus
// fitted embedder (the n-gram IDF) is refitted and every vector re-embedded.
// Below it, new lessons are embedded with the existing weights.
const refitDrift = 0.2

// Options configures an Index. The zero value is usable.
type Options struct {
	// LockWait bounds Sync's wait for another process writing the index
	// (default DefaultLockWait); past it the synced index lives in memory
	// only, for this process.
	LockWait time.Duration
	// EmbedBatch is the number of lessons embedded per Embed call
	// (default 256).
	EmbedBatch int
	// Screen, when set, is called on each new or changed lesson a sync
	// reads (concurrently): a non-empty answer says why the lesson must
	// never be quoted to an agent (a secret, instruction-like text). The
	// catalog keeps the verdict, so Search leaves such lessons out without
	// scanning anything, and Flag and Flagged report them.
	Screen func(domain.Lesson) string
	// ScreenID names the screen's rules (their version): a catalog whose
	// verdicts another screen gave is rebuilt by the next sync.
	ScreenID string
	// DeferMerge keeps Sync from merging the delta segments into new bases
	// when they are due (a hook: its sync costs what changed, and
	// SyncStats.MergeDue tells it to leave the merge to a background
	// process). Without it a sync merges when the deltas pass their bound.
	DeferMerge bool
	// LazyVectors leaves the vector sidecar unread at Open when its header
	// says it is this embedder's and not empty (a hook: its search has no
	// vector arm, and one that asks nothing needs no vectors at all). It is
	// read by the first call that needs it: a sync, a search with the
	// vector arm or one that diversifies, MergeDue, Pending. Stale then
	// knows the sidecar by its header alone.
	LazyVectors bool
	// DeferVectors leaves the vector sidecar as it is when a sync writes a
	// delta (a hook: its search has no vector arm, so it neither embeds
	// nor refits, and a configured embedder endpoint is never called on
	// its clock). The lessons it changed have no vector of their content
	// until a sync without it embeds them; such a sync finds them from the
	// deltas (vectorLag), and CatchUpVectors does it for an index whose
	// catalog is otherwise up to date. A sync that must write new bases
	// still syncs the vectors.
	DeferVectors bool
}

// SyncStats says what a Sync changed.
type SyncStats struct {
	Lessons         int  `json:"lessons"`
	Indexed         int  `json:"indexed"`             // lessons (re)analysed into the lexical postings
	Removed         int  `json:"removed"`             // lessons deleted from both arms
	Embedded        int  `json:"embedded"`            // lessons (re)embedded
	Refit           bool `json:"refit"`               // the embedder was refitted on the corpus
	LexicalRebuilt  bool `json:"lexical_rebuilt"`     // the catalog was missing, corrupt or of another version
	SidecarRebuilt  bool `json:"sidecar_rebuilt"`     // the sidecar was dropped (other embedder, corrupt)
	InMemory        bool `json:"in_memory"`           // the index lives in memory only
	FallbackLexical bool `json:"fallback_lexical"`    // another process was writing: the result was not saved
	DeltaDocs       int  `json:"delta_docs"`          // lessons the catalog's delta segment holds after the sync
	Merged          bool `json:"merged,omitempty"`    // a new catalog base was written (deltas merged)
	MergeDue        bool `json:"merge_due,omitempty"` // the deltas passed their bound but DeferMerge kept them
	// EmbedError is set when the embedder failed (an endpoint down): the
	// lexical arm is in sync, the vector arm lacks the lessons not embedded
	// and the next Sync retries them.
	EmbedError string `json:"embed_error,omitempty"`
}

// Index is borg's search state: the catalog (lesson records, link graph and
// lexical postings, catalog.go) and the vector sidecar of one embedder, on
// disk under the directory Open was given or in memory. It is safe for
// concurrent use by one process. Any number of processes may search the same
// directory: the files are replaced by rename, never changed in place, and
// only Sync takes the directory's write lock (bounded by Options.LockWait).
type Index struct {
	mu       sync.RWMutex
	dir      string // "" in memory
	emb      Embedder
	opts     Options
	closed   bool
	fallback bool  // the last Sync could not take the write lock
	readOnly bool  // the index's directory cannot be written: syncs stay in memory
	cat      *view // the catalog's segments (segment.go)
	catBad   bool  // the catalog was missing or unreadable at Open
	vec      *vecView
	vecBad   bool // the sidecar was dropped at Open
	// vecPending says that Open left the sidecar unread (LazyVectors);
	// ensureVectors reads it, under vecMu. Whatever reads vec or vecBad,
	// or embeds, calls ensureVectors first.
	vecPending atomic.Bool
	vecMu      sync.Mutex

	forceMerge bool   // tests: the next sync merges whatever its deltas hold
	noFastSync bool   // tests: SyncChanged never takes syncDelta
	fastSyncs  int    // tests: the syncs syncDelta did
	wholeVecs  int    // tests: the catch-ups that compared every vector
	sig        string // the index files' stat signature when read (filesSig)

	infosOnce sync.Once
	infos     []domain.LessonInfo // Infos, built on first use
}

// Open opens the index stored in dir (created when missing), using emb for
// the vector arm. The catalog is mapped and read where a query touches it;
// the sidecar is read whole, or, with Options.LazyVectors and a header that
// fits, when first needed. A catalog of another version is rebuilt by the
// next Sync; a sidecar of another embedder is dropped.
func Open(dir string, emb Embedder, opts Options) (*Index, error) {
	if dir == "" {
		return nil, errors.New("open index: empty directory (use NewMemory)")
	}
	if emb == nil {
		return nil, errors.New("open index: nil embedder")
	}
	opts = opts.withDefaults()
	ix := &Index{dir: dir, emb: emb, opts: opts}
	if err := os.MkdirAll(dir, 0o755); fsutil.ReadOnly(err) {
		// A store this user cannot write (a read-only mount, another
		// user's): searches sync in memory and save nothing.
		ix.readOnly = true
	} else if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	var ok bool
	ix.sig = filesSig(dir)
	ix.cat, ok = readView(dir)
	ix.catBad = !ok || ix.cat.screen != opts.ScreenID
	if opts.LazyVectors && opts.DeferVectors {
		// Nothing here asks the embedder (an endpoint probed for its
		// dimension would be called on the hook's clock): the sidecar is
		// read, and checked against it, if a call needs the vectors.
		ix.vec = newVecView(newVectorStore("", 0))
		ix.vecPending.Store(true)
		return ix, nil
	}
	ix.vec = newVecView(newVectorStore(emb.ID(), max(emb.Dim(), 0)))
	switch {
	case emb.Dim() <= 0:
		// (An unavailable embedder keeps whatever sidecar is on disk for later.)
	case opts.LazyVectors && sidecarLooksFit(dir, emb, ix.cat.len()):
		ix.vecPending.Store(true)
	default:
		ix.loadVectors()
	}
	return ix, nil
}

// ensureVectors reads the sidecar Open left unread (Options.LazyVectors).
// It may be called with ix.mu held, for reading or writing.
func (ix *Index) ensureVectors() {
	if !ix.vecPending.Load() {
		return
	}
	ix.vecMu.Lock()
	defer ix.vecMu.Unlock()
	if ix.vecPending.Load() {
		if dim, id := ix.vectorShape(); dim > 0 {
			ix.loadVectorsAt(dim, id)
		} else {
			// An unavailable embedder keeps the sidecar for later, as
			// Open does.
			ix.vec = newVecView(newVectorStore(id, 0))
		}
		ix.vecPending.Store(false)
	}
}

// sidecarHead is what the sidecar in dir says of itself in its first
// bytes: its dimension, its count of vectors and its embedder's id; ok is
// false when it is missing or not a sidecar of a format borg reads.
func sidecarHead(dir string) (dim, count int, id string, ok bool) {
	f, err := os.Open(filepath.Join(dir, sidecarName))
	if err != nil {
		return 0, 0, "", false
	}
	defer f.Close()
	head := make([]byte, len(sidecarMagic)+16+maxSidecarID)
	n, _ := io.ReadFull(f, head)
	r := &sliceReader{b: head[:n], off: len(sidecarMagic)}
	if n < len(sidecarMagic) || string(head[:len(sidecarMagic)]) != sidecarMagic {
		return 0, 0, "", false
	}
	format, d, c := r.u32(), r.u32(), r.u32()
	id = string(r.blob32(maxSidecarID))
	ok = r.err == nil && (format == sidecarFormat || format == sidecarFormatNoOffsets)
	return int(d), int(c), id, ok
}

// sidecarLooksFit reports whether the sidecar in dir starts as one of emb
// that loadVectors would keep: its magic, format, dimension and embedder,
// and a vector at least when the catalog holds lessons. What only a full
// read finds (a checksum, a torn delta) is found when it is read.
func sidecarLooksFit(dir string, emb Embedder, lessons int) bool {
	dim, count, id, ok := sidecarHead(dir)
	return ok && dim == emb.Dim() && id == emb.ID() && (count > 0 || lessons == 0)
}

// vectorShape is the dimension and embedder id the sidecar is read at:
// the embedder's; or, for an index that defers the vectors (a hook, which
// reads vectors only to diversify its hits) and an embedder that would
// call its endpoint to learn its dimension, those the sidecar says it was
// written at when its id is the embedder's at that dimension (0 and ""
// when it is not), so that no call is made on the hook's clock.
func (ix *Index) vectorShape() (dim int, id string) {
	if l, ok := ix.emb.(lazyDimEmbedder); ok && ix.opts.DeferVectors && l.KnownDim() <= 0 {
		if d, _, sid, ok := sidecarHead(ix.dir); ok && d > 0 && d <= maxSidecarDim && sid == l.IDWith(d) {
			return d, sid
		}
		return 0, ""
	}
	return ix.emb.Dim(), ix.emb.ID()
}

// loadVectors (re)reads the sidecar's segments and hands the embedder the
// corpus state they were embedded with. A sidecar dropped (another
// embedder or format, corrupt), a corrupt delta, or vectors missing beside
// lessons must be rebuilt: Stale says so.
func (ix *Index) loadVectors() { ix.loadVectorsAt(ix.emb.Dim(), ix.emb.ID()) }

// loadVectorsAt is loadVectors with the embedder's dimension and id given.
func (ix *Index) loadVectorsAt(dim int, id string) {
	vec, verr := loadVecView(ix.dir, id, dim)
	bad := verr != nil || (vec.len() == 0 && ix.cat.len() > 0)
	if f, ok := ix.emb.(CorpusFitter); ok && len(vec.base.state) > 0 {
		if err := f.LoadState(vec.base.state); err != nil {
			vec.close()
			vec, bad = newVecView(newVectorStore(id, dim)), true
		}
	}
	old := ix.vec
	ix.vec, ix.vecBad = vec, bad
	old.close()
}

// NewMemory returns an index that lives in memory only (tests, evaluation,
// and callers without a store).
func NewMemory(emb Embedder, opts Options) (*Index, error) {
	if emb == nil {
		return nil, errors.New("new memory index: nil embedder")
	}
	return &Index{emb: emb, opts: opts.withDefaults(), cat: emptyView(),
		vec: newVecView(newVectorStore(emb.ID(), emb.Dim()))}, nil
}

func (o Options) withDefaults() Options {
	if o.LockWait <= 0 {
		o.LockWait = DefaultLockWait
	}
	if o.EmbedBatch <= 0 {
		o.EmbedBatch = 256
	}
	return o
}

// Stale reports whether the index must be synced before it can answer
// fully, whatever the caller's stamp says: the catalog or the sidecar was
// missing, of another version or embedder, or corrupt at Open (with
// LazyVectors, as far as the sidecar's header tells, until it is read).
func (ix *Index) Stale() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.vecMu.Lock() // a read of the sidecar may be under way (LazyVectors)
	defer ix.vecMu.Unlock()
	return ix.catBad || ix.vecBad
}

// MergeDue reports whether the index's delta segments have passed the
// bound past which a sync merges them (one Options.DeferMerge held back):
// a caller that may merge syncs even when its stamp says the index is up
// to date.
func (ix *Index) MergeDue() bool {
	ix.ensureVectors()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c, v := ix.cat, ix.vec
	return mergeDue(c.delta.len(), c.ndead, c.live) || mergeDue(v.delta.len(), v.base.ndead, v.len())
}

// Close releases the index's files. Hits and infos already returned stay
// valid; the embedder loses the corpus state it was given at Open (use a
// fresh index, or Fit, to embed with it again).
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.vecMu.Lock() // a read under way ends first; none starts after
	ix.vecPending.Store(false)
	ix.vecMu.Unlock()
	ix.cat.close()
	if f, ok := ix.emb.(CorpusFitter); ok && ix.vec.base.release != nil && len(ix.vec.base.state) > 0 {
		// The embedder may read the corpus state in place, in the mapping
		// about to go: unload it (the embedder is the index's).
		_ = f.LoadState(nil)
	}
	ix.vec.close()
	return nil
}

// ContentHash is the hash of everything in a lesson that retrieval reads:
// 16 hex digits of a SHA-256 over the fields, each length-prefixed. The
// fields are laid out in one buffer and hashed at once (a write per field
// allocated a copy of each: 68 MB of a 100,000-lesson rebuild).
func ContentHash(l domain.Lesson) string {
	n := 32 + len(l.ID) + len(l.Title) + len(l.Type) + len(l.Reach) + len(l.Gist) + len(l.Body)
	for _, t := range l.Tags {
		n += 8 + len(t)
	}
	for _, k := range l.Links {
		n += 16 + len(k.Rel) + len(k.Target)
	}
	buf := make([]byte, 0, n+64)
	put := func(s string) {
		buf = strconv.AppendInt(buf, int64(len(s)), 10)
		buf = append(buf, ':')
		buf = append(buf, s...)
	}
	putInt := func(v int) {
		var d [20]byte
		put(string(strconv.AppendInt(d[:0], int64(v), 10)))
	}
	put(l.ID)
	put(l.Title)
	put(l.Type)
	put(l.Reach)
	put(l.Gist)
	put(l.Body)
	putInt(len(l.Tags))
	for _, t := range l.Tags {
		put(t)
	}
	putInt(len(l.Links))
	for _, k := range l.Links {
		put(k.Rel)
		put(k.Target)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:8])
}

// Sync brings the index in line with lessons, the store's complete current
// set: lessons whose content hash changed are re-indexed and re-embedded,
// lessons no longer present are removed from both arms, and the rest is left
// alone. On disk, the catalog and the sidecar are rewritten only when
// something changed.
func (ix *Index) Sync(lessons []domain.Lesson) (SyncStats, error) {
	return ix.SyncStamp(lessons, "")
}

// Flag returns the screen's verdict on lesson id as the catalog recorded
// it: why it must never be quoted to an agent, or "" (clean, or not held).
func (ix *Index) Flag(id string) string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if g, ok := ix.cat.find(id); ok {
		return ix.cat.flag(g)
	}
	return ""
}

// Stamp returns the caller's freshness token recorded by the last
// SyncStamp (for instance the git tree hash of lessons/), so a caller can
// skip reading the lessons when the store has not moved since.
func (ix *Index) Stamp() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.cat.stamp
}

// Len is the number of lessons the index holds.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.cat.len()
}

// SyncStamp is Sync that also records stamp (see Stamp).
func (ix *Index) SyncStamp(lessons []domain.Lesson, stamp string) (SyncStats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, unlock, err := ix.begin(len(lessons))
	if err != nil {
		return st, err
	}
	defer unlock()
	entries := make([]syncEntry, len(lessons))
	for i := range lessons {
		entries[i] = syncEntry{id: lessons[i].ID, hash: ContentHash(lessons[i]), lesson: &lessons[i]}
	}
	err = ix.apply(&st, entries, nil, stamp, true)
	return st, err
}

// FileStamp is a lesson file's id and what tells whether it changed: its
// modification time (Unix nanoseconds) and size.
type FileStamp struct {
	ID      string
	ModTime int64
	Size    int64
}

// FileSync is what SyncFiles did.
type FileSync struct {
	SyncStats
	Read    []domain.Lesson // the lessons it read (new or changed files)
	Removed []string        // the lessons it no longer holds, sorted
}

// SyncFiles is SyncStamp for a store's lesson files, reading only what
// changed: files lists every lesson file, and read returns the lessons of
// the ids it is given (leaving out those it cannot read, as invalid files
// are). A file whose stamp matches the one the index recorded is not read:
// its postings and vector stay. All are read when reread is set, when the
// catalog was unreadable, and when the embedder must be refitted on the
// corpus; a lesson whose vector is missing is read to embed it.
func (ix *Index) SyncFiles(files []FileStamp, read func(ids []string) []domain.Lesson, stamp string, reread bool) (FileSync, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, unlock, err := ix.begin(len(files))
	fs := FileSync{SyncStats: st}
	if err != nil {
		return fs, err
	}
	defer unlock()
	return ix.syncFiles(fs, files, read, stamp, reread)
}

// ErrNotSince is SyncChanged's answer when the index is no longer the one
// the change set was computed against (another process synced it, its
// catalog was unreadable): the caller syncs with the full listing instead.
var ErrNotSince = errors.New("sync index: the index moved since the change set's stamp")

// SyncChanged is SyncFiles for a known change set: the index was synced
// at stamp since, and since then only the files of changed were added or
// rewritten and those of removed went; every other file is as the index
// recorded it. It leaves the index as SyncFiles with the full listing
// would (the listing is the index's own file stamps with the change
// applied), without listing the lesson files. When the index's stamp is
// not since (or its catalog is unreadable) it changes nothing and returns
// ErrNotSince.
func (ix *Index) SyncChanged(since string, changed []FileStamp, removed []string, read func(ids []string) []domain.Lesson, stamp string) (FileSync, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, unlock, err := ix.begin(0)
	fs := FileSync{SyncStats: st}
	if err != nil {
		return fs, err
	}
	defer unlock()
	if ix.verified(&fs.SyncStats, false); ix.catBad || ix.cat.stamp != since || since == "" {
		return fs, ErrNotSince
	}
	if ix.refitDue(ix.cat.len() + len(changed) - len(removed)) {
		// Every lesson is read again: the listing's path does it.
		files := ix.heldFiles(changed, removed)
		fs.Lessons = len(files)
		return ix.syncFiles(fs, files, read, stamp, false)
	}
	changed = sortedFiles(changed)
	if out, ok, err := ix.syncDelta(fs, changed, removed, read, stamp); ok {
		return out, err
	}
	return ix.syncChanged(fs, changed, removed, read, stamp)
}

// syncChanged is SyncChanged's work: SyncFiles' for a listing of the
// index's own file stamps with the change applied, without building that
// listing or looking its ids up again. The caller holds ix.mu and the
// lock; changed is sorted by id.
func (ix *Index) syncChanged(fs FileSync, changed []FileStamp, removed []string, read func(ids []string) []domain.Lesson, stamp string) (FileSync, error) {
	old := ix.cat
	gone := make(map[string]bool, len(removed)+len(changed))
	for _, id := range removed {
		gone[id] = true
	}
	var todo []string
	same := make([]int, len(changed)) // the held ordinal whose stamp is f's, or -1
	for i, f := range changed {
		gone[f.ID] = true
		same[i] = -1
		if g, ok := old.find(f.ID); ok && f.ModTime != 0 && old.fileStamp(g) == [2]int64{f.ModTime, f.Size} {
			same[i] = g
			continue
		}
		todo = append(todo, f.ID)
	}
	if len(todo) > 0 {
		fs.Read = read(todo)
	}
	asked := make(map[string]bool, len(todo))
	for _, id := range todo {
		asked[id] = true
	}
	got := make(map[string]*domain.Lesson, len(fs.Read))
	for i := range fs.Read {
		if l := &fs.Read[i]; got[l.ID] == nil && asked[l.ID] {
			got[l.ID] = l
		}
	}
	var fresh []syncEntry
	for i, f := range changed {
		switch {
		case same[i] >= 0:
			fresh = append(fresh, syncEntry{id: f.ID, hash: old.hash(same[i]), file: f})
		case got[f.ID] != nil:
			l := got[f.ID]
			fresh = append(fresh, syncEntry{id: f.ID, hash: ContentHash(*l), lesson: l, file: f})
		}
	}
	ords := old.ordered()
	entries := make([]syncEntry, 0, len(ords)+len(fresh))
	k := 0
	for _, g := range ords {
		id := old.idOf(g)
		for k < len(fresh) && fresh[k].id < id {
			entries = append(entries, fresh[k])
			k++
		}
		if gone[id] {
			if k < len(fresh) && fresh[k].id == id {
				entries = append(entries, fresh[k])
				k++
			} else {
				fs.Removed = append(fs.Removed, strings.Clone(id))
			}
			continue
		}
		ms := old.fileStamp(g)
		id = strings.Clone(id)
		entries = append(entries, syncEntry{id: id, hash: old.hash(g), file: FileStamp{ID: id, ModTime: ms[0], Size: ms[1]}})
	}
	entries = append(entries, fresh[k:]...)
	fs.Lessons = len(entries)
	err := ix.apply(&fs.SyncStats, entries, read, stamp, false)
	return fs, err
}

// heldFiles is the index's file stamps (by id) with changed put in and the
// ids of removed taken out. The caller holds ix.mu.
func (ix *Index) heldFiles(changed []FileStamp, removed []string) []FileStamp {
	changed = sortedFiles(changed)
	gone := make(map[string]bool, len(removed)+len(changed))
	for _, id := range removed {
		gone[id] = true
	}
	for _, f := range changed {
		gone[f.ID] = true
	}
	ords := ix.cat.ordered()
	out := make([]FileStamp, 0, len(ords)+len(changed))
	k := 0
	for _, g := range ords {
		id := ix.cat.idOf(g)
		for k < len(changed) && changed[k].ID < id {
			out = append(out, changed[k])
			k++
		}
		if gone[id] {
			continue
		}
		ms := ix.cat.fileStamp(g)
		out = append(out, FileStamp{ID: strings.Clone(id), ModTime: ms[0], Size: ms[1]})
	}
	return append(out, changed[k:]...)
}

// syncFiles is SyncFiles' work once the lock is held.
func (ix *Index) syncFiles(fs FileSync, files []FileStamp, read func(ids []string) []domain.Lesson, stamp string, reread bool) (FileSync, error) {
	old := ix.verified(&fs.SyncStats, true)
	if !ix.opts.DeferVectors {
		ix.vectorsVerified(&fs.SyncStats)
		if ix.refitDue(len(files)) {
			reread = true
		}
	}
	files = sortedFiles(files)
	at := old.lookup(fileIDs(files))
	kept := make([]syncEntry, 0, len(files))
	var todo []string
	for i, f := range files {
		if o := at[i]; o >= 0 && !reread && !ix.catBad && f.ModTime != 0 && old.fileStamp(o) == [2]int64{f.ModTime, f.Size} {
			kept = append(kept, syncEntry{id: f.ID, hash: old.hash(o), file: f})
			continue
		}
		todo = append(todo, f.ID)
	}
	if len(todo) > 0 {
		fs.Read = read(todo)
	}
	// Hashed on both cores: 0.3 s of one at 100,000 lessons.
	hashes := make([]string, len(fs.Read))
	parallel(len(fs.Read), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			hashes[i] = ContentHash(fs.Read[i])
		}
	})
	var got []syncEntry
	taken := make(map[string]bool, len(fs.Read))
	for i := range fs.Read {
		l := &fs.Read[i]
		k, ok := slices.BinarySearchFunc(files, l.ID, func(f FileStamp, id string) int { return strings.Compare(f.ID, id) })
		if !ok || taken[l.ID] {
			continue // not a file it was asked about, or given twice
		}
		taken[l.ID] = true
		got = append(got, syncEntry{id: l.ID, hash: hashes[i], lesson: l, file: files[k]})
	}
	entries := mergeEntries(kept, got)
	fs.Removed = old.missing(entries)
	err := ix.apply(&fs.SyncStats, entries, read, stamp, true)
	return fs, err
}

// Pending says what SyncFiles(files, …, reread false) would have to do: how
// many files it would read, and whether it would redo every lesson (an
// unreadable catalog, an embedder due for a refit on the corpus). A hook
// asks before it syncs, to leave large syncs to a background process.
func (ix *Index) Pending(files []FileStamp) (read int, full bool) {
	if !ix.opts.DeferVectors {
		ix.ensureVectors() // a refit is due by the embedder's state
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.catBad {
		return len(files), true
	}
	if ix.refitDue(len(files)) {
		return len(files), true
	}
	at := ix.cat.lookup(fileIDs(files))
	for i, f := range files {
		if o := at[i]; o < 0 || f.ModTime == 0 || ix.cat.fileStamp(o) != [2]int64{f.ModTime, f.Size} {
			read++
		}
	}
	return read, false
}

// PendingChanged is Pending for SyncChanged's change set: how many of the
// changed files it would read, and whether it would redo every lesson.
func (ix *Index) PendingChanged(changed []FileStamp, removed []string) (read int, full bool) {
	if !ix.opts.DeferVectors {
		ix.ensureVectors() // a refit is due by the embedder's state
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := ix.cat.len()
	for _, f := range changed {
		if o, ok := ix.cat.find(f.ID); !ok {
			n++
			read++
		} else if f.ModTime == 0 || ix.cat.fileStamp(o) != [2]int64{f.ModTime, f.Size} {
			read++
		}
	}
	for _, id := range removed {
		if _, ok := ix.cat.find(id); ok {
			n--
		}
	}
	if ix.catBad || ix.refitDue(n) {
		return n, true
	}
	return read, false
}

// filesSig is the stat signature (size, modification time, inode) of the
// index's segment files, taken before they are read: when it has not
// moved, no other process replaced them.
func filesSig(dir string) string {
	var b strings.Builder
	for _, name := range []string{deltaName, catalogName, vecDeltaName, sidecarName} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			fmt.Fprintf(&b, "%d.%d.%v;", fi.Size(), fi.ModTime().UnixNano(), fileID(fi))
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// sortedFiles is files by id, the first of any duplicates kept (a copy
// when they were not in order).
func sortedFiles(files []FileStamp) []FileStamp {
	byID := func(a, b FileStamp) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(files, byID) {
		files = slices.Clone(files)
		slices.SortStableFunc(files, byID)
	}
	for i := 1; i < len(files); i++ {
		if files[i].ID == files[i-1].ID {
			return slices.CompactFunc(slices.Clone(files), func(a, b FileStamp) bool { return a.ID == b.ID })
		}
	}
	return files
}

// mergeEntries merges two lists of entries sorted by id (no id in both).
func mergeEntries(a, b []syncEntry) []syncEntry {
	slices.SortFunc(b, func(x, y syncEntry) int { return strings.Compare(x.id, y.id) })
	if len(b) == 0 {
		return a
	}
	out := make([]syncEntry, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && a[0].id < b[0].id) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

func fileIDs(files []FileStamp) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.ID
	}
	return out
}

// syncEntry is one lesson a sync keeps: read (lesson set), or unchanged
// since the catalog recorded it (lesson nil: its record, postings and
// vector stay).
type syncEntry struct {
	id, hash string
	lesson   *domain.Lesson
	file     FileStamp
}

// begin takes the directory's write lock (or notes that another process
// holds it: the sync then stays in memory) and reloads the catalog another
// process may have written meanwhile. The caller holds ix.mu.
func (ix *Index) begin(n int) (SyncStats, func(), error) {
	if ix.closed {
		return SyncStats{}, nil, errors.New("sync index: closed")
	}
	if !ix.opts.DeferVectors {
		ix.ensureVectors()
	}
	// (A sidecar still unread, Options.DeferVectors, was not dropped.)
	st := SyncStats{Lessons: n, InMemory: ix.dir == "", LexicalRebuilt: ix.catBad, SidecarRebuilt: !ix.vecPending.Load() && ix.vecBad}
	if ix.dir == "" {
		return st, func() {}, nil
	}
	unlock, err := fsutil.LockPath(filepath.Join(ix.dir, "lock"), ix.opts.LockWait)
	if ix.readOnly || fsutil.ReadOnly(err) {
		// Nothing can be saved here: sync in memory, as when another
		// process holds the lock.
		ix.readOnly, err = true, fsutil.ErrLocked
		if unlock != nil {
			unlock()
		}
	}
	switch {
	case errors.Is(err, fsutil.ErrLocked):
		ix.fallback, st.FallbackLexical = true, true
		return st, func() {}, nil
	case err != nil:
		return st, nil, fmt.Errorf("sync index: %w", err)
	}
	ix.fallback = false
	// The bleve index of earlier versions is no longer read.
	_ = os.RemoveAll(filepath.Join(ix.dir, "lexical.bleve"))
	_ = os.Remove(filepath.Join(ix.dir, "lexical.version"))
	// Another process may have synced while this one waited: reload what
	// changed on disk since this process read it.
	if sig := filesSig(ix.dir); sig != ix.sig {
		if cat, ok := readView(ix.dir); ok {
			ix.cat.close()
			ix.cat, ix.catBad = cat, cat.screen != ix.opts.ScreenID
			ix.infosOnce, ix.infos = sync.Once{}, nil
		}
		// A sidecar still unread is read as it is when it is needed.
		if !ix.vecPending.Load() && !ix.vecBad {
			if dim, id := ix.vectorShape(); dim > 0 {
				ix.loadVectorsAt(dim, id)
			}
		}
		ix.sig = sig
	}
	return st, unlock, nil
}

// verified is the catalog to sync from: the current one, or an empty one
// when a checksum fails (corrupt postings are not reused). The delta is
// checked every time (a sync copies its postings); the base only when
// whole is set: by a sync from a listing or of every lesson, which costs
// the store anyway, and before a merge copies its postings into a new
// base. A sync from a change set (SyncChanged) leaves the base's body
// unchecked: its header, section table and meta are checked at every
// open, every read of it is bounds-checked, it is written once (synced,
// then renamed) and never changed in place, and borg doctor (Verify) and
// the next listing sync or merge read it whole. Checking it on every
// change made a hook's sync after one learn read the whole catalog (65 MB
// at 100,000 lessons).
func (ix *Index) verified(st *SyncStats, whole bool) *view {
	var err error
	if whole {
		err = ix.cat.verify()
	} else {
		err = ix.cat.delta.verify()
	}
	if ix.cat.span() > 0 && err != nil {
		ix.catBad, st.LexicalRebuilt = true, true
		ix.cat.close()
		ix.cat = emptyView()
	}
	return ix.cat
}

// vectorsVerified checks the sidecar base's keys (vectorStore.verify)
// before a sync that reads them whole: syncVectors joins every key, and a
// merge writes them into a new base. Keys that fail are dropped as a
// sidecar that fails at Open is: the embedder's corpus state, which may
// live in the file's mapping, is unloaded first, so the sync refits it
// (refitDue) and embeds every lesson again. SyncChanged's fast path
// (syncDelta) reads a few keys and does not come here.
func (ix *Index) vectorsVerified(st *SyncStats) {
	if ix.vec.base.verify() == nil {
		return
	}
	if f, ok := ix.emb.(CorpusFitter); ok && len(ix.vec.base.state) > 0 {
		_ = f.LoadState(nil)
	}
	ix.vec.close()
	ix.vec = newVecView(newVectorStore(ix.emb.ID(), max(ix.emb.Dim(), 0)))
	ix.vecBad, st.SidecarRebuilt = true, true
}

// sameFiles reports whether the catalog records the file stamps docs carry
// (same lessons in the same order assumed; a difference rewrites it).
func sameFiles(c *catalog, docs []catalogDoc) bool {
	if c.len() != len(docs) {
		return false
	}
	for o, d := range docs {
		if c.fileStamp(o) != [2]int64{d.mtime, d.size} {
			return false
		}
	}
	return true
}

// needsRefit reports whether a corpus-fitted embedder fitted on fitted texts
// should be refitted for a corpus of n.
func needsRefit(fitted, n int) bool {
	if n == 0 {
		return false
	}
	if fitted == 0 {
		return true
	}
	d := float64(n-fitted) / float64(fitted)
	return d > refitDrift || d < -refitDrift
}

// normalized returns v scaled to unit length (a copy), or v when zero.
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || (n > 0.999999 && n < 1.000001) {
		return v
	}
	out := make([]float32, len(v))
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Verify reads the whole index stored in dir and reports the first problem
// a query would not notice: a catalog or sidecar that is corrupt, of another
// version, or whose lessons and vectors disagree. A missing index is not a
// problem (it is built on first use). The fix for any problem is to delete
// dir: the index is derived and is rebuilt from the lessons.
func Verify(dir string, emb Embedder) error {
	path := filepath.Join(dir, catalogName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	raw, release, err := fsutil.Map(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer release()
	c, err := parseCatalog(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := c.verify(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for o := 1; o < c.len(); o++ {
		if c.id(o-1).s >= c.id(o).s {
			return fmt.Errorf("%s: lessons out of order at %q", path, c.id(o).s)
		}
	}
	v, err := verifyDelta(dir, c)
	if err != nil {
		return err
	}
	if emb == nil || emb.Dim() <= 0 {
		return nil
	}
	spath := filepath.Join(dir, sidecarName)
	if _, err := os.Stat(spath); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	vec, err := loadVecView(dir, emb.ID(), emb.Dim())
	if errors.Is(err, errVecDelta) {
		vec.close()
		return fmt.Errorf("%w (delete %s to rebuild the index)", err, dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", spath, err)
	}
	defer vec.close()
	// A hook reads the base's keys in place, leaving their checksum and
	// order to a whole sync: here both are checked.
	if err := vec.base.verify(); err != nil {
		return fmt.Errorf("%s: %w (delete %s to rebuild the index)", spath, err, dir)
	}
	for _, id := range vec.ids() {
		if _, ok := v.find(id); !ok {
			return fmt.Errorf("%s: vector of %q, a lesson the catalog does not hold (delete %s to rebuild the index)", spath, id, dir)
		}
	}
	return nil
}
