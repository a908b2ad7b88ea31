package memfs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// attriblines.go keeps the line table: each committed line's key and the
// index of the commit that first added it, 20 bytes a line (a million
// lines of log: 20 MB). A refresh after a commit adds the few keys that
// commit brought, so the table is two sorted files and it never becomes a
// map:
//
//   - attribLinesFile, the base: a JSON header line naming it (base) and
//     its record count, then its records sorted by key. It is mapped and
//     searched in place, and rewritten only when the tail outgrows it.
//   - attribTailFile, the tail: a JSON header line with the refresh's
//     commit, the base it extends and the list of commits, then the sorted
//     records the base does not hold. Every refresh rewrites it.
//
// Both are written with WriteFileAtomic, the base first: a tail naming
// another base, of another commit, or a file of the wrong length is not
// trusted, and the attribution is computed again from scratch.

const attribTailFile = cacheDir + "/attrib-lines-tail.bin"

// attribRecord is the size of one record: the key, then the commit index
// (little-endian uint32).
const attribRecord = 16 + 4

// tailMergeAt is the fewest tail records from which a refresh merges the
// tail into a new base (at least 1/16 of the base's); a variable for tests.
var tailMergeAt = 8192

// lineTable maps committed lines to commit indexes.
type lineTable struct {
	base  string
	main  []byte // the base's records
	unmap func()
	tail  []byte   // the tail's records
	added *lineSet // the lines this refresh added
	// commits bounds the indexes of the records read from the files: a
	// record past it (a corrupt base: checking each of millions of
	// records on every read would cost what a refresh should not) is
	// never returned, and bad says the table must be rebuilt.
	commits int
	bad     atomic.Bool
}

func newLineTable() *lineTable {
	return &lineTable{unmap: func() {}, added: newLineSet(0)}
}

// close unmaps the base.
func (t *lineTable) close() {
	if t != nil && t.unmap != nil {
		t.unmap()
		t.unmap = nil
	}
}

// find binary-searches sorted records for k.
func findRecord(recs []byte, k lineKey) (uint32, bool) {
	n := len(recs) / attribRecord
	i := sort.Search(n, func(i int) bool { return bytes.Compare(recs[i*attribRecord:i*attribRecord+16], k[:]) >= 0 })
	if i < n && bytes.Equal(recs[i*attribRecord:i*attribRecord+16], k[:]) {
		return binary.LittleEndian.Uint32(recs[i*attribRecord+16:]), true
	}
	return 0, false
}

// get is the commit index of the line with key k.
func (t *lineTable) get(k lineKey) (uint32, bool) {
	if c, ok := t.added.get(k); ok {
		return c, true
	}
	return t.stored(k)
}

// stored is the commit index of the line with key k in the table's files.
func (t *lineTable) stored(k lineKey) (uint32, bool) {
	c, ok := findRecord(t.tail, k)
	if !ok {
		c, ok = findRecord(t.main, k)
	}
	if ok && int(c) >= t.commits {
		t.bad.Store(true)
		return 0, false
	}
	return c, ok
}

// each calls fn with every line (in no useful order).
func (t *lineTable) each(fn func(lineKey, uint32)) {
	for _, recs := range [][]byte{t.main, t.tail} {
		for i := 0; i+attribRecord <= len(recs); i += attribRecord {
			if c := binary.LittleEndian.Uint32(recs[i+16:]); int(c) < t.commits {
				fn(lineKey(recs[i:i+16]), c)
			} else {
				t.bad.Store(true)
			}
		}
	}
	t.added.each(fn)
}

// lineHeaders are the JSON header lines of the two files.
type baseHeader struct {
	Base string `json:"base"`
	N    int    `json:"n"`
}

type tailHeader struct {
	Commit  string       `json:"commit"`
	Base    string       `json:"base"`
	Commits []CommitInfo `json:"commits"`
}

// splitHeader cuts a file into its JSON header and n records.
func splitHeader(data []byte, h any) ([]byte, bool) {
	head, recs, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || json.Unmarshal(head, h) != nil || len(recs)%attribRecord != 0 {
		return nil, false
	}
	return recs, true
}

// validIndexes reports whether every record's commit index is below n.
func validIndexes(recs []byte, n int) bool {
	for i := 16; i < len(recs); i += attribRecord {
		if int(binary.LittleEndian.Uint32(recs[i:])) >= n {
			return false
		}
	}
	return true
}

