package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// retrieval is a store's search state opened for a query: the index synced
// with the lessons, and the log's summary the usefulness weights come from.
type retrieval struct {
	ix      *index.Index
	summary *domain.Summary
}

// indexDir is where a store keeps its index (derived, gitignored).
func indexDir(s *memfs.Store) string { return filepath.Join(s.Dir(), ".borg", "index") }

// newEmbedder is the default embedder, compiled into the binary.
func newEmbedder() index.Embedder { return index.NewNGramEmbedder(index.NGramOptions{}) }

// lessonsStamp is a cheap freshness token for lessons/: the directory's
// modification time (every borg write renames into it) and the store's HEAD.
// A hand edit made in place and not yet committed is picked up at the next
// commit or by `borg recall --sync`.
func lessonsStamp(s *memfs.Store) string {
	st, err := os.Stat(filepath.Join(s.Dir(), "lessons"))
	if err != nil {
		return ""
	}
	head, err := hooks.ReadHead(s.Dir()) // from the files: go-git's open costs ms
	if err != nil {
		head, _ = s.ResolveRef("HEAD")
	}
	return strconv.FormatInt(st.ModTime().UnixNano(), 10) + "@" + head
}

// openRetrieval opens the store's index and brings it up to date (only
// changed lessons are re-indexed) while it loads the log's summary (an
// O(lessons) cache with the new log lines folded in; see memfs.Summary).
// Memories are then derived on demand, for the lessons a search asks about.
func openRetrieval(ctx context.Context, s *memfs.Store, force bool, progress io.Writer, tr *tracer, budget int) (*retrieval, error) {
	type loaded struct {
		sum *domain.Summary
		err error
	}
	summary := make(chan loaded, 1)
	start := time.Now()
	go func() {
		var sum *domain.Summary
		var err error
		if budget >= 0 {
			// Within a hook's budget: the cached summary, or none (see below).
			sum, err = s.CachedSummary()
		} else {
			sum, err = s.Summary()
		}
		tr.step("log summary loaded, beside the index", start)
		summary <- loaded{sum, err}
	}()
	r, err := openIndex(s, force, progress, budget)
	tr.step("index opened", start)
	got := <-summary
	if err != nil {
		return nil, err
	}
	if got.err != nil {
		_ = r.ix.Close()
		return nil, got.err
	}
	r.summary = got.sum
	if r.summary == nil {
		// The cache needs a rebuild from the whole log (seconds on a large
		// one): a background reindex does it, and this search weighs every
		// lesson as one without evidence.
		if !index.Busy(indexDir(s)) {
			_ = reindexInBackground(s)
		}
		r.summary = domain.NewSummary()
	}
	return r, nil
}

// openIndex opens the store's index and syncs it with the lessons when they
// changed, re-reading only the lesson files whose modification time or size
// moved (all of them with force). With a budget (≥ 0), a sync that would
// read more files than that, or redo every lesson, is left to a background
// `borg reindex` and the index is used as it is: a hook answers from the
// lessons the index already holds instead of missing its deadline (so does
// openRetrieval for a summary cache that needs a rebuild).
func openIndex(s *memfs.Store, force bool, progress io.Writer, budget int) (*retrieval, error) {
	ix, err := index.Open(indexDir(s), newEmbedder(), index.Options{})
	if err != nil {
		return nil, fmt.Errorf("%w (delete %s to rebuild it)", err, indexDir(s))
	}
	r := &retrieval{ix: ix}
	stamp := lessonsStamp(s)
	if !force && stamp != "" && ix.Stamp() == stamp && !ix.Stale() {
		return r, nil
	}
	files, err := s.LessonFiles()
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	stamps := make([]index.FileStamp, len(files))
	for i, f := range files {
		stamps[i] = index.FileStamp{ID: f.ID, ModTime: f.ModTime, Size: f.Size}
	}
	if budget >= 0 && !force {
		if n, full := ix.Pending(stamps); full || n > budget {
			if !index.Busy(indexDir(s)) {
				_ = reindexInBackground(s)
			}
			return r, nil
		}
	}
	skipped := 0
	read := func(ids []string) []domain.Lesson {
		lessons, errs := s.ReadLessons(ids)
		skipped += len(errs)
		return lessons
	}
	fs, err := ix.SyncFiles(stamps, read, stamp, force)
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	if progress != nil && skipped > 0 {
		fmt.Fprintf(progress, "borg: %d lesson file(s) skipped (run borg doctor)\n", skipped)
	}
	_ = updateAnchors(s, fs.Read, fs.Removed, len(fs.Read) == len(files))
	return r, nil
}

