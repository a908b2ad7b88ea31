package memfs

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// Attribution: who committed each line of the shared log.
//
// A log line claims an author (domain.Event.Author), and anyone who can
// push can write any claim. What git records is who committed the line (as
// unsigned as the claim, but one identity per commit: a forger's made-up
// sessions, authors and repos all land under the forger's own). So the
// readers count each committed line as its committer's: an event whose
// author differs is re-attributed to the author of the first commit that
// added the line (by content, oldest first in topological order, merges
// diffed against each parent). Lines not committed yet were written on this
// machine and count as written.
//
// The attribution is computed by Store.refreshAttribution from git history
// (incrementally, from the commit it was last computed at; a commit that
// only appended to log files is read in process, attribfast.go) and cached
// in .borg/cache: a small JSON file of per-file runs (byte ranges of the
// working log files and the author of each), which every reader of the log
// loads, and a table of line hashes to commits (a sorted base and a small
// sorted tail, attriblines.go), which only a refresh and doctor read. Hooks never walk history: lines a refresh has not
// attributed yet, in another node's file after HEAD moved, count under
// Unattributed until the next refresh.

const (
	attribVersion   = 2
	attribFile      = cacheDir + "/attrib.json"
	attribLinesFile = cacheDir + "/attrib-lines.bin"
)

// Labels of a run besides an author id.
const (
	// asWritten: the lines were not committed when attributed; the event's
	// own author counts.
	asWritten = "*"
	// Unattributed is the author readers give an event of a committed line
	// whose committer is not known yet (no refresh since HEAD moved):
	// domain.UnattributedAuthor, whose changes never count toward early
	// delivery.
	Unattributed = domain.UnattributedAuthor
)

// CommitInfo is a commit that added log lines.
type CommitInfo struct {
	Hash   string `json:"hash"`
	Author string `json:"author"` // HashEngineer of its author email
	Email  string `json:"-"`
	MS     int64  `json:"ms"` // author time
	// Signed: git verified the commit's signature, and Author is the
	// signer's (set only by a signed-evidence refresh).
	Signed bool `json:"signed,omitempty"`
}

// attribRun is a byte range of a log file ending at End (starting where the
// previous run ends) whose lines count under By: an author id, asWritten or
// Unattributed.
type attribRun struct {
	End int64  `json:"e"`
	By  string `json:"a"`
}

// fileAttrib is one working log file's attribution as of a refresh.
type fileAttrib struct {
	Size int64  `json:"size"` // bytes covered (whole lines)
	Head string `json:"head"` // fingerprint of [0, Size), as foldedFile
	Tail string `json:"tail"`
	// Stamp is the file's fileStamp when Size was its size (ledger.go).
	Stamp string      `json:"stamp,omitempty"`
	Runs  []attribRun `json:"runs"`
}

// attribState is the cached attribution: small, every reader loads it.
type attribState struct {
	Version int                    `json:"version"`
	Commit  string                 `json:"commit"` // HEAD when computed ("" = no commits)
	Files   map[string]*fileAttrib `json:"files"`
	// Signed: computed under borg.evidence = signed (evidence.go); lines
	// of commits without a verified signature are labelled unsignedLabel.
	Signed bool `json:"signed,omitempty"`
	// Commits are the commits that added lines, kept beside the lines
	// (attribLinesFile), which only a refresh and doctor read.
	Commits []CommitInfo `json:"-"`
	// Groups maps each identity of a burst (burstGroups) to the one its
	// lines count under; readers apply it to the runs.
	Groups map[string]string `json:"groups,omitempty"`
}

// Identities that appear together: a team's engineers start committing
// evidence on their own days, while one pusher who commits log files as
// several git identities (each file's events claiming its own committer)
// makes them appear at once. Identities whose first commit of log lines
// falls within burstWindow of the burst's first, burstMin of them or
// more, count as one author: the one that appeared first. Their evidence
// then proves no more than one engineer's does, for consolidation (two
// authors or two repos) and for early delivery (which leaves out the
// author who contributed most). Commit times are as forgeable as
// identities, so this raises the cost of a forgery rather than ruling it
// out (SECURITY.md).
const (
	burstWindow = 10 * 60 * 1000 // ms
	burstMin    = 3
)

