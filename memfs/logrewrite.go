package memfs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/borg-memory/borg/memfs/gitobj"
)

// A shared log file is one node's own and only grows: only its node appends
// to it, so every version history holds of it extends the one before. A
// commit that deletes a log file, or writes a version lacking lines the
// version before it held (a teammate's hand edit, a revert, a bad merge),
// takes that node's events out of every machine's memory. LogRewrites
// finds such commits for doctor; sync puts this node's own lines back
// (keepOwnLog).

// LogRewrite is a commit that took lines out of a shared log file.
type LogRewrite struct {
	File   string `json:"file"`
	Commit string `json:"commit"`
	MS     int64  `json:"ms"` // the commit's author time
	// Lines counts the lines the version before held and this one lacks
	// (for a merge: lines every parent held).
	Lines   int  `json:"lines"`
	Deleted bool `json:"deleted,omitempty"`
	// Restored: the file as HEAD holds it has every one of those lines
	// again (its node's sync appended them back, or a revert did).
	Restored bool `json:"restored,omitempty"`
}

// logChange is one raw line of git log about a log file: a commit's change
// of path against one of its parents.
type logChange struct {
	commit   string
	ms       int64
	parents  int
	path     string
	status   byte
	old, new string // blob ids ("" for none)
	newBlob  bool   // new is a regular file's blob
	oldBlob  bool
}

// logRewritesFile caches LogRewrites' findings up to a commit, so that a
// later call reads only the commits since.
const logRewritesFile = cacheDir + "/log-rewrites.json"

// logRewritesVersion is the cache's format.
const logRewritesVersion = 1

// rewriteCache is logRewritesFile: the rewrites found up to Head, each with
// the keys (hex) of the lines it took out, to tell when they are back.
type rewriteCache struct {
	Version  int             `json:"version"`
	Head     string          `json:"head"`
	Rewrites []cachedRewrite `json:"rewrites"`
}

type cachedRewrite struct {
	LogRewrite
	Lost []string `json:"lost"`
}

// LogRewrites lists, oldest first, every commit of HEAD's history that took
// lines out of a shared log file (log/*.jsonl): deleted it, changed it into
// something other than a file, or wrote a version that lacks a line the
// version before held. Whether a version extends the one before is read
// cheaply when it does (each version a prefix of the file on disk, checked
// against its blob id, as the cold attribution does); only the files of
// which history holds some other version are read version by version. What
// it found is kept in .borg/cache up to HEAD, and a later call reads only
// the commits since (all of them again after history was rewritten).
func (s *Store) LogRewrites(ctx context.Context) ([]LogRewrite, error) {
	head := s.headCommit()
	if head == "" {
		return nil, nil
	}
	cache := s.readRewriteCache()
	var found []cachedRewrite
	switch {
	case cache != nil && cache.Head == head:
		found = cache.Rewrites
	default:
		rng := head
		if cache != nil && gitIsAncestor(ctx, s.dir, cache.Head, head) {
			rng = cache.Head + ".." + head
			found = cache.Rewrites
		}
		more, err := s.findRewrites(ctx, rng)
		if err != nil {
			return nil, err
		}
		found = append(slices.Clone(found), more...)
		if data, err := json.Marshal(rewriteCache{Version: logRewritesVersion, Head: head, Rewrites: found}); err == nil {
			if os.MkdirAll(filepath.Join(s.dir, filepath.FromSlash(cacheDir)), 0o755) == nil {
				_ = writeAtomic(s, filepath.Join(s.dir, filepath.FromSlash(logRewritesFile)), data)
			}
		}
	}
	out := make([]LogRewrite, len(found))
	held := map[string]map[string]bool{} // the keys of each file's lines at HEAD
	for i, f := range found {
		keys, ok := held[f.File]
		if !ok {
			keys = map[string]bool{}
			if now, err := s.ReadFileAt(head, f.File); err == nil {
				for line := range bytes.Lines(now) {
					k := keyOfLine(line)
					keys[hex.EncodeToString(k[:])] = true
				}
			}
			held[f.File] = keys
		}
		out[i] = f.LogRewrite
		out[i].Restored = true
		for _, k := range f.Lost {
			out[i].Restored = out[i].Restored && keys[k]
		}
	}
	return out, nil
}