// hookSyncBudget is how many lesson files a hook re-reads itself before it
// leaves the sync to `borg reindex` in the background (BORG_SYNC_BUDGET;
// default 1000, about 150 ms of parsing).
func hookSyncBudget(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("BORG_SYNC_BUDGET")); err == nil && n >= 0 {
		return n
	}
	return 1000
}

// reindexInBackground starts `borg reindex` for the store, detached: it
// outlives the hook that starts it, and another process that finds it
// syncing (index.Busy) does not start a second one.
func reindexInBackground(s *memfs.Store) error {
	var err error
	reindexOnce.Do(func() { err = startReindex(s) })
	return err
}

// reindexOnce: one process starts one reindex, whatever asked for it (a
// large sync, a summary rebuild).
var reindexOnce sync.Once

func startReindex(s *memfs.Store) error {
	exe := os.Args[0] // as the hook was run: borg on PATH, or its path
	if !strings.ContainsRune(exe, filepath.Separator) {
		p, err := exec.LookPath(exe)
		if err != nil {
			return err
		}
		exe = p
	}
	cmd := exec.Command(exe, "reindex", "--store", s.Dir())
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

func (r *retrieval) Close() error { return r.ix.Close() }

// memory derives one indexed lesson's memory as of session (hashed; "" for
// the belief mean); ok is false for a lesson the index does not hold.
func (r *retrieval) memory(id, session string) (domain.Memory, bool) {
	info, ok := r.ix.Info(id)
	if !ok {
		return domain.Memory{}, false
	}
	return r.summary.Memories([]domain.LessonInfo{info}, session, domain.DefaultWeights)[0], true
}

// usefulFunc is Query.UsefulFunc for session (hashed): a search derives the
// memory of its candidates only, not of every lesson, in one pass each time.
func (r *retrieval) usefulFunc(session string) func(ids []string) []index.Usefulness {
	return func(ids []string) []index.Usefulness {
		infos := make([]domain.LessonInfo, 0, len(ids))
		for _, id := range ids {
			if info, ok := r.ix.Info(id); ok {
				infos = append(infos, info)
			}
		}
		mems := r.summary.Memories(infos, session, domain.DefaultWeights)
		byID := make(map[string]domain.Memory, len(mems))
		for _, m := range mems {
			byID[m.ID] = m
		}
		out := make([]index.Usefulness, len(ids))
		for i, id := range ids {
			m, ok := byID[id]
			if !ok {
				out[i] = index.Usefulness{Weight: 1, MeanWeight: 1}
				continue
			}
			out[i] = toUseful(m)
		}
		return out
	}
}

func toUseful(m domain.Memory) index.Usefulness {
	return index.Usefulness{Uses: m.Uses, Mean: m.Mean, Weight: m.Weight, MeanWeight: m.MeanWeight, Dormant: m.Dormant}
}

// storeRecaller serves the hooks' recalls from the store's index (syncing
// it within budget files, see openIndex). It opens
// the index and the log's summary on first use, or ahead of it (warm), so a
// hook that does not recall never pays for them and one that does can open
// them while it runs git.
type storeRecaller struct {
	store   *memfs.Store
	budget  int
	once    sync.Once
	done    chan struct{} // closed when the open has finished
	r       *retrieval
	err     error
	closeMu sync.Mutex
	closed  bool
}

// Warm starts opening the index and the summary in the background
// (hooks.Warmer): the Stop hook calls it before it runs git.
func (sr *storeRecaller) Warm() { sr.warm() }

func (sr *storeRecaller) warm() {
	sr.once.Do(func() {
		sr.done = make(chan struct{})
		go func() {
			defer close(sr.done)
			sr.r, sr.err = openRetrieval(context.Background(), sr.store, false, nil, nil, sr.budget)
		}()
	})
}

// open waits for the index, starting to open it if warm did not.
func (sr *storeRecaller) open(ctx context.Context) error {
	sr.warm()
	select {
	case <-sr.done:
		return sr.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close releases the index once it has been opened (waiting for an open
// under way).
func (sr *storeRecaller) Close() {
	sr.closeMu.Lock()
	defer sr.closeMu.Unlock()
	if sr.done == nil || sr.closed {
		return
	}
	<-sr.done
	sr.closed = true
	if sr.r != nil {
		_ = sr.r.Close()
	}
}

// Recall implements hooks.Recaller.
func (sr *storeRecaller) Recall(ctx context.Context, q hooks.RecallQuery) ([]hooks.Recalled, error) {
	if err := sr.open(ctx); err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, id := range q.Exclude {
		skip[id] = true
	}
	hits, err := sr.r.ix.Search(ctx, index.Query{Text: q.Text, K: q.K + len(skip), Repo: q.Repo, Session: q.Session,
		UsefulFunc: sr.r.usefulFunc(q.Session), OnlyOverBar: true})
	if err != nil {
		return nil, err
	}
	var out []hooks.Recalled
	for _, h := range hits {
		if skip[h.ID] || len(h.SupersededBy) > 0 {
			continue
		}
		if m, _ := sr.r.memory(h.ID, q.Session); q.ConsolidatedOnly && !m.Consolidated {
			continue
		}
		l, err := sr.store.Lesson(h.ID)
		if err != nil {
			continue
		}
		out = append(out, hooks.Recalled{Lesson: l, Score: h.Score})
		if len(out) == q.K {
			break
		}
	}
	return out, nil
}

// Placebo implements hooks.Recaller: a lesson drawn at random (seeded by the
// session) from those outside the query's top matches.
func (sr *storeRecaller) Placebo(ctx context.Context, q hooks.RecallQuery) (domain.Lesson, bool, error) {
	if err := sr.open(ctx); err != nil {
		return domain.Lesson{}, false, err
	}
	hits, err := sr.r.ix.Search(ctx, index.Query{Text: q.Text, K: 50, Repo: q.Repo, Bar: -1})
	if err != nil {
		return domain.Lesson{}, false, err
	}
	near := map[string]bool{}
	for _, h := range hits {
		near[h.ID] = true
	}
	for _, id := range q.Exclude {
		near[id] = true
	}
	// Dormancy needs no draw: one pass over every lesson's mean memory.
	dormant := map[string]bool{}
	infos := sr.r.ix.Infos()
	for _, m := range sr.r.summary.Memories(infos, "", domain.DefaultWeights) {
		dormant[m.ID] = m.Dormant
	}
	var pool []string
	for _, li := range infos {
		tag := domain.Lesson{Reach: li.Reach}.RepoTag()
		if !near[li.ID] && (tag == "" || tag == q.Repo) && !dormant[li.ID] {
			pool = append(pool, li.ID)
		}
	}
	if len(pool) == 0 {
		return domain.Lesson{}, false, nil
	}
	sort.Strings(pool)
	rng := domain.NewRng(domain.Seed(q.Session, "placebo-pick"))
	l, err := sr.store.Lesson(pool[rng.Intn(len(pool))])
	if err != nil {
		return domain.Lesson{}, false, err
	}
	return l, true, nil
}
