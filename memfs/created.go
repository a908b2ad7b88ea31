package memfs

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
)

// maxAddedPaths is the most paths FirstAdded names to git one by one; past
// it, git walks the history of all of lessons/ and the answer is picked out
// (a command line of thousands of paths would near the system's limit).
var maxAddedPaths = 1000 // a variable for the tests

// FirstAdded is, for each path (slash paths from the store's root), the
// author time of the commit at or before rev that first added a file there:
// the created date of a lesson written without one (docs/formats.md). A
// path no commit added (a file not committed yet) is left out, as is every
// path when git cannot answer (no commit yet, no git).
func (s *Store) FirstAdded(ctx context.Context, rev string, paths []string) map[string]time.Time {
	if len(paths) == 0 || rev == "" || strings.HasPrefix(rev, "-") {
		return nil
	}
	args := []string{"log", "--diff-filter=A", "--no-renames", "--format=@%at", "--name-only", "--reverse", rev, "--"}
	if len(paths) > maxAddedPaths {
		args = append(args, LessonsDir+"/")
	} else {
		args = append(args, paths...)
	}
	out, err := s.runGit(ctx, nil, args...)
	if err != nil {
		return nil
	}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	added := make(map[string]time.Time, len(paths))
	var at time.Time
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if sec, ok := strings.CutPrefix(line, "@"); ok {
			n, err := strconv.ParseInt(sec, 10, 64)
			if err != nil {
				at = time.Time{}
				continue
			}
			at = time.Unix(n, 0).UTC()
			continue
		}
		if line == "" || at.IsZero() || !want[line] {
			continue
		}
		if _, seen := added[line]; !seen { // oldest first: the first add holds
			added[line] = at
		}
	}
	return added
}

// defaultCreated gives each lesson of lessons/ without a created date the
// time its file was first committed (FirstAdded at HEAD), the format's
// default.
func (s *Store) defaultCreated(lessons []domain.Lesson) {
	paths := map[string]int{}
	var undated []string
	for i := range lessons {
		if lessons[i].Created.IsZero() {
			if rel, _, err := s.locate(LessonsDir, lessons[i].ID); err == nil {
				paths[rel] = i
				undated = append(undated, rel)
			}
		}
	}
	if len(undated) == 0 {
		return
	}
	for rel, t := range s.FirstAdded(context.Background(), "HEAD", undated) {
		lessons[paths[rel]].Created = t
	}
}
