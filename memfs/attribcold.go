package memfs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// attribcold.go attributes a whole history at once (a fresh clone's first
// refresh) without asking git for a single diff. A log file only grows, so
// every version history holds of it is a prefix of the working file, and
// the lines a commit added to it are the bytes between the longest version
// any earlier commit (in git log's topological order) held and the version
// it holds. git log --raw names the versions (blob ids) and git cat-file
// their sizes; one pass over each working file checks every version
// against its prefix (a blob id is SHA-1 over "blob <n>\0" and the n bytes,
// as attribfast.go argues) and hashes every line. The lines' keys, each
// with the commit its offset falls under, are then sorted: a key held by
// several lines counts under the earliest of their commits, as git log -p
// read oldest first would have it count. The result is what the walk of
// git log -p caches, the same runs, commits and line table
// (TestColdAttributionMatchesGit), from one sort where the walk looked
// every line up in a table as large as the log's lines.
//
// Anything else goes to git log -p: a log file history deleted or changed
// into something other than a plain file, a version that is not a prefix
// of the working file (a rewrite) or does not end at a line's end, a path
// git quotes, a file history holds and the working tree does not.

// coldAttribUsed counts the walks from scratch the cold path served (tests).
var coldAttribUsed atomic.Int64

// logVersion is a version of a log file history holds: its blob and the
// first commit (an index into the walk's commits) that held it.
type logVersion struct {
	id     string
	size   int64
	commit int32
}

// rawHistory is what git log --raw tells of the log files: the commits in
// topological order, oldest first, and each file's versions in that order.
type rawHistory struct {
	commits  []CommitInfo
	versions map[string][]logVersion
}

// gitRawHistory reads the log files' history up to head with git log
// --raw (the same walk gitAddedLines makes, without the diffs).
func gitRawHistory(ctx context.Context, dir, head string) (*rawHistory, error) {
	args := []string{"-c", "core.quotePath=false", "-c", "log.showSignature=false",
		"log", "--reverse", "--topo-order", "--full-history", "-m", "--raw", "--no-abbrev",
		"--no-renames", "--format=%x00%H %at %ae", head, "--", LogDir + "/"}
	var h *rawHistory
	err := streamGitLog(ctx, dir, args, 0, func(r io.Reader) (err error) {
		h, err = parseRawHistory(r)
		return err
	})
	return h, err
}

// parseRawHistory reads gitRawHistory's git log. A merge is listed once
// per parent; its versions count once.
func parseRawHistory(r io.Reader) (*rawHistory, error) {
	h := &rawHistory{versions: map[string][]logVersion{}}
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		switch {
		case len(line) > 0 && line[0] == 0:
			hash, ms, email, cerr := parseCommitLine(line)
			if cerr != nil {
				return nil, cerr
			}
			if n := len(h.commits); n > 0 && h.commits[n-1].Hash == hash {
				break // the same merge against its next parent
			}
			c := CommitInfo{Hash: hash, MS: ms, Email: email}
			c.Author = commitAuthor(c.Email)
			h.commits = append(h.commits, c)
		case len(line) > 0 && line[0] == ':':
			if err := h.addRaw(string(line)); err != nil {
				return nil, err
			}
		}
		if err != nil {
			return h, nil
		}
	}
}

// addRaw records one raw line, ":<old mode> <new mode> <old id> <new id>
// <status>\t<path>", of the last commit.
func (h *rawHistory) addRaw(line string) error {
	r, ok := parseRawChange(line)
	if !ok || len(h.commits) == 0 {
		return fmt.Errorf("git log: bad raw line %q", line)
	}
	if !strings.HasSuffix(r.path, ".jsonl") {
		return nil // not a log file: git log -p's walk skips it too
	}
	if strings.HasPrefix(r.path, `"`) || (r.status != 'A' && r.status != 'M') || !isFileBlobMode(r.newMode) || !isHash(r.newID) {
		return errSlowPath
	}
	c := int32(len(h.commits) - 1)
	vs := h.versions[r.path]
	if n := len(vs); n > 0 && vs[n-1].id == r.newID {
		return nil // the same version again (a merge against another parent)
	}
	h.versions[r.path] = append(vs, logVersion{id: r.newID, commit: c})
	return nil
}

