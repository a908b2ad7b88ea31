package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	summary *domain.Summary // nil until summarized has run
	// behind lists what a budget left to the background (empty when the
	// search state is up to date), and background is the error of starting
	// that reindex, if it failed.
	behind     []string
	background error

	// summaryLoaded is closed once the log's summary, loaded beside the
	// index, is in; summarized waits for it and settles what follows from
	// it, once (openIndexFirst).
	summaryLoaded chan struct{}
	summarized    func() error
}

// indexDir is where a store keeps its index (derived, gitignored).
func indexDir(s *memfs.Store) string { return filepath.Join(s.Dir(), ".borg", "index") }

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

// indexFresh reports whether ix was synced with the lessons as they are now
// (by lessonsStamp, without reading lessons/), and returns that stamp.
func indexFresh(s *memfs.Store, ix *index.Index) (stamp string, fresh bool) {
	stamp = lessonsStamp(s)
	return stamp, stamp != "" && ix.Stamp() == stamp && !ix.Stale()
}

// lessonFileStamps is what the index compares to know which lesson files
// changed since it read them.
func lessonFileStamps(s *memfs.Store) ([]index.FileStamp, error) {
	files, err := s.LessonFiles()
	return fileStamps(files), err
}

// lessonFileStampsStray is lessonFileStamps with the number of .html files
// of lessons/ that are not read as lessons (memfs.Store.LessonFilesStray):
// a sync counts them among the files it skipped.
func lessonFileStampsStray(s *memfs.Store) ([]index.FileStamp, int, error) {
	files, stray, err := s.LessonFilesStray()
	return fileStamps(files), stray, err
}

// fileStamps is the index's stamp of each lesson file.
func fileStamps(files []memfs.LessonFile) []index.FileStamp {
	stamps := make([]index.FileStamp, len(files))
	for i, f := range files {
		stamps[i] = index.FileStamp{ID: f.ID, ModTime: f.ModTime, Size: f.Size}
	}
	return stamps
}

// budget is how much bringing the search state up to date a caller does
// itself; nil means all of it (recall, reindex). A hook passes its budget:
// work beyond it goes to a background `borg reindex` and the hook answers
// from the state as it is.
type budget struct {
	// Lessons is how many lesson files the hook reads and embeds itself
	// (BORG_SYNC_BUDGET). A store without an index yet counts all its
	// lessons: the kind of work does not matter, its amount does.
	Lessons int
	// LogBytes is how much log the hook summarises from scratch when the
	// summary cache is missing or cannot fold the new lines
	// (BORG_LOG_BUDGET).
	LogBytes int64
	// SummaryBytes is the largest summary cache the hook rewrites itself
	// when enough new log lines call for it (BORG_SUMMARY_BUDGET); a
	// larger one is rewritten by a background reindex, and the hook folds
	// the new lines meanwhile.
	SummaryBytes int64
}

// Default budgets, both well inside a hook's 2 s deadline (BENCHMARKS.md):
// a whole first Stop on a store of 1000 lessons without an index, which
// reads, analyses and embeds them all, takes 0.31 s; a Stop that rebuilds
// the summary from 12 MB of log (100,000 events) 0.37 s, so 4 MiB about
// 0.13 s. A rewrite of the summary cache is a copy of it: 1 MiB costs a
// hook a few milliseconds, the 19 MB of 10,000 lessons and 1,000,000
// events about 150 ms.
const (
	defaultLessonBudget  = 1000
	defaultLogBudget     = 4 << 20
	defaultSummaryBudget = 1 << 20
)

// hookBudget reads the hooks' budget from the environment.
func hookBudget(getenv func(string) string) *budget {
	b := &budget{Lessons: defaultLessonBudget, LogBytes: defaultLogBudget, SummaryBytes: defaultSummaryBudget}
	if n, err := strconv.Atoi(getenv("BORG_SYNC_BUDGET")); err == nil && n >= 0 {
		b.Lessons = n
	}
	if n, err := strconv.ParseInt(getenv("BORG_LOG_BUDGET"), 10, 64); err == nil && n >= 0 {
		b.LogBytes = n
	}
	if n, err := strconv.ParseInt(getenv("BORG_SUMMARY_BUDGET"), 10, 64); err == nil && n >= 0 {
		b.SummaryBytes = n
	}
	return b
}