// presentCommits is st's commits by the identities that still own lines
// of the log files: evidence a revert took out makes no burst with the
// evidence that stayed.
func presentCommits(st *attribState) []CommitInfo {
	owners := map[string]bool{}
	for _, fa := range st.Files {
		for _, r := range fa.Runs {
			owners[r.By] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(st.Commits), func(c CommitInfo) bool { return !owners[c.Author] })
}

// burstGroups maps the identities of each burst in commits to the burst's
// first identity (by first commit time, then id); identities outside a
// burst are left out.
func burstGroups(commits []CommitInfo) map[string]string {
	first := map[string]int64{}
	for _, c := range commits {
		if t, ok := first[c.Author]; !ok || c.MS < t {
			first[c.Author] = c.MS
		}
	}
	ids := make([]string, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(first[a], first[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var groups map[string]string
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && first[ids[j]]-first[ids[i]] <= burstWindow {
			j++
		}
		if j-i >= burstMin {
			if groups == nil {
				groups = map[string]string{}
			}
			for _, id := range ids[i:j] {
				groups[id] = ids[i]
			}
		}
		i = j
	}
	return groups
}

// grouped is who a run's label counts as once bursts are one author.
func (st *attribState) grouped(by string) string {
	if g, ok := st.Groups[by]; ok {
		return g
	}
	return by
}

// lineKey is a line's identity: 128 bits of SHA-256 over its bytes with
// surrounding white space trimmed (a forger would need a second preimage
// to pass a line off as another's).
type lineKey [16]byte

func keyOfLine(line []byte) lineKey {
	sum := sha256.Sum256(bytes.TrimSpace(line))
	var k lineKey
	copy(k[:], sum[:16])
	return k
}

func (s *Store) readAttribState() *attribState {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(attribFile)))
	if err != nil {
		return nil
	}
	var st attribState
	if json.Unmarshal(data, &st) != nil || st.Version != attribVersion || st.Files == nil {
		return nil
	}
	return &st
}

// writeAttrib writes the line table, then the state that names its
// refresh: a state whose lines are missing or of another refresh is
// recomputed from scratch (readAttribLines checks).
func (s *Store) writeAttrib(st *attribState, lines *lineTable) error {
	dir := filepath.Join(s.dir, filepath.FromSlash(cacheDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := s.writeLines(st, lines); err != nil {
		return err
	}
	head, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeAtomic(s, filepath.Join(s.dir, filepath.FromSlash(attribFile)), head)
}

// refreshAttribution brings the cached attribution up to HEAD: it walks the
// commits since the last refresh (all of them the first time, or when
// history was rewritten) with git log, and re-reads the log files they
// touched. It is cheap when HEAD has not moved. Commands reach it through
// Summary and LoadLedger; hooks do not.
func (s *Store) refreshAttribution(ctx context.Context) error { return s.refresh(ctx, false) }

// refresh is refreshAttribution; locked says the caller holds the build
// lock. A walk from scratch (a fresh clone: the first phase of a cold
// build, tens of seconds on a big team's log) takes it: two commands
// started together walk the history once, and the second, once it has the
// lock, finds the first's attribution current.
func (s *Store) refresh(ctx context.Context, locked bool) error {
	head := s.headCommit()
	old := s.readAttribState()
	files, err := s.sharedLogFiles()
	if err != nil {
		return err
	}
	signed := s.evidence().signed
	if old != nil && old.Signed != signed {
		old = nil // the setting changed: every line is labelled again
	}
	if old != nil && old.Commit == head && s.attribCovers(old, files) {
		if s.restamp(old) {
			// Only stamps changed: the line table stays as it is.
			if data, err := json.Marshal(old); err == nil {
				_ = writeAtomic(s, filepath.Join(s.dir, filepath.FromSlash(attribFile)), data)
			}
		}
		return nil
	}
	st := &attribState{Version: attribVersion, Commit: head, Files: map[string]*fileAttrib{}, Signed: signed}
	var lines *lineTable
	touched := map[string]bool{}
	from := ""
	checked := 0 // st.Commits[:checked] were verified by an earlier refresh
	var fast []addedLine
	fastErr := errSlowPath
	if old != nil && old.Commit != "" && head != "" {
		commits, l := s.readAttribLines(old.Commit)
		// The chain fastAdded walks proves old.Commit an ancestor too, but
		// a refresh asks git anyway: one without git fails (and readers
		// count new lines as Unattributed) whichever path it would take.
		if lines = l; lines != nil && (old.Commit == head || gitIsAncestor(ctx, s.dir, old.Commit, head)) {
			st.Commits = commits
			checked = len(commits)
			from = old.Commit
			if from != head && !attribSlowOnly {
				fast, fastErr = s.fastAdded(from, head)
			}
		} else {
			lines.close()
			lines = nil
		}
	}
	var logSize int64 // of the files now, for a walk from scratch
	if lines == nil && head != "" && !locked {
		unlock := s.lockBuild()
		defer unlock()
		return s.refresh(ctx, true)
	}
	if lines == nil {
		logSize = s.logBytes(files)
	}
	// A walk of the whole history (from == "": the table is new) is the
	// first phase of a cold build.
	report := func(int64) {}
	if from == "" && s.progress != nil {
		total := logSize
		var done, last int64
		report = func(n int64) {
			if n < 0 {
				s.progress(PhaseAttrib, total, total)
				return
			}
			// History may hold more than the files do now (lines since
			// rewritten): the walk reports itself done only at its end.
			if done += n; done-last >= progressStep && done < total {
				last = done
				s.progress(PhaseAttrib, done, total)
			}
		}
		defer report(-1)
	}
	if lines == nil && head != "" && !attribSlowOnly {
		cst, table, err := s.coldAttrib(ctx, head, files, signed, report)
		if err == nil {
			if !signed {
				cst.Groups = burstGroups(presentCommits(cst))
			}
			return s.writeAttrib(cst, table)
		}
		if !errors.Is(err, errSlowPath) {
			return err
		}
	}
	if lines == nil {
		// From scratch: every line of the log will be put, and a table
		// sized for them up front is not rehashed as it grows.
		lines = newLineTable()
		lines.added = newLineSet(int(logSize / avgLineBytes))
	}
	defer lines.close()
	if head != "" && from != head {
		add := s.lineAdder(st, lines, touched, report)
		if from != "" && fastErr == nil {
			for _, a := range fast {
				add(a)
			}
			fastAttribUsed.Add(1)
		} else if err := gitAddedLines(ctx, s.dir, strings.TrimPrefix(from+".."+head, ".."), add); err != nil {
			return err
		}
	}
	if signed {
		if err := s.verifyCommits(ctx, st.Commits[checked:]); err != nil {
			return err
		}
	}
	// Each file is read and labelled on its own, a worker per core: the
	// line table is only read here.
	fas := make([]*fileAttrib, len(files))
	err = perCore(len(files), func() func(int) error {
		return func(i int) error {
			name := files[i]
			var prev *fileAttrib
			if old != nil && (from != "" || old.Commit == head) {
				prev = old.Files[name]
			}
			fa, err := s.attribFile(name, prev, touched[name], st.Commits, lines, signed)
			fas[i] = fa
			return err
		}
	})
	if err != nil {
		return err
	}
	for i, name := range files {
		st.Files[name] = fas[i]
	}
	if lines.bad.Load() {
		return s.reattribute(ctx, locked)
	}
	if !signed {
		// Verified signers are keys the team allowed, not names anyone
		// can type: a team that starts together stays several people.
		st.Groups = burstGroups(presentCommits(st))
	}
	return s.writeAttrib(st, lines)
}

// avgLineBytes is about the size of one line of log (an event's JSON).
const avgLineBytes = 160

// lineAdder is what a refresh does with each line the new commits added:
// a line the table does not hold yet counts under the commit, appended to
// st.Commits the first time.
func (s *Store) lineAdder(st *attribState, lines *lineTable, touched map[string]bool, read func(int64)) func(addedLine) {
	index := map[string]uint32{}
	return func(a addedLine) {
		read(int64(len(a.Line)) + 1)
		touched[a.File] = true
		k := keyOfLine(a.Line)
		if _, ok := lines.stored(k); ok {
			return
		}
		// One look in the set finds the line or its place.
		pos, found := lines.added.find(k)
		if found {
			return
		}
		c, ok := index[a.Commit]
		if !ok {
			c = uint32(len(st.Commits))
			st.Commits = append(st.Commits, CommitInfo{Hash: a.Commit, Author: commitAuthor(a.Email), MS: a.MS})
			index[a.Commit] = c
		}
		lines.added.insertAt(pos, k, c)
	}
}

// verifyCommits asks git to verify the signatures of commits (those added
// since the last signed-evidence refresh, whose findings the others keep)
// and counts each verified one as its signer's.
func (s *Store) verifyCommits(ctx context.Context, commits []CommitInfo) error {
	hashes := make([]string, len(commits))
	for i, c := range commits {
		hashes[i] = c.Hash
	}
	got, err := gitVerifySignatures(ctx, s.dir, hashes)
	if err != nil {
		return err
	}
	for i := range commits {
		c := &commits[i]
		if v, ok := got[c.Hash]; ok && v.ok {
			c.Signed, c.Author = true, commitAuthor(v.signer)
		}
	}
	return nil
}

// reattribute computes the attribution again from scratch: the line
// table was found corrupt.
func (s *Store) reattribute(ctx context.Context, locked bool) error {
	if err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(attribFile))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s (a corrupt line table beside it): %w", attribFile, err)
	}
	return s.refresh(ctx, locked)
}

// commitAuthor is the engineer id a commit's author email stands for.
func commitAuthor(email string) string {
	if a := HashEngineer(email); a != "" {
		return a
	}
	return HashEngineer("(no email)")
}

// attribCovers reports whether st, computed at HEAD, still describes the
// shared log files: every file it covers still holds those bytes. Lines
// appended since, and new files, are not committed (HEAD has not moved):
// readers count them as written without a refresh.
func (s *Store) attribCovers(st *attribState, files []string) bool {
	present := map[string]bool{}
	for _, name := range files {
		present[name] = true
	}
	for name, fa := range st.Files {
		if !present[name] || !s.attribValid(nil, name, fa) {
			return false
		}
	}
	return true
}

// restamp stamps the files of st that are whole and old enough now
// (fileStamp), and reports whether it stamped any.
func (s *Store) restamp(st *attribState) bool {
	changed := false
	for name, fa := range st.Files {
		if fa.Stamp != "" {
			continue
		}
		if _, _, _, stamp, err := s.fingerprint(name, fa.Size); err == nil && stamp != "" {
			fa.Stamp, changed = stamp, true
		}
	}
	return changed
}

// attribValid reports whether the file still holds the bytes fa covers
// (memo as for unchanged).
func (s *Store) attribValid(memo map[string]string, name string, fa *fileAttrib) bool {
	if s.unchanged(memo, name, fa.Stamp) {
		return true
	}
	head, tail, size, _, err := s.fingerprint(name, fa.Size)
	return err == nil && size >= fa.Size && head == fa.Head && tail == fa.Tail
}

// attribFile attributes the whole lines of one working log file: each line
// to the author of the commit that first added it, or asWritten. With prev
// (the file's attribution before, still valid) a line prev gave a
// committer keeps it (the first commit that added it does not change), so
// only the lines prev counted as written or Unattributed are read again
// when the new commits touched the file, and only the lines past
// prev.Size when they did not.
func (s *Store) attribFile(name string, prev *fileAttrib, touched bool, commits []CommitInfo, lines *lineTable, signed bool) (*fileAttrib, error) {
	fa := &fileAttrib{}
	if prev != nil && !s.attribValid(nil, name, prev) {
		prev = nil
	}
	f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	label := func(line []byte, end int64) {
		by := asWritten
		if c, ok := lines.get(keyOfLine(line)); ok && len(bytes.TrimSpace(line)) > 0 {
			by = commits[c].Author
			if signed && !commits[c].Signed {
				by = unsignedLabel
			}
		}
		fa.Runs = appendRun(fa.Runs, end, by)
	}
	var start int64
	switch {
	case prev != nil && !touched:
		fa.Runs = slices.Clone(prev.Runs)
		start = prev.Size
	case prev != nil:
		for _, r := range prev.Runs {
			if r.By != asWritten && r.By != Unattributed {
				fa.Runs = appendRun(fa.Runs, r.End, r.By)
			} else if _, err := scanLines(f, start, r.End, label); err != nil {
				return nil, err
			}
			start = r.End
		}
	}
	if fa.Size, err = scanLines(f, start, -1, label); err != nil {
		return nil, err
	}
	fa.Head, fa.Tail, _, fa.Stamp, err = s.fingerprint(name, fa.Size)
	if err != nil {
		return nil, err
	}
	return fa, nil
}

// scanLines calls fn with each whole line of f in [from, to) (to < 0: to
// the end; a torn last line is left out) and the offset it ends at, and
// returns where the last whole line ends. The line is valid only during fn.
func scanLines(f *os.File, from, to int64, fn func(line []byte, end int64)) (int64, error) {
	return scanLinesWith(bufio.NewReaderSize(nil, 256<<10), f, from, to, fn)
}

// scanLinesWith is scanLines reading through br (reset to f): a caller
// that reads many files keeps one buffer.
func scanLinesWith(br *bufio.Reader, f *os.File, from, to int64, fn func(line []byte, end int64)) (int64, error) {
	var r io.Reader = f
	if to >= 0 {
		r = io.NewSectionReader(f, from, to-from)
	} else if _, err := f.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	br.Reset(r)
	off := from
	var long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil // a torn last line: covered once whole
			}
			return 0, err
		}
		off += int64(len(line))
		fn(line, off)
	}
}

