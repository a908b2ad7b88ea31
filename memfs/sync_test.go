package memfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// syncNode is one teammate's machine in the sync tests.
type syncNode struct {
	name string
	s    *Store
}

// newSyncNodes makes a bare remote and n stores cloned from it, each with
// its own git identity, and a first lesson every node has.
func newSyncNodes(t *testing.T, n int) (string, []*syncNode) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	var nodes []*syncNode
	for i := range n {
		name := string(rune('a' + i))
		email := name + "@example.com"
		env := testEnv(map[string]string{"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email})
		s, err := Init(context.Background(), filepath.Join(root, name), remote, WithEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &syncNode{name: name, s: s})
		if i == 0 {
			nodes[0].learn(t, "shared-lesson-0001", "Run migrations before the integration tests", 1)
		}
		nodes[i].sync(t)
	}
	return remote, nodes
}

func (n *syncNode) learn(t *testing.T, id, gist string, ms int64) {
	t.Helper()
	l := domain.Lesson{ID: id, Type: "semantic", Confidence: 0.5, Reach: domain.ReachTeam, Gist: gist,
		Created: time.UnixMilli(1_790_000_000_000 + ms).UTC(), Author: HashEngineer(n.name + "@example.com")}
	if err := n.s.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	if err := n.s.Append(domain.Event{MS: 1_790_000_000_000 + ms, Kind: domain.KindCreated, Lesson: id, Author: l.Author}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Commit("learn "+id, LessonPath(id), n.s.LogPath()); err != nil {
		t.Fatal(err)
	}
}

// session logs one session of this node in which each lesson got kind.
func (n *syncNode) session(t *testing.T, ms int64, results map[string]domain.EventKind) {
	t.Helper()
	session := HashSession(fmt.Sprintf("%s-%d", n.name, ms))
	author := HashEngineer(n.name + "@example.com")
	ms += 1_790_000_000_000
	events := []domain.Event{{MS: ms, Kind: domain.KindSession, Session: session, Repo: "api", Author: author}}
	ids := make([]string, 0, len(results))
	for id := range results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for i, id := range ids {
		events = append(events,
			domain.Event{MS: ms + int64(2*i+1), Kind: domain.KindAsked, Session: session, Lesson: id, Author: author},
			domain.Event{MS: ms + int64(2*i+2), Kind: results[id], Session: session, Lesson: id, Author: author})
	}
	for _, e := range events {
		if err := n.s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func (n *syncNode) sync(t *testing.T) SyncResult {
	t.Helper()
	res, err := n.s.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatalf("node %s: sync: %v", n.name, err)
	}
	return res
}

// memory is what the node derives of every lesson it has.
func (n *syncNode) memory(t *testing.T) map[string]domain.Memory {
	t.Helper()
	lessons, errs := n.s.Lessons()
	if len(errs) > 0 {
		t.Fatalf("node %s: %v", n.name, errs)
	}
	mems, err := n.s.Memories(lessons, "", domain.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]domain.Memory{}
	for _, m := range mems {
		out[m.ID] = m
	}
	return out
}

// TestSyncThreeNodes: three teammates on one bare remote, each with their
// own sessions, vetoes and lessons, syncing in different orders, one edit
// of a shared lesson made on two nodes at once. After every node synced
// twice, all derive the same memory for every lesson, no lesson or event is
// lost or counted twice, and the conflict is visible (both versions kept).
func TestSyncThreeNodes(t *testing.T) {
	_, nodes := newSyncNodes(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	a.learn(t, "alpha-lesson-0001", "Pin the Go toolchain in go.mod", 10)
	b.learn(t, "beta-lesson-0001", "Vendor the protobuf plugins", 20)
	c.learn(t, "gamma-lesson-0001", "Use go test -race for concurrency", 30)
	a.session(t, 100, map[string]domain.EventKind{"shared-lesson-0001": domain.KindChanged, "alpha-lesson-0001": domain.KindChanged})
	b.session(t, 110, map[string]domain.EventKind{"shared-lesson-0001": domain.KindChanged, "beta-lesson-0001": domain.KindIgnored})
	c.session(t, 120, map[string]domain.EventKind{"shared-lesson-0001": domain.KindVetoed})
	c.session(t, 130, map[string]domain.EventKind{"gamma-lesson-0001": domain.KindChanged})

	// The same lesson edited on a and b before either synced.
	for _, n := range []*syncNode{a, b} {
		l, err := n.s.Lesson("shared-lesson-0001")
		if err != nil {
			t.Fatal(err)
		}
		l.Body = "Edited on node " + n.name + "."
		if err := n.s.WriteLesson(l); err != nil {
			t.Fatal(err)
		}
		if _, err := n.s.Commit("edit on "+n.name, LessonPath(l.ID)); err != nil {
			t.Fatal(err)
		}
	}

	// Different orders, each node twice.
	var conflicts []SyncConflict
	for _, n := range []*syncNode{b, c, a, a, c, b} {
		res := n.sync(t)
		conflicts = append(conflicts, res.Conflicts...)
	}
	for _, n := range nodes { // and once more, so each has the others' last pushes
		n.sync(t)
	}

	if len(conflicts) != 1 || conflicts[0].Path != LessonPath("shared-lesson-0001") || conflicts[0].Copy == "" {
		t.Fatalf("conflicts = %+v, want the shared lesson kept twice", conflicts)
	}
	want := a.memory(t)
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	copyID := strings.TrimSuffix(filepath.Base(conflicts[0].Copy), ".html")
	if got := strings.Join(ids, " "); got != "alpha-lesson-0001 beta-lesson-0001 gamma-lesson-0001 "+copyID+" shared-lesson-0001" &&
		got != "alpha-lesson-0001 beta-lesson-0001 gamma-lesson-0001 shared-lesson-0001 "+copyID {
		t.Fatalf("lessons after sync: %s", got)
	}
	for _, n := range nodes[1:] {
		if got := n.memory(t); !reflect.DeepEqual(got, want) {
			t.Errorf("node %s derives another memory than node a:\n%+v\n%+v", n.name, got, want)
		}
	}
	shared := want["shared-lesson-0001"]
	if shared.Changed != 2 || shared.Vetoed != 1 {
		t.Errorf("shared lesson: changed %d, vetoed %d; want each session's result counted once (2, 1)", shared.Changed, shared.Vetoed)
	}
	// Both versions are in the store: the remote's under the id, a's or
	// b's (whichever merged second) as the copy, linked to the original.
	bodies := map[string]bool{}
	for _, id := range []string{"shared-lesson-0001", copyID} {
		l, err := a.s.Lesson(id)
		if err != nil {
			t.Fatal(err)
		}
		bodies[l.Body] = true
		if id == copyID && (len(l.Links) == 0 || l.Links[len(l.Links)-1].Target != "shared-lesson-0001") {
			t.Errorf("the copy does not link to the lesson it conflicted with: %+v", l.Links)
		}
	}
	if !bodies["Edited on node a."] || !bodies["Edited on node b."] {
		t.Errorf("an edit was lost: %v", bodies)
	}
	// The worktrees are clean, no journal is left, and every node is at
	// one commit.
	var heads []string
	for _, n := range nodes {
		if _, err := os.Stat(filepath.Join(n.s.Dir(), filepath.FromSlash(journalFile))); err == nil {
			t.Errorf("node %s: a sync left its journal behind", n.name)
		}
		if st := gitCLI(t, n.s.Dir(), "status", "--porcelain"); st != "" {
			t.Errorf("node %s: git status = %q", n.name, st)
		}
		heads = append(heads, strings.TrimSpace(gitCLI(t, n.s.Dir(), "rev-parse", "HEAD")))
	}
	if heads[0] != heads[1] || heads[1] != heads[2] {
		t.Errorf("heads differ after syncing: %v", heads)
	}
}

// TestSyncUnreachable: a remote that cannot be reached leaves the store as
// it was and says so.
func TestSyncUnreachable(t *testing.T) {
	remote, nodes := newSyncNodes(t, 1)
	a := nodes[0]
	a.learn(t, "local-lesson-0001", "Pin the Go toolchain in go.mod", 10)
	a.session(t, 100, map[string]domain.EventKind{"local-lesson-0001": domain.KindChanged})
	before := gitCLI(t, a.s.Dir(), "rev-parse", "HEAD")
	if err := os.Rename(remote, remote+".gone"); err != nil {
		t.Fatal(err)
	}
	_, err := a.s.Sync(context.Background(), SyncOptions{})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Sync = %v, want ErrUnreachable saying nothing changed", err)
	}
	if after := gitCLI(t, a.s.Dir(), "rev-parse", "HEAD"); after != before {
		t.Errorf("HEAD moved from %s to %s", before, after)
	}
}

// TestSyncSerializes: a second sync while one runs waits for it (or, told
// not to wait, says another sync is running).
func TestSyncSerializes(t *testing.T) {
	_, nodes := newSyncNodes(t, 1)
	s := nodes[0].s
	unlock, err := LockPath(filepath.Join(s.Dir(), localLogDir, "sync.lock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Sync(context.Background(), SyncOptions{Wait: -1})
	unlock()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another sync") {
		t.Fatalf("Sync during another = %v, want ErrLocked", err)
	}
	if _, err := s.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSyncWithoutSharedOutcomes: with BORG_SHARE_OUTCOMES=off lessons still
// sync, and no event leaves the machine.
func TestSyncWithoutSharedOutcomes(t *testing.T) {
	_, nodes := newSyncNodes(t, 2)
	a, b := nodes[0], nodes[1]
	a.s.getenv = func(k string) string {
		if k == "BORG_SHARE_OUTCOMES" {
			return "off"
		}
		return testEnv(nil)(k)
	}
	l := domain.Lesson{ID: "private-outcomes-0001", Type: "semantic", Confidence: 0.5, Reach: domain.ReachTeam, Gist: "Lessons still travel"}
	if err := a.s.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	if _, err := a.s.Commit("learn", LessonPath(l.ID)); err != nil {
		t.Fatal(err)
	}
	a.session(t, 100, map[string]domain.EventKind{l.ID: domain.KindChanged})
	a.sync(t)
	b.sync(t)
	if _, err := b.s.Lesson(l.ID); err != nil {
		t.Fatalf("the lesson did not travel: %v", err)
	}
	if m := b.memory(t)[l.ID]; m.Changed != 0 {
		t.Errorf("an outcome travelled with sharing off: %+v", m)
	}
}

// TestSyncEditsKeptTwice: two machines changing one line of a lesson (its
// confidence), one of them its body too, keep both versions, and an edit
// on one side of a lesson the other archived is kept as an edit.
func TestSyncEditsKeptTwice(t *testing.T) {
	_, nodes := newSyncNodes(t, 2)
	a, b := nodes[0], nodes[1]
	la, err := a.s.Lesson("shared-lesson-0001")
	if err != nil {
		t.Fatal(err)
	}
	la.Confidence = 0.3
	lb := la
	lb.Confidence = 0.7
	lb.Body = "Edited on b."
	for _, w := range []struct {
		n *syncNode
		l domain.Lesson
	}{{a, la}, {b, lb}} {
		if err := w.n.s.WriteLesson(w.l); err != nil {
			t.Fatal(err)
		}
		if _, err := w.n.s.Commit("edit", LessonPath(w.l.ID)); err != nil {
			t.Fatal(err)
		}
	}
	a.sync(t)
	res := b.sync(t)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Copy == "" {
		t.Fatalf("conflicts %+v: edits of one line were merged", res.Conflicts)
	}
}

// TestSyncMergesEditsOfDifferentParts: a lesson whose confidence line one
// side changed (a sleep's decay) and whose body the other did (a person's
// new paragraph) syncs as one lesson holding both; edits of one field on
// both sides, or of two parts of the body, are kept twice.
func TestSyncMergesEditsOfDifferentParts(t *testing.T) {
	link := func(rel, target string, derived bool) func(*domain.Lesson) {
		return func(l *domain.Lesson) {
			l.Links = append(l.Links, domain.LessonLink{Rel: rel, Target: target, Derived: derived})
		}
	}
	tag := func(tags ...string) func(*domain.Lesson) {
		return func(l *domain.Lesson) { l.Tags = append(l.Tags, tags...) }
	}
	for _, tc := range []struct {
		name         string
		editA, editB func(*domain.Lesson)
		merged       bool
	}{
		{"meta here, body there", func(l *domain.Lesson) { l.Confidence = 0.74 }, func(l *domain.Lesson) { l.Body = "The queue is FIFO." }, true},
		// A lesson's meta lines are adjacent: a line merge calls these
		// conflicts, though each side changed its own field.
		{"confidence here, type there", func(l *domain.Lesson) { l.Confidence = 0.4425 }, func(l *domain.Lesson) { l.Type = "procedural" }, true},
		{"confidence here, importance there", func(l *domain.Lesson) { l.Confidence = 0.4425 }, func(l *domain.Lesson) { l.Importance = 8 }, true},
		{"reach here, confidence there", func(l *domain.Lesson) { l.Reach = "repo:api" }, func(l *domain.Lesson) { l.Confidence = 0.4425 }, true},
		{"a sleep's link here, a tag there", link(domain.RelSupports, "other-lesson-0002", true), tag("ci"), true},
		{"a link on each side", link(domain.RelSupports, "other-lesson-0002", true), link(domain.RelContradicts, "other-lesson-0003", false), true},
		{"a tag on each side", tag("ci"), tag("postgres"), true},
		{"the same confidence on both sides", func(l *domain.Lesson) { l.Confidence = 0.4425 }, func(l *domain.Lesson) { l.Confidence = 0.4425 }, true},
		{"the body on both sides", func(l *domain.Lesson) { l.Body = "From a." }, func(l *domain.Lesson) { l.Body = "From b." }, false},
		{"the gist on both sides", func(l *domain.Lesson) { l.Gist = "Run migrations first" }, func(l *domain.Lesson) { l.Gist = "Run the migrations before tests" }, false},
		{"confidence on both sides, differently", func(l *domain.Lesson) { l.Confidence = 0.4425 }, func(l *domain.Lesson) { l.Confidence = 0.3 }, false},
		{"type here, type and a tag there", func(l *domain.Lesson) { l.Type = "procedural" }, func(l *domain.Lesson) { l.Type = "episodic"; l.Tags = []string{"ci"} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, nodes := newSyncNodes(t, 2)
			a, b := nodes[0], nodes[1]
			base, err := a.s.Lesson("shared-lesson-0001")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				n    *syncNode
				edit func(*domain.Lesson)
			}{{a, tc.editA}, {b, tc.editB}} {
				l := base
				l.Tags, l.Links = slices.Clone(base.Tags), slices.Clone(base.Links)
				w.edit(&l)
				if err := w.n.s.WriteLesson(l); err != nil {
					t.Fatal(err)
				}
				if _, err := w.n.s.Commit("edit", LessonPath(l.ID)); err != nil {
					t.Fatal(err)
				}
			}
			a.sync(t)
			res := b.sync(t)
			if tc.merged != (len(res.Conflicts) == 0) {
				t.Fatalf("conflicts %+v; want merged %v", res.Conflicts, tc.merged)
			}
			if !tc.merged {
				return
			}
			want := base
			tc.editA(&want)
			tc.editB(&want)
			got, err := b.s.Lesson("shared-lesson-0001")
			if err != nil {
				t.Fatal(err)
			}
			if g, w := sameOrder(got), sameOrder(want); !reflect.DeepEqual(g, w) {
				t.Errorf("merged lesson\n%+v\nwant\n%+v", g, w)
			}
			if lessons, err := b.s.Lessons(); err != nil || len(lessons) != 1 {
				t.Errorf("lessons after the merge: %d, %v; want the one lesson", len(lessons), err)
			}
		})
	}
}

// sameOrder is l as written and read back, its tags and links sorted, so
// two lessons holding the same sets compare equal.
func sameOrder(l domain.Lesson) domain.Lesson {
	l, _ = Parse(Render(l))
	slices.Sort(l.Tags)
	slices.SortFunc(l.Links, func(a, b domain.LessonLink) int { return strings.Compare(a.Target, b.Target) })
	return l
}

// TestSyncKilledMergeKeepsNewLogLines: a sync killed mid-merge is undone by
// the next writer without touching this node's log, whose lines appended
// since (by the hooks) are never lost.
func TestSyncKilledMergeKeepsNewLogLines(t *testing.T) {
	_, nodes := newSyncNodes(t, 2)
	a, b := nodes[0], nodes[1]
	b.learn(t, "beta-lesson-0001", "Vendor the protobuf plugins", 20)
	b.sync(t)
	a.session(t, 100, map[string]domain.EventKind{"shared-lesson-0001": domain.KindChanged})
	if err := a.s.fetch(context.Background(), "origin", "refs/heads/main", "refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.s.commitOwnLog(); err != nil {
		t.Fatal(err)
	}
	end, err := a.s.BeginMerge(context.Background(), "refs/remotes/origin/main", "borg sync: merge")
	if err != nil {
		t.Fatal(err)
	}
	_ = end
	// The merging process dies: its journal names a pid that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1)")
	}
	data, err := os.ReadFile(filepath.Join(a.s.Dir(), filepath.FromSlash(journalFile)))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), fmt.Sprintf(`"pid":%d`, os.Getpid()), fmt.Sprintf(`"pid":%d`, dead.Process.Pid), 1))
	if err := os.WriteFile(filepath.Join(a.s.Dir(), filepath.FromSlash(journalFile)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	a.session(t, 200, map[string]domain.EventKind{"shared-lesson-0001": domain.KindIgnored})
	logPath := filepath.Join(a.s.Dir(), filepath.FromSlash(a.s.LogPath()))
	before, _ := os.ReadFile(logPath)
	a.learn(t, "alpha-lesson-0001", "Pin the Go toolchain in go.mod", 30)
	after, _ := os.ReadFile(logPath)
	if !strings.HasPrefix(string(after), string(before)) {
		t.Fatalf("recovery rewrote this node's log:\nbefore %d bytes, after %d bytes", len(before), len(after))
	}
	a.sync(t)
	if _, err := a.s.Lesson("beta-lesson-0001"); err != nil {
		t.Fatalf("the next sync did not bring the teammate's lesson: %v", err)
	}
}

// TestSyncRestoresOwnLog: a teammate's commit that deletes this node's log
// file, or rewrites it without some of its lines, does not erase this
// node's events: the sync that brings it in (a fast-forward, or a merge
// when this node has commits of its own) appends the missing lines back,
// commits them and says so, and every node derives the events again.
func TestSyncRestoresOwnLog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir, file string)
		merge  bool
	}{
		{"deleted, fast-forward", func(t *testing.T, dir, file string) { gitCLI(t, dir, "rm", "-q", file) }, false},
		{"deleted, merge", func(t *testing.T, dir, file string) { gitCLI(t, dir, "rm", "-q", file) }, true},
		{"a line dropped, fast-forward", dropVetoes, false},
		{"a line dropped, merge", dropVetoes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, nodes := newSyncNodes(t, 2)
			a, b := nodes[0], nodes[1]
			a.session(t, 100, map[string]domain.EventKind{"shared-lesson-0001": domain.KindVetoed})
			a.sync(t)
			b.sync(t)
			own := a.s.LogPath()
			had, err := os.ReadFile(filepath.Join(a.s.Dir(), filepath.FromSlash(own)))
			if err != nil {
				t.Fatal(err)
			}
			if rw, err := b.s.LogRewrites(context.Background()); err != nil || len(rw) != 0 {
				t.Fatalf("LogRewrites of a history of appends = %+v, %v", rw, err)
			}
			tc.tamper(t, b.s.Dir(), own)
			gitCLI(t, b.s.Dir(), "commit", "-q", "-am", "tamper with a's log")
			tamper := strings.TrimSpace(gitCLI(t, b.s.Dir(), "rev-parse", "HEAD"))
			b.sync(t)
			// Doctor's check names the commit, the lines still missing.
			rw, err := b.s.LogRewrites(context.Background())
			if err != nil || len(rw) != 1 || rw[0].Commit != tamper || rw[0].File != own || rw[0].Lines == 0 || rw[0].Restored {
				t.Fatalf("LogRewrites = %+v, %v; want commit %s, its lines missing", rw, err, tamper)
			}
			if tc.merge {
				// A commit of a's own that leaves its log as it was: git
				// merges the teammate's version of the log in.
				l := domain.Lesson{ID: "alpha-lesson-0001", Type: "semantic", Confidence: 0.5, Reach: domain.ReachTeam, Gist: "Pin the Go toolchain in go.mod"}
				if err := a.s.WriteLesson(l); err != nil {
					t.Fatal(err)
				}
				if _, err := a.s.Commit("learn", LessonPath(l.ID)); err != nil {
					t.Fatal(err)
				}
			}
			res := a.sync(t)
			if res.Merged != tc.merge {
				t.Fatalf("merged %v, want %v", res.Merged, tc.merge)
			}
			if len(res.Restored) != 1 || res.Restored[0].Path != own || res.Restored[0].Lines == 0 || len(res.Restored[0].Commits) != 1 {
				t.Fatalf("restored %+v, want %s restored, naming the teammate's commit", res.Restored, own)
			}
			now, err := os.ReadFile(filepath.Join(a.s.Dir(), filepath.FromSlash(own)))
			if err != nil {
				t.Fatalf("a's own log is gone after sync: %v", err)
			}
			if missing := linesMissing(had, now); len(missing) > 0 {
				t.Fatalf("a's log lacks %d of its lines after sync:\n%s", len(missing), now)
			}
			if st := gitCLI(t, a.s.Dir(), "status", "--porcelain"); st != "" {
				t.Errorf("git status = %q", st)
			}
			b.sync(t)
			if m := b.memory(t)["shared-lesson-0001"]; m.Vetoed != 1 {
				t.Errorf("b derives %+v: a's veto was not restored everywhere", m)
			}
			if again := a.sync(t); len(again.Restored) != 0 {
				t.Errorf("a second sync restored %+v", again.Restored)
			}
			// Still named, and restored; neither a's merge nor its
			// commit of the lines took anything out.
			rw, err = b.s.LogRewrites(context.Background())
			if err != nil || len(rw) != 1 || rw[0].Commit != tamper || !rw[0].Restored {
				t.Errorf("LogRewrites after the restore = %+v, %v; want only %s, restored", rw, err, tamper)
			}
			// Found a commit range at a time (cached), as from scratch.
			if err := os.Remove(filepath.Join(b.s.Dir(), filepath.FromSlash(logRewritesFile))); err != nil {
				t.Fatal(err)
			}
			if again, err := b.s.LogRewrites(context.Background()); err != nil || !reflect.DeepEqual(again, rw) {
				t.Errorf("LogRewrites from scratch = %+v, %v; from the cache %+v", again, err, rw)
			}
		})
	}
}

