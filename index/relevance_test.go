package index

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// filler is n lessons about other work, sharing the ordinary words of
// engineering prose with everything.
func filler(n int) []domain.Lesson {
	subjects := []string{"billing", "search", "mobile", "ledger", "gateway", "scheduler", "exporter", "console"}
	tools := []string{"helm", "terraform", "pnpm", "gradle", "celery", "kafka", "redis", "nginx"}
	out := make([]domain.Lesson, n)
	for i := range out {
		s, tool := subjects[i%len(subjects)], tools[(i/len(subjects))%len(tools)]
		out[i] = lesson(fmt.Sprintf("filler-%04d", i), "",
			fmt.Sprintf("Check the %s service config before you deploy %s change %d.", s, tool, i),
			"We fixed the test and the build after an error in the data.")
	}
	return out
}

// relevanceOf is lesson id's relevance for query q in ix (0 when it is no
// hit), with no floor or bar leaving it out.
func relevanceOf(t *testing.T, ix *Index, id, q string) float64 {
	t.Helper()
	hits, err := ix.Search(context.Background(), Query{Text: q, K: 50, Floor: -1, Bar: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == id {
			return h.Relevance
		}
	}
	return 0
}

// TestRelevanceScale: a session about a lesson's subject clears the floor,
// one that shares only ordinary words with it does not, and both hold in a
// store of ten lessons and in one of a thousand: the scale does not move
// with the store's size or the session's length.
func TestRelevanceScale(t *testing.T) {
	target := lesson("pgbouncer-no-set", "", "fleetdb sits behind PgBouncer in transaction mode: no session-level prepared statements and no plain SET.", "")
	about := "The invoicing report query ran for 40 minutes: I added a statement timeout on the fleetdb connection. PgBouncer sits in front of it in transaction mode, so a plain SET would leak to other clients; I used SET LOCAL inside the transaction."
	ordinary := "Fix the failing test in the billing service and check the config before the deploy; the build had an error in the data."
	long := about + " " + ordinary + " " + ordinary
	for _, n := range []int{10, 1000} {
		ix := newTestIndex(t, append(filler(n), target))
		rel := func(q string) float64 { return relevanceOf(t, ix, target.ID, q) }
		t.Logf("%d lessons: about %.3f, longer %.3f, ordinary %.3f", n, rel(about), rel(long), rel(ordinary))
		if r := rel(about); r < DefaultFloor {
			t.Errorf("%d lessons: relevance of a session about the lesson %.3f, want ≥ the floor %.2f", n, r, DefaultFloor)
		}
		if r := rel(long); r < DefaultFloor {
			t.Errorf("%d lessons: relevance of a longer session about the lesson %.3f, want ≥ the floor %.2f", n, r, DefaultFloor)
		}
		if r := rel(ordinary); r >= DefaultFloor/2 {
			t.Errorf("%d lessons: relevance of a session sharing only ordinary words %.3f, want under half the floor", n, r)
		}
	}
}

// TestFloorAbstains: a hook's query (OnlyOverBar) gets nothing when no
// lesson clears the floor, without asking about any lesson's usefulness,
// and a listing marks the same hits weak.
func TestFloorAbstains(t *testing.T) {
	ix := newTestIndex(t, append(filler(50), corpus()...))
	q := Query{Text: "Add a health check endpoint to the billing service and fix its test.", K: 3}
	hook := q
	hook.OnlyOverBar = true
	asked := 0
	hook.UsefulFunc = func(ls []domain.LessonInfo) []Usefulness {
		asked += len(ls)
		return make([]Usefulness, len(ls))
	}
	got, err := ix.Search(context.Background(), hook)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a hook's query got %d lessons for work no lesson bears on: %+v", len(got), got[0])
	}
	if asked != 0 {
		t.Errorf("a search nothing can clear the floor of asked about %d lessons' usefulness", asked)
	}
	listed, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 {
		t.Fatal("the listing lost its hits")
	}
	for _, h := range listed {
		if !h.Weak {
			t.Errorf("listed %s at relevance %.3f, not marked weak", h.ID, h.Relevance)
		}
	}
	hook.Text = "The integration tests failed on missing tables: I ran make migrate before go test ./integration/..."
	if got, _ := ix.Search(context.Background(), hook); len(got) == 0 || got[0].ID != "migrate-before-tests" {
		t.Fatalf("a session about a lesson got %+v", got)
	}
	if asked == 0 {
		t.Error("a search with a lesson over the floor asked nothing about usefulness")
	}
}