// rawChange is one line of git log --raw: ":<old mode> <new mode> <old
// id> <new id> <status>\t<path>".
type rawChange struct {
	oldMode, newMode, oldID, newID, path string
	status                               byte
}

// parseRawChange reads a raw line; ok is false when it is not one.
func parseRawChange(line string) (r rawChange, ok bool) {
	if !strings.HasPrefix(line, ":") {
		return r, false
	}
	meta, path, ok := strings.Cut(line[1:], "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 5 || f[4] == "" {
		return r, false
	}
	return rawChange{oldMode: f[0], newMode: f[1], oldID: f[2], newID: f[3], status: f[4][0], path: path}, true
}

// isFileBlobMode reports whether a raw line's mode is a regular file's.
func isFileBlobMode(mode string) bool { return mode == "100644" || mode == "100755" }

// blobSizes fills in the versions' sizes from git cat-file --batch-check.
func (h *rawHistory) blobSizes(ctx context.Context, dir string) error {
	var in bytes.Buffer
	for _, vs := range h.versions {
		for _, v := range vs {
			in.WriteString(v.id)
			in.WriteByte('\n')
		}
	}
	cmd := Git{Dir: dir, Isolate: true}.Command(ctx, "cat-file", "--batch-check")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git cat-file --batch-check: %w", err)
	}
	sizes := map[string]int64{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "blob" {
			return errSlowPath // missing, or not a blob
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return errSlowPath
		}
		sizes[f[0]] = n
	}
	for _, vs := range h.versions {
		for i := range vs {
			n, ok := sizes[vs[i].id]
			if !ok {
				return errSlowPath
			}
			vs[i].size = n
		}
	}
	return nil
}

// coldRun is a run of a working file's bytes ending at end whose lines
// count under the walk's commit c (-1: as written).
type coldRun struct {
	end int64
	c   int32
}

// coldFile is one working file as the cold pass read it.
type coldFile struct {
	size  int64     // bytes of whole lines
	runs  []coldRun // by the commit each line's offset falls under
	loose []lineKey // keys of lines no version covers (not committed)
}

// coldAttrib computes, from scratch, the attribution and line table of
// every commit up to head; errSlowPath when the history is not one of
// appends (git log -p must tell). read reports the bytes of log read.
func (s *Store) coldAttrib(ctx context.Context, head string, files []string, signed bool, read func(int64)) (*attribState, *lineTable, error) {
	h, err := gitRawHistory(ctx, s.dir, head)
	if err != nil {
		return nil, nil, err
	}
	present := make(map[string]bool, len(files))
	for _, name := range files {
		present[name] = true
	}
	for name := range h.versions {
		if !present[name] {
			return nil, nil, errSlowPath // deleted or out of the tree: its lines are history's alone
		}
	}
	if err := h.blobSizes(ctx, s.dir); err != nil {
		return nil, nil, err
	}
	recs, cfs, err := s.coldRead(files, h, read)
	if err != nil {
		return nil, nil, err
	}
	// Sorted, a key's lines are neighbours: the first keeps the earliest
	// commit, and a key whose lines fall under different commits (or
	// lines no version covers) is labelled by content in a second pass.
	sortLineRecords(recs, 0)
	// Blank lines count as written whoever added them: their key is
	// never labelled again.
	relabel := map[lineKey]int32{}
	blank := keyOfLine(nil)
	w := 0
	for i := 0; i < len(recs); {
		k := lineKey(recs[i : i+16])
		c := binary.LittleEndian.Uint32(recs[i+16:])
		j := i + attribRecord
		for ; j < len(recs) && bytes.Equal(recs[j:j+16], k[:]); j += attribRecord {
			if d := binary.LittleEndian.Uint32(recs[j+16:]); d != c && k != blank {
				c = min(c, d)
				relabel[k] = int32(c)
			} else {
				c = min(c, d)
			}
		}
		if _, ok := relabel[k]; ok {
			relabel[k] = int32(c)
		}
		copy(recs[w:], recs[i:i+16])
		binary.LittleEndian.PutUint32(recs[w+16:], c)
		w += attribRecord
		i = j
	}
	recs = recs[:w]
	rescan := make([]bool, len(files))
	for i, cf := range cfs {
		for _, k := range cf.loose {
			if c, ok := findRecord(recs, k); ok {
				relabel[k] = int32(c)
				rescan[i] = true
			}
		}
	}
	// The commits that added a line no earlier commit did, in walk order:
	// what git log -p's walk lists.
	dense := make([]int32, len(h.commits))
	for i := range dense {
		dense[i] = -1
	}
	for i := 16; i < len(recs); i += attribRecord {
		dense[binary.LittleEndian.Uint32(recs[i:])] = 0
	}
	st := &attribState{Version: attribVersion, Commit: head, Files: map[string]*fileAttrib{}, Signed: signed}
	for i, c := range h.commits {
		if dense[i] == 0 {
			dense[i] = int32(len(st.Commits))
			st.Commits = append(st.Commits, c)
		}
	}
	for i := 16; i < len(recs); i += attribRecord {
		binary.LittleEndian.PutUint32(recs[i:], uint32(dense[binary.LittleEndian.Uint32(recs[i:])]))
	}
	if signed {
		if err := s.verifyCommits(ctx, st.Commits); err != nil {
			return nil, nil, err
		}
	}
	labelOf := func(c int32) string {
		if c < 0 {
			return asWritten
		}
		ci := st.Commits[dense[c]]
		if signed && !ci.Signed {
			return unsignedLabel
		}
		return ci.Author
	}
	for i, name := range files {
		cf := cfs[i]
		fa := &fileAttrib{Size: cf.size}
		if rescan[i] || len(relabel) > 0 && len(cf.runs) > 0 {
			if fa.Runs, err = s.coldLabel(name, cf, relabel, labelOf); err != nil {
				return nil, nil, err
			}
		} else {
			for _, r := range cf.runs {
				fa.Runs = appendRun(fa.Runs, r.end, labelOf(r.c))
			}
		}
		if fa.Head, fa.Tail, _, fa.Stamp, err = s.fingerprint(name, fa.Size); err != nil {
			return nil, nil, err
		}
		st.Files[name] = fa
	}
	coldAttribUsed.Add(1)
	return st, &lineTable{main: recs, unmap: func() {}, added: newLineSet(0), commits: len(st.Commits)}, nil
}

