package sleep

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// LessonFile is one lesson of a snapshot with the bytes it was read from, so
// a lesson a phase only moves keeps its bytes (git sees a pure rename).
type LessonFile struct {
	Lesson domain.Lesson
	Raw    []byte
	// Path is where the file is (memfs.LessonPath of the id when empty):
	// a phase rewrites a lesson in place, in the flat layout too, and
	// archives it to its bucket of archive/.
	Path string
}

// Snapshot is everything the planner reads, taken once: the lessons as
// committed at Base, the outcome log's events before the sleep's instant, and
// one vector per lesson. Plan reads nothing else.
type Snapshot struct {
	// Date is the sleep's date at 00:00 UTC: the sleep's instant. Events at
	// or after it are left for the next sleep, so a sleep replayed for a past
	// date plans the same whatever was logged since.
	Date time.Time
	// Base is the commit the lessons were read from (the store's branch).
	Base string
	// LastSleep is the date of the latest sleep merged into Base's history
	// (its Borg-Sleep trailer), zero when none was.
	LastSleep time.Time
	// Lessons are the lesson files of lessons/ at Base (in their buckets or
	// the flat layout), sorted by id.
	Lessons []LessonFile
	// Skipped names the files of lessons/ that do not parse, with the reason.
	Skipped []string
	// Events are the log's events with ms before Date, sorted by (ms, id).
	Events []domain.Event
	// Vectors holds one vector per lesson (key: id), from EmbedderID.
	Vectors    []domain.KeyedVector
	EmbedderID string
}

// LoadSnapshot reads a snapshot of st at base (a commit hash or ref) for the
// sleep of date: the lessons through one pass over the commit's lessons/
// tree, the events of every log (shared and local) before date, and vectors
// from emb (the default n-gram embedder when nil, fitted on these lessons
// when it is an unfitted corpus fitter).
func LoadSnapshot(ctx context.Context, st *memfs.Store, base string, date time.Time, emb index.Embedder) (Snapshot, error) {
	date = dayOf(date)
	snap := Snapshot{Date: date}
	h, err := st.ResolveRef(base)
	if err != nil {
		return snap, fmt.Errorf("load snapshot: %w", err)
	}
	snap.Base = h
	if snap.LastSleep, err = lastSleepAt(ctx, st, h); err != nil {
		return snap, fmt.Errorf("load snapshot: %w", err)
	}
	files, err := st.ReadDirAt(h, memfs.LessonsDir)
	if err != nil {
		return snap, fmt.Errorf("load snapshot: %w", err)
	}
	parsed := parseAll(files)
	// A lesson's file in its bucket wins over a flat copy of it.
	type place struct {
		id       string
		flat, ok bool
	}
	places := make([]place, len(files))
	bucketed := map[string]bool{}
	for i, f := range files {
		p := &places[i]
		_, p.id, p.flat, p.ok = memfs.ParseLessonPath(f.Path)
		if p.ok && !p.flat {
			bucketed[p.id] = true
		}
	}
	for i, f := range files {
		id, flat, ok := places[i].id, places[i].flat, places[i].ok
		if !ok {
			if strings.HasSuffix(f.Path, ".html") {
				snap.Skipped = append(snap.Skipped, f.Path+": not a lesson file's name, or not in its bucket (borg doctor --fix moves it)")
			}
			continue // .keep and other non-lesson files
		}
		l, err := parsed[i].l, parsed[i].err
		switch {
		case flat && bucketed[id]:
			snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s: a second copy of %s, which is read instead", f.Path, memfs.LessonPath(id)))
			continue
		case err != nil:
			snap.Skipped = append(snap.Skipped, f.Path+": "+err.Error())
			continue
		case l.ID != id:
			snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s: memhtml-id %q does not match the file name", f.Path, l.ID))
			continue
		}
		snap.Lessons = append(snap.Lessons, LessonFile{Lesson: l, Raw: f.Data, Path: f.Path})
	}
	// A lesson written without a created date was created when its file
	// was first committed (docs/formats.md).
	var undated []string
	for _, lf := range snap.Lessons {
		if lf.Lesson.Created.IsZero() {
			undated = append(undated, lf.Path)
		}
	}
	if added := st.FirstAdded(ctx, h, undated); len(added) > 0 {
		for i := range snap.Lessons {
			if t, ok := added[snap.Lessons[i].Path]; ok && snap.Lessons[i].Lesson.Created.IsZero() {
				snap.Lessons[i].Lesson.Created = t
			}
		}
	}
	events, _, err := st.ReadEvents()
	if err != nil {
		return snap, fmt.Errorf("load snapshot: %w", err)
	}
	cut := date.UnixMilli()
	for _, e := range events {
		if e.MS < cut {
			snap.Events = append(snap.Events, e)
		}
	}
	if err := ctx.Err(); err != nil {
		return snap, err
	}
	if snap.Vectors, snap.EmbedderID, err = embedLessons(snap.Lessons, emb); err != nil {
		return snap, fmt.Errorf("load snapshot: %w", err)
	}
	return snap, nil
}

