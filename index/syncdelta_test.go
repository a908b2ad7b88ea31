package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestSyncDeltaSameFiles: SyncChanged's fast path (syncDelta) writes the
// index files syncChanged writes for the same change, byte for byte, and
// says the same about it: lessons added, rewritten, touched, removed, and
// changed files that cannot be read, with merges deferred (a hook) and
// allowed (the fast path then steps aside when one is due).
func TestSyncDeltaSameFiles(t *testing.T) {
	for _, deferMerge := range []bool{true, false} {
		t.Run(fmt.Sprintf("defer=%v", deferMerge), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			testSyncDeltaSameFiles(t, seed, deferMerge)
		})
	}
}

func testSyncDeltaSameFiles(t *testing.T, seed uint64, deferMerge bool) {
	c := newSegCorpus(seed)
	const n = 120
	files := newFileSet()
	put := files.put
	for i := range n {
		put(c.lesson(i, n))
	}
	open := func(dir string) *Index {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{DeferMerge: deferMerge})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	fastDir, slowDir := t.TempDir(), t.TempDir()
	fast, slow := open(fastDir), open(slowDir)
	defer func() { fast.Close(); slow.Close() }()
	slow.noFastSync = true
	for _, ix := range []*Index{fast, slow} {
		if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 40 {
		changed, removed := randomChange(c, files, n)
		since, stamp := fmt.Sprintf("s%d", round), fmt.Sprintf("s%d", round+1)
		var got [2]FileSync
		for k, ix := range []*Index{fast, slow} {
			files.reads = nil
			fs, err := ix.SyncChanged(since, slices.Clone(changed), slices.Clone(removed), files.read, stamp)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			fs.Read = nil
			slices.Sort(fs.Removed)
			got[k] = fs
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Fatalf("round %d: the fast path says %+v, syncChanged %+v", round, got[0], got[1])
		}
		for _, name := range []string{catalogName, deltaName, sidecarName, vecDeltaName} {
			a, errA := os.ReadFile(filepath.Join(fastDir, name))
			b, errB := os.ReadFile(filepath.Join(slowDir, name))
			if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
				t.Fatalf("round %d: %s differs (%d bytes, %v; syncChanged %d bytes, %v)", round, name, len(a), errA, len(b), errB)
			}
		}
		sameSearches(t, fast, slow, corpusQueries)
		// The view a sync keeps in memory (built from the catalog it
		// encoded, not from the file it wrote) is the one the file opens to.
		again := open(fastDir)
		a, b := fast.cat, again.cat
		if a.live != b.live || a.sumLen != b.sumLen || a.stamp != b.stamp || a.ndead != b.ndead || a.delta.len() != b.delta.len() ||
			!slices.Equal(a.tombstones(), b.tombstones()) || !slices.Equal(a.backlinks, b.backlinks) {
			t.Fatalf("round %d: the view kept in memory (stamp %q, live %d, sums %v, %d dead, %d in the delta, backlinks %v) is not the one opened (stamp %q, live %d, sums %v, %d dead, %d in the delta, backlinks %v)",
				round, a.stamp, a.live, a.sumLen, a.ndead, a.delta.len(), a.backlinks, b.stamp, b.live, b.sumLen, b.ndead, b.delta.len(), b.backlinks)
		}
		sameSearches(t, fast, again, corpusQueries)
		again.Close()
	}
	if fast.fastSyncs < 20 {
		t.Fatalf("the fast path took %d of 40 syncs", fast.fastSyncs)
	}
	if err := Verify(fastDir, fast.emb); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// randomChange changes a few of files' lessons as a store sees them
// change (c's lessons i < n+10): added or rewritten, touched (a new stamp,
// the same content), archived or deleted, restored as it was, or changed
// into a file that cannot be read. It returns the change set a sync is
// given.
func randomChange(c *segCorpus, files *fileSet, n int) (changed []FileStamp, removed []string) {
	seen := map[string]bool{}
	for range 1 + c.r.IntN(6) {
		i := c.r.IntN(n + 10)
		id := fmt.Sprintf("lesson-%03d", i)
		if seen[id] {
			continue
		}
		seen[id] = true
		switch c.r.IntN(7) {
		case 0: // archived or deleted
			if l, ok := files.lessons[id]; ok {
				files.gone[id] = l
			}
			if _, ok := files.stamps[id]; ok {
				delete(files.lessons, id)
				delete(files.stamps, id)
				removed = append(removed, id)
			}
		case 6: // restored as it was before it went
			if l, ok := files.gone[id]; ok {
				if _, held := files.stamps[id]; !held {
					delete(files.gone, id)
					changed = append(changed, files.put(l))
				}
			}
		case 1: // touched: a new stamp, the same content
			if f, ok := files.stamps[id]; ok {
				f.ModTime = files.tick()
				files.stamps[id] = f
				changed = append(changed, f)
			}
		case 2: // a changed file that cannot be read
			delete(files.lessons, id)
			delete(files.stamps, id)
			changed = append(changed, FileStamp{ID: id, ModTime: files.tick(), Size: 7})
		default: // added or rewritten
			changed = append(changed, files.put(c.lesson(i, n)))
		}
	}
	return changed, removed
}

// TestFindBacklinks: the pass over link records finds the lessons a pass
// over every lesson's links finds.
func TestFindBacklinks(t *testing.T) {
	c := newSegCorpus(7)
	const n = 300
	ix, err := NewMemory(NewNGramEmbedder(NGramOptions{NoIDF: true}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ls []domain.Lesson
	for i := range n {
		ls = append(ls, c.lesson(i, n))
	}
	if _, err := ix.Sync(ls); err != nil {
		t.Fatal(err)
	}
	base := ix.cat.base
	dead := make([]bool, base.len())
	for o := range dead {
		dead[o] = c.r.IntN(5) == 0
	}
	for _, ids := range []map[string]bool{{"lesson-001": true}, {"lesson-300": true, "lesson-305": true, "lesson-010": true}, {"x": true}} {
		var want []int
		for o := 0; o < base.len(); o++ {
			if !dead[o] && slices.ContainsFunc(base.lessonLinks(o), func(k domain.LessonLink) bool { return ids[k.Target] }) {
				want = append(want, o)
			}
		}
		if got := findBacklinks(base, dead, ids); !slices.Equal(got, want) {
			t.Fatalf("findBacklinks(%v) = %v, want %v", ids, got, want)
		}
	}
}

// TestTornDeltaRefused: a delta segment torn anywhere (it is written
// without an fsync) is refused at open, leaving the base and its stamp,
// and the next sync from that stamp brings the index back to what an
// untorn twin holds.
func TestTornDeltaRefused(t *testing.T) {
	for _, name := range []string{deltaName, vecDeltaName} {
		t.Run(name, func(t *testing.T) {
			c := newSegCorpus(5)
			files := newFileSet()
			for i := range 60 {
				l := c.lesson(i, 60)
				files.lessons[l.ID] = l
				files.stamps[l.ID] = FileStamp{ID: l.ID, ModTime: 1, Size: int64(i)}
			}
			changed := c.lesson(3, 60)
			open := func(dir string) *Index {
				ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{DeferMerge: true})
				if err != nil {
					t.Fatal(err)
				}
				return ix
			}
			dirs := [2]string{t.TempDir(), t.TempDir()}
			for _, dir := range dirs {
				ix := open(dir)
				if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
					t.Fatal(err)
				}
				ix.Close()
			}
			files.lessons[changed.ID] = changed
			files.stamps[changed.ID] = FileStamp{ID: changed.ID, ModTime: 2, Size: 3}
			var ixs [2]*Index
			for k, dir := range dirs {
				ix := open(dir)
				if _, err := ix.SyncChanged("s0", []FileStamp{files.stamps[changed.ID]}, nil, files.read, "s1"); err != nil {
					t.Fatal(err)
				}
				ix.Close()
				ixs[k] = ix
			}
			path := filepath.Join(dirs[0], name)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			raw[len(raw)-6] ^= 0x10 // the last rows or postings
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			for k, dir := range dirs {
				ixs[k] = open(dir)
				defer ixs[k].Close()
			}
			torn := ixs[0]
			if name == deltaName && torn.Stamp() != "s0" {
				t.Fatalf("a torn catalog delta: stamp %q, want the base's s0", torn.Stamp())
			}
			if _, err := torn.SyncFiles(files.listing(), files.read, "s1", false); err != nil {
				t.Fatal(err)
			}
			sameSearches(t, torn, ixs[1], corpusQueries)
		})
	}
}

// TestSidecarKeysCheckedWhole: a sidecar whose keys fail their checksum
// is read unchecked by a hook's sync of one change, which looks up a few
// keys; borg doctor (Verify) names it, and the next sync from a listing
// drops it and embeds every lesson again, after which it verifies. With
// the IDF embedder, whose corpus state is read in place from the file,
// the state is unloaded before the file goes and refitted, and a new
// process reads the rebuilt sidecar as fitted and fresh.
func TestSidecarKeysCheckedWhole(t *testing.T) {
	for _, idf := range []bool{false, true} {
		t.Run(fmt.Sprintf("idf=%v", idf), func(t *testing.T) {
			testSidecarKeysCheckedWhole(t, NGramOptions{Dim: 64, NoIDF: !idf})
		})
	}
}

func testSidecarKeysCheckedWhole(t *testing.T, opts NGramOptions) {
	c := newSegCorpus(7)
	const n = 60
	files := newFileSet()
	put := files.put
	for i := range n {
		put(c.lesson(i, n))
	}
	dir := t.TempDir()
	open := func() (*Index, *NGramEmbedder) {
		emb := NewNGramEmbedder(opts)
		ix, err := Open(dir, emb, Options{DeferMerge: true, LazyVectors: true})
		if err != nil {
			t.Fatal(err)
		}
		return ix, emb
	}
	ix, emb := open()
	if _, err := ix.SyncFiles(files.listing(), files.read, "s0", false); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := Verify(dir, emb); err != nil {
		t.Fatalf("a fresh index does not verify: %v", err)
	}
	path := filepath.Join(dir, sidecarName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte("lesson-042"))
	if i < 0 {
		t.Fatal("no key lesson-042 in the sidecar")
	}
	raw[i+len("lesson-04")] = '3' // lesson-043: still in order, not the lesson-042 the catalog holds
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, emb); err == nil || !errors.Is(err, errSidecarChecksum) {
		t.Fatalf("Verify of a sidecar with a changed key: %v", err)
	}

	ix, _ = open()
	fs, err := ix.SyncChanged("s0", []FileStamp{put(c.lesson(5, n+1))}, nil, files.read, "s1")
	if err != nil || fs.SidecarRebuilt || fs.Embedded != 1 {
		t.Fatalf("sync of one change: %+v, %v; want one lesson embedded, the sidecar kept", fs.SyncStats, err)
	}
	fs, err = ix.SyncFiles(files.listing(), files.read, "s2", false)
	if err != nil || !fs.SidecarRebuilt || fs.Embedded != n {
		t.Fatalf("sync from a listing: %+v, %v; want the sidecar rebuilt, %d lessons embedded", fs.SyncStats, err, n)
	}
	if _, err := ix.Search(context.Background(), Query{Text: c.lesson(9, n).Gist}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := Verify(dir, emb); err != nil {
		t.Fatalf("the rebuilt index does not verify: %v", err)
	}
	ix, emb = open()
	defer ix.Close()
	fs, err = ix.SyncFiles(files.listing(), files.read, "s3", false)
	if err != nil || fs.Embedded != 0 || fs.Refit || fs.SidecarRebuilt {
		t.Fatalf("a new process's sync of the same listing: %+v, %v; want nothing embedded again", fs.SyncStats, err)
	}
	if ix.Stale() || (!opts.NoIDF && emb.FittedDocs() != n) {
		t.Fatalf("reopened: stale %v, fitted on %d lessons; want fresh, fitted on %d", ix.Stale(), emb.FittedDocs(), n)
	}
}