// TestFloorAbstainsLosesNothing: a hook's search that stops early because
// no candidate's text share could clear the floor (noneCanClear) never
// leaves out a lesson that would have: over queries of every strength
// (each lesson's gist, halves of it, a few of its words, unrelated work),
// with every lesson's usefulness factor as high as it gets, a hook's query
// gets a hit exactly when the listing holds one that is not weak.
func TestFloorAbstainsLosesNothing(t *testing.T) {
	lessons := append(filler(40), corpus()...)
	ix := newTestIndex(t, lessons)
	proven := map[string]Usefulness{}
	for _, l := range lessons {
		proven[l.ID] = Usefulness{Results: 1000, Mean: 1, Draw: 1}
	}
	var queries []string
	for _, l := range lessons {
		w := strings.Fields(l.Gist)
		queries = append(queries, l.Gist, strings.Join(w[:len(w)/2], " "), strings.Join(w[len(w)/2:], " "))
		if len(w) > 3 {
			queries = append(queries, w[0]+" "+w[3])
		}
	}
	queries = append(queries, "Add a health check endpoint to the billing service.", "Bump the kafka client.", "")
	for _, useful := range []map[string]Usefulness{nil, proven} {
		for _, text := range queries {
			q := Query{Text: text, K: len(lessons), Useful: useful}
			listed, err := ix.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			strong := 0
			for _, h := range listed {
				if !h.Weak {
					strong++
				}
			}
			q.OnlyOverBar, q.Bar = true, -1
			got, err := ix.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if (len(got) > 0) != (strong > 0) {
				t.Errorf("%q (useful %v): the hook's query got %d hits, the listing %d not weak", text, useful != nil, len(got), strong)
			}
		}
	}
}

// TestOwnershipFactRelevance: who owns a service bears on work about who
// answers for it (reviewers, alerts) or that names the owner, not on every
// change to the service: a session about the forecast pipelines alone gets
// no relevance from "forecast is owned by the Forecasting team", however
// much of it its words cover.
func TestOwnershipFactRelevance(t *testing.T) {
	owner := lesson("forecast-owner", "", "forecast (Dagster pipelines) is owned by the Forecasting team.", "")
	ix := newTestIndex(t, append(filler(30), owner))
	rel := func(q string) float64 { return relevanceOf(t, ix, owner.ID, q) }
	for _, tt := range []struct {
		session string
		want    bool // over the floor
	}{
		{"Speed up the forecast Dagster pipelines: cache the weather features between runs.", false},
		{"Add CODEOWNERS entries for the forecast Dagster pipelines so the right reviewers are asked.", true},
		{"Route the forecast pipelines' Dagster alerts to the owning team.", true},
		{"Ask the Forecasting people whether the Dagster pipelines can move.", false},
	} {
		if r := rel(tt.session); (r >= DefaultFloor) != tt.want {
			t.Errorf("%q: relevance %.3f, want over the floor %v", tt.session, r, tt.want)
		}
	}
}

// createdOn is l created on the given day of September 2026.
func createdOn(l domain.Lesson, day int) domain.Lesson {
	l.Created = time.Date(2026, 9, day, 9, 0, 0, 0, time.UTC)
	return l
}