type parsedLesson struct {
	l   domain.Lesson
	err error
}

// parseAll parses the .html files with memfs.Parse (pure) over the
// available CPUs; result i belongs to file i.
func parseAll(files []memfs.File) []parsedLesson {
	out := make([]parsedLesson, len(files))
	parallelStripes(runtimeWorkers(), len(files), func(_, i int) {
		if strings.HasSuffix(files[i].Path, ".html") {
			out[i].l, out[i].err = memfs.Parse(files[i].Data)
		}
	})
	return out
}

// DefaultEmbedder is the embedder a sleep uses when none is configured: the
// index package's n-gram embedder with its default settings.
func DefaultEmbedder() index.Embedder { return index.NewNGramEmbedder(index.NGramOptions{}) }

// embedLessons embeds every lesson's text in id order.
func embedLessons(lessons []LessonFile, emb index.Embedder) ([]domain.KeyedVector, string, error) {
	if emb == nil {
		emb = DefaultEmbedder()
	}
	texts := make([]string, len(lessons))
	for i, lf := range lessons {
		texts[i] = embedText(lf.Lesson)
	}
	if f, ok := emb.(index.CorpusFitter); ok && f.FittedDocs() == 0 && len(texts) > 0 {
		if err := f.Fit(texts); err != nil {
			return nil, "", fmt.Errorf("fit embedder: %w", err)
		}
	}
	out := make([]domain.KeyedVector, 0, len(lessons))
	const batch = 512
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		vecs, err := emb.Embed(texts[start:end])
		if err != nil {
			return nil, "", fmt.Errorf("embed: %w", err)
		}
		if len(vecs) != end-start {
			return nil, "", fmt.Errorf("embed: %d vectors for %d texts", len(vecs), end-start)
		}
		for i, v := range vecs {
			out = append(out, domain.KeyedVector{Key: lessons[start+i].Lesson.ID, Vec: v})
		}
	}
	return out, emb.ID(), nil
}

// embedText is the text a lesson is embedded from: title, gist, body and
// tags, the fields the index embeds.
func embedText(l domain.Lesson) string {
	parts := []string{l.Title}
	if l.Gist != l.Title {
		parts = append(parts, l.Gist)
	}
	parts = append(parts, l.Body)
	if len(l.Tags) > 0 {
		parts = append(parts, strings.Join(l.Tags, " "))
	}
	return strings.Join(parts, "\n")
}

// dayOf is t's date at 00:00 UTC.
func dayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// sortedLessons returns the snapshot's lessons sorted by id, the order every
// phase iterates in.
func sortedLessons(in []LessonFile) []LessonFile {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b LessonFile) int { return strings.Compare(a.Lesson.ID, b.Lesson.ID) })
	return out
}