// dropVetoes rewrites a log file of dir without its vetoed lines, as a
// teammate's sed would.
func dropVetoes(t *testing.T, dir, file string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(file))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, `"vetoed"`) {
			kept = append(kept, l)
		}
	}
	if len(strings.Join(kept, "")) == len(data) {
		t.Fatal("no vetoed line to drop")
	}
	if err := os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSyncStopsAtRewrittenRemote: a teammate's force-push that rewrote the
// remote's history (a purge of a lesson) is not undone by the next sync of
// a store that had the old history: it stops, merging and pushing nothing,
// and keeps stopping; told to accept the rewrite, it moves onto the
// rewritten branch, keeping the lessons and log lines it had not synced,
// and the purged lesson stays out of the remote's history. The same when a
// git fetch run by hand moved the tracking ref first.
func TestSyncStopsAtRewrittenRemote(t *testing.T) {
	for _, byHand := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("fetched by hand %d times", byHand), func(t *testing.T) {
			remote, nodes := newSyncNodes(t, 2)
			a, b := nodes[0], nodes[1]
			purged := LessonPath("purged-lesson-0001")
			a.learn(t, "purged-lesson-0001", "A lesson that must leave the history", 10)
			a.sync(t)
			b.sync(t)
			if byHand == 2 {
				// b fetches a later push by hand and never merges it; the
				// rewrite drops it too.
				a.learn(t, "later-lesson-0001", "Cache the module downloads in CI", 15)
				a.sync(t)
				gitCLI(t, b.s.Dir(), "fetch", "-q", "origin")
			}
			// a purges the lesson's commit: its branch goes back to before it,
			// and is force-pushed.
			learned := strings.TrimSpace(gitCLI(t, a.s.Dir(), "log", "-1", "--format=%H", "--", purged))
			gitCLI(t, a.s.Dir(), "reset", "-q", "--hard", learned+"^")
			if out := gitCLI(t, a.s.Dir(), "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, purged) {
				t.Fatalf("the reset kept the lesson:\n%s", out)
			}
			gitCLI(t, a.s.Dir(), "push", "-q", "-f", "origin", "main")
			rewritten := gitCLI(t, remote, "rev-parse", "main")
			// b learned a lesson and used one since its last sync.
			b.learn(t, "beta-lesson-0001", "Vendor the protobuf plugins", 20)
			b.session(t, 100, map[string]domain.EventKind{"shared-lesson-0001": domain.KindChanged})
			if byHand > 0 {
				// A git fetch run in the store by hand: the tracking ref already
				// names the rewritten commit when sync looks.
				gitCLI(t, b.s.Dir(), "fetch", "-q", "origin")
			}
			head := strings.TrimSpace(gitCLI(t, b.s.Dir(), "rev-parse", "HEAD"))
			for range 2 {
				_, err := b.s.Sync(context.Background(), SyncOptions{})
				if !errors.Is(err, ErrRemoteRewritten) || !strings.Contains(err.Error(), "--accept-rewrite") {
					t.Fatalf("Sync after a force-push = %v, want ErrRemoteRewritten naming --accept-rewrite", err)
				}
				if got := gitCLI(t, remote, "rev-parse", "main"); got != rewritten {
					t.Fatalf("the remote moved from the rewritten %s to %s", rewritten, got)
				}
			}
			// Nothing merged: b's branch only committed its log lines.
			if got := gitCLI(t, b.s.Dir(), "log", "--format=%s", head+"..HEAD"); strings.TrimSpace(got) != "borg sync: outcomes of "+mustNode(t, b.s) {
				t.Errorf("b's branch since the refused syncs: %q", got)
			}
			res, err := b.s.Sync(context.Background(), SyncOptions{AcceptRewrite: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Rewrite == nil || res.Merged || res.Pushed != 1 {
				t.Fatalf("sync accepting the rewrite = %+v", res)
			}
			if _, err := os.Stat(filepath.Join(b.s.Dir(), filepath.FromSlash(purged))); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the purged lesson is still in b's worktree: %v", err)
			}
			if out := gitCLI(t, remote, "log", "--format=%H", "main", "--", purged); out != "" {
				t.Errorf("the remote's history holds the purged lesson again: %s", out)
			}
			if !gitIsAncestor(context.Background(), remote, strings.TrimSpace(rewritten), "main") {
				t.Errorf("the remote's branch does not descend from the rewritten one")
			}
			if st := gitCLI(t, b.s.Dir(), "status", "--porcelain"); st != "" {
				t.Errorf("git status = %q", st)
			}
			a.sync(t)
			if _, err := a.s.Lesson("beta-lesson-0001"); err != nil {
				t.Errorf("b's unsynced lesson did not travel: %v", err)
			}
			if m := a.memory(t)["shared-lesson-0001"]; m.Changed != 1 {
				t.Errorf("b's unsynced session did not travel: %+v", m)
			}
			if again := b.sync(t); again.Rewrite != nil {
				t.Errorf("a later sync moved again: %+v", again.Rewrite)
			}
		})
	}
}