// openOptions says how openRetrieval brings the search state up to date.
type openOptions struct {
	force    bool      // re-read every lesson file (recall --sync, reindex --all)
	progress io.Writer // where skipped lesson files are reported
	tr       *tracer
	budget   *budget       // a hook's budget; nil: all the work
	lockWait time.Duration // wait for another writer of the index (0: index.DefaultLockWait)
	// noVectors: the caller reads no vector (show), so the vectors are
	// read, embedded and caught up only by the commands that search with
	// them, as for a hook.
	noVectors bool
}

// openRetrieval opens the store's index and brings it up to date (only
// changed lessons are re-indexed) while it loads the log's summary (an
// O(lessons) cache with the new log lines folded in; see memfs.Summary).
// Memories are then derived on demand, for the lessons a search asks about.
//
// With a budget, what does not fit is left to a background `borg reindex`
// and r.behind says what was left.
func openRetrieval(ctx context.Context, s *memfs.Store, o openOptions) (*retrieval, error) {
	r, err := openIndexFirst(s, o)
	if err != nil {
		return nil, err
	}
	if err := r.summarized(); err != nil {
		_ = r.ix.Close()
		return nil, err
	}
	return r, nil
}

// openIndexFirst is openRetrieval returning as soon as the index is open
// and synced, the log's summary still loading: r.summarized waits for it
// (a hook's lexical search needs none of it, and runs meanwhile). The
// caller must call r.summarized before it reads r.summary, and before the
// process ends: what the summary leaves behind starts the background
// reindex there.
func openIndexFirst(s *memfs.Store, o openOptions) (*retrieval, error) {
	b, tr := o.budget, o.tr
	type loaded struct {
		sum *domain.Summary
		due bool // a rewrite of the summary cache left to the background
		err error
	}
	release := func() {}
	if b == nil && (s.Cold() || !indexBuilt(s)) {
		// A fresh clone: this command builds the log's derived state and
		// the index, at once, and holds the build lock across both, so
		// that another command started beside it waits for them and
		// builds nothing (a hook never waits: it has a budget).
		release = s.HoldBuild()
	}
	summary := make(chan loaded, 1)
	summaryLoaded := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(summaryLoaded)
		var sum *domain.Summary
		var due bool
		var err error
		if b != nil {
			// The cached summary, or one rebuilt from a log within the
			// budget, or none (see below).
			sum, due, err = s.SummaryWithin(b.LogBytes, b.SummaryBytes)
		} else {
			sum, err = s.Summary()
		}
		tr.step("log summary loaded, beside the index", start)
		summary <- loaded{sum, due, err}
	}()
	r, err := openIndex(s, o)
	tr.step("index opened", start)
	if err != nil {
		<-summary
		release()
		return nil, err
	}
	r.summaryLoaded = summaryLoaded
	r.summarized = sync.OnceValue(func() error {
		defer release()
		got := <-summary
		if got.err != nil {
			return got.err
		}
		r.summary = got.sum
		if r.summary == nil {
			// The summary needs a rebuild from more log than the budget: a
			// background reindex does it, and this search weighs lessons by the
			// last summary written (without the newest events), or, when there
			// is none, every lesson as one without evidence.
			r.behind = append(r.behind, "the log's summary needs a rebuild")
			if r.summary = s.LastSummary(); r.summary == nil {
				r.summary = domain.NewSummary()
			}
		}
		if b != nil && s.AttributionBehind() {
			// Lines pulled since the last walk of git history count as no
			// one's (memfs attribution) until a command walks it.
			r.behind = append(r.behind, "log lines committed since the last attribution")
		}
		if len(r.behind) > 0 {
			r.background = startBackgroundReindex(s)
		} else if got.due {
			// Routine upkeep, not a state behind: nothing to tell the user,
			// and a start that failed is tried again by the next hook (a
			// rewrite left undone too long is done in a hook, memfs).
			_ = startBackgroundReindex(s)
		}
		return nil
	})
	return r, nil
}