// TestSupersedeBySlot: of two facts in one slot, the newer supersedes the
// older at query time (the older is marked and demoted below it, and the
// hooks skip what is marked); two subjects sharing a relation and a value, or two facts of the
// same time, are left alone.
func TestSupersedeBySlot(t *testing.T) {
	old := createdOn(lesson("staging-db-old", "", "The staging database of the payments service is pay-db-stage-1.", ""), 1)
	cur := createdOn(lesson("staging-db-new", "", "The staging database of the payments service is pay-db-stage-2.", ""), 20)
	billing := createdOn(lesson("export-billing", "", "The nightly export of Billing runs at 02:00 UTC.", ""), 2)
	search := createdOn(lesson("export-search", "", "The nightly export of Search runs at 02:00 UTC.", ""), 25)
	tieA := createdOn(lesson("rotation-a", "", "The on-call rotation changes on Monday.", ""), 3)
	tieB := createdOn(lesson("rotation-b", "", "The on-call rotation changes on Friday.", ""), 3)
	ix := newTestIndex(t, append(filler(20), old, cur, billing, search, tieA, tieB))
	search1 := func(q string, hook bool) []Hit {
		t.Helper()
		hits, err := ix.Search(context.Background(), Query{Text: q, K: 10, OnlyOverBar: hook, Bar: -1, MMRLambda: 1})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	hits := search1("Which host is the staging database of the payments service? pay-db-stage-1", false)
	pos := func(id string) int { return slices.Index(ids(hits), id) }
	if pos("staging-db-new") < 0 || pos("staging-db-old") < pos("staging-db-new") {
		t.Fatalf("the rewrite does not rank above the old value: %v", ids(hits))
	}
	for _, h := range hits {
		if h.ID == "staging-db-old" && !slices.Equal(h.SupersededBy, []string{"staging-db-new"}) {
			t.Errorf("old value superseded by %v, want the rewrite", h.SupersededBy)
		}
	}
	for _, q := range []string{"When does the nightly export of Billing and of Search run?", "Which day does the on-call rotation change?"} {
		for _, h := range search1(q, false) {
			if len(h.SupersededBy) > 0 {
				t.Errorf("%q: %s superseded by %v, want left alone", q, h.ID, h.SupersededBy)
			}
		}
	}
}

// TestSupersedeFutureDated: a lesson dated more than a day past the
// query's instant is undated to the newer-fact rule (domain.BelievedCreated):
// it supersedes nothing, in the hits or from the store, rather than be the
// newest forever.
func TestSupersedeFutureDated(t *testing.T) {
	old := createdOn(lesson("staging-db-old", "", "The staging database of the payments service is pay-db-stage-1.", ""), 1)
	cur := createdOn(lesson("staging-db-new", "", "The staging database of the payments service is pay-db-stage-2.", ""), 20)
	ix := newTestIndex(t, append(filler(20), old, cur))
	q := "Which host is the staging database of the payments service? pay-db-stage-1"
	for _, tc := range []struct {
		now        time.Time
		superseded bool
	}{
		{time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2026, 9, 19, 12, 0, 0, 0, time.UTC), true}, // the 20th, 09:00, is within a day
		{time.Date(2026, 9, 10, 0, 0, 0, 0, time.UTC), false}, // the 20th is ten days ahead
	} {
		hits, err := ix.Search(context.Background(), Query{Text: q, K: 10, Bar: -1, MMRLambda: 1, Now: tc.now})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID == "staging-db-old" && (len(h.SupersededBy) > 0) != tc.superseded {
				t.Errorf("as of %s: the old value superseded by %v, want superseded %v", tc.now.Format(time.DateOnly), h.SupersededBy, tc.superseded)
			}
		}
	}
}

// TestSupersedeFromStoreTags: a rewrite the older lesson's tags make one
// fact ("Foundry took over matchwright" of "matchwright is owned by the
// Netcode team", tagged matchwright) supersedes it when looked up in the
// store too, as among the hits (the lookup read the older claim without
// its tags).
func TestSupersedeFromStoreTags(t *testing.T) {
	old := createdOn(lesson("owned-netcode", "", "matchwright is owned by the Netcode team.", ""), 1)
	old.Tags = []string{"matchwright"}
	cur := createdOn(lesson("foundry-took-over", "", "Foundry took over matchwright last sprint.", ""), 20)
	ix := newTestIndex(t, append(filler(20), old, cur))
	succ, _, err := ix.Successors(context.Background(), "owned-netcode", nil)
	if err != nil || !slices.Equal(succ, []string{"foundry-took-over"}) {
		t.Errorf("successors %v, %v; want the takeover", succ, err)
	}
}

// TestSupersedeSameReach: a fact supersedes only a fact of its own reach
// (a repository's value of a fact is not the team's, as sleep pairs them).
func TestSupersedeSameReach(t *testing.T) {
	q := "Which host is the staging database of the payments service? pay-db-stage-1"
	for _, tc := range []struct {
		oldReach, newReach string
		superseded         bool
	}{
		{"", "", true},
		{"team", "", true},
		{"repo:api", "repo:api", true},
		{"", "repo:api", false},
		{"repo:api", "team", false},
	} {
		old := createdOn(lesson("staging-db-old", "", "The staging database of the payments service is pay-db-stage-1.", ""), 1)
		cur := createdOn(lesson("staging-db-new", "", "The staging database of the payments service is pay-db-stage-2.", ""), 20)
		old.Reach, cur.Reach = tc.oldReach, tc.newReach
		ix := newTestIndex(t, append(filler(20), old, cur))
		for _, only := range []bool{false, true} { // among the hits, and from the store
			hits, err := ix.Search(context.Background(), Query{Text: q, K: 10, Repo: "api", Bar: -1, MMRLambda: 1, OnlyOverBar: only})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.ID == "staging-db-old" && (len(h.SupersededBy) > 0) != tc.superseded {
					t.Errorf("%q then %q: the old value superseded by %v, want superseded %v", tc.oldReach, tc.newReach, h.SupersededBy, tc.superseded)
				}
			}
		}
	}
}