// readAttribLines reads the commits and the line table of the refresh at
// commit; nil when missing, torn, corrupt or of another refresh. The
// caller closes the table.
func (s *Store) readAttribLines(commit string) ([]CommitInfo, *lineTable) {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(attribTailFile)))
	if errors.Is(err, os.ErrNotExist) {
		return s.readLegacyLines(commit)
	}
	if err != nil {
		return nil, nil
	}
	var th tailHeader
	tail, ok := splitHeader(data, &th)
	if !ok || th.Commit != commit || th.Base == "" || !validIndexes(tail, len(th.Commits)) {
		return nil, nil
	}
	main, unmap, err := fsutil.Map(filepath.Join(s.dir, filepath.FromSlash(attribLinesFile)))
	if err != nil {
		return nil, nil
	}
	var bh baseHeader
	recs, ok := splitHeader(main, &bh)
	if !ok || bh.Base != th.Base || bh.N != len(recs)/attribRecord {
		unmap()
		return nil, nil
	}
	return th.Commits, &lineTable{base: bh.Base, main: recs, unmap: unmap, tail: tail, added: newLineSet(0), commits: len(th.Commits)}
}

// readLegacyLines reads the line table as borg wrote it before the tail
// (one file: the tail's header, then every record sorted), so that a store
// it attributed is not attributed again from scratch. Its base has no
// name: the next write merges it into a new one.
func (s *Store) readLegacyLines(commit string) ([]CommitInfo, *lineTable) {
	data, unmap, err := fsutil.Map(filepath.Join(s.dir, filepath.FromSlash(attribLinesFile)))
	if err != nil {
		return nil, nil
	}
	var h tailHeader
	recs, ok := splitHeader(data, &h)
	if !ok || h.Commit != commit || h.Base != "" {
		unmap()
		return nil, nil
	}
	return h.Commits, &lineTable{main: recs, unmap: unmap, added: newLineSet(0), commits: len(h.Commits)}
}

// mergeRecords merges two sorted record lists (no key in both).
func mergeRecords(a, b []byte) []byte {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	out := make([]byte, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if bytes.Compare(a[:16], b[:16]) < 0 {
			out, a = append(out, a[:attribRecord]...), a[attribRecord:]
		} else {
			out, b = append(out, b[:attribRecord]...), b[attribRecord:]
		}
	}
	return append(append(out, a...), b...)
}

// writeLines writes the table as of the refresh st: the new lines merged
// into the tail, and the tail into a new base once it has outgrown it.
func (s *Store) writeLines(st *attribState, t *lineTable) error {
	base := t.base
	n := len(t.tail)/attribRecord + t.added.len()
	var tail []byte // the new tail's records, when it stays a tail
	if base == "" || n >= tailMergeAt && n >= len(t.main)/attribRecord/16 {
		// A new base: the three sorted sources merged, or, for a table
		// built from scratch, the added lines alone, written from the
		// set a chunk at a time (a big team's table is hundreds of
		// megabytes, which need not be copied).
		write := func(w io.Writer) error { return t.added.writeRecords(w) }
		recs := t.added.len()
		if len(t.main) > 0 || len(t.tail) > 0 {
			merged := mergeRecords(t.main, mergeRecords(t.tail, t.added.records()))
			write = func(w io.Writer) error { _, err := w.Write(merged); return err }
			recs = len(merged) / attribRecord
		}
		base = st.Commit + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		head, err := json.Marshal(baseHeader{Base: base, N: recs})
		if err != nil {
			return err
		}
		err = writeAtomicFunc(s, filepath.Join(s.dir, filepath.FromSlash(attribLinesFile)), func(f *os.File) error {
			w := bufio.NewWriterSize(f, 1<<20)
			if _, err := w.Write(append(head, '\n')); err != nil {
				return err
			}
			if err := write(w); err != nil {
				return err
			}
			return w.Flush()
		})
		if err != nil {
			return fmt.Errorf("write %s: %w", attribLinesFile, err)
		}
	} else {
		tail = mergeRecords(t.tail, t.added.records())
	}
	head, err := json.Marshal(tailHeader{Commit: st.Commit, Base: base, Commits: st.Commits})
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(head)+1+len(tail))
	buf = append(append(append(buf, head...), '\n'), tail...)
	if err := writeAtomic(s, filepath.Join(s.dir, filepath.FromSlash(attribTailFile)), buf); err != nil {
		return fmt.Errorf("write %s: %w", attribTailFile, err)
	}
	return nil
}