// openIndex opens the store's index and syncs it with the lessons when they
// changed, re-reading only the lesson files whose modification time or size
// moved (all of them with force). With a budget, a sync that would read
// and embed more lessons than it allows is left to a background `borg
// reindex` (r.behind says so) and the index is used as it is: a hook
// answers from the lessons the index already holds instead of missing its
// deadline.
func openIndex(s *memfs.Store, o openOptions) (*retrieval, error) {
	force, b := o.force, o.budget
	emb, err := newEmbedder()
	if err != nil {
		return nil, err
	}
	opts := indexOptions(s, o.lockWait)
	// A hook's sync costs what changed: merging the index's segments is
	// left to a background reindex (show's too).
	opts.DeferMerge = b != nil || o.noVectors
	// Nor does a hook read the vectors unless it asks, nor embed what it
	// syncs: its search has no vector arm, and an embedder endpoint is
	// not called on the agent's clock. The next command that searches
	// with the arm embeds what the hooks left (CatchUpVectors).
	opts.LazyVectors, opts.DeferVectors = b != nil || o.noVectors, b != nil || o.noVectors
	t0 := time.Now()
	ix, err := index.Open(indexDir(s), emb, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (delete %s to rebuild it)", err, indexDir(s))
	}
	o.tr.step("index files read", t0)
	r := &retrieval{ix: ix}
	stamp, fresh := indexFresh(s, ix)
	if fresh && !force && (b != nil || o.noVectors || !ix.MergeDue()) {
		// (Without a budget, segments due for a merge are merged now,
		// unless the caller reads no vector: show.)
		if b != nil || o.noVectors {
			return r, nil
		}
		// What the hooks' syncs left the vectors without (DeferVectors) is
		// embedded now; a refit that became due reads every lesson, as
		// the listing's sync below does. A catch-up that cannot be saved
		// leaves those lessons out of the vector arm, and says so: the
		// words still find them.
		skipped := 0
		st, refit, err := ix.CatchUpVectors(lessonReader(s, &skipped))
		if err != nil && o.progress != nil {
			fmt.Fprintf(o.progress, "borg: the lessons the hooks indexed are not embedded yet, so the vector arm leaves them out: %v\n", err)
		}
		o.tr.step(fmt.Sprintf("vectors caught up (%d embedded, refit due %v)", st.Embedded, refit), t0)
		if err != nil || !refit {
			return r, nil
		}
	}
	if !force {
		if done, err := syncChangedSince(s, ix, r, o, stamp); done || err != nil {
			if err != nil {
				_ = ix.Close()
				return nil, err
			}
			return r, nil
		}
	}
	stamps, stray, err := lessonFileStampsStray(s)
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	n := len(stamps) // a forced sync reads every lesson
	if !force {
		n, _ = ix.Pending(stamps)
	}
	if b != nil && !force && n > b.Lessons {
		r.behind = append(r.behind, fmt.Sprintf("%d lesson(s) to index, over the hook's budget of %d (BORG_SYNC_BUDGET)", n, b.Lessons))
		return r, nil
	}
	if n >= reopenAfterBuild {
		// An index built from many lessons is a build: its garbage is
		// many times what it keeps, and a short command's collector,
		// off below learnHeapLimit, would hold all of it.
		buildGC()
	}
	skipped := stray // never read: borg doctor names them, as borg list does
	fs, err := ix.SyncFiles(stamps, lessonReader(s, &skipped), stamp, force)
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	synced(s, o, fs, skipped, len(fs.Read) == len(stamps))
	if len(fs.Read) >= reopenAfterBuild {
		// A build holds what it embedded and analysed in memory; the
		// index opened again reads the files it wrote, mapped, as any
		// later command does, and what the build held goes. On a fresh
		// clone the build runs beside the log's, whose peak comes later.
		_ = ix.Close()
		if r.ix, err = index.Open(indexDir(s), emb, opts); err != nil {
			return nil, fmt.Errorf("%w (delete %s to rebuild it)", err, indexDir(s))
		}
	}
	return r, nil
}

