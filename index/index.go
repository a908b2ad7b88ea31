package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
)

// DefaultLockWait is how long Open waits for another process's hold on the
// on-disk lexical index before it falls back to an in-memory one. A hook
// must never hang on it.
const DefaultLockWait = 250 * time.Millisecond

// manifestVersion versions manifest.json and the content hash; a change
// re-adds every lesson.
const manifestVersion = 1

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
}

// lessonInfo is what retrieval needs of a lesson besides its text.
type lessonInfo struct {
	id, title, gist, reach, repo, typ string
	hash                              string
	links                             []domain.LessonLink
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
	rebuilt  bool // lexical was created fresh at Open
	vec      *vectorStore
	vecBad   bool // the sidecar was dropped at Open
	manifest map[string]string
	lessons  map[string]*lessonInfo
	// supersededBy maps a lesson to the lessons that supersede it.
	supersededBy map[string][]string
	repoScoped   int // lessons with a repo reach
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
	ix := &Index{dir: dir, emb: emb, opts: opts, manifest: map[string]string{}}
	lex, rebuilt, err := openLexical(dir, opts.LockWait)
	switch {
	case errors.Is(err, errLexicalBusy):
		if lex, err = newMemLexical(); err != nil {
			return nil, fmt.Errorf("open index: %w", err)
		}
		ix.fallback = true
	case err != nil:
		return nil, fmt.Errorf("open index: %w", err)
	}
	ix.lex, ix.rebuilt = lex, rebuilt
	if !ix.fallback && !rebuilt {
		ix.manifest = readManifest(filepath.Join(dir, "manifest.json"))
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
	return &Index{emb: emb, opts: opts.withDefaults(), lex: lex,
		vec: newVectorStore(emb.ID(), emb.Dim()), manifest: map[string]string{}}, nil
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
// another process held the on-disk index.
func (ix *Index) Fallback() bool { return ix.fallback }

// Embedder returns the index's embedder.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Close releases the on-disk index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	err := ix.lex.close()
	ix.lex = nil
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
// alone. On disk, the manifest and the sidecar are rewritten only when
// something changed.
func (ix *Index) Sync(lessons []domain.Lesson) (SyncStats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.lex == nil {
		return SyncStats{}, errors.New("sync index: closed")
	}
	st := SyncStats{Lessons: len(lessons), InMemory: ix.dir == "", FallbackLexical: ix.fallback,
		LexicalRebuilt: ix.rebuilt, SidecarRebuilt: ix.vecBad}
	ix.rebuilt, ix.vecBad = false, false

	current := make(map[string]*lessonInfo, len(lessons))
	byID := make(map[string]*domain.Lesson, len(lessons))
	for i := range lessons {
		l := &lessons[i]
		if _, dup := current[l.ID]; dup {
			return st, fmt.Errorf("sync index: duplicate lesson id %q", l.ID)
		}
		byID[l.ID] = l
		current[l.ID] = &lessonInfo{id: l.ID, title: l.Title, gist: l.Gist, reach: l.Reach,
			repo: l.RepoTag(), typ: l.Type, hash: ContentHash(*l), links: l.Links}
	}
	ids := make([]string, 0, len(current))
	for id := range current {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	// Lexical arm.
	var docs []lexDoc
	var removed []string
	for _, id := range ids {
		if ix.manifest[id] != current[id].hash {
			l := byID[id]
			reach := l.Reach
			if reach == "" {
				reach = domain.ReachTeam
			}
			docs = append(docs, lexDoc{ID: id, Type: l.Type, Reach: reach, Tags: l.Tags,
				Title: l.Title, Gist: l.Gist, Body: l.Body})
		}
	}
	for id := range ix.manifest {
		if _, ok := current[id]; !ok {
			removed = append(removed, id)
		}
	}
	sort.Strings(removed)
	if len(docs) > 0 || len(removed) > 0 {
		if err := ix.lex.put(docs, removed); err != nil {
			return st, fmt.Errorf("sync index: %w", err)
		}
		next := make(map[string]string, len(current))
		for id, li := range current {
			next[id] = li.hash
		}
		ix.manifest = next
		if ix.dir != "" && !ix.fallback {
			if err := writeManifest(filepath.Join(ix.dir, "manifest.json"), next); err != nil {
				return st, fmt.Errorf("sync index: %w", err)
			}
		}
	}
	st.Indexed, st.Removed = len(docs), len(removed)

	// Vector arm.
	vecChanged := false
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
		if _, ok := current[id]; !ok {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		ix.vec.remove(id)
	}
	vecChanged = vecChanged || len(gone) > 0
	var todo []string
	for _, id := range ids {
		if h, ok := ix.vec.hash(id); !ok || h != current[id].hash {
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
		if err != nil {
			return st, fmt.Errorf("sync index: embed: %w", err)
		}
		if len(vecs) != len(batch) {
			return st, fmt.Errorf("sync index: embedder returned %d vectors for %d texts", len(vecs), len(batch))
		}
		for i, id := range batch {
			if len(vecs[i]) != ix.emb.Dim() {
				return st, fmt.Errorf("sync index: embedder returned dim %d, want %d", len(vecs[i]), ix.emb.Dim())
			}
			ix.vec.put(id, current[id].hash, normalized(vecs[i]))
		}
	}
	st.Embedded = len(todo)
	vecChanged = vecChanged || len(todo) > 0

	ix.lessons = current
	ix.supersededBy = make(map[string][]string)
	ix.repoScoped = 0
	for _, id := range ids {
		li := current[id]
		if li.repo != "" {
			ix.repoScoped++
		}
		for _, k := range li.links {
			if k.Rel == domain.RelSupersedes && k.Target != id {
				ix.supersededBy[k.Target] = append(ix.supersededBy[k.Target], id)
			}
		}
	}
	if vecChanged && ix.dir != "" && !ix.fallback {
		if err := ix.vec.save(filepath.Join(ix.dir, sidecarName)); err != nil {
			return st, fmt.Errorf("sync index: %w", err)
		}
	}
	return st, nil
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

type manifestFile struct {
	Version int               `json:"version"`
	Lexical string            `json:"lexical"`
	Hashes  map[string]string `json:"hashes"`
}

// readManifest returns the lesson → content hash map of the lexical index,
// or an empty map when the manifest is missing, unreadable or of another
// version (every lesson is then re-added, which is idempotent).
func readManifest(path string) map[string]string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return map[string]string{}
	}
	var m manifestFile
	if json.Unmarshal(raw, &m) != nil || m.Version != manifestVersion || m.Lexical != lexicalVersion || m.Hashes == nil {
		return map[string]string{}
	}
	return m.Hashes
}

func writeManifest(path string, hashes map[string]string) error {
	raw, err := json.Marshal(manifestFile{Version: manifestVersion, Lexical: lexicalVersion, Hashes: hashes})
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}
