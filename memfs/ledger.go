package memfs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// ledgerCacheVersion changes whenever the cache's layout or the ledger's
// encoding changes; a cache of another version is rebuilt.
const ledgerCacheVersion = 6

// tailGuard is how many bytes before a folded offset the cache fingerprints
// to notice a log file rewritten under it (a merge, a reset).
const tailGuard = 256

const ledgerCacheFile = cacheDir + "/ledger.bin"

// rewriteAfter is how many newly folded bytes make LoadLedger rewrite its
// cache. Below it the new lines are folded in memory on each load (cheap),
// which spares the cost of encoding the whole ledger after every append.
const rewriteAfter = 256 << 10

// ledgerCache is the incremental state of LoadLedger. On disk it is a JSON
// header line (version, files) followed by the ledger's binary form
// (domain.WriteLedger).
type ledgerCache struct {
	Version int                   `json:"version"`
	Files   map[string]foldedFile `json:"files"`
	Ledger  *domain.Ledger        `json:"-"`
}

// writeCache writes the cache to w.
func writeCache(w io.Writer, c *ledgerCache) error {
	head, err := json.Marshal(c)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(append(head, '\n')); err != nil {
		return err
	}
	if err := domain.WriteLedger(bw, c.Ledger); err != nil {
		return err
	}
	return bw.Flush()
}

// decodeCache reads what encodeCache wrote, or reports why it cannot.
func decodeCache(data []byte) (*ledgerCache, error) {
	head, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, domain.ErrLedgerCodec
	}
	var c ledgerCache
	if err := json.Unmarshal(head, &c); err != nil {
		return nil, err
	}
	if c.Version != ledgerCacheVersion {
		return nil, fmt.Errorf("cache version %d", c.Version)
	}
	var err error
	if c.Ledger, err = domain.ParseLedger(rest); err != nil {
		return nil, err
	}
	if c.Files == nil {
		c.Files = map[string]foldedFile{}
	}
	return &c, nil
}

// foldedFile records how much of one log file the ledger has folded in.
type foldedFile struct {
	Offset int64  `json:"offset"`
	Head   string `json:"head"` // hash of the first bytes up to tailGuard
	Tail   string `json:"tail"` // hash of the tailGuard bytes before Offset
	// Stamp is the file's fileStamp when Offset was its size ("" when a
	// torn line or a concurrent append lay past it).
	Stamp string `json:"stamp,omitempty"`
	// Runs is who the folded bytes were counted as (see attrib.go): a
	// cache whose attribution changed under it is rebuilt.
	Runs []attribRun `json:"runs,omitempty"`
}

// LoadLedger returns the ledger of every event in the logs (the shared ones
// and the local one), folding in only the lines appended since the last call:
// the ledger and, per file, the offset already folded are cached in
// .borg/cache. A file that shrank, vanished or changed under its offset makes
// it rebuild from scratch. Junk lines are skipped (ReadEvents reports them).
func (s *Store) LoadLedger() (*domain.Ledger, error) {
	l, err := s.loadLedger()
	if err != nil {
		return nil, fmt.Errorf("load ledger: %w", err)
	}
	return l, nil
}

func (s *Store) loadLedger() (*domain.Ledger, error) {
	// A command's ledger counts every committed line as its committer's.
	// Without a refresh (no git CLI, say) the lines committed since the
	// last one count as Unattributed: doctor reports why.
	_ = s.refreshAttribution(context.Background())
	files, err := s.logFiles()
	if err != nil {
		return nil, err
	}
	cache, save, err := s.foldLedger(files, false)
	if err != nil {
		return nil, err
	}
	save()
	return cache.Ledger, nil
}