// coldRead reads every working file once, a worker per core: it checks
// that each version history holds of it is its prefix, and returns the
// records (key, walk commit) of the lines some version covers, in no
// order, and what coldAttrib needs of each file.
func (s *Store) coldRead(files []string, h *rawHistory, read func(int64)) ([]byte, []coldFile, error) {
	total := s.logBytes(files)
	recs := make([]byte, 0, (total/avgLineBytes+1)*attribRecord)
	cfs := make([]coldFile, len(files))
	var mu sync.Mutex // recs and read
	tell := func(n int64) {
		mu.Lock()
		read(n)
		mu.Unlock()
	}
	err := perCore(len(files), func() func(int) error {
		var mine []byte
		br := bufio.NewReaderSize(nil, 256<<10)
		return func(i int) error {
			var err error
			mine, err = s.coldFile(br, files[i], h.versions[files[i]], &cfs[i], mine[:0], tell)
			if err != nil {
				return err
			}
			mu.Lock()
			recs = append(recs, mine...)
			mu.Unlock()
			return nil
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return recs, cfs, nil
}

// coldFile reads one working file: its versions (in walk order) must each
// be a prefix of it ending at a line's end. It appends to recs the record
// of each line a version covers, and tells read of the bytes it read
// (through br).
func (s *Store) coldFile(br *bufio.Reader, name string, vs []logVersion, cf *coldFile, recs []byte, read func(int64)) ([]byte, error) {
	// The walk's runs: each version longer than every earlier one adds the
	// bytes between.
	var committed int64
	var cover []coldRun
	for _, v := range vs {
		if v.size > committed {
			cover = append(cover, coldRun{end: v.size, c: v.commit})
			committed = v.size
		}
	}
	// Every distinct version is checked as the file is read, shortest
	// first: a hash of its header and the bytes so far.
	type check struct {
		size int64
		id   string
		h    hash.Hash
	}
	var checks []check
	for _, v := range vs {
		if !slices.ContainsFunc(checks, func(c check) bool { return c.id == v.id }) {
			checks = append(checks, check{size: v.size, id: v.id})
		}
	}
	slices.SortFunc(checks, func(a, b check) int { return int(min(max(a.size-b.size, -1), 1)) })
	for i := range checks {
		checks[i].h = sha1.New()
		fmt.Fprintf(checks[i].h, "blob %d\x00", checks[i].size)
	}
	verify := func(off int64) error {
		for len(checks) > 0 && checks[0].size <= off {
			c := checks[0]
			if c.size < off || hex.EncodeToString(c.h.Sum(nil)) != c.id {
				return errSlowPath // not at a line's end, or not a prefix
			}
			checks = checks[1:]
		}
		return nil
	}
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if err := verify(0); err != nil {
		return nil, err
	}
	r := 0 // cover[r] is the run the next line falls in
	var off, told int64
	defer func() { read(off - told) }()
	var bad error
	_, err = scanLinesWith(br, f, 0, -1, func(line []byte, end int64) {
		if bad != nil {
			return
		}
		for i := range checks {
			checks[i].h.Write(line)
		}
		if bad = verify(end); bad != nil {
			return
		}
		k := keyOfLine(line)
		for r < len(cover) && cover[r].end < end {
			r++
		}
		c := int32(-1)
		if r < len(cover) {
			c = cover[r].c
			recs = append(recs, k[:]...)
			recs = binary.LittleEndian.AppendUint32(recs, uint32(c))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			c = -1
		} else if c < 0 {
			cf.loose = append(cf.loose, k)
		}
		if off = end; off-told >= progressStep/4 {
			read(off - told)
			told = off
		}
		if n := len(cf.runs); n > 0 && cf.runs[n-1].c == c {
			cf.runs[n-1].end = end
		} else {
			cf.runs = append(cf.runs, coldRun{end: end, c: c})
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	if len(checks) > 0 {
		return nil, errSlowPath // a version longer than the file's whole lines
	}
	cf.size = off
	return recs, nil
}

// coldLabel labels one file's lines again, by content where relabel knows
// the key (held by lines of several commits, or by lines not committed)
// and by the walk's runs elsewhere.
func (s *Store) coldLabel(name string, cf coldFile, relabel map[lineKey]int32, labelOf func(int32) string) ([]attribRun, error) {
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var runs []attribRun
	r := 0
	_, err = scanLines(f, 0, cf.size, func(line []byte, end int64) {
		for r < len(cf.runs) && cf.runs[r].end < end {
			r++
		}
		c := int32(-1)
		if r < len(cf.runs) {
			c = cf.runs[r].c
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if d, ok := relabel[keyOfLine(line)]; ok {
				c = d
			}
		}
		runs = appendRun(runs, end, labelOf(c))
	})
	return runs, err
}

// sortLineRecords sorts line records by key in place: by their key's byte
// at depth into 256 buckets by swaps (an American flag sort: no second
// copy of a table of hundreds of megabytes), then each bucket on the next
// byte, until buckets are small enough to sort by insertion.
func sortLineRecords(recs []byte, depth int) {
	const rec = attribRecord
	n := len(recs) / rec
	if depth == 16 {
		return // every key equal
	}
	if n <= 32 {
		var tmp [rec]byte
		for i := 1; i < n; i++ {
			j := i
			for j > 0 && bytes.Compare(recs[(j-1)*rec:(j-1)*rec+16], recs[i*rec:i*rec+16]) > 0 {
				j--
			}
			if j < i {
				copy(tmp[:], recs[i*rec:])
				copy(recs[(j+1)*rec:(i+1)*rec], recs[j*rec:i*rec])
				copy(recs[j*rec:], tmp[:])
			}
		}
		return
	}
	var start [257]int
	for i := 0; i < n; i++ {
		start[int(recs[i*rec+depth])+1]++
	}
	for b := 1; b <= 256; b++ {
		start[b] += start[b-1]
	}
	next := start
	var tmp [rec]byte
	for b := range 256 {
		for next[b] < start[b+1] {
			i := next[b]
			d := int(recs[i*rec+depth])
			if d == b {
				next[b]++
				continue
			}
			// The record belongs further on: it takes the next free place
			// of its own bucket, and what was there is placed in turn.
			j := next[d]
			next[d]++
			copy(tmp[:], recs[j*rec:(j+1)*rec])
			copy(recs[j*rec:(j+1)*rec], recs[i*rec:(i+1)*rec])
			copy(recs[i*rec:(i+1)*rec], tmp[:])
		}
	}
	for b := range 256 {
		if start[b+1]-start[b] > 1 {
			sortLineRecords(recs[start[b]*rec:start[b+1]*rec], depth+1)
		}
	}
}