// appendRun extends runs to end under by, merging with the last run when
// it has the same label.
func appendRun(runs []attribRun, end int64, by string) []attribRun {
	if n := len(runs); n > 0 && runs[n-1].By == by {
		runs[n-1].End = end
		return runs
	}
	return append(runs, attribRun{End: end, By: by})
}

// sharedLogFiles lists log/*.jsonl (not the local log).
func (s *Store) sharedLogFiles() ([]string, error) {
	all, err := s.logFiles()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if strings.HasPrefix(f, LogDir+"/") {
			out = append(out, f)
		}
	}
	return out, nil
}

// headCommit is HEAD's commit hash, "" without commits: every reader of
// the log asks, so it reads the ref files rather than open go-git's view.
func (s *Store) headCommit() string {
	h, err := s.git.dirs().ReadRef("HEAD")
	if err != nil {
		return ""
	}
	return h
}

// attributor tells the readers of the log who each line counts as, from
// the cached attribution, without reading history.
type attributor struct {
	st        *attribState
	headMoved bool                   // HEAD is not the commit st was computed at
	own       func(name string) bool // a segment of this node's shared log
	valid     map[string]bool
	stamps    map[string]string // the files' stamps, stat'ed once (unchanged)
}

// newAttributor loads the cached attribution (a few small reads).
func (s *Store) newAttributor() *attributor {
	a := &attributor{st: s.readAttribState(), valid: map[string]bool{}, stamps: map[string]string{}}
	a.own = s.IsOwnLog
	a.headMoved = a.st == nil || a.st.Commit != s.headCommit()
	return a
}