// indexBuilt reports whether the index has been built once (its catalog
// exists). A command that finds it not built holds the store's build lock
// across its builds (openRetrieval): another command waits for that lock,
// not for the index's own write lock, which a sync waits for only briefly.
func indexBuilt(s *memfs.Store) bool {
	_, err := os.Stat(filepath.Join(indexDir(s), "catalog.bin"))
	return !errors.Is(err, fs.ErrNotExist)
}

// reopenAfterBuild is the fewest lessons read by a sync after which the
// index is opened again from its files.
const reopenAfterBuild = 2000

// lessonReader reads lesson files for a sync, counting those it skips.
func lessonReader(s *memfs.Store, skipped *int) func(ids []string) []domain.Lesson {
	return func(ids []string) []domain.Lesson {
		lessons, errs := s.ReadLessons(ids)
		*skipped += len(errs)
		return lessons
	}
}

// synced is what follows a sync of the index: a merge it left to the
// background, the files it skipped, the anchors of what it read (of
// every lesson when complete).
func synced(s *memfs.Store, o openOptions, fs index.FileSync, skipped int, complete bool) {
	if fs.MergeDue {
		// Fails open: the deltas keep serving until a merge happens.
		_ = startBackgroundReindex(s)
	}
	if o.progress != nil && skipped > 0 {
		fmt.Fprintf(o.progress, "borg: %d lesson file(s) skipped (run borg doctor)\n", skipped)
	}
	_ = s.UpdateAnchors(fs.Read, fs.Removed, complete)
}

// syncChangedSince brings ix up to date with the lesson files that
// changed since the HEAD of the index's stamp (borg learn, sync, sleep
// --apply and a pull all move HEAD), reading and stat'ing only those:
// the first Stop after a change costs that change, not a listing of
// lessons/. done is false when the change cannot be explained that way
// (no HEAD in the old stamp, HEAD unmoved while lessons/ changed — an
// uncommitted write —, the old commit gone, another process syncing
// meanwhile): the caller then lists lessons/ as before. An uncommitted
// file written in the same window as a commit is picked up at its own
// commit or by `borg recall --sync`, as an in-place edit always was.
func syncChangedSince(s *memfs.Store, ix *index.Index, r *retrieval, o openOptions, stamp string) (done bool, err error) {
	start := time.Now()
	since := ix.Stamp()
	changed, removed, ok := lessonChanges(s, since, stamp)
	o.tr.step(fmt.Sprintf("lesson changes read from the change journal or git (%d changed, %d removed, ok %v)", len(changed), len(removed), ok), start)
	if !ok {
		return false, nil
	}
	if b := o.budget; b != nil {
		if n, _ := ix.PendingChanged(changed, removed); n > b.Lessons {
			r.behind = append(r.behind, fmt.Sprintf("%d lesson(s) to index, over the hook's budget of %d (BORG_SYNC_BUDGET)", n, b.Lessons))
			return true, nil
		}
	}
	skipped := 0
	fs, err := ix.SyncChanged(since, changed, removed, lessonReader(s, &skipped), stamp)
	o.tr.step("index synced with the change set", start)
	if errors.Is(err, index.ErrNotSince) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	synced(s, o, fs, skipped, len(fs.Read) == fs.Lessons)
	o.tr.step("anchors updated", start)
	return true, nil
}