// foldLedger brings the ledger cache up to date with files and returns it
// (the ledger and the offsets it has folded) and save, which writes it
// when enough changed. save only reads the ledger, so a caller may run it
// beside its own reads. locked says the caller holds the build lock (flock
// is not reentrant: a second lock of the same file by this process would
// wait for itself).
func (s *Store) foldLedger(files []string, locked bool) (_ *ledgerCache, save func(), _ error) {
	a := s.newAttributor()
	valid := func() (*ledgerCache, bool) {
		cache := s.readLedgerCache()
		if cache == nil {
			return nil, false
		}
		ok, changed := s.cacheStillValid(cache.Files, files, a)
		if !ok {
			return nil, false
		}
		return cache, changed
	}
	cache, relabelled := valid()
	if cache == nil && !locked {
		// A build from the whole log: one process at a time builds it, and
		// one that waited takes what the other built, so this one writes
		// the cache before it lets go of the lock.
		unlock := s.lockBuild()
		defer unlock()
		defer func() {
			if save != nil {
				save()
				save = func() {}
			}
		}()
		cache, relabelled = valid()
	}
	fresh := cache == nil
	if fresh {
		cache = &ledgerCache{Version: ledgerCacheVersion, Files: map[string]foldedFile{}, Ledger: domain.NewLedger()}
	}
	var folded int64
	tick := s.buildTicker(fresh, files)
	// The events' strings are the ledger's own: it keeps each once.
	in := &interner{table: cache.Ledger.Intern}
	for _, name := range files {
		ff := cache.Files[name]
		before := ff.Offset
		moved, err := s.foldFile(cache.Ledger.Add, in, name, &ff, a, tick.file(ff.Offset))
		if err != nil {
			return nil, nil, err
		}
		if moved {
			cache.Files[name] = ff
			folded += ff.Offset - before
		}
		tick.fileDone(name)
	}
	tick.done()
	save = func() {}
	if fresh || relabelled || folded >= rewriteAfter {
		// A cache that cannot be written costs time, not correctness.
		// save writes the cache as it is now: its caller may let go of
		// the ledger meanwhile.
		snap := *cache
		save = func() {
			p := filepath.Join(s.dir, filepath.FromSlash(ledgerCacheFile))
			tmp := filepath.Join(s.dir, tmpDir)
			if os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.MkdirAll(tmp, 0o755) == nil {
				_ = fsutil.WriteFileAtomicFunc(p, 0o644, func(f *os.File) error { return writeCache(f, &snap) }, fsutil.TempDir(tmp))
			}
		}
	}
	return cache, save, nil
}

func (s *Store) readLedgerCache() *ledgerCache {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(ledgerCacheFile)))
	if err != nil {
		return nil
	}
	c, err := decodeCache(data)
	if err != nil {
		return nil
	}
	return c
}

// cacheStillValid checks that every folded file still holds, unchanged, the
// bytes the cache folded, counted as the same authors (attribution may have
// found the committer of lines counted as written: that changes nothing
// when the committer is who they say they are). changed reports that the
// runs of some file were updated in folded (the caller rewrites it).
func (s *Store) cacheStillValid(folded map[string]foldedFile, files []string, a *attributor) (ok, changed bool) {
	present := map[string]bool{}
	for _, f := range files {
		present[f] = true
	}
	for name, ff := range folded {
		if !present[name] {
			return false, false
		}
		if !s.unchanged(a.stamps, name, ff.Stamp) {
			head, tail, size, stamp, err := s.fingerprint(name, ff.Offset)
			if err != nil || size < ff.Offset || head != ff.Head || tail != ff.Tail {
				return false, false
			}
			if stamp != ff.Stamp {
				// Stamped now that it is old enough: the next reader
				// stats the file instead of reading it.
				ff.Stamp = stamp
				folded[name] = ff
				changed = true
			}
		}
		now := s.runs(a, name, ff.Offset)
		if slices.Equal(now, ff.Runs) {
			continue
		}
		if !s.sameAuthors(name, ff.Runs, now) {
			return false, false
		}
		ff.Runs = now
		folded[name] = ff
		changed = true
	}
	return true, changed
}

// sameAuthors reports whether counting a file's lines by the runs now
// gives each event the author it was counted under by the runs before:
// where they differ, only lines counted as written that a commit by their
// own author has since attributed may.
func (s *Store) sameAuthors(name string, before, now []attribRun) bool {
	var start int64
	i, j := 0, 0
	for i < len(before) && j < len(now) {
		end := min(before[i].End, now[j].End)
		b, n := before[i].By, now[j].By
		if b != n {
			if b != asWritten || n == asWritten || n == Unattributed || !s.allWrittenBy(name, start, end, n) {
				return false
			}
		}
		start = end
		if before[i].End == end {
			i++
		}
		if now[j].End == end {
			j++
		}
	}
	return i == len(before) && j == len(now)
}