// fileValid reports (once per file) whether the cached runs still cover
// the file's bytes.
func (s *Store) fileValid(a *attributor, name string) (*fileAttrib, bool) {
	if a.st == nil {
		return nil, false
	}
	fa := a.st.Files[name]
	if fa == nil {
		return nil, false
	}
	ok, seen := a.valid[name]
	if !seen {
		ok = s.attribValid(a.stamps, name, fa)
		a.valid[name] = ok
	}
	return fa, ok
}

// label is who the line of name starting at off counts as: an author id,
// asWritten or Unattributed.
func (s *Store) label(a *attributor, name string, off int64) string {
	if !strings.HasPrefix(name, LogDir+"/") {
		return asWritten // the local log never leaves this machine
	}
	fa, ok := s.fileValid(a, name)
	if ok && off < fa.Size {
		i := sort.Search(len(fa.Runs), func(i int) bool { return fa.Runs[i].End > off })
		if i < len(fa.Runs) {
			return a.st.grouped(fa.Runs[i].By)
		}
	}
	return a.beyond(name, ok || fa == nil)
}

// beyond labels the lines past what the cache covers: written on this
// machine unless HEAD has moved since (then only this node's own file is
// known to be written here), or the file was rewritten under the cache.
//
// Under signed evidence, a line not known to be signed yet is left out
// (unsignedLabel) rather than counted as Unattributed.
func (a *attributor) beyond(name string, intact bool) string {
	if intact && (!a.headMoved || a.own(name)) {
		return asWritten
	}
	if a.st != nil && a.st.Signed {
		return unsignedLabel
	}
	return Unattributed
}