// readRewriteCache is logRewritesFile, nil when missing or of another
// format.
func (s *Store) readRewriteCache() *rewriteCache {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(logRewritesFile)))
	if err != nil {
		return nil
	}
	var c rewriteCache
	if json.Unmarshal(data, &c) != nil || c.Version != logRewritesVersion || !isHash(c.Head) {
		return nil
	}
	return &c
}

// findRewrites is LogRewrites' finding over the commits rng names (a
// commit, or a range a..b), oldest first.
func (s *Store) findRewrites(ctx context.Context, rng string) ([]cachedRewrite, error) {
	changes, err := gitLogChanges(ctx, s.dir, rng)
	if err != nil {
		return nil, err
	}
	byPath := map[string][]int{}
	for i, c := range changes {
		byPath[c.path] = append(byPath[c.path], i)
	}
	blobs := map[string][]byte{}
	blob := func(id string) ([]byte, error) {
		if data, ok := blobs[id]; ok {
			return data, nil
		}
		data, err := s.git.readObject(gitobj.Blob, plumbing.NewHash(id))
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", id, err)
		}
		blobs[id] = data
		return data, nil
	}
	// suspect marks the changes of a file that must be read: all of them
	// when some version is not a prefix of the file on disk, else those
	// whose version is shorter than the one before.
	suspect := make([]bool, len(changes))
	for p, idx := range byPath {
		if !s.versionsExtend(p, changes, idx, suspect) {
			for _, i := range idx {
				suspect[i] = true
			}
		}
	}
	var out []cachedRewrite
	for i := 0; i < len(changes); {
		c := changes[i]
		j := i + 1
		for j < len(changes) && changes[j].commit == c.commit && changes[j].path == c.path {
			j++
		}
		group, read := changes[i:j], false
		for k := i; k < j; k++ {
			read = read || suspect[k]
		}
		i = j
		// A merge takes out only what every parent held: a file some
		// parent has as the merge does is listed for fewer parents.
		if !read || len(group) < max(c.parents, 1) {
			continue
		}
		lost, err := groupLost(group, blob)
		if err != nil {
			return nil, err
		}
		if len(lost) == 0 {
			continue
		}
		r := cachedRewrite{LogRewrite: LogRewrite{File: c.path, Commit: c.commit, MS: c.ms, Lines: len(lost), Deleted: c.status == 'D'}}
		for _, line := range lost {
			k := keyOfLine(line)
			r.Lost = append(r.Lost, hex.EncodeToString(k[:]))
		}
		out = append(out, r)
	}
	return out, nil
}

// groupLost is the lines a commit's version of a file lacks that each of
// its parents' versions held (one change per parent).
func groupLost(group []logChange, blob func(string) ([]byte, error)) ([][]byte, error) {
	var now []byte
	if group[0].newBlob {
		var err error
		if now, err = blob(group[0].new); err != nil {
			return nil, err
		}
	}
	var lost [][]byte
	for k, c := range group {
		if !c.oldBlob {
			return nil, nil // a parent without the file: nothing of it taken out
		}
		old, err := blob(c.old)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			if bytes.HasPrefix(now, old) && group[0].newBlob {
				return nil, nil
			}
			lost = linesMissing(old, now)
			continue
		}
		held := map[lineKey]bool{}
		for line := range bytes.Lines(old) {
			held[keyOfLine(line)] = true
		}
		kept := lost[:0]
		for _, line := range lost {
			if held[keyOfLine(line)] {
				kept = append(kept, line)
			}
		}
		lost = kept
	}
	return lost, nil
}