// lessonChanges lists the lesson files that changed between the HEAD
// recorded in the stamp since and the one in now, each with its file stamp
// as it is on disk now, or among removed when it is gone. borg's own
// commits answer from the store's change journal (Store.ChangedSince);
// any other commit in between (a pull, plain git) is asked of git
// diff-tree. ok is false when neither can say (see syncChangedSince).
func lessonChanges(s *memfs.Store, since, now string) (changed []index.FileStamp, removed []string, ok bool) {
	_, oldHead, ok1 := strings.Cut(since, "@")
	_, newHead, ok2 := strings.Cut(now, "@")
	if !ok1 || !ok2 || !memfs.IsObjectName(oldHead) || !memfs.IsObjectName(newHead) || oldHead == newHead {
		return nil, nil, false
	}
	paths, ok := changedPaths(s, oldHead, newHead)
	if !ok {
		return nil, nil, false
	}
	seen := map[string]bool{}
	for _, p := range paths {
		dir, id, _, isLesson := memfs.ParseLessonPath(p)
		if !isLesson || dir != memfs.LessonsDir || seen[id] {
			continue // not a lesson file (as LessonFiles would skip it)
		}
		seen[id] = true
		// The file LessonFiles would list for the id (a move between the
		// bucket and the flat layout changes both paths).
		f, err := s.StatLesson(id)
		switch {
		case errors.Is(err, memfs.ErrNotFound):
			removed = append(removed, id)
		case err != nil:
			return nil, nil, false
		default:
			changed = append(changed, index.FileStamp{ID: id, ModTime: f.ModTime, Size: f.Size})
		}
	}
	return changed, removed, true
}

// changedPaths is the paths under lessons/ that changed from oldHead to
// newHead: from the change journal, else from git diff-tree.
func changedPaths(s *memfs.Store, oldHead, newHead string) ([]string, bool) {
	if ch, rm, ok := s.ChangedSince(oldHead, newHead); ok {
		return append(ch, rm...), true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g := memfs.Git{Dir: s.Dir(), Isolate: true, DieWithParent: true, Env: []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}}
	out, err := g.Run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", oldHead, newHead, "--", memfs.LessonsDir+"/")
	if err != nil {
		return nil, false
	}
	return strings.Split(string(out), "\x00"), true
}

// notice is the one stderr line a hook writes when it answered from search
// state that is behind: what was left, and to whom.
func (r *retrieval) notice() string {
	if len(r.behind) == 0 {
		return ""
	}
	what := strings.Join(r.behind, " and ")
	if r.background != nil {
		return fmt.Sprintf("borg: %s; starting a background borg reindex failed (%v): run borg reindex; this answer uses the index as it is", what, r.background)
	}
	return fmt.Sprintf("borg: %s; a background borg reindex is bringing it up to date (borg doctor shows it); this answer uses the index as it is", what)
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
func (r *retrieval) usefulFunc(session string) func(lessons []domain.LessonInfo) []index.Usefulness {
	return func(lessons []domain.LessonInfo) []index.Usefulness {
		mems := r.summary.Memories(lessons, session, domain.DefaultWeights)
		byID := make(map[string]domain.Memory, len(mems))
		for _, m := range mems {
			byID[m.ID] = m
		}
		out := make([]index.Usefulness, len(lessons))
		for i, l := range lessons {
			m, ok := byID[l.ID]
			if !ok {
				out[i] = index.NeutralUsefulness()
				continue
			}
			out[i] = index.UsefulnessOf(m)
		}
		return out
	}
}

// The hooks' small interfaces, met by the store and the recaller the CLI
// gives them (checked at compile time).
var (
	_ hooks.Store    = (*memfs.Store)(nil)
	_ hooks.Recaller = (*storeRecaller)(nil)
	_ hooks.Warmer   = (*storeRecaller)(nil)
)

// storeRecaller serves the hooks' recalls from the store's index (brought
// up to date within the hook's budget, see openRetrieval). It opens
// the index and the log's summary on first use, or ahead of it (warm), so a
// hook that does not recall never pays for them and one that does can open
// them while it runs git.
type storeRecaller struct {
	store   *memfs.Store
	budget  *budget
	floor   float64   // the relevance floor (0: index.DefaultFloor)
	tr      *tracer   // BORG_TRACE's (nil: none)
	notice  io.Writer // where the hook says that it answered from state behind
	noticed sync.Once
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
		sr.closeMu.Lock()
		defer sr.closeMu.Unlock()
		sr.done = make(chan struct{})
		if sr.closed {
			// Closed before any open (the hook gave up): none starts.
			sr.err = errRecallerClosed
			close(sr.done)
			return
		}
		go func() {
			defer close(sr.done)
			sr.r, sr.err = openIndexFirst(sr.store, openOptions{budget: sr.budget, tr: sr.tr})
		}()
	})
}