// allWrittenBy reports whether every event in name's bytes [from, to)
// claims author by.
func (s *Store) allWrittenBy(name string, from, to int64, by string) bool {
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	ok := true
	_, err = scanEvents(io.NewSectionReader(f, from, to-from), from, nil, func(_ int, _ int64, e domain.Event, reason string) {
		if reason == "" && e.Author != by {
			ok = false
		}
	}, true)
	return err == nil && ok
}

// fingerprint hashes a file's first bytes and the bytes before off.
// stamp is the file's fileStamp when it holds exactly off bytes, else "".
func (s *Store) fingerprint(name string, off int64) (head, tail string, size int64, stamp string, err error) {
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return "", "", 0, "", err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", "", 0, "", err
	}
	size = fi.Size()
	if size < off {
		return "", "", size, "", nil
	}
	if size == off && time.Since(fi.ModTime()) > racyWindow {
		stamp = fileStamp(fi)
	}
	sum := func(from, to int64) (string, error) {
		buf := make([]byte, to-from)
		if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		h := sha256.Sum256(buf)
		return hex.EncodeToString(h[:8]), nil
	}
	if head, err = sum(0, min(off, tailGuard)); err != nil {
		return "", "", 0, "", err
	}
	if tail, err = sum(max(0, off-tailGuard), off); err != nil {
		return "", "", 0, "", err
	}
	return head, tail, size, stamp, nil
}

// fileStamp identifies a file's state with one stat: its size,
// modification time, device and inode. Log files are only appended to
// (a size change) and git replaces a file it checks out (a new inode), so
// a file whose stamp is the one taken when all its bytes were read still
// holds them: a reader of a big team's log, a thousand segments that never
// change, then stats each one instead of reading it.
// Where the system does not say a file's inode, there is no stamp.
func fileStamp(fi os.FileInfo) string {
	dev, ino, _, _ := statIDs(fi)
	if ino == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d", fi.Size(), fi.ModTime().UnixNano(), dev, ino)
}

// racyWindow is how old a file's modification time must be for its stamp
// to be trusted: a file written again within the file system's timestamp
// granularity of the stamp could keep its size and time (git calls such
// entries racily clean). A log's last segment, appended to just now, is
// read each time instead.
const racyWindow = 2 * time.Second

// unchanged reports whether the file name still has stamp (never for "").
// memo, when not nil, keeps each file's stamp for the rest of one read of
// the logs, whose steps each ask about every file.
func (s *Store) unchanged(memo map[string]string, name, stamp string) bool {
	if stamp == "" {
		return false
	}
	now, ok := memo[name]
	if !ok {
		if fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(name))); err == nil && fi.Mode().IsRegular() {
			now = fileStamp(fi)
		}
		if memo != nil {
			memo[name] = now
		}
	}
	return now == stamp
}

// foldFile passes the events of the whole lines of name past ff.Offset to add
// and advances ff. It reports whether the offset moved.
func (s *Store) foldFile(add func(domain.Event), in *interner, name string, ff *foldedFile, a *attributor, at func(off int64)) (bool, error) {
	if s.unchanged(a.stamps, name, ff.Stamp) {
		return false, nil // every byte folded, none since
	}
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(ff.Offset, io.SeekStart); err != nil {
		return false, err
	}
	end, err := scanEvents(f, ff.Offset, in, func(_ int, off int64, e domain.Event, reason string) {
		if reason == "" {
			if by := s.label(a, name, off); counted(by) {
				add(attribute(e, by))
			}
		}
		if at != nil {
			at(off)
		}
	}, false)
	if err != nil {
		return false, fmt.Errorf("fold %s: %w", name, err)
	}
	if end == ff.Offset {
		return false, nil
	}
	head, tail, _, stamp, err := s.fingerprint(name, end)
	if err != nil {
		return false, err
	}
	*ff = foldedFile{Offset: end, Head: head, Tail: tail, Stamp: stamp, Runs: s.runs(a, name, end)}
	return true, nil
}