// runs is the labels of name's bytes [0, end) as the attributor sees them.
func (s *Store) runs(a *attributor, name string, end int64) []attribRun {
	if end <= 0 {
		return nil
	}
	if !strings.HasPrefix(name, LogDir+"/") {
		return []attribRun{{End: end, By: asWritten}}
	}
	var out []attribRun
	fa, ok := s.fileValid(a, name)
	covered := int64(0)
	if ok {
		for _, r := range fa.Runs {
			out = appendRun(out, min(r.End, end), a.st.grouped(r.By))
			if r.End >= end {
				return out
			}
		}
		covered = fa.Size
	}
	if covered < end {
		out = appendRun(out, end, a.beyond(name, ok || fa == nil))
	}
	return out
}

// counted reports whether a line labelled by counts at all: under signed
// evidence, the lines of commits without a verified signature do not.
func counted(by string) bool { return by != unsignedLabel }

// attribute rewrites e's author to who its line counts as.
func attribute(e domain.Event, by string) domain.Event {
	if by != asWritten && e.Author != by {
		e.Author = by
	}
	return e
}

// CommittedLine is one event of a shared log file as written, and the
// commit that first added its line (nil when the line is not committed).
type CommittedLine struct {
	File   string
	Line   int // 1-based
	Event  domain.Event
	Commit *CommitInfo
}