// open waits for the index, starting to open it if warm did not; the
// log's summary may still be loading (summarized waits for it).
func (sr *storeRecaller) open(ctx context.Context) error {
	sr.warm()
	select {
	case <-sr.done:
		return sr.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// summarized waits for the log's summary, once the index is open, and says
// what the answer left behind (retrieval.notice), once.
func (sr *storeRecaller) summarized(ctx context.Context) error {
	if err := sr.open(ctx); err != nil {
		return err
	}
	select {
	case <-sr.r.summaryLoaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := sr.r.summarized(); err != nil {
		return err
	}
	if sr.notice != nil {
		sr.noticed.Do(func() {
			if line := sr.r.notice(); line != "" {
				fmt.Fprintln(sr.notice, line)
			}
		})
	}
	return nil
}

// errRecallerClosed: a recall after the hook closed its recaller.
var errRecallerClosed = errors.New("the hook's recall was closed")

// Close releases the index once it has been opened (waiting for an open
// under way); an open asked for after it fails with errRecallerClosed.
func (sr *storeRecaller) Close() {
	sr.closeMu.Lock()
	done := sr.done
	if sr.closed {
		sr.closeMu.Unlock()
		return
	}
	sr.closed = true
	sr.closeMu.Unlock()
	if done == nil {
		return
	}
	<-done
	if sr.r != nil {
		// What the summary leaves behind starts the background reindex.
		_ = sr.r.summarized()
		_ = sr.r.Close()
	}
}

// Recall implements hooks.Recaller.
func (sr *storeRecaller) Recall(ctx context.Context, q hooks.RecallQuery) ([]hooks.Recalled, error) {
	if err := sr.open(ctx); err != nil {
		return nil, err
	}
	// The Stop hook's asks explore (a lesson no session has asked may take
	// the last slot); early delivery wants consolidated lessons only.
	// The search starts on the index alone: usefulness and the links wait
	// for the log's summary, which a search with no candidate able to clear
	// the floor never needs. (A summary that fails fails the recall below,
	// whatever the search made of its absence.)
	start := time.Now()
	now := start.UnixMilli()
	useful := sr.r.usefulFunc(q.Session)
	query := index.Query{Text: q.Text, K: q.K, Repo: q.Repo, Session: q.Session, Arms: index.HookArmWeights(),
		UsefulFunc: func(ls []domain.LessonInfo) []index.Usefulness {
			if sr.summarized(ctx) != nil {
				return nil // neutral
			}
			return useful(ls)
		},
		LinksFunc: func() []domain.GraphEdge {
			if sr.summarized(ctx) != nil {
				return nil
			}
			return sr.r.lessonLinks(now)
		},
		OnlyOverBar: true, Floor: sr.floor, Explore: !q.ConsolidatedOnly, Exclude: q.Exclude}
	if sr.tr != nil {
		query.Trace = func(step string) { sr.tr.step("search: "+step, start) }
	}
	hits, err := sr.r.ix.Search(ctx, query)
	if err != nil {
		return nil, err
	}
	if err := sr.summarized(ctx); err != nil {
		return nil, err
	}
	var out []hooks.Recalled
	for _, h := range hits {
		if len(h.SupersededBy) > 0 || h.UpdatedBy != "" {
			continue
		}
		// Early delivery reaches the agent unasked: the lesson must be
		// consolidated on evidence no single pusher but the engineer
		// could have written alone (domain.EarlyTrusted).
		if m, _ := sr.r.memory(h.ID, q.Session); q.ConsolidatedOnly && !domain.EarlyTrusted(m, q.Engineer, domain.DefaultWeights) {
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
	if err := sr.summarized(ctx); err != nil {
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
		if !near[li.ID] && (tag == "" || tag == q.Repo) && !dormant[li.ID] && sr.r.ix.Flag(li.ID) == "" {
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

// lessonLinks are the links sessions made between lessons (acted on
// together), at their weight at nowMS, for the lateral arm.
func (r *retrieval) lessonLinks(nowMS int64) []domain.GraphEdge {
	if r.summary == nil {
		return nil
	}
	return r.summary.LessonLinks(nowMS)
}
