package index

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
)

// DefaultLockWait is how long Open waits for another process's hold on the
// on-disk lexical index before it falls back to an in-memory one. A hook
// must never hang on it.
const DefaultLockWait = 250 * time.Millisecond

// refitDrift is the relative change in lesson count after which a corpus
// fitted embedder (the n-gram IDF) is refitted and every vector re-embedded.
// Below it, new lessons are embedded with the existing weights.
const refitDrift = 0.2

// Options configures an Index. The zero value is usable.
type Options struct {
	// LockWait bounds the wait for the on-disk index's lock (default
	// DefaultLockWait); past it Open falls back to an in-memory index that
	// Sync fills from the lessons.
	LockWait time.Duration
	// EmbedBatch is the number of lessons embedded per Embed call
	// (default 256).
	EmbedBatch int
}

// SyncStats says what a Sync changed.
type SyncStats struct {
	Lessons         int  `json:"lessons"`
	Indexed         int  `json:"indexed"`          // lessons (re)written to the lexical index
	Removed         int  `json:"removed"`          // lessons deleted from both arms
	Embedded        int  `json:"embedded"`         // lessons (re)embedded
	Refit           bool `json:"refit"`            // the embedder was refitted on the corpus
	LexicalRebuilt  bool `json:"lexical_rebuilt"`  // the on-disk index was created afresh
	SidecarRebuilt  bool `json:"sidecar_rebuilt"`  // the sidecar was dropped (other embedder, corrupt)
	InMemory        bool `json:"in_memory"`        // the index lives in memory only
	FallbackLexical bool `json:"fallback_lexical"` // the disk index was busy; memory stands in
	// EmbedError is set when the embedder failed (an endpoint down): the
	// lexical arm is in sync, the vector arm lacks the lessons not embedded
	// and the next Sync retries them.
	EmbedError string `json:"embed_error,omitempty"`
}

// Index is borg's search state: a lexical index (bleve, on disk under the
// directory Open was given, or in memory), the vector sidecar of one
// embedder, and the lesson metadata retrieval needs. It is safe for
// concurrent use by one process; two processes may open the same directory
// (the second one falls back to memory rather than waiting).
type Index struct {
	mu       sync.RWMutex
	dir      string // "" in memory
	emb      Embedder
	opts     Options
	lex      *lexical
	fallback bool // lexical is an in-memory stand-in for a busy disk index
	lexEmpty bool // the stand-in holds nothing yet, whatever the catalog says
	rebuilt  bool // lexical was created fresh at Open
	vec      *vectorStore
	vecBad   bool // the sidecar was dropped at Open
	cat      *catalog
	avgLen   []float64 // per lexical field, from the catalog
	// supersededBy maps a lesson to the lessons that supersede it.
	supersededBy map[string][]string
	// graph is the undirected lesson link graph of the lateral arm.
	graph map[string][]string
	// infos is every lesson's id and reach, sorted by id (Infos).
	infos []domain.LessonInfo
}

