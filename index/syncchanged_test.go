package index

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestSyncChangedMatchesSyncFiles: an index kept up to date by change sets
// (lessons added, rewritten, removed, a stamp moved without the content)
// answers, holds and verifies as one synced with the full listing each
// time, and reads only the changed files.
func TestSyncChangedMatchesSyncFiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newSegCorpus(seed)
	const n = 80
	files := newFileSet()
	lessons, stamps, put := files.lessons, files.stamps, files.put
	for i := range n {
		put(c.lesson(i, n))
	}
	listing, read := files.listing, files.read
	open := func(dir string) *Index {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{DeferMerge: true})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	incDir, fullDir := t.TempDir(), t.TempDir()
	inc, full := open(incDir), open(fullDir)
	defer func() { inc.Close(); full.Close() }()
	for _, ix := range []*Index{inc, full} {
		if _, err := ix.SyncFiles(listing(), read, "s0", false); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 12 {
		var changed []FileStamp
		var removed []string
		seen := map[string]bool{}
		for range 1 + c.r.IntN(5) {
			i := c.r.IntN(n + 10)
			id := fmt.Sprintf("lesson-%03d", i)
			if seen[id] {
				continue
			}
			seen[id] = true
			switch c.r.IntN(4) {
			case 0: // archived or deleted
				if _, ok := stamps[id]; ok {
					delete(lessons, id)
					delete(stamps, id)
					removed = append(removed, id)
				}
			case 1: // touched: a new stamp, the same content
				if f, ok := stamps[id]; ok {
					f.ModTime = files.tick()
					stamps[id] = f
					changed = append(changed, f)
				}
			default: // added or rewritten
				changed = append(changed, put(c.lesson(i, n)))
			}
		}
		since, stamp := fmt.Sprintf("s%d", round), fmt.Sprintf("s%d", round+1)
		pending, _ := inc.PendingChanged(changed, removed)
		files.reads = nil
		fs, err := inc.SyncChanged(since, changed, removed, read, stamp)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if pending != len(files.reads) {
			t.Fatalf("round %d: PendingChanged said %d reads, the sync read %d", round, pending, len(files.reads))
		}
		for _, id := range files.reads {
			if !slices.ContainsFunc(changed, func(f FileStamp) bool { return f.ID == id }) {
				t.Fatalf("round %d: read %s, which did not change", round, id)
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(fs.Removed)), slices.Sorted(slices.Values(removed))) {
			t.Fatalf("round %d: removed %v, want %v", round, fs.Removed, removed)
		}
		if _, err := full.SyncFiles(listing(), read, stamp, false); err != nil {
			t.Fatal(err)
		}
		sameSearches(t, inc, full, corpusQueries)
		sameFileStamps(t, inc, full)
		if inc.Stamp() != full.Stamp() {
			t.Fatalf("round %d: stamp %q, want %q", round, inc.Stamp(), full.Stamp())
		}
	}
	inc.Close()
	inc = open(incDir)
	sameSearches(t, inc, full, corpusQueries)
	if err := Verify(incDir, inc.emb); err != nil {
		t.Fatalf("verify: %v", err)
	}
	// A change set computed against another stamp is refused untouched.
	before := inc.Stamp()
	if _, err := inc.SyncChanged("elsewhere", nil, []string{"lesson-001"}, read, "next"); !errors.Is(err, ErrNotSince) {
		t.Fatalf("stale change set: %v, want ErrNotSince", err)
	}
	if inc.Stamp() != before {
		t.Fatalf("a refused change set moved the stamp to %q", inc.Stamp())
	}
}

// sameFileStamps checks that a and b record the same file stamp per lesson.
func sameFileStamps(t *testing.T, a, b *Index) {
	t.Helper()
	for _, g := range a.cat.ordered() {
		id := a.cat.id(g)
		h, ok := b.cat.find(id)
		if !ok || a.cat.fileStamp(g) != b.cat.fileStamp(h) {
			t.Fatalf("%s: file stamp %v, want %v", id, a.cat.fileStamp(g), b.cat.fileStamp(h))
		}
	}
}

// fileSet is a store's lesson files as the sync tests fake them: each
// lesson with its file stamp, the ids a sync read, and a clock for the
// stamps.
type fileSet struct {
	lessons map[string]domain.Lesson
	stamps  map[string]FileStamp
	gone    map[string]domain.Lesson // lessons removed, as they were
	reads   []string
	clock   int64
}

func newFileSet() *fileSet {
	return &fileSet{lessons: map[string]domain.Lesson{}, stamps: map[string]FileStamp{}, gone: map[string]domain.Lesson{}, clock: 1000}
}

// tick is a modification time later than any before it.
func (fs *fileSet) tick() int64 {
	fs.clock++
	return fs.clock
}

// put writes l's file with a new stamp and returns the stamp.
func (fs *fileSet) put(l domain.Lesson) FileStamp {
	f := FileStamp{ID: l.ID, ModTime: fs.tick(), Size: int64(len(l.Body))}
	fs.lessons[l.ID] = l
	fs.stamps[l.ID] = f
	return f
}

// listing is the files sorted by id, as a store lists them.
func (fs *fileSet) listing() []FileStamp {
	out := make([]FileStamp, 0, len(fs.stamps))
	for _, f := range fs.stamps {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// read is a sync's reader: the lessons held among ids, each id recorded.
func (fs *fileSet) read(ids []string) []domain.Lesson {
	var out []domain.Lesson
	for _, id := range ids {
		fs.reads = append(fs.reads, id)
		if l, ok := fs.lessons[id]; ok {
			out = append(out, l)
		}
	}
	return out
}