// TestSupersedeFromStore: a session written in a fact's old words, which
// its rewrite does not share, still gets the current value: the old fact
// that clears the floor is superseded by a rewrite found in the store, and
// the rewrite takes its place in a hook's slots. A rewrite the session has
// been asked already supersedes without joining; a newer fact of another
// subject supersedes nothing.
func TestSupersedeFromStore(t *testing.T) {
	old := createdOn(lesson("bastion-old", "", "SSH to staging through the bastion host bastion-stg-01.corp.internal with your Vault-signed key.", ""), 1)
	cur := createdOn(lesson("bastion-new", "", "Staging access goes through jump-stg.corp.internal now; bastion-stg-01 is decommissioned.", ""), 20)
	decoy := createdOn(lesson("bastion-prod", "", "SSH to production through the bastion host bastion-prd-01.corp.internal with your Vault-signed key.", ""), 25)
	ix := newTestIndex(t, append(filler(40), old, cur, decoy))
	session := "I could not ssh to the staging box: the bastion host bastion-stg-01.corp.internal refused my Vault-signed key, so I re-signed it."
	search := func(exclude ...string) []Hit {
		t.Helper()
		hits, err := ix.Search(context.Background(), Query{Text: session, K: 3, OnlyOverBar: true, Exclude: exclude})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	var ids []string
	hits := search()
	for _, h := range hits {
		ids = append(ids, h.ID)
		if h.ID == "bastion-old" && !slices.Equal(h.SupersededBy, []string{"bastion-new"}) {
			t.Errorf("old bastion superseded by %v, want the rewrite", h.SupersededBy)
		}
		if h.ID != "bastion-old" && len(h.SupersededBy) > 0 {
			t.Errorf("%s superseded by %v, want left alone", h.ID, h.SupersededBy)
		}
	}
	if p := slices.Index(ids, "bastion-new"); p < 0 || slices.Index(ids, "bastion-old") >= 0 && slices.Index(ids, "bastion-old") < p {
		t.Fatalf("the rewrite does not take the old fact's place: %v", ids)
	}
	// A successor that is no candidate of the query joins the hits with the
	// old fact's match.
	alone := []Hit{{ID: "bastion-old", Gist: old.Gist, Fused: 0.5, Weight: 1, MeanWeight: 1, Match: 0.8, Relevance: 0.8}}
	got := ix.supersedeFromStore(context.Background(), alone, Query{}, DefaultFloor, func(string) Usefulness { return neutral }, (&Query{}).latestCreated())
	if len(got) != 2 || got[1].ID != "bastion-new" || got[1].Relevance != 0.8 || got[1].Fused != 0.5 || !slices.Equal(got[0].SupersededBy, []string{"bastion-new"}) {
		t.Errorf("the store's rewrite did not join the hits in the old fact's place: %+v", got)
	}
	for _, h := range search("bastion-new") {
		if h.ID == "bastion-new" {
			t.Errorf("an excluded rewrite joined the hits")
		}
		if h.ID == "bastion-old" && len(h.SupersededBy) == 0 {
			t.Errorf("an excluded rewrite no longer supersedes the old fact")
		}
	}
}

// TestSupersedeByTags: a rewrite that leaves out a name of the old fact's
// subject ("SQS") supersedes it when its own tags hold the name, among the
// hits and from the store, as sleep's frame phase reads it; the same
// rewrite tagged otherwise is another subject and supersedes nothing.
func TestSupersedeByTags(t *testing.T) {
	tagged := func(l domain.Lesson, tags ...string) domain.Lesson {
		l.Tags = tags
		return l
	}
	old := tagged(createdOn(lesson("timeout-old", "", "The visibility timeout on the export SQS queue is 45 seconds.", ""), 1), "sqs", "limits")
	cur := tagged(createdOn(lesson("timeout-new", "", "Export queue visibility timeout was raised to 90s.", ""), 20), "sqs", "limits")
	other := tagged(createdOn(lesson("timeout-other", "", "The visibility timeout on the export Pulsar queue is 30 seconds.", ""), 2), "pulsar")
	ix := newTestIndex(t, append(filler(30), old, cur, other))
	hits, err := ix.Search(context.Background(), Query{Text: "visibility timeout of the export queue, SQS and Pulsar", K: 10, Bar: -1, MMRLambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	sup := map[string][]string{}
	for _, h := range hits {
		sup[h.ID] = h.SupersededBy
	}
	if !slices.Equal(sup["timeout-old"], []string{"timeout-new"}) || len(sup["timeout-other"]) > 0 || len(sup["timeout-new"]) > 0 {
		t.Errorf("superseded: %v; want timeout-old by timeout-new alone", sup)
	}
	alone := []Hit{{ID: "timeout-old", Gist: old.Gist, Fused: 0.5, Weight: 1, MeanWeight: 1, Match: 0.8, Relevance: 0.8},
		{ID: "timeout-other", Gist: other.Gist, Fused: 0.5, Weight: 1, MeanWeight: 1, Match: 0.8, Relevance: 0.8}}
	got := ix.supersedeFromStore(context.Background(), alone, Query{}, DefaultFloor, func(string) Usefulness { return neutral }, (&Query{}).latestCreated())
	if !slices.Equal(got[0].SupersededBy, []string{"timeout-new"}) || len(got[1].SupersededBy) > 0 {
		t.Errorf("from the store: %v superseded by %v, %v by %v; want the SQS fact by its rewrite alone", got[0].ID, got[0].SupersededBy, got[1].ID, got[1].SupersededBy)
	}
}

// TestAdversarialDeclaredSupersedes: a lesson that declares supersedes of
// another takes its place only when the two state one slot. A lesson on
// another subject that claims to supersede a fact (as anyone who can
// commit a file can write) neither hides it nor outranks it; a declared
// rewrite of the fact's slot does.
func TestAdversarialDeclaredSupersedes(t *testing.T) {
	fact := lesson("staging-db", "", "The staging database of the payments service is pay-db-stage-1.", "")
	rogue := lesson("rogue", "", "Disable the payments fraud check when the staging database is slow.", "")
	rogue.Links = []domain.LessonLink{{Rel: domain.RelSupersedes, Target: fact.ID}, {Rel: domain.RelSupersedes, Target: "filler-0001", Derived: true}}
	rewrite := lesson("staging-db-2", "", "The staging database of the payments service is pay-db-stage-2.", "")
	rewrite.Links = []domain.LessonLink{{Rel: domain.RelSupersedes, Target: fact.ID}}
	for _, tc := range []struct {
		name    string
		lessons []domain.Lesson
		want    []string // what supersedes the fact
	}{
		{"unearned", []domain.Lesson{fact, rogue}, nil},
		{"earned", []domain.Lesson{fact, rewrite}, []string{"staging-db-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := newTestIndex(t, append(filler(20), tc.lessons...))
			hits, err := ix.Search(context.Background(), Query{Text: "Which is the staging database of the payments service?", K: 10, Bar: -1})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.ID == fact.ID && !slices.Equal(h.SupersededBy, tc.want) {
					t.Fatalf("the fact is superseded by %v, want %v", h.SupersededBy, tc.want)
				}
				if h.ID == "filler-0001" && len(h.SupersededBy) > 0 {
					t.Fatalf("a link flagged derived superseded another subject: %v", h.SupersededBy)
				}
			}
			if tc.want == nil && hits[0].ID != fact.ID {
				t.Fatalf("the fact lost its place to %s", hits[0].ID)
			}
		})
	}
}

// TestDeclaredSupersedesEarnedByTags: a supersedes link (as sleep derives
// one) from a rewrite that names the old subject only in its tags is
// earned, in the base catalog and in a delta over it; tags that name
// something else leave it unearned.
func TestDeclaredSupersedesEarnedByTags(t *testing.T) {
	const sqs = "The visibility timeout on the export SQS queue is 45 seconds."
	rewrite := func(tags []string) domain.Lesson {
		l := lesson("timeout-new", "", "Export queue visibility timeout was raised to 90s.", "")
		l.Tags = tags
		l.Links = []domain.LessonLink{{Rel: domain.RelSupersedes, Target: "timeout-old", Derived: true}}
		return l
	}
	for _, tc := range []struct {
		name string
		old  string // the older fact's gist
		tags []string
		want []string
	}{
		{"tags name it", sqs, []string{"sqs", "limits"}, []string{"timeout-new"}},
		{"tags name another", sqs, []string{"pulsar"}, nil},
		{"a tag names it in another form", "The visibility timeout on the export Orders queue is 45 seconds.", []string{"order"}, []string{"timeout-new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fact := lesson("timeout-old", "", tc.old, "")
			// TagHolds, for a listing that reads links without the
			// index, reads the tags as the index does.
			if earned := domain.EarnedSupersedes(rewrite(tc.tags).Gist, fact.Gist, TagHolds(tc.tags)); earned != (tc.want != nil) {
				t.Errorf("TagHolds(%q) earns the link: %v, the index: %v", tc.tags, earned, tc.want != nil)
			}
			whole := append(filler(20), fact, rewrite(tc.tags))
			dir := t.TempDir()
			ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{DeferMerge: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			for _, ls := range [][]domain.Lesson{whole[:len(whole)-1], whole} {
				if _, err := ix.Sync(ls); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, deltaName)); err != nil {
				t.Fatalf("the rewrite is not in a delta: %v", err)
			}
			for name, x := range map[string]*Index{"base": newTestIndex(t, whole), "delta": ix} {
				hits, err := x.Search(context.Background(), Query{Text: "visibility timeout of the export queue", K: 10, Bar: -1})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hits {
					if h.ID == fact.ID && !slices.Equal(h.SupersededBy, tc.want) {
						t.Errorf("%s: the fact is superseded by %v, want %v", name, h.SupersededBy, tc.want)
					}
				}
			}
		})
	}
}

// TestSharedPairs: the pairs of a lesson's title or gist a query says in
// the same order, stop words left out, each counted once; the words of one
// identifier are no pair, nor are the title's last word and the gist's
// first, nor two words on two lines of the query.
func TestSharedPairs(t *testing.T) {
	tests := []struct {
		name, title, gist, query string
		want                     int
	}{
		{"two pairs", "", "A new Sidekiq queue needs a KEDA scaler entry.", "I added the sidekiq queue for exports and its KEDA scaler.", 2},
		{"order reversed", "", "A new Sidekiq queue needs a KEDA scaler entry.", "The queue of Sidekiq, the scaler in KEDA.", 0},
		{"stop words between", "", "Run the migration before the tests.", "run a migration", 1},
		{"a pair said twice in the claim counts once", "", "retry budget: the retry budget is per client", "the retry budget of the client", 1},
		{"a word repeated is no pair", "", "Deploy deploy deploy.", "deploy deploy", 0},
		{"words apart", "", "Sidekiq queue", "sidekiq workers read the queue", 0},
		{"one identifier's words", "", "Partition vehicle.positions hourly or inserts stall.", "I changed the reader of vehicle.positions", 0},
		{"two identifiers' words alike", "", "Writes to pay_db_stage need the migration lock.", "internal/pay_db_stage/tables.go", 0},
		{"identifiers in a phrase", "", "Partition vehicle.positions hourly.", "partition vehicle.positions hourly now", 2},
		{"title and gist apart", "Retry budget", "Exports stall when the queue fills.", "the retry budget exports were slow", 1},
		{"two lines of the query", "", "Retry budget exports stall.", "the retry\nbudget exports were slow", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := newTestIndex(t, filler(3))
			q := ix.cat.newRelevanceQuery(analyze(tt.query), tt.query)
			_, got := q.claimTerms(tt.title, tt.gist)
			if got != tt.want {
				t.Errorf("claimTerms(%q, %q) against %q: %d pairs, want %d", tt.title, tt.gist, tt.query, got, tt.want)
			}
			if _, twice := q.claimTerms(tt.title, tt.gist); twice != got {
				t.Errorf("claimTerms again: %d pairs, then %d", got, twice)
			}
		})
	}
}

// TestPhraseBoost: of two queries holding the same words of a lesson, the
// one that says PhraseRun of its pairs of words in its order has the
// relevance of the other times PhraseBoost; one pair alone is no phrase.
func TestPhraseBoost(t *testing.T) {
	target := lesson("sidekiq-keda", "", "A new Sidekiq queue needs a KEDA scaler entry in bothy-infra.", "")
	ix := newTestIndex(t, append(filler(100), target))
	rel := func(q string) float64 { return relevanceOf(t, ix, target.ID, q) }
	ordered := rel("Added a sidekiq queue for the exports job, and a KEDA scaler for it.")
	scrambled := rel("Added a queue to sidekiq for the exports job, and a scaler to KEDA for it.")
	one := rel("Added a sidekiq queue for the exports job, and a scaler to KEDA for it.")
	t.Logf("ordered %.4f, one pair %.4f, scrambled %.4f", ordered, one, scrambled)
	if scrambled == 0 || math.Abs(ordered-PhraseBoost*scrambled) > 1e-9 {
		t.Errorf("relevance said in the lesson's order %.4f, in another %.4f: want a ratio of %.2f", ordered, scrambled, PhraseBoost)
	}
	if math.Abs(one-scrambled) > 1e-9 {
		t.Errorf("one pair in order %.4f, none %.4f: want the same", one, scrambled)
	}
}

// TestURLScaffoldWeighsNothing: "https" and "www" add nothing to a
// lesson's relevance, on either side: a session that links another page
// is not about a lesson that names an address, and a session about the
// lesson need not say "https".
func TestURLScaffoldWeighsNothing(t *testing.T) {
	target := lesson("boundary-controller", "", "The Boundary controller is at https://boundary.ops.tidewright.net.", "")
	ix := newTestIndex(t, append(filler(100), target))
	rel := func(q string) float64 { return relevanceOf(t, ix, target.ID, q) }
	if r := rel("Updated the onboarding links to https://www.wiki-host.org/eng and checked each one."); r != 0 {
		t.Errorf("a session sharing only a web address's scheme: relevance %.3f, want 0", r)
	}
	with, without := rel("Point the Boundary controller client at https://boundary.ops.tidewright.net"), rel("Point the Boundary controller client at boundary.ops.tidewright.net")
	if with != without || with < DefaultFloor {
		t.Errorf("a session about the lesson: relevance %.3f with the scheme, %.3f without; want the same, over the floor", with, without)
	}
}

// TestEffectiveFloor: a query's floor as a hit's Weak reads it.
func TestEffectiveFloor(t *testing.T) {
	for _, tt := range []struct{ floor, want float64 }{
		{0, DefaultFloor}, {0.2, 0.2}, {-1, 0}, {1, 1},
	} {
		if got := (Query{Floor: tt.floor}).EffectiveFloor(); got != tt.want {
			t.Errorf("Query{Floor: %v}.EffectiveFloor() = %v, want %v", tt.floor, got, tt.want)
		}
	}
}

// TestUpdateFromStore: a newer lesson that says something changed and holds
// most of an older one's words, which no slot rule reads as its rewrite, is
// taken as its update: it joins a hook's hits with the old lesson's match,
// ahead of it, and the old lesson names it (UpdatedBy). A newer lesson that
// says nothing changed, a narrower subject, a vetoed update and one that
// already rewrites another fact update nothing.
func TestUpdateFromStore(t *testing.T) {
	old := createdOn(lesson("disputes-old", "", "Refund disputes are escalated to the payments on-call engineer.", ""), 1)
	cur := createdOn(lesson("disputes-new", "", "Since the reorganisation, refund disputes now go to the finance operations desk rather than the payments on-call engineer.", ""), 20)
	rule := createdOn(lesson("disputes-rule", "", "Refund disputes above the chargeback limit need a second approver from the payments team.", ""), 25)
	jobs := createdOn(lesson("jobs-old", "", "Nightly jobs on the data cluster start at 01:00 UTC.", ""), 2)
	billing := createdOn(lesson("jobs-billing", "", "Nightly billing jobs on the data cluster now start at 02:30 UTC.", ""), 22)
	search := func(ix *Index, text string, useful map[string]Usefulness) []Hit {
		t.Helper()
		hits, err := ix.Search(context.Background(), Query{Text: text, K: 3, OnlyOverBar: true, Useful: useful})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	find := func(hits []Hit, id string) (Hit, int) {
		for i, h := range hits {
			if h.ID == id {
				return h, i
			}
		}
		return Hit{}, -1
	}
	ix := newTestIndex(t, append(filler(40), old, cur, rule, jobs, billing))
	session := "A customer refund dispute came in; I escalated it to the payments on-call engineer as the runbook says."
	hits := search(ix, session, nil)
	h, at := find(hits, "disputes-old")
	_, nat := find(hits, "disputes-new")
	if at < 0 || h.UpdatedBy != "disputes-new" || nat < 0 || nat > at {
		t.Fatalf("the old route is not updated by the newer one ahead of it: %+v", hits)
	}
	if r, _ := find(hits, "disputes-rule"); r.UpdatedBy != "" {
		t.Errorf("a newer rule that says nothing changed updated %+v", r)
	}
	vetoed := map[string]Usefulness{"disputes-new": {Vetoed: 1}}
	if h, _ := find(search(ix, session, vetoed), "disputes-old"); h.UpdatedBy != "" {
		t.Errorf("a vetoed lesson updated the old route: %+v", h)
	}
	// Show reads the same update from the store, with no query.
	if succ, upd, err := ix.Successors(context.Background(), "disputes-old", nil); err != nil || len(succ) > 0 || upd != "disputes-new" {
		t.Errorf("Successors(disputes-old) = %v, %q, %v; want the update alone", succ, upd, err)
	}
	veto := func(id string) Usefulness { return vetoed[id] }
	if _, upd, _ := ix.Successors(context.Background(), "disputes-old", veto); upd != "" {
		t.Errorf("Successors with the update vetoed = %q", upd)
	}
	for _, h := range search(ix, "The nightly jobs on the data cluster start at 01:00 UTC, so my batch waits for them.", nil) {
		if h.UpdatedBy != "" {
			t.Errorf("%s updated by %s: a narrower subject is another fact", h.ID, h.UpdatedBy)
		}
	}
	// An update whose own fact is another lesson's (a slot rule pairs the
	// two) is lent to no neighbour.
	bootstrap := createdOn(lesson("kafka-old", "", "The analytics Kafka bootstrap server is kafka-an-01.corp.internal:9092 (plaintext).", ""), 3)
	moved := createdOn(lesson("kafka-moved", "", "Analytics Kafka has moved: producers and connectors bootstrap from events-kafka.corp.internal:9094, and only TLS connections are accepted.", ""), 30)
	logs := createdOn(lesson("logs-kafka", "", "Server logs go to their own Kafka cluster; producers and connectors bootstrap from logs-kafka.corp.internal:9092.", ""), 4)
	ix = newTestIndex(t, append(filler(40), bootstrap, moved, logs))
	hits = search(ix, "The log shipper's producers and connectors could not bootstrap from logs-kafka.corp.internal:9092, the server logs Kafka cluster.", nil)
	if h, at := find(hits, "logs-kafka"); at < 0 || h.UpdatedBy != "" {
		t.Errorf("the logs cluster's lesson updated by %q (at %d), though what updates it rewrites the analytics bootstrap: %+v", h.UpdatedBy, at, hits)
	}
	// A neighbour about another subject is no rival, however many words
	// it shares with the update: the update is still the old feed's.
	feed := createdOn(lesson("lab-feed", "", "labline receives Vetronix HL7 over MLLP at mllp-vx.labs.corp.internal:2575.", ""), 5)
	other := createdOn(lesson("lab-other", "", "labline takes the Hollow Lane HL7 feed through the new gateway at hl7-gw-1.labs.corp.internal:6660.", ""), 6)
	cutover := createdOn(lesson("lab-cutover", "", "Vetronix was cut over to the new HL7 gateway: labline now takes their MLLP feed at hl7-gw-2.labs.corp.internal:6661.", ""), 30)
	ix = newTestIndex(t, append(filler(40), feed, other, cutover))
	hits = search(ix, "labline stopped receiving Vetronix HL7 results over MLLP at mllp-vx.labs.corp.internal:2575.", nil)
	if h, _ := find(hits, "lab-feed"); h.UpdatedBy != "lab-cutover" {
		t.Errorf("the Vetronix feed is not updated by its cut-over (another lab's feed taken as a rival): %+v", hits)
	}
	for _, h := range search(ix, "The Hollow Lane HL7 feed through the new gateway at hl7-gw-1.labs.corp.internal:6660 went quiet.", nil) {
		if h.UpdatedBy != "" {
			t.Errorf("%s updated by %s: the cut-over is another lab's", h.ID, h.UpdatedBy)
		}
	}
}

// TestOneWordShare: a session that meets a lesson's claim in one word that
// counts has the lesson's share halved (OneWordShare), and so does one that
// meets it in ordinary words alone; two words that count, the whole share.
func TestOneWordShare(t *testing.T) {
	target := lesson("zephyr-quince", "", "Zephyr drains the quince queue before each deploy.", "")
	ix := newTestIndex(t, append(filler(100), target))
	v := ix.cat
	idf := map[string]float64{}
	claim := analyze(target.Gist)
	slices.Sort(claim)
	own := 0.0
	for _, term := range slices.Compact(claim) {
		own += v.termWeight(term, idf)
	}
	share := func(words string) float64 {
		s := 0.0
		for _, term := range analyze(words) {
			s += v.termWeight(term, idf)
		}
		return s / (own + RelevancePrior*v.rareWeight())
	}
	if w := v.termWeight(analyze("deploy")[0], idf); w >= distinctWeight*v.rareWeight() {
		t.Fatalf("deploy, in every lesson of the filler, counts (%.3f)", w)
	}
	for _, tt := range []struct {
		query, met string
		factor     float64
	}{
		{"Renamed the zephyr dashboard panel.", "zephyr", 0.5},
		{"Renamed the zephyr dashboard panel before the deploy.", "zephyr deploy", 0.5},
		{"Renamed the zephyr quince dashboard panel.", "zephyr quince", 1},
	} {
		want := share(tt.met) * tt.factor
		if got := relevanceOf(t, ix, target.ID, tt.query); math.Abs(got-want) > 1e-9 {
			t.Errorf("%q: relevance %.4f, want %.4f (the share of %q × %g)", tt.query, got, want, tt.met, tt.factor)
		}
	}
}