// versionsExtend reports whether every version of file p that the changes
// idx hold is a prefix of the file on disk; then each change whose version
// is shorter than the one before is marked suspect (it may have dropped
// lines later ones hold again), and the others need no reading.
func (s *Store) versionsExtend(p string, changes []logChange, idx []int, suspect []bool) bool {
	f, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(p)))
	if err != nil {
		return false
	}
	sizes := map[string]int64{}
	prefix := func(id string) bool {
		if _, ok := sizes[id]; ok {
			return true
		}
		n, found, err := s.git.objs.Size(plumbing.NewHash(id))
		if err != nil || !found || n > int64(len(f)) {
			return false
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", n)
		h.Write(f[:n])
		if hex.EncodeToString(h.Sum(nil)) != id {
			return false
		}
		sizes[id] = n
		return true
	}
	for _, i := range idx {
		c := changes[i]
		if c.status != 'A' && c.status != 'M' || !c.newBlob || c.status == 'M' && !c.oldBlob {
			return false // deleted, or not a file
		}
		if !prefix(c.new) || c.oldBlob && !prefix(c.old) {
			return false
		}
	}
	for _, i := range idx {
		if c := changes[i]; c.oldBlob && sizes[c.new] < sizes[c.old] {
			suspect[i] = true
		}
	}
	return true
}

// gitLogChanges reads, oldest first, every change the commits rng names (a
// commit and its history, or a range) made to a log file, with git log --raw: a merge's against each of its parents.
func gitLogChanges(ctx context.Context, dir, rng string) ([]logChange, error) {
	args := []string{"-c", "core.quotePath=false", "-c", "log.showSignature=false",
		"log", "--reverse", "--topo-order", "--full-history", "-m", "--raw", "--no-abbrev",
		"--no-renames", "--format=%x00%H %at %P", rng, "--", LogDir + "/"}
	var changes []logChange
	if err := streamGitLog(ctx, dir, args, 0, func(r io.Reader) (err error) {
		changes, err = parseLogChanges(r)
		return err
	}); err != nil {
		return nil, err
	}
	// A merge is listed once per parent, its changes of one file apart:
	// each commit's changes of a file are put together, in walk order.
	order := map[[2]string]int{}
	var grouped [][]logChange
	for _, c := range changes {
		k := [2]string{c.commit, c.path}
		g, ok := order[k]
		if !ok {
			g = len(grouped)
			order[k] = g
			grouped = append(grouped, nil)
		}
		grouped[g] = append(grouped[g], c)
	}
	out := changes[:0:0]
	for _, g := range grouped {
		out = append(out, g...)
	}
	return out, nil
}

// parseLogChanges reads gitLogChanges' git log.
func parseLogChanges(r io.Reader) ([]logChange, error) {
	const zero = "0000000000000000000000000000000000000000"
	br := bufio.NewReaderSize(r, 256<<10)
	var out []logChange
	var commit string
	var ms int64
	parents := 0
	var long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		switch {
		case len(line) > 0 && line[0] == 0:
			hash, at, rest, cerr := parseCommitLine(line)
			if cerr != nil {
				return nil, cerr
			}
			commit, ms, parents = hash, at, len(strings.Fields(rest))
		case len(line) > 0 && line[0] == ':':
			r, ok := parseRawChange(string(line))
			if !ok || commit == "" {
				return nil, fmt.Errorf("git log: bad raw line %q", line)
			}
			if !strings.HasSuffix(r.path, ".jsonl") || strings.HasPrefix(r.path, `"`) {
				break
			}
			c := logChange{commit: commit, ms: ms, parents: parents, path: r.path, status: r.status}
			if r.oldID != zero && isFileBlobMode(r.oldMode) {
				c.old, c.oldBlob = r.oldID, true
			}
			if r.newID != zero && isFileBlobMode(r.newMode) {
				c.new, c.newBlob = r.newID, true
			}
			out = append(out, c)
		}
		if err != nil {
			return out, nil
		}
	}
}
