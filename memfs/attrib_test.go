package memfs

import (
	"context"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// gitAs runs the git CLI in dir as the engineer with email.
func gitAs(tb testing.TB, dir, email string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+email, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+email, "GIT_COMMITTER_EMAIL="+email)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// claim is an event of session s claiming author by (an email, hashed).
func claim(ms int64, kind domain.EventKind, s, by string) domain.Event {
	return domain.Event{MS: ms, Kind: kind, Session: HashSession(s), Lesson: "retry-lesson", Repo: "api", Author: HashEngineer(by)}.WithID()
}

func writeLog(t *testing.T, s *Store, name string, events []domain.Event) {
	t.Helper()
	p := filepath.Join(s.Dir(), filepath.FromSlash(name))
	if err := os.WriteFile(p, []byte(strings.Join(eventLines(events), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// authorsBySession reads the store's events as readers count them: the
// author of each session's changed result.
func authorsBySession(t *testing.T, s *Store) map[string]string {
	t.Helper()
	events, _, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range events {
		if e.Kind == domain.KindChanged {
			out[e.Session] = e.Author
		}
	}
	return out
}

func TestAttribution(t *testing.T) {
	const ada, bob, eve = "ada@example.com", "bob@example.com", "eve@example.com"
	A, B, E := HashEngineer(ada), HashEngineer(bob), HashEngineer(eve)
	tests := []struct {
		name string
		// play changes the store and returns the authors each session's
		// change must count under.
		play func(t *testing.T, s *Store) map[string]string
	}{
		{"append-only: each commit's lines are its author's", func(t *testing.T, s *Store) map[string]string {
			one := []domain.Event{claim(1, domain.KindChanged, "s1", ada)}
			writeLog(t, s, "log/n-ada.jsonl", one)
			gitAs(t, s.Dir(), ada, "add", "log")
			gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
			// Eve appends made-up sessions of Bob's to Ada's file.
			writeLog(t, s, "log/n-ada.jsonl", append(one, claim(2, domain.KindChanged, "s2", bob), claim(3, domain.KindChanged, "s3", ada)))
			gitAs(t, s.Dir(), eve, "commit", "-qam", "eve")
			return map[string]string{HashSession("s1"): A, HashSession("s2"): E, HashSession("s3"): E}
		}},
		{"rewritten: lines kept keep their committer, new ones are the rewriter's", func(t *testing.T, s *Store) map[string]string {
			writeLog(t, s, "log/n-bob.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", bob), claim(3, domain.KindChanged, "s3", bob)})
			gitAs(t, s.Dir(), bob, "add", "log")
			gitAs(t, s.Dir(), bob, "commit", "-qm", "bob")
			// Eve reorders the file and slips a line in between.
			writeLog(t, s, "log/n-bob.jsonl", []domain.Event{claim(3, domain.KindChanged, "s3", bob), claim(2, domain.KindChanged, "s2", bob), claim(1, domain.KindChanged, "s1", bob)})
			gitAs(t, s.Dir(), eve, "commit", "-qam", "eve")
			return map[string]string{HashSession("s1"): B, HashSession("s2"): E, HashSession("s3"): B}
		}},
		{"uncommitted lines of this machine count as written", func(t *testing.T, s *Store) map[string]string {
			if err := s.Append(domain.Event{MS: 1, Kind: domain.KindChanged, Session: "s1", Lesson: "retry-lesson", Author: ada}); err != nil {
				t.Fatal(err)
			}
			gitAs(t, s.Dir(), ada, "add", "log")
			gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
			if err := s.Append(domain.Event{MS: 2, Kind: domain.KindChanged, Session: "s2", Lesson: "retry-lesson", Author: bob}); err != nil {
				t.Fatal(err)
			}
			return map[string]string{HashSession("s1"): A, HashSession("s2"): B}
		}},
		{"a merge keeps each side's committer", func(t *testing.T, s *Store) map[string]string {
			other := filepath.Join(t.TempDir(), "clone")
			gitAs(t, filepath.Dir(other), bob, "clone", "-q", s.Dir(), other)
			if err := os.WriteFile(filepath.Join(other, "log", "n-bob.jsonl"), []byte(strings.Join(eventLines([]domain.Event{claim(2, domain.KindChanged, "s2", bob)}), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitAs(t, other, bob, "add", "log")
			gitAs(t, other, bob, "commit", "-qm", "bob")
			writeLog(t, s, "log/n-ada.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada)})
			gitAs(t, s.Dir(), ada, "add", "log")
			gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
			gitAs(t, s.Dir(), eve, "pull", "-q", "--no-rebase", "--no-edit", other, "HEAD")
			return map[string]string{HashSession("s1"): A, HashSession("s2"): B}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			// A first attribution, then the play: the refresh is
			// incremental.
			if err := s.refreshAttribution(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := tt.play(t, s)
			if got := authorsBySession(t, s); !mapsEqual(got, want) {
				t.Fatalf("authors %v, want %v", got, want)
			}
			// From scratch, the same.
			_ = os.Remove(filepath.Join(s.Dir(), filepath.FromSlash(attribFile)))
			if got := authorsBySession(t, s); !mapsEqual(got, want) {
				t.Fatalf("from scratch: authors %v, want %v", got, want)
			}
			// The ledger counts the same authors.
			l, err := s.LoadLedger()
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]float64{}
			for _, by := range want {
				counts[by]++
			}
			if got := vouchers(l, "retry-lesson"); !maps.Equal(got, counts) {
				t.Fatalf("ledger: the changes count under %v, want %v", got, counts)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestAttributionWithoutRefresh: a hook reads the log without walking
// history. Lines committed since the last refresh in another node's file
// count as Unattributed until a command refreshes; this node's own new
// lines count as written.
func TestAttributionWithoutRefresh(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeLog(t, s, "log/n-eve.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada)})
	gitAs(t, s.Dir(), eve, "add", "log")
	gitAs(t, s.Dir(), eve, "commit", "-qm", "eve")
	if err := s.Append(domain.Event{MS: 2, Kind: domain.KindChanged, Session: "s2", Lesson: "retry-lesson", Author: ada}); err != nil {
		t.Fatal(err)
	}
	sum, _, err := s.SummaryWithin(1<<20, math.MaxInt64) // no refresh
	if err != nil || sum == nil {
		t.Fatal(sum, err)
	}
	m := sum.Memories([]domain.LessonInfo{{ID: "retry-lesson"}}, "", domain.DefaultWeights)[0]
	got := []domain.AuthorVouch{m.TopVouchers[0], m.TopVouchers[1]}
	want := []domain.AuthorVouch{{Author: HashEngineer(ada), Vouched: 1}, {}}
	if !slices.Equal(got, want) || m.Unattributed != 1 {
		t.Fatalf("before a refresh: top vouchers %+v and %v unattributed, want %+v and 1", got, m.Unattributed, want)
	}
	// A command refreshes; the hook's cache is rebuilt with Eve's line as
	// hers.
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
	sum, _, err = s.SummaryWithin(-1, math.MaxInt64)
	if err != nil || sum == nil {
		t.Fatal(sum, err)
	}
	m = sum.Memories([]domain.LessonInfo{{ID: "retry-lesson"}}, "", domain.DefaultWeights)[0]
	got = []domain.AuthorVouch{m.TopVouchers[0], m.TopVouchers[1]}
	want = []domain.AuthorVouch{{Author: HashEngineer(ada), Vouched: 1}, {Author: HashEngineer(eve), Vouched: 1}}
	slices.SortFunc(want, func(a, b domain.AuthorVouch) int { return strings.Compare(a.Author, b.Author) })
	if !slices.Equal(got, want) {
		t.Fatalf("after a refresh: top vouchers %+v, want %+v", got, want)
	}
}

// TestAttributionKeepsCache: committing this node's own lines under the
// engineer who wrote them changes no author, so the ledger cache folds on
// instead of rebuilding; a commit under someone else rebuilds it.
func TestAttributionKeepsCache(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	for i := range 3 {
		if err := s.Append(domain.Event{MS: int64(i), Kind: domain.KindChanged, Session: "s" + string(rune('a'+i)), Lesson: "retry-lesson", Author: ada}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	cacheBytes := func() []byte { return readFile(t, filepath.Join(s.Dir(), filepath.FromSlash(ledgerCacheFile))) }
	before := cacheBytes()
	gitAs(t, s.Dir(), ada, "add", "log")
	gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
	if _, err := s.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	a := s.newAttributor()
	if a.headMoved {
		t.Fatal("the refresh did not reach HEAD")
	}
	after := cacheBytes()
	if string(before[strings.IndexByte(string(before), '\n'):]) != string(after[strings.IndexByte(string(after), '\n'):]) {
		t.Fatal("the ledger was rebuilt although no author changed")
	}
	if err := s.Append(domain.Event{MS: 9, Kind: domain.KindChanged, Session: "sz", Lesson: "sz-lesson", Author: ada}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadLedger(); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), eve, "commit", "-qam", "eve commits ada's line")
	l, err := s.LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	if got := vouchers(l, "sz-lesson"); !maps.Equal(got, map[string]float64{HashEngineer(eve): 1}) {
		t.Fatalf("the line Eve committed counts under %v, want hers", got)
	}
}

// vouchers is whom the ledger counts lesson's changed results under, and
// how many each (the two authors who vouch most, and the unattributed).
func vouchers(l *domain.Ledger, lesson string) map[string]float64 {
	m := l.Memories([]domain.LessonInfo{{ID: lesson}}, "", domain.DefaultWeights)[0]
	out := map[string]float64{}
	for _, v := range m.TopVouchers {
		if v.Vouched > 0 {
			out[v.Author] += v.Vouched
		}
	}
	if m.Unattributed > 0 {
		out[domain.UnattributedAuthor] = m.Unattributed
	}
	return out
}

// TestAttributionWithoutGit: a reader whose refresh fails (no git CLI)
// still reads the log; lines committed since the last refresh count as
// Unattributed, never as their claimed authors.
func TestAttributionWithoutGit(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeLog(t, s, "log/n-eve.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada)})
	gitAs(t, s.Dir(), eve, "add", "log")
	gitAs(t, s.Dir(), eve, "commit", "-qm", "eve")
	t.Setenv("PATH", t.TempDir())
	if err := s.refreshAttribution(context.Background()); err == nil {
		t.Fatal("a refresh without git succeeded")
	}
	if got := authorsBySession(t, s); got[HashSession("s1")] != Unattributed {
		t.Fatalf("without a refresh the line counts under %s, want %s", got[HashSession("s1")], Unattributed)
	}
}

// TestAttributionBehind: this node's own commits never leave a hook's
// attribution behind; another node's lines arriving by a commit do, until
// a refresh.
func TestAttributionBehind(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(domain.Event{MS: 1, Kind: domain.KindSession, Session: "s1", Author: ada}); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), ada, "add", "log")
	gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
	if s.AttributionBehind() {
		t.Fatal("behind after this node's own commit")
	}
	writeLog(t, s, "log/n-eve.jsonl", []domain.Event{claim(2, domain.KindChanged, "s2", ada)})
	gitAs(t, s.Dir(), eve, "add", "log")
	gitAs(t, s.Dir(), eve, "commit", "-qm", "eve")
	if !s.AttributionBehind() {
		t.Fatal("not behind after another node's lines arrived by a commit")
	}
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.AttributionBehind() {
		t.Fatal("behind after a refresh")
	}
}

// TestBurstGroups: identities whose first commits of log lines come
// together, three or more within the window, count as the first of them;
// a team's engineers starting apart, or two together, are left as they are.
func TestBurstGroups(t *testing.T) {
	minute := int64(60 * 1000)
	c := func(author string, at int64) CommitInfo { return CommitInfo{Author: author, MS: at} }
	tests := []struct {
		name    string
		commits []CommitInfo
		want    map[string]string
	}{
		{"team apart", []CommitInfo{c("ann", 0), c("ben", 20*minute), c("cy", 45*minute), c("ann", 46*minute)}, nil},
		{"two together", []CommitInfo{c("ann", 0), c("ben", minute)}, nil},
		{"three at once", []CommitInfo{c("eve", 5), c("mal", 5), c("oz", 6), c("ann", -60*minute)},
			map[string]string{"eve": "eve", "mal": "eve", "oz": "eve"}},
		{"first commits count, not later ones", []CommitInfo{c("ann", 0), c("ben", 30*minute), c("cy", 60*minute), c("ann", 61*minute), c("ben", 61*minute)}, nil},
		{"a burst and a team", []CommitInfo{c("x1", 0), c("x2", 9*minute), c("x3", 10*minute), c("ann", 25*minute)},
			map[string]string{"x1": "x1", "x2": "x1", "x3": "x1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := burstGroups(tt.commits); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("burstGroups = %v, want %v", got, tt.want)
			}
		})
	}
}
