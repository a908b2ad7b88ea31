package memfs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// anchorsFile caches which lessons are anchored on which file, refreshed
// whenever the index re-reads the lessons, so post-commit need not parse
// every lesson.
const anchorsFile = cacheDir + "/anchors.json"

// Anchors returns the cached map from an anchored file's path (its
// @<blob> suffix dropped) to the ids of the lessons anchored on it, sorted;
// nil when there is no cache or it is unreadable (the next UpdateAnchors
// rebuilds it).
func (s *Store) Anchors() map[string][]string {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(anchorsFile)))
	if err != nil {
		return nil
	}
	var m map[string][]string
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// UpdateAnchors refreshes the anchors cache for the lessons a sync read
// (changed or new) and removed, keeping the others' entries; complete says
// that read holds every lesson. Without a cache to update it reads every
// lesson.
func (s *Store) UpdateAnchors(read []domain.Lesson, removed []string, complete bool) error {
	m := s.Anchors()
	if m == nil && !complete {
		if _, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(anchorsFile))); !errors.Is(err, os.ErrNotExist) {
			return err // unreadable: leave it to the next full write
		}
		all, _ := s.lessonsAsWritten() // anchors need no dates
		return s.saveAnchors(anchorsOf(nil, all))
	}
	if complete {
		m = nil
	} else if !anchorsMove(m, read, removed) {
		// The usual sync (a learn's new lesson, anchored nowhere) leaves
		// the cache as it is: a rewrite would cost a hook a file creation
		// and a rename for the same bytes.
		return nil
	}
	drop := make(map[string]bool, len(read)+len(removed))
	for _, l := range read {
		drop[l.ID] = true
	}
	for _, id := range removed {
		drop[id] = true
	}
	for path, ids := range m {
		ids = slices.DeleteFunc(ids, func(id string) bool { return drop[id] })
		if len(ids) == 0 {
			delete(m, path)
		} else {
			m[path] = ids
		}
	}
	return s.saveAnchors(anchorsOf(m, read))
}

// anchorsMove reports whether an update for read and removed would change
// the cache m: a read lesson anchored on a file (or on a different set of
// files), or one that m lists and the update drops.
func anchorsMove(m map[string][]string, read []domain.Lesson, removed []string) bool {
	listed := map[string]int{} // lesson id → files m lists it on
	for _, ids := range m {
		for _, id := range ids {
			listed[id]++
		}
	}
	for _, id := range removed {
		if listed[id] > 0 {
			return true
		}
	}
	for _, l := range read {
		files := anchorsOf(nil, []domain.Lesson{l})
		if len(files) != listed[l.ID] {
			return true
		}
		for path := range files {
			if !slices.Contains(m[path], l.ID) {
				return true
			}
		}
	}
	return false
}

// anchorsOf adds lessons' anchored files to m (a new map when nil), each
// file's lessons sorted.
func anchorsOf(m map[string][]string, lessons []domain.Lesson) map[string][]string {
	if m == nil {
		m = map[string][]string{}
	}
	for _, l := range lessons {
		for _, a := range l.Anchors {
			path := a
			if i := strings.LastIndexByte(a, '@'); i > 0 {
				path = a[:i]
			}
			m[path] = append(m[path], l.ID)
		}
	}
	for path := range m {
		slices.Sort(m[path])
		m[path] = slices.Compact(m[path])
	}
	return m
}

func (s *Store) saveAnchors(m map[string][]string) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	p := filepath.Join(s.dir, filepath.FromSlash(anchorsFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// A cache, rebuilt when unreadable, written on the hooks' path: the
	// rename keeps a kill from tearing it, without the fsyncs.
	tmp := filepath.Join(s.dir, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(p, data, 0o644, TempDir(tmp), NoSync())
}
