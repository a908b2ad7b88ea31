package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

// reindexLockWait is how long a reindex waits for another process writing
// the index (a hook's sync within its budget): it runs in the background or
// at a user's request, so it waits rather than keep its work in memory.
const reindexLockWait = 5 * time.Minute

// reindexCommand brings the search index up to date with the lessons, and
// the log's summary cache with the log: what recall and the hooks do on
// demand, run ahead of them. Hooks start it in the background when either
// is too large a job for their budget.
func reindexCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "reindex",
		Usage:     "bring the search index and the log's summary up to date (hooks run it in the background after large changes)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.BoolFlag{Name: "all", Usage: "re-read every lesson file, not only those that changed"},
			&cli.StringFlag{Name: "background", Hidden: true, Usage: "the `TOKEN` of a background reindex a hook started"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("reindex takes no arguments")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			if token := c.String("background"); token != "" {
				return runBackgroundReindex(c, e, s, token)
			}
			unlock, err := lockReindex(s, reindexLockWait)
			if errors.Is(err, memfs.ErrLocked) {
				return fail(exitFail, "wait for the reindex running in the background: %v", err)
			}
			if err != nil {
				return fail(exitFail, "cannot take the reindex lock: %v (check that you can write the store's .borg/index; a store you cannot write is searched in memory and needs no reindex)", err)
			}
			defer unlock()
			line, err := reindexWith(c.Context, e, s, c.Bool("all"))
			if err != nil {
				return fail(exitFail, "%v", err)
			}
			_, err = fmt.Fprintln(e.out, line)
			return err
		},
	}
}

// reindexWith brings the index and the summary up to date; line says what
// it did.
func reindexWith(ctx context.Context, e *env, s *memfs.Store, all bool) (string, error) {
	defer tuneGC(reindexHeapLimit)()
	start := time.Now()
	r, err := openRetrieval(ctx, s, openOptions{force: all, progress: e.err, lockWait: reindexLockWait})
	if err != nil {
		return "", err
	}
	defer r.Close()
	return fmt.Sprintf("index up to date: %d lessons, log summary cached (%s)", r.ix.Len(), time.Since(start).Round(time.Millisecond)), nil
}

// runBackgroundReindex is reindex as a hook starts it: it records its
// progress in the status file (see background.go) and leaves the work to a
// reindex already running.
func runBackgroundReindex(c *cli.Context, e *env, s *memfs.Store, token string) error {
	st, _ := readBackgroundStatus(s)
	if st.Token != token {
		st = backgroundStatus{Token: token, StartedMS: time.Now().UnixMilli()}
	}
	st.PID = os.Getpid()
	_ = writeBackgroundStatus(s, st)
	finish := func(result string, failed bool) {
		st.FinishedMS, st.Result, st.Failed = time.Now().UnixMilli(), result, failed
		_ = writeBackgroundStatus(s, st)
	}
	unlock, err := lockReindex(s, 0)
	if errors.Is(err, memfs.ErrLocked) {
		finish("another reindex was running", false)
		return nil
	}
	if err != nil {
		finish(err.Error(), true)
		return fail(exitFail, "%v", err)
	}
	defer unlock()
	line, err := func() (line string, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return reindexWith(c.Context, e, s, false)
	}()
	if err != nil {
		finish(err.Error(), true)
		return fail(exitFail, "%v", err)
	}
	finish(line, false)
	_, err = fmt.Fprintln(e.out, line)
	return err
}

// reindexHeapLimit is the heap a reindex grows to before it collects
// garbage. A rebuild allocates several times its live heap, and at the
// default GOGC the collector marks the same live lessons, postings and
// vectors again and again. A rebuild of 100,000 lessons allocates about
// 1 GB in all (the line reader, the index's own buffers), so 1 GiB lets it
// collect rarely without growing the peak; a larger limit grows the peak
// and a smaller one collects too often (BENCHMARKS.md, "scale").
const reindexHeapLimit = 1024 << 20