// Memories derives every given lesson's memory from the cached summary (see
// Summary) as of session's tick under weights w.
func (s *Store) Memories(lessons []domain.Lesson, session string, w domain.Weights) ([]domain.Memory, error) {
	sum, err := s.Summary()
	if err != nil {
		return nil, err
	}
	return sum.Memories(LessonInfos(lessons, s.now()), HashSession(session), w), nil
}

// LessonInfos is what domain's derivation needs to know of each lesson, as
// of the instant at. A creation date more than a day after at is not
// believed: it is treated as unknown (the lesson then ages from the clock's
// start, as one with no date). A lesson dated in the far future would
// otherwise sit after every session forever and never decay.
func LessonInfos(lessons []domain.Lesson, at time.Time) []domain.LessonInfo {
	out := make([]domain.LessonInfo, len(lessons))
	for i, l := range lessons {
		out[i] = domain.LessonInfo{ID: l.ID, Reach: l.Reach}
		if c := domain.BelievedCreated(l.Created, at); !c.IsZero() {
			out[i].CreatedMS = c.UnixMilli()
		}
	}
	return out
}

// The summary cache: the domain.Summary of the logs up to the offsets its
// header records, as a JSON header line and the summary's binary encoding.
// It is a second cache beside the ledger's: a query reads the summary (its
// large columns in place, mapped) and folds the lines appended since, and
// only loads the full ledger when those lines cannot be folded without it.
const (
	summaryCacheFile    = cacheDir + "/summary.bin"
	summaryCacheVersion = 3
	// summaryRewriteAfter is how many newly folded bytes make Summary
	// rewrite its cache; below it the tail is folded on each call, so a
	// hook folds at most 16 KiB (about 140 events) and only the odd hook
	// pays for a rewrite (BenchmarkSummaryRewrite1M measures it).
	summaryRewriteAfter = 16 << 10
	// summaryRewriteLagMax bounds the tail a deferred rewrite may leave:
	// past it the caller rewrites whatever it asked, so a background
	// process that never comes cannot let every hook fold more and more.
	summaryRewriteLagMax = 4 * summaryRewriteAfter
)

// summaryRebuilds counts the summaries made from the full ledger (tests
// read it to see that the fast path is taken).
var summaryRebuilds atomic.Int64

type summaryHead struct {
	Version int                   `json:"version"`
	Files   map[string]foldedFile `json:"files"`
	size    int64                 // the cache file's, as read
}

// Summary returns the summary (domain.Summary) of every event in the logs:
// the cached one with the lines appended since folded in. When those lines
// need the full ledger (a session older than the clock's last, a result
// overturning a change), or the cache is missing, stale or from another
// version, it is rebuilt from LoadLedger. Like LoadLedger it only ever
// reads the logs; the cache can be deleted at any time.
func (s *Store) Summary() (*domain.Summary, error) {
	_ = s.refreshAttribution(context.Background()) // as in loadLedger
	sum, _, err := s.summary(math.MaxInt64, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("load summary: %w", err)
	}
	return sum, nil
}

// SummaryWithin is Summary when the cache serves (with the appended lines
// folded in) or when the logs it would be rebuilt from hold at most
// maxBytes; otherwise it returns nil without an error: a rebuild from a
// large log takes seconds, and a hook asks for this and leaves that
// rebuild to a background process. A negative maxBytes never rebuilds.
//
// Once enough lines were appended, Summary rewrites the cache with them,
// which copies it whole (a 10,000-lesson team with 1,000,000 events:
// 19 MB, a hook's slowest step by far, BENCHMARKS.md). SummaryWithin does
// so only for a cache of at most rewriteBytes; for a larger one it folds
// the lines and reports the rewrite due, for the caller to leave to a
// background process too (Summary in another process rewrites it), until
// the appended lines reach summaryRewriteLagMax.
func (s *Store) SummaryWithin(maxBytes, rewriteBytes int64) (sum *domain.Summary, rewriteDue bool, err error) {
	sum, rewriteDue, err = s.summary(maxBytes, rewriteBytes)
	if err != nil {
		return nil, false, fmt.Errorf("load summary: %w", err)
	}
	return sum, rewriteDue, nil
}