// Open opens the index stored in dir (created when missing), using emb for
// the vector arm. A lexical index of another version is rebuilt; a sidecar of
// another embedder is dropped. When another process holds the lexical index
// for longer than opts.LockWait, Open returns an index whose lexical arm is
// in memory (SyncStats.FallbackLexical); it is filled by Sync.
func Open(dir string, emb Embedder, opts Options) (*Index, error) {
	if dir == "" {
		return nil, errors.New("open index: empty directory (use NewMemory)")
	}
	if emb == nil {
		return nil, errors.New("open index: nil embedder")
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	ix := &Index{dir: dir, emb: emb, opts: opts, cat: newCatalog()}
	lex, rebuilt, err := openLexical(dir, opts.LockWait)
	switch {
	case errors.Is(err, errLexicalBusy):
		if lex, err = newMemLexical(); err != nil {
			return nil, fmt.Errorf("open index: %w", err)
		}
		ix.fallback, ix.lexEmpty = true, true
		// The catalog and sidecar are still readable: Search works on the
		// vector arm right away, the lexical arm once Sync refills it.
		if cat, ok := readCatalog(filepath.Join(dir, catalogName)); ok {
			ix.cat = cat
		}
	case err != nil:
		return nil, fmt.Errorf("open index: %w", err)
	}
	ix.lex, ix.rebuilt = lex, rebuilt
	if !ix.fallback && !rebuilt {
		cat, ok := readCatalog(filepath.Join(dir, catalogName))
		if ok {
			ix.cat = cat
		} else {
			// Without a catalog the index's content is unknown: start over.
			_ = ix.lex.close()
			_ = os.Remove(filepath.Join(dir, "lexical.version"))
			if ix.lex, _, err = openLexical(dir, opts.LockWait); err != nil {
				return nil, fmt.Errorf("open index: %w", err)
			}
			ix.rebuilt = true
		}
	}
	ix.derive()
	if emb.Dim() <= 0 {
		// Unavailable embedder: keep whatever sidecar is on disk for later.
		ix.vec = newVectorStore(emb.ID(), 0)
		return ix, nil
	}
	vec, verr := loadSidecar(filepath.Join(dir, sidecarName), emb.ID(), emb.Dim())
	ix.vec, ix.vecBad = vec, verr != nil
	if f, ok := emb.(CorpusFitter); ok && len(vec.state) > 0 {
		if err := f.LoadState(vec.state); err != nil {
			ix.vec, ix.vecBad = newVectorStore(emb.ID(), emb.Dim()), true
		}
	}
	return ix, nil
}

// NewMemory returns an index that lives in memory only (tests, evaluation,
// and callers without a store).
func NewMemory(emb Embedder, opts Options) (*Index, error) {
	if emb == nil {
		return nil, errors.New("new memory index: nil embedder")
	}
	lex, err := newMemLexical()
	if err != nil {
		return nil, fmt.Errorf("new memory index: %w", err)
	}
	ix := &Index{emb: emb, opts: opts.withDefaults(), lex: lex,
		vec: newVectorStore(emb.ID(), emb.Dim()), cat: newCatalog()}
	ix.derive()
	return ix, nil
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

// Fallback reports whether the lexical arm is an in-memory stand-in because
// another process held the on-disk index. Until Sync fills it, Search uses
// the other arms (the catalog and sidecar are read without the lock).
func (ix *Index) Fallback() bool { return ix.fallback }

// Embedder returns the index's embedder.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Close releases the on-disk index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	err := ix.lex.close()
	ix.lex = nil
	ix.vec.close()
	return err
}

// ContentHash is the hash of everything in a lesson that retrieval reads:
// 16 hex digits of a SHA-256 over the fields, each length-prefixed.
func ContentHash(l domain.Lesson) string {
	h := sha256.New()
	put := func(s string) {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	put(l.ID)
	put(l.Title)
	put(l.Type)
	put(l.Reach)
	put(l.Gist)
	put(l.Body)
	put(strconv.Itoa(len(l.Tags)))
	for _, t := range l.Tags {
		put(t)
	}
	put(strconv.Itoa(len(l.Links)))
	for _, k := range l.Links {
		put(k.Rel)
		put(k.Target)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Sync brings the index in line with lessons, the store's complete current
// set: lessons whose content hash changed are re-indexed and re-embedded,
// lessons no longer present are removed from both arms, and the rest is left
// alone. On disk, the catalog and the sidecar are rewritten only when
// something changed.
func (ix *Index) Sync(lessons []domain.Lesson) (SyncStats, error) {
	return ix.SyncStamp(lessons, "")
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
	return len(ix.cat.lessons)
}

// SyncStamp is Sync that also records stamp (see Stamp).
func (ix *Index) SyncStamp(lessons []domain.Lesson, stamp string) (SyncStats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.lex == nil {
		return SyncStats{}, errors.New("sync index: closed")
	}
	st := SyncStats{Lessons: len(lessons), InMemory: ix.dir == "", FallbackLexical: ix.fallback,
		LexicalRebuilt: ix.rebuilt, SidecarRebuilt: ix.vecBad}

	byID := make(map[string]*domain.Lesson, len(lessons))
	hashes := make(map[string]string, len(lessons))
	ids := make([]string, 0, len(lessons))
	for i := range lessons {
		l := &lessons[i]
		if _, dup := byID[l.ID]; dup {
			return st, fmt.Errorf("sync index: duplicate lesson id %q", l.ID)
		}
		byID[l.ID] = l
		hashes[l.ID] = ContentHash(*l)
		ids = append(ids, l.ID)
	}
	sort.Strings(ids)

	// Lexical arm and catalog.
	next := newCatalog()
	next.stamp = stamp
	var docs []lexDoc
	for _, id := range ids {
		if old, ok := ix.cat.lessons[id]; ok && old.hash == hashes[id] && !ix.lexEmpty {
			next.lessons[id] = old
			continue
		}
		l := byID[id]
		reach := l.Reach
		if reach == "" {
			reach = domain.ReachTeam
		}
		d := lexDoc{ID: id, Type: l.Type, Reach: reach, Tags: l.Tags, Title: l.Title, Gist: l.Gist, Body: l.Body}
		docs = append(docs, d)
		li := &lessonInfo{id: id, hash: hashes[id], title: l.Title, gist: l.Gist, typ: l.Type,
			reach: l.Reach, repo: l.RepoTag(), links: append([]domain.LessonLink(nil), l.Links...)}
		li.lens = ix.lex.fieldLens(d)
		next.lessons[id] = li
	}
	next.order = make([]*lessonInfo, len(ids))
	for i, id := range ids {
		next.order[i] = next.lessons[id]
	}
	var removed []string
	for id := range ix.cat.lessons {
		if _, ok := byID[id]; !ok && !ix.lexEmpty {
			removed = append(removed, id)
		}
	}
	sort.Strings(removed)
	if len(docs) > 0 || len(removed) > 0 {
		if err := ix.lex.put(docs, removed); err != nil {
			return st, fmt.Errorf("sync index: %w", err)
		}
	}
	catChanged := len(docs) > 0 || len(removed) > 0 || ix.cat.stamp != stamp || ix.rebuilt
	ix.cat = next
	ix.rebuilt, ix.lexEmpty = false, false
	st.Indexed, st.Removed = len(docs), len(removed)

	// Vector arm. An embedder without a dimension (an endpoint that could
	// not be reached to probe it) leaves the sidecar untouched.
	if ix.vec.dim <= 0 {
		st.EmbedError = "embedder unavailable (no dimension)"
		ix.derive()
		if ix.dir != "" && !ix.fallback && catChanged {
			if err := ix.cat.write(filepath.Join(ix.dir, catalogName)); err != nil {
				return st, fmt.Errorf("sync index: %w", err)
			}
		}
		return st, nil
	}
	vecChanged := ix.vecBad
	ix.vecBad = false
	if f, ok := ix.emb.(CorpusFitter); ok && needsRefit(f.FittedDocs(), len(lessons)) {
		texts := make([]string, len(ids))
		for i, id := range ids {
			l := byID[id]
			texts[i] = lessonText(l.Title, l.Gist, l.Body, l.Tags)
		}
		if err := f.Fit(texts); err != nil {
			return st, fmt.Errorf("sync index: fit embedder: %w", err)
		}
		ix.vec.reset()
		ix.vec.state = f.State()
		st.Refit, vecChanged = true, true
	}
	var gone []string
	for _, id := range ix.vec.ids {
		if _, ok := byID[id]; !ok {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		ix.vec.remove(id)
	}
	var todo []string
	for _, id := range ids {
		if h, ok := ix.vec.hash(id); !ok || h != hashes[id] {
			todo = append(todo, id)
		}
	}
	for start := 0; start < len(todo); start += ix.opts.EmbedBatch {
		batch := todo[start:min(start+ix.opts.EmbedBatch, len(todo))]
		texts := make([]string, len(batch))
		for i, id := range batch {
			l := byID[id]
			texts[i] = lessonText(l.Title, l.Gist, l.Body, l.Tags)
		}
		vecs, err := ix.emb.Embed(texts)
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
			break
		}
		for i, id := range batch {
			ix.vec.put(id, hashes[id], normalized(vecs[i]))
			st.Embedded++
		}
	}
	vecChanged = vecChanged || st.Embedded > 0 || len(gone) > 0
	ix.derive()

	if ix.dir != "" && !ix.fallback {
		if catChanged {
			if err := ix.cat.write(filepath.Join(ix.dir, catalogName)); err != nil {
				return st, fmt.Errorf("sync index: %w", err)
			}
		}
		if vecChanged {
			if err := ix.vec.save(filepath.Join(ix.dir, sidecarName)); err != nil {
				return st, fmt.Errorf("sync index: %w", err)
			}
		}
	}
	return st, nil
}

// derive recomputes what Search reads from the catalog: field length means,
// the supersedes map and the link graph.
func (ix *Index) derive() {
	ix.avgLen = ix.cat.avgLens()
	order := ix.cat.order
	if len(order) != len(ix.cat.lessons) {
		order = make([]*lessonInfo, 0, len(ix.cat.lessons))
		for _, li := range ix.cat.lessons {
			order = append(order, li)
		}
		slices.SortFunc(order, func(a, b *lessonInfo) int { return strings.Compare(a.id, b.id) })
	}
	ix.infos = make([]domain.LessonInfo, len(order))
	for i, li := range order {
		ix.infos[i] = domain.LessonInfo{ID: li.id, Reach: li.reach}
	}
	ix.supersededBy = make(map[string][]string)
	ix.graph = make(map[string][]string)
	var ids []string // lessons with links, sorted so the graph is deterministic
	for id, li := range ix.cat.lessons {
		if len(li.links) > 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, k := range ix.cat.lessons[id].links {
			if k.Target == id || ix.cat.lessons[k.Target] == nil {
				continue
			}
			if k.Rel == domain.RelSupersedes {
				ix.supersededBy[k.Target] = append(ix.supersededBy[k.Target], id)
			}
			ix.graph[id] = append(ix.graph[id], k.Target)
			ix.graph[k.Target] = append(ix.graph[k.Target], id)
		}
	}
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