// tuneGC turns the collector off below limit (for a reindex, a learn, a
// hook: commands that allocate much and live briefly) and returns what
// puts the settings back. After each collection the limit is raised to
// a quarter above the live heap, plus what the runtime holds beside its
// objects, when that is more: a store whose live heap
// nears the limit would otherwise be collected over and over, and the
// default's doubling would let a cold build of a big team's log (whose
// live heap is mostly the ledger it keeps) take twice the memory it needs.
// A GOGC or GOMEMLIMIT in the environment is left alone.
func tuneGC(limit int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gcTune.Lock()
	defer gcTune.Unlock()
	oldPercent, oldLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(limit)
	gcTune.on, gcTune.limit, gcTune.headroom, gcTune.building = true, limit, 4, false
	// The limit counts all the memory the runtime holds (less what it gave
	// back), which is more than the live heap: the spans' unused ends and
	// the runtime's own books. A limit of the live heap and its headroom
	// alone lands below that, and the collector then runs back to back.
	// runtime.ReadMemStats, not runtime/metrics, reads them: that package's
	// initialiser would run at the start of every borg process (hooks
	// included) for a reading taken once per collection of a long build.
	var watch func()
	watch = func() {
		// A cleanup runs once per collection that finds its sentinel gone.
		runtime.AddCleanup(new([64]byte), func(struct{}) {
			gcTune.Lock()
			defer gcTune.Unlock()
			if !gcTune.on {
				return
			}
			// Just after a collection, the heap's objects are its live
			// heap and little more; what the runtime holds beside the
			// heap's objects and its free spans is its overhead.
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			live := int64(ms.HeapAlloc)
			overhead := max(int64(ms.Sys)-int64(ms.HeapAlloc)-int64(ms.HeapIdle), 0)
			if want := live + live/gcTune.headroom + overhead; want > gcTune.limit {
				gcTune.limit = want
				debug.SetMemoryLimit(gcTune.limit)
			}
			watch()
		}, struct{}{})
	}
	watch()
	return func() {
		gcTune.Lock()
		defer gcTune.Unlock()
		gcTune.on, gcTune.building = false, false
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// gcTune is tuneGC's state: whether it is on, the limit now, and the
// headroom the limit keeps above the live heap (1/headroom of it).
var gcTune struct {
	sync.Mutex
	on       bool
	limit    int64
	headroom int64
	// building: buildGC tuned a build from the whole log, and before is
	// the limit and headroom endBuildGC puts back.
	building bool
	before   [2]int64
}

// buildHeapLimit is where a cold build of a big team's log starts
// collecting: its garbage (decoded lines, git's output) is many times its
// live heap, and under a short command's limit it would hold hundreds of
// megabytes of it before the first collection.
const buildHeapLimit = 256 << 20

// endBuildGC ends buildGC's tuning when the build is over: the limit and
// headroom go back to what they were before it (the next collection
// raises the limit to the live heap and its headroom), so that the ledger
// the build let go of is collected and its memory returned at once, not
// kept under the build's raised limit while the command goes on.
func endBuildGC() {
	gcTune.Lock()
	defer gcTune.Unlock()
	if gcTune.on && gcTune.building {
		gcTune.building = false
		gcTune.limit, gcTune.headroom = gcTune.before[0], gcTune.before[1]
		debug.SetMemoryLimit(gcTune.limit)
	}
}

// collectBuild has a build's collector start over from buildHeapLimit:
// the limit, raised to an eighth above the largest live heap so far, is
// set back, which collects now what the build let go of (its ledger), and
// the next collections raise it again to what is live.
func collectBuild() {
	gcTune.Lock()
	defer gcTune.Unlock()
	if gcTune.on && gcTune.building {
		gcTune.limit = buildHeapLimit
		debug.SetMemoryLimit(gcTune.limit)
	}
}

// buildGC tunes the collector for a build from the whole log: tuneGC's
// limit lowered to buildHeapLimit, or tuneGC at that limit in a command
// that did not tune it (init, sync, serve: whichever first needs the
// derived state of a fresh clone). The limit then grows to an eighth above
// the live heap, not a quarter: the build's live heap is mostly the ledger
// it keeps to the end, and what it frees along the way is little beside.
func buildGC() {
	gcTune.Lock()
	on := gcTune.on
	gcTune.Unlock()
	if !on {
		_ = tuneGC(buildHeapLimit)
	}
	gcTune.Lock()
	defer gcTune.Unlock()
	if gcTune.on && !gcTune.building {
		gcTune.building = true
		gcTune.before = [2]int64{gcTune.limit, gcTune.headroom}
		gcTune.limit = min(gcTune.limit, buildHeapLimit)
		gcTune.headroom = 8
		debug.SetMemoryLimit(gcTune.limit)
	}
}