// CommittedLines refreshes the attribution and calls fn with every event
// of every shared log file (log/*.jsonl), as written, with the commit that
// added its line: what doctor checks the evidence of each file against.
func (s *Store) CommittedLines(ctx context.Context, fn func(CommittedLine)) error {
	if err := s.refreshAttribution(ctx); err != nil {
		return fmt.Errorf("attribute log lines: %w", err)
	}
	st := s.readAttribState()
	lines := newLineTable()
	if st != nil {
		var l *lineTable
		if st.Commits, l = s.readAttribLines(st.Commit); l != nil {
			lines = l
		}
	}
	defer lines.close()
	files, err := s.sharedLogFiles()
	if err != nil {
		return err
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		for i, line := range bytes.SplitAfter(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			e, reason := decodeLine(line)
			if reason != "" {
				continue
			}
			cl := CommittedLine{File: name, Line: i + 1, Event: e}
			if c, ok := lines.get(keyOfLine(line)); ok {
				cl.Commit = &st.Commits[c]
			}
			fn(cl)
		}
	}
	if lines.bad.Load() {
		_ = os.Remove(filepath.Join(s.dir, filepath.FromSlash(attribFile)))
		return fmt.Errorf("read %s: a commit index out of range (corrupt); the next command recomputes the attribution", attribLinesFile)
	}
	return nil
}

// AttributionBehind reports whether some shared log lines count as
// Unattributed until the next refreshAttribution: HEAD moved since the
// last one (or there was none) and another node's file grew or changed.
// A hook asks (a few stats and reads, no history) and leaves the refresh
// to a background command; this node's own commits never make it behind.
func (s *Store) AttributionBehind() bool {
	a := s.newAttributor()
	if !a.headMoved {
		return false
	}
	files, err := s.sharedLogFiles()
	if err != nil {
		return false
	}
	for _, name := range files {
		if a.own(name) {
			continue
		}
		fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(name)))
		if err != nil || fi.Size() == 0 {
			continue
		}
		fa, ok := s.fileValid(a, name)
		if !ok || fi.Size() > fa.Size {
			return true
		}
	}
	return false
}