func mustNode(t *testing.T, s *Store) string {
	t.Helper()
	n, err := s.Node()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInitPushesToEmptyRemote: borg init --remote of an empty remote pushes
// the store's first commit at once, so the next teammate's init clones it
// and both share one history before either learned anything.
func TestInitPushesToEmptyRemote(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	gitCLI(t, root, "init", "-q", "--bare", "-b", "main", remote)
	a, err := Init(context.Background(), filepath.Join(root, "a"), remote, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	head := gitCLI(t, a.Dir(), "rev-parse", "HEAD")
	if got := gitCLI(t, remote, "rev-parse", "main"); got != head {
		t.Fatalf("the remote's main is %q, want the store's first commit %q", got, head)
	}
	b, err := Init(context.Background(), filepath.Join(root, "b"), remote, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, b.Dir(), "rev-parse", "HEAD"); got != head {
		t.Fatalf("the second init has its own history (%s), not the first's (%s)", got, head)
	}
}

// TestSyncJoinsStoresBegunByInit: two teammates whose borg init --remote of
// an empty remote raced (the second's push of its first commit refused)
// hold two histories, each begun by borg init with the same files: sync
// joins them, and both converge. A remote whose store began otherwise is
// not joined.
func TestSyncJoinsStoresBegunByInit(t *testing.T) {
	remote, nodes := newSyncNodes(t, 1)
	a := nodes[0]
	root := filepath.Dir(remote)
	env := testEnv(map[string]string{"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"})
	var warned []string
	bs, err := Init(context.Background(), filepath.Join(root, "b"), "", WithEnv(env), WithWarn(func(l string) { warned = append(warned, l) }))
	if err != nil {
		t.Fatal(err)
	}
	gitCLI(t, bs.Dir(), "remote", "add", "origin", remote)
	bs.publishInit(context.Background(), remote) // b's init lost the race
	if len(warned) != 1 || !strings.Contains(warned[0], "borg sync joins the two") {
		t.Fatalf("warnings %q, want one saying sync joins the two stores", warned)
	}
	b := &syncNode{name: "b", s: bs}
	a.learn(t, "alpha-lesson-0001", "Pin the Go toolchain in go.mod", 10)
	b.learn(t, "beta-lesson-0001", "Vendor the protobuf plugins", 20)
	a.sync(t)
	if res := b.sync(t); !res.Joined || !res.Merged {
		t.Fatalf("b's sync = %+v, want the two stores joined", res)
	}
	a.sync(t)
	for _, n := range []*syncNode{a, b} {
		for _, id := range []string{"shared-lesson-0001", "alpha-lesson-0001", "beta-lesson-0001"} {
			if _, err := n.s.Lesson(id); err != nil {
				t.Errorf("node %s: %v", n.name, err)
			}
		}
	}
	if ha, hb := gitCLI(t, a.s.Dir(), "rev-parse", "HEAD"), gitCLI(t, b.s.Dir(), "rev-parse", "HEAD"); ha != hb {
		t.Errorf("heads differ after syncing: %s %s", ha, hb)
	}

	// A store whose first commit is not borg init's.
	other := filepath.Join(root, "other.git")
	gitCLI(t, root, "init", "-q", "--bare", "-b", "main", other)
	work := filepath.Join(root, "other")
	gitCLI(t, root, "clone", "-q", other, work)
	for name, data := range map[string]string{"lessons/.keep": "", ".gitattributes": "log/*.jsonl merge=union\n", "README": "made by hand\n"} {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitCLI(t, work, "add", ".")
	gitCLI(t, work, "commit", "-q", "-m", "a store made by hand")
	gitCLI(t, work, "push", "-q", "origin", "main")
	gitCLI(t, b.s.Dir(), "remote", "add", "other", other)
	head := gitCLI(t, b.s.Dir(), "rev-parse", "HEAD")
	if _, err := b.s.Sync(context.Background(), SyncOptions{Remote: "other"}); err == nil || !strings.Contains(err.Error(), "holds a store with another history") {
		t.Fatalf("sync with a store begun otherwise = %v, want it refused", err)
	}
	if got := gitCLI(t, b.s.Dir(), "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
}

// TestSyncKeepsAnEditOfAnArchivedLesson: a lesson one side moved to
// archive/ and the other edited stays live with the edit, whichever side
// did which, and the sync reports it; the archived copy is as it was
// archived. (git's ort strategy detects the move as a rename whatever
// -Xno-renames says, and would carry the edit into archive/.)
func TestSyncKeepsAnEditOfAnArchivedLesson(t *testing.T) {
	for _, tc := range []struct {
		name     string
		archiver int // the node that archives; the other edits
		kept     string
	}{
		{"archived remotely, edited here", 0, "ours"},
		{"archived here, edited remotely", 1, "theirs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, nodes := newSyncNodes(t, 2)
			id := "shared-lesson-0001"
			archiver, editor := nodes[tc.archiver], nodes[1-tc.archiver]
			original, err := archiver.s.Lesson(id)
			if err != nil {
				t.Fatal(err)
			}
			if err := archiver.s.archive(id); err != nil {
				t.Fatal(err)
			}
			if _, err := archiver.s.Commit("archive", LessonPath(id), ArchivePath(id)); err != nil {
				t.Fatal(err)
			}
			l := original
			l.Gist = "Run migrations before the integration suite"
			if err := editor.s.WriteLesson(l); err != nil {
				t.Fatal(err)
			}
			if _, err := editor.s.Commit("edit", LessonPath(id)); err != nil {
				t.Fatal(err)
			}
			a, b := nodes[0], nodes[1]
			a.sync(t)
			res := b.sync(t)
			if len(res.Conflicts) != 1 || res.Conflicts[0].Path != LessonPath(id) || res.Conflicts[0].Kept != tc.kept || res.Conflicts[0].MovedTo != ArchivePath(id) {
				t.Fatalf("conflicts %+v, want %s kept (%s), moved to %s", res.Conflicts, LessonPath(id), tc.kept, ArchivePath(id))
			}
			a.sync(t)
			for _, n := range nodes {
				got, err := n.s.Lesson(id)
				if err != nil || got.Gist != l.Gist {
					t.Errorf("node %s: the live lesson is %+v, %v; want the edit", n.name, got, err)
				}
				archived, err := n.s.ArchivedLesson(id)
				if err != nil || archived.Gist != original.Gist {
					t.Errorf("node %s: the archived copy is %+v, %v; want it as archived", n.name, archived, err)
				}
				if st := gitCLI(t, n.s.Dir(), "status", "--porcelain"); st != "" {
					t.Errorf("node %s: git status = %q", n.name, st)
				}
			}
		})
	}
}
