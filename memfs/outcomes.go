package memfs

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// maxLineBytes bounds one log line; a longer one is junk.
const maxLineBytes = 64 << 10

// HashSession turns a raw session id into the form the shared log carries:
// "s-" and 16 hex of a SHA-256. An id already in that form and "" pass
// through unchanged.
func HashSession(raw string) string {
	if raw == "" || hashedID(raw, "s-", 16) {
		return raw
	}
	sum := sha256.Sum256([]byte("borg-session\x00" + raw))
	return "s-" + hex.EncodeToString(sum[:8])
}

// HashEngineer turns a raw engineer id (an email, trimmed and lowercased)
// into "e-" and 8 hex of a SHA-256. An id already in that form and "" pass
// through unchanged.
func HashEngineer(raw string) string {
	if raw == "" || hashedID(raw, "e-", 8) {
		return raw
	}
	sum := sha256.Sum256([]byte("borg-engineer\x00" + strings.ToLower(strings.TrimSpace(raw))))
	return "e-" + hex.EncodeToString(sum[:4])
}

// ShareOutcomes reports whether events may go to the shared log: false when
// BORG_SHARE_OUTCOMES is off (or 0, false, no).
func (s *Store) ShareOutcomes() bool {
	switch strings.ToLower(strings.TrimSpace(s.getenv("BORG_SHARE_OUTCOMES"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// prepare hashes an event's session and author and fills its id.
func prepare(e domain.Event) domain.Event {
	e.Session = HashSession(e.Session)
	e.Author = HashEngineer(e.Author)
	return e.WithID()
}

// Append writes each event, its session and author hashed and its id
// filled, as one JSON line to the node's shared log (its last segment,
// logroll.go), or to .borg/local/<node>.jsonl
// when its kind is never shared or BORG_SHARE_OUTCOMES is off. Each line
// goes out in one write under an exclusive advisory lock, so parallel
// appenders lose nothing. Append does not commit.
func (s *Store) Append(events ...domain.Event) error {
	if err := s.checkOwner(); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	node, err := s.Node()
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	share := s.ShareOutcomes()
	byFile := map[string][][]byte{}
	shared := ""
	for _, e := range events {
		e = prepare(e)
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("append event %s: %w", e.Kind, err)
		}
		dest := s.LocalLogPath()
		if share && e.Kind.Shared() {
			if shared == "" {
				if shared, err = s.appendSegment(node); err != nil {
					return fmt.Errorf("append events (node %s): %w", node, err)
				}
			}
			dest = shared
		}
		byFile[dest] = append(byFile[dest], append(line, '\n'))
	}
	for _, dest := range slices.Sorted(mapKeys(byFile)) {
		if err := appendLines(filepath.Join(s.dir, filepath.FromSlash(dest)), byFile[dest]); err != nil {
			return fmt.Errorf("append events to %s (node %s): %w", dest, node, err)
		}
	}
	return nil
}

// AppendEvidence writes e to the local log only, with a free-text note
// (why a lesson was vetoed, say) that never leaves the machine. The line has
// e's id, so readers count it once with the shared line of the same event.
func (s *Store) AppendEvidence(e domain.Event, why string) error {
	if err := s.checkOwner(); err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	if _, err := s.Node(); err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	line, err := json.Marshal(struct {
		domain.Event
		Why string `json:"why,omitempty"`
	}{prepare(e), why})
	if err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	p := filepath.Join(s.dir, filepath.FromSlash(s.LocalLogPath()))
	if err := appendLines(p, [][]byte{append(line, '\n')}); err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	return nil
}

// LogPath is this node's shared log as it is appended to now: its last
// segment (logroll.go), a slash path from the store's root.
func (s *Store) LogPath() string {
	n, _ := s.Node()
	k, _, err := s.lastSegment(n)
	if err != nil {
		k = 0
	}
	return segmentPath(n, k)
}

// OwnLogPaths are the segments of this node's shared log a commit of its
// new lines takes: the last one HEAD holds and every later one (an earlier
// segment was complete when the next began, and is committed as it is).
func (s *Store) OwnLogPaths() ([]string, error) {
	all, err := s.LogSegments()
	if err != nil || len(all) < 2 {
		return all, err
	}
	committed, err := s.listAt("HEAD", LogDir)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	last := 0
	for _, p := range committed {
		if s.IsOwnLog(p) {
			if _, k, _ := LogNode(p); k > last {
				last = k
			}
		}
	}
	if last >= len(all) {
		last = len(all) - 1
	}
	return all[last:], nil
}

// LocalLogPath is this node's local log, never committed.
func (s *Store) LocalLogPath() string { n, _ := s.Node(); return localLogDir + "/" + n + ".jsonl" }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// appendLines appends whole lines to a file, one write call per line, under
// an exclusive flock. A previous writer killed mid-line left the file
// without a final newline: one is written first, so only that torn line is
// lost, never the next one.
func appendLines(p string, lines [][]byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// A log file committed as a symbolic link would have events appended
	// wherever it points.
	if err := checkNotLink(filepath.Dir(p), p); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if err := LockFile(f, -1); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer func() { _ = UnlockFile(f) }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if size := fi.Size(); size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
	}
	for _, line := range lines {
		if _, err := f.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// SkippedLine is one log line a reader skipped.
type SkippedLine struct {
	File   string `json:"file"` // slash path from the store's root
	Line   int    `json:"line"` // 1-based
	Reason string `json:"reason"`
}

// LogReport says what ReadEvents read.
type LogReport struct {
	Files      int `json:"files"`
	Lines      int `json:"lines"`      // non-blank lines
	Events     int `json:"events"`     // distinct events returned
	Duplicates int `json:"duplicates"` // lines repeating an event already read
	// Unsigned counts the lines left out under signed evidence (their
	// commit carries no signature git verifies, or none is known yet).
	Unsigned int           `json:"unsigned,omitempty"`
	Skipped  []SkippedLine `json:"skipped"`
}

// AnchorFlagsFile is the file in .borg/local where the git post-commit
// hook notes each lesson anchored on a file a commit changed (one JSON
// object a line: lesson, path, commit, ms); it holds no events.
const AnchorFlagsFile = "anchors.jsonl"

// AnchorFlag is one note of the post-commit hook: a commit changed a file
// a lesson is anchored on.
type AnchorFlag struct {
	Lesson string `json:"lesson"`
	Path   string `json:"path"`
	Commit string `json:"commit"`
	MS     int64  `json:"ms"`
}

// AnchorFlags reads the post-commit hook's notes (AnchorFlagsFile), in the
// order they were written; a line that is no note is skipped.
func (s *Store) AnchorFlags() ([]AnchorFlag, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(localLogDir), AnchorFlagsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []AnchorFlag
	for line := range strings.Lines(string(data)) {
		var f AnchorFlag
		if json.Unmarshal([]byte(line), &f) == nil && f.Lesson != "" && f.Path != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// logFiles lists the log files a reader folds: log/*.jsonl and
// .borg/local/*.jsonl but AnchorFlagsFile, as sorted slash paths.
func (s *Store) logFiles() ([]string, error) {
	var out []string
	for _, dir := range []string{LogDir, localLogDir} {
		entries, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(dir)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if dir == localLogDir && e.Name() == AnchorFlagsFile {
				continue // the commit hook's notes, no events
			}
			if strings.HasSuffix(e.Name(), ".jsonl") && e.Type().IsRegular() {
				out = append(out, dir+"/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// LogFileProblems names each log file of log/ and .borg/local/ (a .jsonl
// name) that is not a regular file, with its fix: readers take no events
// from it (logFiles lists regular files only), and when it is one of this
// machine's, no hook can record a session into it.
func (s *Store) LogFileProblems() []string {
	own := map[string]bool{s.LogPath(): true, s.LocalLogPath(): true}
	var out []string
	for _, dir := range []string{LogDir, localLogDir} {
		entries, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(dir)))
		if err != nil {
			continue // a missing folder is made by the first append
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") || e.Type().IsRegular() {
				continue
			}
			rel := dir + "/" + e.Name()
			what := "a symbolic link or other special file"
			if e.IsDir() {
				what = "a directory"
			}
			effect := "no events are read from it"
			if own[rel] {
				effect += ", and this machine's hooks cannot record a session into it"
			}
			out = append(out, fmt.Sprintf("%s is %s, not a log file: %s; move it out of %s/ (borg starts the log file anew on its next append)", rel, what, effect, dir))
		}
	}
	return out
}

// ReadEvents reads the union of every node's log and the local log,
// deduplicated by event id (a line without one gets domain.ComputeEventID)
// and sorted by (ms, id), so line and file order never matter. A torn last
// line or a junk line is skipped and counted in the report, never fatal;
// only an unreadable file is an error. Each event's author is who its line
// counts as (attrib.go: the committer of a committed line), after a
// refreshAttribution (whose failure leaves lines committed since the last
// one Unattributed).
func (s *Store) ReadEvents() ([]domain.Event, LogReport, error) {
	var rep LogReport
	_ = s.refreshAttribution(context.Background()) // as in loadLedger
	a := s.newAttributor()
	files, err := s.logFiles()
	if err != nil {
		return nil, rep, fmt.Errorf("read events: %w", err)
	}
	// Size the set and the slice from the bytes to read (a line is
	// ~150 bytes), sparing the reader a dozen regrowths of a large log.
	var total int64
	for _, name := range files {
		if fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(name))); err == nil {
			total += fi.Size()
		}
	}
	hint := int(min(total/150, 1<<24))
	seen := make(map[string]bool, hint)
	events := make([]domain.Event, 0, hint)
	for _, name := range files {
		f, err := os.Open(filepath.Join(s.dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, rep, fmt.Errorf("read events: %w", err)
		}
		rep.Files++
		_, err = scanEvents(f, 0, nil, func(n int, off int64, e domain.Event, reason string) {
			rep.Lines++
			if reason != "" {
				rep.Skipped = append(rep.Skipped, SkippedLine{File: name, Line: n, Reason: reason})
				return
			}
			by := s.label(a, name, off)
			if !counted(by) {
				rep.Unsigned++
				return
			}
			if seen[e.ID] {
				rep.Duplicates++
				return
			}
			seen[e.ID] = true
			events = append(events, attribute(e, by))
		}, true)
		_ = f.Close()
		if err != nil {
			return nil, rep, fmt.Errorf("read events %s: %w", name, err)
		}
	}
	slices.SortFunc(events, func(a, b domain.Event) int {
		return cmp.Or(cmp.Compare(a.MS, b.MS), strings.Compare(a.ID, b.ID))
	})
	rep.Events = len(events)
	return events, rep, nil
}

// scanBuffer is the read buffer scanEvents gives r: 256 KiB for a long
// read, only as much as is left of a file read from start (a hook folds a
// tail of a few KiB, and each page of a fresh buffer is a page fault in a
// short-lived process), never under bufio's own minimum.
func scanBuffer(r io.Reader, start int64) int {
	const most = 256 << 10
	left := int64(most)
	switch f := r.(type) {
	case *os.File:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			left = fi.Size() - start
		}
	case *io.SectionReader:
		left = f.Size()
	}
	// One byte past what is left, so that reading the last line finds
	// the end of the file without filling the buffer.
	return int(min(max(left+1, 4<<10), most))
}

// scanEvents reads r line by line, calling fn with each non-blank line's
// 1-based number, its offset (from start) and its event, or the reason it
// is skipped. The events share repeated strings through in (nil: through
// an interner of this read's own). With partial
// true a last line without a newline is read too (skipped as torn unless it
// is a whole event); without, it is left unread. It returns the offset just
// past the last line it consumed.
func scanEvents(r io.Reader, start int64, in *interner, fn func(n int, off int64, e domain.Event, reason string), partial bool) (int64, error) {
	br := bufio.NewReaderSize(r, scanBuffer(r, start))
	off := start
	var long []byte // the start of a line longer than the buffer
	var longLen int64
	n := 0
	if in == nil {
		in = newInterner()
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) <= maxLineBytes {
				long = append(long, chunk...)
			}
			longLen += int64(len(chunk))
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return off, err
		}
		line, size := chunk, int64(len(chunk))
		if longLen > 0 {
			line, size = append(long, chunk...), longLen+int64(len(chunk))
			long, longLen = long[:0], 0
		}
		complete := err == nil
		if size == 0 || (!complete && !partial) {
			return off, nil
		}
		at := off
		off += size
		n++
		if len(bytes.TrimSpace(line)) > 0 {
			e, reason := decodeLineIn(line, in)
			if size > maxLineBytes {
				e, reason = domain.Event{}, fmt.Sprintf("line longer than %d bytes", maxLineBytes)
			}
			if reason != "" && !complete {
				reason = "torn last line (no newline): " + reason
			}
			fn(n, at, e, reason)
		}
		if !complete {
			return off, nil
		}
	}
}

// utf8BOM is UTF-8's byte order mark.
var utf8BOM = []byte("\xef\xbb\xbf")

// decodeLine parses one log line into an event, or says why it cannot.
func decodeLine(line []byte) (domain.Event, string) { return decodeLineIn(line, nil) }

// decodeLineIn is decodeLine sharing repeated strings through in.
func decodeLineIn(line []byte, in *interner) (domain.Event, string) {
	if len(line) > maxLineBytes {
		return domain.Event{}, fmt.Sprintf("line longer than %d bytes", maxLineBytes)
	}
	// A byte order mark is how an editor on Windows begins a file it
	// saved: the line after it is still the event it was.
	line = bytes.TrimSpace(bytes.TrimPrefix(line, utf8BOM))
	if len(line) == 0 || line[0] != '{' {
		return domain.Event{}, "not a JSON object"
	}
	e, ok := fastDecode(line, in)
	if !ok {
		e = domain.Event{}
		if err := json.Unmarshal(line, &e); err != nil {
			return domain.Event{}, "bad JSON: " + err.Error()
		}
	}
	if why := incomplete(e); why != "" {
		return domain.Event{}, why
	}
	return e.WithID(), ""
}

// incomplete says what an event lacks that its kind needs ("" when
// nothing): what it is about (a lesson, a session, a link's two ends). Such a line says nothing anyone can count, so it is skipped
// and counted as junk, as a line that is no JSON is.
func incomplete(e domain.Event) string {
	switch e.Kind {
	case "":
		return "no kind"
	case domain.KindSession:
		if e.Session == "" {
			return "a session event without its session"
		}
	case domain.KindPassing:
		if e.Src == "" || e.Dst == "" {
			return "a link event without both ends (src, dst)"
		}
	case domain.KindCreated, domain.KindAsked, domain.KindChanged, domain.KindIgnored, domain.KindCorrected,
		domain.KindVetoed, domain.KindTested, domain.KindRegret, domain.KindCensored, domain.KindUnclear, domain.KindPlacebo:
		if e.Lesson == "" {
			return "a " + string(e.Kind) + " event without its lesson"
		}
	}
	// A kind this borg does not know (a newer borg's) is read and left to
	// the readers, which pass over what they do not count.
	return ""
}

// MergeLines merges two versions of a log file: the union of their
// non-blank lines, each once, sorted, each ending in a newline. It is
// commutative, idempotent and insensitive to line order, so it can serve as
// a git merge driver for log/*.jsonl.
func MergeLines(a, b []byte) []byte {
	set := map[string]bool{}
	for _, data := range [][]byte{a, b} {
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			line = bytes.TrimRight(line, "\r")
			if len(bytes.TrimSpace(line)) > 0 {
				set[string(line)] = true
			}
		}
	}
	lines := slices.Sorted(mapKeys(set))
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