// LastSummary is the summary cache as it was last written, whether or not
// it still matches the logs (nil when there is none): what a hook weighs
// lessons by while a background process rebuilds the summary, rather than
// weigh every lesson as new.
func (s *Store) LastSummary() *domain.Summary {
	_, sum := s.readSummaryCache()
	return sum
}

// summary serves the cache, or rebuilds it when the logs hold at most
// rebuildBytes, or returns nil. A due rewrite of a cache larger than
// rewriteBytes is reported instead of done (SummaryWithin).
func (s *Store) summary(rebuildBytes, rewriteBytes int64) (*domain.Summary, bool, error) {
	files, err := s.logFiles()
	if err != nil {
		return nil, false, err
	}
	if sum, due, err := s.cachedSummary(files, rewriteBytes); sum != nil || err != nil {
		return sum, due, err
	}
	if rebuildBytes < 0 || s.logBytes(files) > rebuildBytes {
		return nil, false, nil
	}
	unlock := s.lockBuild()
	defer unlock()
	if sum, due, err := s.cachedSummary(files, rewriteBytes); sum != nil || err != nil {
		return sum, due, err // another process built it while this one waited
	}
	summaryRebuilds.Add(1)
	cache, save, err := s.foldLedger(files, true)
	if err != nil {
		return nil, false, err
	}
	report := func(float64) {}
	if s.progress != nil {
		total := s.logBytes(files)
		report = func(part float64) { s.progress(PhaseSummary, int64(part*float64(total)), total) }
		report(0)
		defer report(1)
	}
	// The ledger's cache is written while the summary is made from it:
	// both only read the ledger. The ledger, the largest thing a build
	// holds, is let go of once the summary's keys are listed: the key
	// table, the summary's largest part, is made without it (once the
	// write is done).
	var wg sync.WaitGroup
	wg.Go(save)
	build := cache.Ledger.StartSummary()
	cache.Ledger = nil
	report(0.5) // the summary's keys are listed: the ledger is let go of
	sum := build.Finish()
	wg.Wait()
	_ = s.writeSummaryCache(cache.Files, sum) // a cache: one not written costs time only
	return sum, false, nil
}

// cachedSummary is the summary cache with the lines appended since folded
// in, or nil when the cache is missing, stale, or the new lines need the
// full ledger. A due rewrite of a cache larger than rewriteBytes is left
// undone and reported (due), short of summaryRewriteLagMax.
func (s *Store) cachedSummary(files []string, rewriteBytes int64) (sum *domain.Summary, due bool, err error) {
	a := s.newAttributor()
	head, sum := s.readSummaryCache()
	if sum != nil {
		if ok, _ := s.cacheStillValid(head.Files, files, a); !ok {
			sum = nil
		}
	}
	if sum != nil {
		var tail []domain.Event
		var folded int64
		moved := map[string]foldedFile{}
		for _, name := range files {
			ff := head.Files[name]
			before := ff.Offset
			ok, err := s.foldFile(func(e domain.Event) { tail = append(tail, e) }, nil, name, &ff, a, nil)
			if err != nil {
				return nil, false, err
			}
			if ok {
				moved[name] = ff
				folded += ff.Offset - before
			}
		}
		if sum.Fold(tail) {
			// A relabelling (a commit attributed lines this cache counted
			// as written, or a file got old enough to be stamped) leaves
			// every count as it was, and the next reader finds the same by
			// the same checks (cacheStillValid): it alone rewrites nothing.
			// A rewrite of a big team's summary is a hook's slowest step
			// (BENCHMARKS.md), so it waits for the tail.
			if folded >= summaryRewriteAfter {
				if head.size > rewriteBytes && folded < summaryRewriteLagMax {
					return sum, true, nil
				}
				for name, ff := range moved {
					head.Files[name] = ff
				}
				if err := s.writeSummaryCache(head.Files, sum); errors.Is(err, ErrSummaryCorrupt) {
					// A lesson the fold never read turned out corrupt
					// when copied: built again from the log.
					return nil, false, nil
				}
			}
			return sum, false, nil
		}
	}
	return nil, false, nil
}

