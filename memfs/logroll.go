package memfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A node's shared log rolls over into segments:
//
//	log/<node>.jsonl        segment 0, the file an older borg appends to
//	log/<node>~0001.jsonl   segment 1, started once segment 0 passed the roll size
//	log/<node>~0002.jsonl   …
//
// Appends go to the node's last segment, or to a new one once the last
// has reached the roll size, so a sync commits only the segment that grew
// (a blob of at most the roll size) and every earlier segment stays one
// immutable blob, which git packs once and never again. Readers take the
// union of every log/*.jsonl, so the segments of a node read exactly as
// the single file they replace would, by this borg and by an older one.

// DefaultLogRoll is the size past which a node's log starts a new
// segment: small enough that a sync writes and pushes under a megabyte,
// large enough that a big team's log is a few thousand files.
const DefaultLogRoll = 512 << 10

// segmentSep separates a node id from its segment number; node ids
// ("n-" and hex) never hold it.
const segmentSep = "~"

// logRoll is the roll size: BORG_LOG_ROLL (bytes; K, M and G suffixes,
// binary) or DefaultLogRoll.
func (s *Store) logRoll() int64 {
	if n, err := ParseSize(s.getenv("BORG_LOG_ROLL")); err == nil && n > 0 {
		return n
	}
	return DefaultLogRoll
}

// ParseSize reads "524288", "512K", "1M", "2G".
func ParseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, errors.New("empty size")
	}
	mult := int64(1)
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want bytes, or a number with K, M or G", v)
	}
	return n * mult, nil
}

// segmentPath is the slash path of segment k of node's shared log.
func segmentPath(node string, k int) string {
	if k == 0 {
		return LogDir + "/" + node + ".jsonl"
	}
	return fmt.Sprintf("%s/%s%s%04d.jsonl", LogDir, node, segmentSep, k)
}

// LogNode is the node whose shared log the file (a slash path or a base
// name) is a segment of, and the segment's number; ok is false for a file
// that is no shared log segment.
func LogNode(name string) (node string, k int, ok bool) {
	base, ok := strings.CutSuffix(name[strings.LastIndexByte(name, '/')+1:], ".jsonl")
	if !ok || base == "" {
		return "", 0, false
	}
	node, num, rolled := strings.Cut(base, segmentSep)
	if !rolled {
		return node, 0, true
	}
	k, err := strconv.Atoi(num)
	if err != nil || k < 1 || len(num) < 4 || node == "" || (len(num) > 4 && num[0] == '0') {
		return "", 0, false
	}
	return node, k, true
}

// lastSegment is the number of node's last segment on disk (0 when it has
// none yet) and that segment's size (-1: it does not exist). Segments are
// numbered without gaps, so it stats them in turn: a node has a few dozen
// even on a large team's store.
func (s *Store) lastSegment(node string) (k int, size int64, err error) {
	size = -1
	for i := 0; ; i++ {
		fi, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(segmentPath(node, i))))
		if errors.Is(err, os.ErrNotExist) {
			if i == 0 {
				return 0, -1, nil
			}
			return k, size, nil
		}
		if err != nil {
			return 0, 0, err
		}
		k, size = i, fi.Size()
	}
}

// appendSegment is the segment this node's next shared lines go to: its
// last, or the next one once the last has reached the roll size.
func (s *Store) appendSegment(node string) (string, error) {
	k, size, err := s.lastSegment(node)
	if err != nil {
		return "", err
	}
	if size >= s.logRoll() {
		k++
	}
	return segmentPath(node, k), nil
}

// LogSegments lists the segments of this node's shared log on disk, oldest
// first, as slash paths from the store's root.
func (s *Store) LogSegments() ([]string, error) {
	node, err := s.Node()
	if err != nil {
		return nil, err
	}
	last, size, err := s.lastSegment(node)
	if err != nil || size < 0 {
		return nil, err
	}
	out := make([]string, 0, last+1)
	for k := 0; k <= last; k++ {
		out = append(out, segmentPath(node, k))
	}
	return out, nil
}

// IsOwnLog reports whether the shared log file name (a slash path from
// the store's root) is one of this node's segments.
func (s *Store) IsOwnLog(name string) bool {
	node, err := s.Node()
	if err != nil {
		return false
	}
	n, _, ok := LogNode(name)
	return ok && n == node && strings.HasPrefix(name, LogDir+"/")
}
