package memfs

// changes.go keeps the change journal: for each of the last commits borg
// made on the checked-out branch, its parent, itself and the lesson files it
// wrote or deleted, in .borg/changes.json (never committed). A hook that
// finds HEAD moved since it last looked asks ChangedSince which lessons
// changed, and when borg made every commit in between it answers from
// this small file instead of a git diff-tree of two trees of 100,000
// entries. A commit borg did not make (a pull, a merge, plain git) breaks
// the chain, and the caller asks git.
//
// A record states a fact about two commits, whatever the refs do later: the
// commit's tree is its parent's with exactly these paths written or deleted
// (borg builds it so), so the paths are a superset of what differs. The
// file is written atomically (a reader sees the old journal or the new one)
// and without fsync: a power loss may leave it unreadable, and an
// unreadable journal answers nothing.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

const changesFile = PrivateDir + "/changes.json"

// changesKept is how many commits the journal remembers; changesMaxPaths
// the most lesson paths one record holds (a larger commit, a sleep's or a
// reindex of thousands, is not recorded: the chain through it goes to git).
const (
	changesKept     = 64
	changesMaxPaths = 2048
)

// changeRecord is one commit in the journal.
type changeRecord struct {
	Old     string   `json:"old"` // the parent ("" for a root commit)
	New     string   `json:"new"`
	Changed []string `json:"changed,omitempty"` // lesson paths written
	Removed []string `json:"removed,omitempty"` // lesson paths deleted
}

// changeJournal is the file's content.
type changeJournal struct {
	Version int            `json:"v"`
	Commits []changeRecord `json:"commits"`
}

// readChanges reads the journal; ok is false when there is none or it is
// not one this code wrote.
func (s *Store) readChanges() (changeJournal, bool) {
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(changesFile)))
	if err != nil {
		return changeJournal{}, false
	}
	var j changeJournal
	if err := json.Unmarshal(data, &j); err != nil || j.Version != 1 {
		return changeJournal{}, false
	}
	for _, c := range j.Commits {
		if !isHash(c.New) || c.Old != "" && !isHash(c.Old) {
			return changeJournal{}, false
		}
	}
	return j, true
}

// isHash reports whether h names an object of the store's hash (SHA-1).
func isHash(h string) bool { return len(h) == 40 && IsObjectName(h) }

// recordChanges appends the commit parent→h with changes to the journal
// when ref is the checked-out branch. It never fails the commit: a journal
// it cannot write is removed, so no reader trusts a stale one, and readers
// fall back to git.
func (s *Store) recordChanges(ref plumbing.ReferenceName, parent, h plumbing.Hash, changes []FileChange) {
	if branch, err := s.git.headBranch(); err != nil || branch != ref {
		return
	}
	rec := changeRecord{New: h.String()}
	if !parent.IsZero() {
		rec.Old = parent.String()
	}
	for _, c := range changes {
		if !strings.HasPrefix(c.Path, LessonsDir+"/") {
			continue
		}
		if c.Delete {
			rec.Removed = append(rec.Removed, c.Path)
		} else {
			rec.Changed = append(rec.Changed, c.Path)
		}
	}
	p := filepath.Join(s.dir, filepath.FromSlash(changesFile))
	if len(rec.Changed)+len(rec.Removed) > changesMaxPaths {
		return // not recorded: the chain through it breaks
	}
	j, _ := s.readChanges()
	j.Version = 1
	j.Commits = append(j.Commits, rec)
	if n := len(j.Commits); n > changesKept {
		j.Commits = j.Commits[n-changesKept:]
	}
	data, err := json.Marshal(j)
	if err == nil {
		err = WriteFileAtomic(p, append(data, '\n'), 0o644, TempDir(filepath.Join(s.dir, tmpDir)), NoSync())
	}
	if err != nil {
		_ = os.Remove(p)
	}
}

// errNotCovered: the journal does not hold every commit between the two.
var errNotCovered = errors.New("not in the change journal")

// ChangedSince returns the lesson paths (lessons/<id>.html) that commits
// between oldHead and newHead (full hex hashes; newHead a descendant of
// oldHead along first parents) wrote and deleted, as the last commit left
// each: changed for a path written, removed for one deleted. ok is false
// when the change journal does not cover every commit from oldHead to
// newHead (one that borg did not make, or one too old or too large to be
// kept): ask git then. The paths are a superset of what differs: a path
// written with the bytes it had is listed.
func (s *Store) ChangedSince(oldHead, newHead string) (changed, removed []string, ok bool) {
	chain, err := s.changeChain(oldHead, newHead)
	if err != nil {
		return nil, nil, false
	}
	state := map[string]bool{} // path → written (true) or deleted
	for i := len(chain) - 1; i >= 0; i-- {
		for _, p := range chain[i].Changed {
			state[p] = true
		}
		for _, p := range chain[i].Removed {
			state[p] = false
		}
	}
	for p, written := range state {
		if written {
			changed = append(changed, p)
		} else {
			removed = append(removed, p)
		}
	}
	return changed, removed, true
}

// changeChain is the records from newHead back to oldHead, newest first.
func (s *Store) changeChain(oldHead, newHead string) ([]changeRecord, error) {
	if !isHash(oldHead) || !isHash(newHead) || oldHead == newHead {
		return nil, errNotCovered
	}
	j, ok := s.readChanges()
	if !ok {
		return nil, errNotCovered
	}
	byNew := make(map[string]changeRecord, len(j.Commits))
	for _, c := range j.Commits {
		byNew[c.New] = c
	}
	var chain []changeRecord
	for at := newHead; at != oldHead; {
		c, ok := byNew[at]
		if !ok || len(chain) > len(j.Commits) {
			return nil, errNotCovered
		}
		chain = append(chain, c)
		at = c.Old
	}
	return chain, nil
}