// buildLockFile serialises the builds of the logs' derived state (the
// ledger and summary caches) from the whole log. A build of a large log
// takes long and much memory; two commands started together on a fresh
// clone (a recall and a hook's background reindex, say) would each build
// it, at once. The second waits for the first and reads what it built.
const buildLockFile = cacheDir + "/build.lock"

// buildWait bounds the wait for another process's build; past it this
// process builds too, as it would without the lock.
const buildWait = 10 * time.Minute

// lockBuild takes the build lock, waiting up to buildWait, and returns its
// release. A lock that cannot be taken (a store this user cannot write, a
// file system without locks) is no reason not to build: it returns a no-op.
func (s *Store) lockBuild() func() {
	if s.building.Load() {
		return func() {} // held for this whole process (HoldBuild)
	}
	p := filepath.Join(s.dir, filepath.FromSlash(buildLockFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return func() {}
	}
	unlock, err := LockPath(p, buildWait)
	if err != nil {
		return func() {}
	}
	return unlock
}

// HoldBuild takes the build lock for this process until release is
// called: the store's own builds here (the walk of history, the ledger,
// the summary) run under it, and a process waiting for the lock waits
// for everything this one builds meanwhile, its search index included. A
// command that finds a fresh clone holds it across its whole build, so
// that a second command started beside it builds nothing and holds
// little. It waits as a build does (buildWait).
func (s *Store) HoldBuild() (release func()) {
	unlock := s.lockBuild()
	s.building.Store(true)
	return func() {
		s.building.Store(false)
		unlock()
	}
}

// Cold reports whether the log has no summary cache: the store is a fresh
// clone (or its caches were deleted), and the first command that needs the
// log's derived state builds it from the whole log.
func (s *Store) Cold() bool {
	_, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(summaryCacheFile)))
	return errors.Is(err, fs.ErrNotExist)
}

// logBytes is the size of the named log files (a file that cannot be
// read counts as nothing: the rebuild reports it).
func (s *Store) logBytes(files []string) int64 {
	var n int64
	for _, name := range files {
		if fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(name))); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// readSummaryCache maps and parses the summary cache; nil when there is none
// usable.
func (s *Store) readSummaryCache() (*summaryHead, *domain.Summary) {
	data, unmap, err := fsutil.Map(filepath.Join(s.dir, filepath.FromSlash(summaryCacheFile)))
	if err != nil {
		return nil, nil
	}
	line, rest, ok := bytes.Cut(data, []byte{'\n'})
	var head summaryHead
	if !ok || json.Unmarshal(line, &head) != nil || head.Version != summaryCacheVersion {
		unmap()
		return nil, nil
	}
	sum, err := ParseSummary(rest)
	if err != nil {
		unmap()
		return nil, nil
	}
	// The summary reads its columns in place: the mapping goes with it.
	runtime.AddCleanup(sum, func(unmap func()) { unmap() }, unmap)
	if head.Files == nil {
		head.Files = map[string]foldedFile{}
	}
	head.size = int64(len(data))
	return &head, sum
}

// writeSummaryCache writes sum as the summary of files up to their offsets.
// A cache that cannot be written costs time, not correctness; the error
// says why, and ErrSummaryCorrupt that sum itself is corrupt.
func (s *Store) writeSummaryCache(files map[string]foldedFile, sum *domain.Summary) error {
	head, err := json.Marshal(summaryHead{Version: summaryCacheVersion, Files: files})
	if err != nil {
		return err
	}
	p := filepath.Join(s.dir, filepath.FromSlash(summaryCacheFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeAtomicFunc(s, p, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if _, err := w.Write(append(head, '\n')); err != nil {
			return err
		}
		if err := WriteSummary(w, sum); err != nil {
			return err
		}
		return w.Flush()
	})
}
