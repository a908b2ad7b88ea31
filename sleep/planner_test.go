package sleep

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
	"github.com/rogpeppe/go-internal/txtar"
)

// synth is a lesson for a synthetic snapshot, with the vector it is given.
type synth struct {
	id, gist, body string
	created        string // date
	vec            []float32
	tags           []string
	reach          string
}

// synthSnapshot builds a snapshot from synthetic lessons, their vectors set
// by hand so a test controls every similarity.
func synthSnapshot(t *testing.T, ls []synth) Snapshot {
	t.Helper()
	snap := Snapshot{Date: fixtureDate, Base: "base", LastSleep: fixtureDate.AddDate(0, 0, -1), EmbedderID: "test"}
	for _, s := range ls {
		var created time.Time // "" is a lesson without a date
		if s.created != "" {
			var err error
			if created, err = time.Parse(time.DateOnly, s.created); err != nil {
				t.Fatal(err)
			}
		}
		l := domain.Lesson{ID: s.id, Type: domain.TypeSemantic, Confidence: 0.8, Created: created, Gist: s.gist, Body: s.body, Tags: s.tags, Reach: s.reach}
		snap.Lessons = append(snap.Lessons, LessonFile{Lesson: l, Raw: memfs.Render(l)})
		if s.vec != nil {
			snap.Vectors = append(snap.Vectors, domain.KeyedVector{Key: s.id, Vec: s.vec})
		}
	}
	return snap
}

// unit is a vector of dim 8 with cos·e_i + sin·e_j.
func unit(i, j int, cos float64) []float32 {
	v := make([]float32, 8)
	v[i] = float32(cos)
	v[j] = float32(math.Sqrt(1 - cos*cos))
	return v
}

func phaseOf(t *testing.T, p Plan, ph Phase) PhasePlan {
	t.Helper()
	for _, x := range p.Phases {
		if x.Phase == ph {
			return x
		}
	}
	t.Fatalf("no phase %s in plan", ph)
	return PhasePlan{}
}

// TestMergeRefusalStages drives each refusal stage of the merge filter
// through the planner and checks the phase's counts and decisions. It is
// long because it is one table, a case per stage, each case's lessons
// spelled out beside the outcome they must produce.
func TestMergeRefusalStages(t *testing.T) {
	// angle returns the unit vector at angle a (radians) in the plane of
	// dims i, j.
	angle := func(i, j int, a float64) []float32 { return unit(i, j, math.Cos(a)) }
	tests := []struct {
		name    string
		lessons []synth
		opts    PlanOptions
		counts  map[string]int
		merged  [][2]string // keep, drop
	}{
		{
			name: "committed keeps the older",
			lessons: []synth{
				{id: "new-copy", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
				{id: "old-copy", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
			},
			counts: map[string]int{"merged": 1},
			merged: [][2]string{{"old-copy", "new-copy"}},
		},
		{
			name: "threshold",
			lessons: []synth{
				{id: "near-a", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "near-b", gist: "Use the staging bucket for test fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.90)},
			},
			counts: map[string]int{"merged": 0, "refused (threshold)": 1},
		},
		{
			name: "vetoed by negation",
			lessons: []synth{
				{id: "safe-a", gist: "It is safe to restart the broker during business hours.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "safe-b", gist: "It is not safe to restart the broker during business hours.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
			},
			counts: map[string]int{"merged": 0, "refused (vetoed)": 1},
		},
		{
			name: "vetoed by variant",
			lessons: []synth{
				{id: "chip-a", gist: "Builds need the M1 runner.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "chip-b", gist: "Builds need the M1 Pro runner.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
			},
			counts: map[string]int{"merged": 0, "refused (vetoed)": 1},
		},
		{
			name: "cap",
			opts: PlanOptions{MergeMaxPairs: 1},
			lessons: []synth{
				{id: "one-old", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "one-new", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
				{id: "two-old", gist: "Tag releases from main only.", created: "2026-09-01", vec: unit(3, 4, 1)},
				{id: "two-new", gist: "Tag releases from main only.", created: "2026-10-01", vec: unit(3, 4, 0.98)},
			},
			counts: map[string]int{"merged": 1, "refused (cap)": 1},
			merged: [][2]string{{"one-old", "one-new"}},
		},
		{
			// a ~ b and b ~ c are duplicates, a and c are not: folding b
			// into a commits, so b may not keep c afterwards.
			name: "role guard chain",
			lessons: []synth{
				{id: "chain-a", gist: "Cache the module downloads in CI.", created: "2026-08-01", vec: angle(0, 1, 0)},
				{id: "chain-b", gist: "Cache the module downloads in CI.", created: "2026-09-01", vec: angle(0, 1, math.Acos(0.96))},
				{id: "chain-c", gist: "Cache the module downloads in CI.", created: "2026-10-01", vec: angle(0, 1, math.Acos(0.96)+math.Acos(0.95))},
			},
			counts: map[string]int{"merged": 1, "refused (role-guard)": 1},
			merged: [][2]string{{"chain-a", "chain-b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := MakePlan(synthSnapshot(t, tt.lessons), tt.opts)
			ph := phaseOf(t, plan, PhaseMerge)
			for name, n := range tt.counts {
				if got := ph.count(name); got != n {
					t.Errorf("count %q = %d, want %d (items %+v)", name, got, n, ph.Items)
				}
			}
			var merged [][2]string
			for _, it := range ph.Items {
				if it.Action == "merged into" {
					merged = append(merged, [2]string{it.Other, it.Lesson})
				}
			}
			if !slices.Equal(merged, tt.merged) {
				t.Errorf("merged %v, want %v", merged, tt.merged)
			}
			for _, m := range tt.merged {
				archived, updated := false, false
				for _, c := range ph.Changes {
					archived = archived || c.Path == memfs.ArchivePath(m[1])
					if c.Path == memfs.LessonPath(m[0]) {
						l, err := memfs.Parse(c.Data)
						if err != nil {
							t.Fatal(err)
						}
						updated = slices.Contains(l.Links, domain.LessonLink{Rel: domain.RelSupersedes, Target: m[1], Derived: true})
					}
				}
				if !archived || !updated {
					t.Errorf("merge %v: archived %v, keeper links to the dropped one %v", m, archived, updated)
				}
			}
		})
	}

	t.Run("self", func(t *testing.T) {
		// Neighbour search never pairs a lesson with itself; the stage is
		// still reported when the filter returns it.
		p := newPlanner(synthSnapshot(t, []synth{{id: "lone", gist: "x y z", created: "2026-01-01"}}), PlanOptions{})
		p.changes = map[string]memfs.FileChange{}
		ph := p.applyMerges(domain.MergeOutcomes([]domain.MergePair{{KeepPath: "lone", DropPath: "lone", Similarity: 1}}, domain.MergeOptions{}))
		if ph.count("refused (self)") != 1 || len(p.changes) != 0 {
			t.Errorf("self pair: counts %+v, changes %d", ph.Counts, len(p.changes))
		}
	})
}

// TestSketchPairsMatchExact: the sketch prefilter used on large stores finds
// every merge candidate the exact all-pairs search finds.
func TestSketchPairsMatchExact(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike " +
		"november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu migrate deploy " +
		"cache retry timeout schema bucket runner broker queue token vault")
	var snap Snapshot
	snap.Date, snap.Base = fixtureDate, "base"
	// Deterministic pseudo-random texts, with a near-copy of every seventh.
	x := uint64(7)
	next := func() int { x = x*6364136223846793005 + 1442695040888963407; return int(x >> 33) }
	var texts []string
	for i := 0; i < 400; i++ {
		var b []string
		if i%7 == 6 {
			b = strings.Fields(texts[i-1])
			b[next()%len(b)] = words[next()%len(words)]
		} else {
			for k := 0; k < 12+next()%8; k++ {
				b = append(b, words[next()%len(words)])
			}
		}
		texts = append(texts, strings.Join(b, " "))
		id := "lesson-" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "-" + string(rune('a'+i/676))
		l := domain.Lesson{ID: id, Type: "semantic", Confidence: 0.5, Gist: texts[i]}
		snap.Lessons = append(snap.Lessons, LessonFile{Lesson: l, Raw: memfs.Render(l)})
	}
	for _, emb := range []index.Embedder{DefaultEmbedder(), wordEmbedder{dim: 300}} {
		vecs, _, err := embedLessons(sortedLessons(snap.Lessons), emb)
		if err != nil {
			t.Fatal(err)
		}
		snap.Vectors = vecs
		p := newPlanner(snap, PlanOptions{})
		ids := p.active()
		opts := domain.NeighborOptions{Floor: p.opts.MergeCandidateFloor, PerSourceK: p.opts.MergePerSource}
		exact := domain.TopNeighborPairs(p.vectors(ids), opts)
		sketched := domain.RankCandidatePairs(p.sketchPairs(ids), p.vectors(ids), opts)
		if len(exact) == 0 {
			t.Fatalf("%s: the corpus has no near-duplicates to find", emb.ID())
		}
		if !slices.Equal(exact, sketched) {
			t.Errorf("%s: sketched pairs differ from exact ones: %d vs %d", emb.ID(), len(sketched), len(exact))
		}
	}

	t.Run("generated store", func(t *testing.T) {
		var snap Snapshot
		snap.Date, snap.Base = benchDate, "base"
		for _, l := range genLessons(800) {
			snap.Lessons = append(snap.Lessons, LessonFile{Lesson: l, Raw: memfs.Render(l)})
		}
		vecs, _, err := embedLessons(snap.Lessons, nil)
		if err != nil {
			t.Fatal(err)
		}
		snap.Vectors = vecs
		p := newPlanner(snap, PlanOptions{})
		ids := p.active()
		opts := domain.NeighborOptions{Floor: p.opts.MergeCandidateFloor, PerSourceK: p.opts.MergePerSource}
		exact := domain.TopNeighborPairs(p.vectors(ids), opts)
		sketched := domain.RankCandidatePairs(p.sketchPairs(ids), p.vectors(ids), opts)
		if len(exact) < 10 || !slices.Equal(exact, sketched) {
			t.Errorf("sketched pairs differ from exact ones: %d vs %d", len(sketched), len(exact))
		}
	})
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name, a, b string
		conflict   bool
	}{
		{"different values", "The default region is eu-west-1.", "The default region is us-east-1.", true},
		{"same value", "The default region is eu-west-1.", "the default region is  EU-WEST-1", false},
		{"numbers", "The session cache TTL is set to 300 seconds", "The session cache TTL is set to 600 seconds", true},
		{"different kinds", "The retry limit is 5", "The retry limit is configurable per queue", false},
		{"false conflict: rotation of two things", "The platform team is responsible for the rotation of db-credentials",
			"The platform team is responsible for the rotation of api-tokens", false},
		{"no copula", "We handle the rotation of db-credentials", "We handle the rotation of api-tokens", false},
		{"different frames", "The rotation of db-credentials is quarterly", "The rotation of api-tokens is monthly", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := domain.ReadClaim(tt.a), domain.ReadClaim(tt.b)
			if _, got := domain.SameSlot(a, b); got != tt.conflict {
				t.Errorf("conflict = %v, want %v (%q, %q)", got, tt.conflict, a, b)
			}
		})
	}
}

// TestFrameConflicts: the newer claim supersedes the older in a frame; a
// shared frame about two subjects is left alone; a resolved pair stays.
func TestFrameConflicts(t *testing.T) {
	snap := synthSnapshot(t, []synth{
		{id: "region-old", gist: "The default region is eu-west-1.", created: "2026-05-01"},
		{id: "region-new", gist: "The default region is us-east-1.", created: "2026-10-01"},
		{id: "rotation-db", gist: "The platform team is responsible for the rotation of db-credentials", created: "2026-05-01"},
		{id: "rotation-api", gist: "The platform team is responsible for the rotation of api-tokens", created: "2026-10-01"},
		// A rewrite that leaves out a name of the old subject ("SQS")
		// rewrites it only when its tags hold the name.
		{id: "timeout-old", gist: "The visibility timeout on the export SQS queue is 45 seconds.", created: "2026-05-01", tags: []string{"sqs"}},
		{id: "timeout-new", gist: "Export queue visibility timeout was raised to 90s.", created: "2026-10-01", tags: []string{"sqs"}},
		{id: "retention-old", gist: "The retention of the audit Kafka topic is 7 days.", created: "2026-05-01", tags: []string{"kafka"}},
		{id: "retention-new", gist: "Audit topic retention was cut to 3 days.", created: "2026-10-01", tags: []string{"pulsar"}},
	})
	plan := MakePlan(snap, PlanOptions{})
	ph := phaseOf(t, plan, PhaseFrame)
	if ph.count("superseded") != 2 || len(ph.Items) != 2 || ph.Items[0].Lesson != "region-new" || ph.Items[0].Other != "region-old" ||
		ph.Items[1].Lesson != "timeout-new" || ph.Items[1].Other != "timeout-old" {
		t.Fatalf("frame phase: %+v", ph)
	}
	byPath := map[string]domain.Lesson{}
	for _, c := range ph.Changes {
		l, err := memfs.Parse(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		byPath[c.Path] = l
	}
	if len(byPath) != 4 {
		t.Fatalf("changed %d files, want 4", len(byPath))
	}
	if c := byPath[memfs.LessonPath("region-old")].Confidence; c != DefaultFrameConfidenceCap {
		t.Errorf("older claim confidence %v, want %v", c, DefaultFrameConfidenceCap)
	}
	if !slices.Contains(byPath[memfs.LessonPath("region-new")].Links, domain.LessonLink{Rel: domain.RelSupersedes, Target: "region-old", Derived: true}) {
		t.Errorf("newer claim has no supersedes link: %+v", byPath[memfs.LessonPath("region-new")].Links)
	}

	// Feed the resolved lessons back: nothing more to do.
	for i, lf := range snap.Lessons {
		if l, ok := byPath[memfs.LessonPath(lf.Lesson.ID)]; ok {
			snap.Lessons[i] = LessonFile{Lesson: l, Raw: memfs.Render(l)}
		}
	}
	again := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseFrame)
	if again.Changed() || again.count("already resolved") != 2 {
		t.Errorf("resolved conflict replanned: %+v", again)
	}
}

func TestEntities(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Run make migrate before go test ./integration/...", []string{"./integration/"}},
		{"Our Redis queue uses max_retries from config.yaml", []string{"config.yaml", "max_retries", "redis"}},
		{"Kafka is fast. Use Kafka again, and the parseConfig helper.", []string{"kafka", "parseconfig"}},
		{"It costs 3.5 ms. A B c.", nil},
		{"Ask the API team; see docs/api.md.", []string{"api", "docs/api.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := Entities(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Entities = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzEntities(f *testing.F) {
	for _, s := range []string{"Our Redis queue uses max_retries from config.yaml", "a/b/c d.e F", "", "Ünïcode Wörds ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Entities(s)
		if !slices.IsSorted(got) {
			t.Fatalf("not sorted: %q", got)
		}
		for i, e := range got {
			if e != strings.ToLower(e) || strings.ContainsAny(e, " \t\n") || (i > 0 && got[i-1] == e) {
				t.Fatalf("bad entity %q in %q", e, got)
			}
		}
	})
}

// TestPlanDeterministic: planning twice from one snapshot gives the same
// plan, file bytes and messages included.
func TestPlanDeterministic(t *testing.T) {
	st := newFixtureStore(t)
	snap, err := LoadSnapshot(t.Context(), st, "HEAD", fixtureDate, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := MakePlan(snap, PlanOptions{}), MakePlan(snap, PlanOptions{})
	if a.String() != b.String() {
		t.Fatal("plan text differs between two runs")
	}
	for i := range a.Phases {
		pa, pb := a.Phases[i], b.Phases[i]
		if pa.Message != pb.Message || len(pa.Changes) != len(pb.Changes) {
			t.Fatalf("phase %s differs", pa.Phase)
		}
		for j := range pa.Changes {
			if pa.Changes[j].Path != pb.Changes[j].Path || string(pa.Changes[j].Data) != string(pb.Changes[j].Data) {
				t.Fatalf("phase %s change %s differs", pa.Phase, pa.Changes[j].Path)
			}
		}
	}
}

// TestBelievedCreated: every phase ages and orders lessons by the created
// time borg believes (domain.BelievedCreated): a date more than a day past
// the sleep is unknown, like no date: it ages as the oldest, and is never
// paired by the frame phase.
func TestBelievedCreated(t *testing.T) {
	session := domain.Event{MS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), Kind: domain.KindSession, Session: "s1"}
	item := func(ph PhasePlan, lesson, action string) (Item, bool) {
		for _, it := range ph.Items {
			if it.Lesson == lesson && it.Action == action {
				return it, true
			}
		}
		return Item{}, false
	}
	tests := []struct {
		name    string
		lessons []synth
		check   func(t *testing.T, p *planner, plan Plan)
	}{
		{
			name:    "a future date does not keep a lesson from decaying",
			lessons: []synth{{id: "future-note", gist: "Deploys go out on Tuesdays.", created: "2099-01-01"}},
			check: func(t *testing.T, _ *planner, plan Plan) {
				if _, ok := item(phaseOf(t, plan, PhaseDecay), "future-note", "decay"); !ok {
					t.Errorf("future-dated lesson did not decay: %+v", phaseOf(t, plan, PhaseDecay))
				}
			},
		},
		{
			name:    "an undated lesson decays",
			lessons: []synth{{id: "undated-note", gist: "Deploys go out on Tuesdays.", created: ""}},
			check: func(t *testing.T, _ *planner, plan Plan) {
				if _, ok := item(phaseOf(t, plan, PhaseDecay), "undated-note", "decay"); !ok {
					t.Errorf("undated lesson did not decay: %+v", phaseOf(t, plan, PhaseDecay))
				}
			},
		},
		{
			name: "a future date is not the newest claim",
			lessons: []synth{
				{id: "region-future", gist: "The default region is us-east-1.", created: "2099-01-01"},
				{id: "region-dated", gist: "The default region is eu-west-1.", created: "2026-05-01"},
			},
			check: func(t *testing.T, _ *planner, plan Plan) {
				// Nor the oldest: which of the two is newer is not known,
				// so neither supersedes (TestFrameUndated).
				if ph := phaseOf(t, plan, PhaseFrame); ph.count("superseded") != 0 {
					t.Errorf("want no supersession between a dated and an undatable claim: %+v", ph.Items)
				}
			},
		},
		{
			name: "two unknown dates: no claim supersedes",
			lessons: []synth{
				{id: "region-future", gist: "The default region is us-east-1.", created: "2099-01-01"},
				{id: "region-undated", gist: "The default region is eu-west-1.", created: ""},
			},
			check: func(t *testing.T, _ *planner, plan Plan) {
				if ph := phaseOf(t, plan, PhaseFrame); len(ph.Items) != 0 {
					t.Errorf("which claim came last is unknown: %+v", ph.Items)
				}
			},
		},
		{
			name:    "a future date is not young to retention",
			lessons: []synth{{id: "future-weak", gist: "x", created: "2099-01-01"}},
			check: func(t *testing.T, p *planner, plan Plan) {
				in := p.retentionInput("future-weak", retentionGraph{})
				if in.AgeDays < 300 {
					t.Errorf("age %v days, want the log's age (from 2026-01-01)", in.AgeDays)
				}
				if _, ok := item(phaseOf(t, plan, PhaseRetention), "future-weak", "evict"); !ok {
					t.Errorf("future-dated weak lesson not evicted: %+v", phaseOf(t, plan, PhaseRetention).Items)
				}
			},
		},
		{
			name:    "a future date is not a recent access to reprieve",
			lessons: []synth{{id: "future-expired", gist: "x", created: "2099-01-01"}},
			check: func(t *testing.T, p *planner, _ Plan) {
				if h := p.reprieveInput("future-expired").HoursSinceAccess; h != 24*365 {
					t.Errorf("hours since access %v, want %v (no access known)", h, 24*365)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, tt.lessons)
			snap.Events = append(snap.Events, session)
			for i, lf := range snap.Lessons {
				if strings.HasSuffix(lf.Lesson.ID, "-weak") {
					snap.Lessons[i].Lesson.Confidence = 0.1
					snap.Lessons[i].Raw = memfs.Render(snap.Lessons[i].Lesson)
				}
			}
			tt.check(t, newPlanner(snap, PlanOptions{}), MakePlan(snap, PlanOptions{}))
		})
	}
}

// TestReachPairs: merge and frame conflicts pair only lessons of one reach
// ("" and "team" are one).
func TestReachPairs(t *testing.T) {
	tests := []struct {
		name         string
		reachA       string
		reachB       string
		merged, sups int
	}{
		{"two repos", "repo:alpha", "repo:beta", 0, 0},
		{"a repo and the team", "repo:alpha", "team", 0, 0},
		{"one repo", "repo:alpha", "repo:alpha", 1, 1},
		{"team spelled two ways", "", "team", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := MakePlan(synthSnapshot(t, []synth{
				{id: "bucket-old", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1), reach: tt.reachA},
				{id: "bucket-new", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99), reach: tt.reachB},
				{id: "region-old", gist: "The default region is eu-west-1.", created: "2026-05-01", reach: tt.reachA},
				{id: "region-new", gist: "The default region is us-east-1.", created: "2026-10-01", reach: tt.reachB},
			}), PlanOptions{})
			if got := phaseOf(t, plan, PhaseMerge).count("merged"); got != tt.merged {
				t.Errorf("merged %d, want %d: %+v", got, tt.merged, phaseOf(t, plan, PhaseMerge).Items)
			}
			if got := phaseOf(t, plan, PhaseFrame).count("superseded"); got != tt.sups {
				t.Errorf("superseded %d, want %d: %+v", got, tt.sups, phaseOf(t, plan, PhaseFrame).Items)
			}
		})
	}
}

// TestMergeKeeper: the lesson with the record keeps in a merge (its session
// results stay in the log under its id): more changed results, then more
// results, then the older lesson.
func TestMergeKeeper(t *testing.T) {
	type results struct {
		lesson string
		kind   domain.EventKind
		n      int
	}
	tests := []struct {
		name     string
		results  []results
		keep     string
		whyShows string
	}{
		{"no record: the older keeps", nil, "bucket-old", "bucket-old is older"},
		{"changed results keep", []results{{"bucket-new", domain.KindChanged, 1}}, "bucket-new", "more changed results (1 to 0)"},
		{"results keep when changed ones tie", []results{{"bucket-new", domain.KindIgnored, 2}}, "bucket-new", "more session results (2 to 0)"},
		{"changed results before the count", []results{{"bucket-old", domain.KindChanged, 1}, {"bucket-new", domain.KindIgnored, 3}}, "bucket-old", "more changed results (1 to 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "bucket-old", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "bucket-new", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
			})
			ms := time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC).UnixMilli()
			for _, r := range tt.results {
				for i := 0; i < r.n; i++ {
					s := fmt.Sprintf("s-%s-%d", r.lesson, i)
					ms += 60_000
					snap.Events = append(snap.Events, domain.Event{MS: ms, Kind: domain.KindSession, Session: s},
						domain.Event{MS: ms + 1, Kind: domain.KindAsked, Session: s, Lesson: r.lesson},
						domain.Event{MS: ms + 2, Kind: r.kind, Session: s, Lesson: r.lesson})
				}
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseMerge)
			if len(ph.Items) != 1 || ph.Items[0].Action != "merged into" || ph.Items[0].Other != tt.keep ||
				!strings.Contains(ph.Items[0].Why, tt.whyShows) {
				t.Fatalf("want a merge into %s because %q: %+v", tt.keep, tt.whyShows, ph.Items)
			}
			for _, c := range ph.Changes {
				if c.Path == memfs.LessonPath(tt.keep) && c.Delete {
					t.Errorf("the keeper %s was archived", tt.keep)
				}
			}
		})
	}
}

// TestMergeFold: the keeper takes the dropped lesson's body paragraphs it
// lacks, after the merge note, and the later valid-until (none when either
// has none); a hand-written keeper is edited in place.
func TestMergeFold(t *testing.T) {
	day := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	const note = "Merged bucket-new into this lesson on 2026-11-30 (cosine 0.9900): Use the staging bucket for fixtures."
	tests := []struct {
		name                 string
		keepBody, dropBody   string
		keepUntil, dropUntil string
		hand                 bool
		wantBody, wantUntil  string
	}{
		{name: "body paragraphs the keeper lacks", keepBody: "Run it weekly.", dropBody: "Run it weekly.\n\nThe bucket lives in gs://fixtures.",
			wantBody: "Run it weekly.\n\n" + note + "\n\nThe bucket lives in gs://fixtures."},
		{name: "an empty keeper", dropBody: "The bucket lives in gs://fixtures.", wantBody: note + "\n\nThe bucket lives in gs://fixtures."},
		{name: "the later valid-until", keepUntil: "2027-01-01", dropUntil: "2027-06-01", wantBody: note, wantUntil: "2027-06-01"},
		{name: "the keeper's later valid-until", keepUntil: "2027-06-01", dropUntil: "2027-01-01", wantBody: note, wantUntil: "2027-06-01"},
		{name: "the dropped lesson has none", keepUntil: "2027-06-01", wantBody: note},
		{name: "the keeper has none", dropUntil: "2027-06-01", wantBody: note},
		{name: "a hand-written keeper", hand: true, keepBody: "Run it weekly.", dropBody: "The bucket lives in gs://fixtures.",
			wantBody: "Run it weekly.\n\n" + note + "\n\nThe bucket lives in gs://fixtures."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "bucket-old", gist: "Use the staging bucket for fixtures.", body: tt.keepBody, created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "bucket-new", gist: "Use the staging bucket for fixtures.", body: tt.dropBody, created: "2026-10-01", vec: unit(0, 1, 0.99)},
			})
			for i, until := range []string{tt.keepUntil, tt.dropUntil} {
				snap.Lessons[i].Lesson.ValidUntil = day(until)
				snap.Lessons[i].Raw = memfs.Render(snap.Lessons[i].Lesson)
			}
			if tt.hand {
				snap.Lessons[0].Raw = []byte(`<!doctype html>
<html lang="en"><head>
  <meta charset="utf-8">
  <meta name="memhtml-id" content="bucket-old">
  <meta name="memhtml-type" content="semantic">
  <meta name="memhtml-confidence" content="0.8">
  <meta name="memhtml-created" content="2026-09-01T00:00:00Z">
</head>
<body><article>
  <p><mark>Use the staging bucket for fixtures.</mark></p>
  <p>Run it weekly.</p>
  <!-- reviewer note -->
</article></body></html>
`)
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseMerge)
			var keeper []byte
			for _, c := range ph.Changes {
				if c.Path == memfs.LessonPath("bucket-old") {
					keeper = c.Data
				}
			}
			l, err := memfs.Parse(keeper)
			if err != nil {
				t.Fatalf("keeper: %v (changes %+v)", err, ph.Items)
			}
			if l.Body != tt.wantBody {
				t.Errorf("body %q, want %q", l.Body, tt.wantBody)
			}
			if !l.ValidUntil.Equal(day(tt.wantUntil)) {
				t.Errorf("valid-until %v, want %q", l.ValidUntil, tt.wantUntil)
			}
			if tt.hand && !strings.Contains(string(keeper), "<!-- reviewer note -->") {
				t.Errorf("the hand-written keeper was rendered anew:\n%s", keeper)
			}
		})
	}
}

// TestMergeRetargets: a merge points the links other lessons hold to the
// archived lesson at the keeper; the keeper's own links to it give way to
// its supersedes link, and a link a lesson would hold twice goes.
func TestMergeRetargets(t *testing.T) {
	snap := synthSnapshot(t, []synth{
		{id: "bucket-old", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
		{id: "bucket-new", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
		{id: "fixtures-a", gist: "Fixtures load before the integration tests.", created: "2026-08-01", vec: unit(2, 3, 1)},
		{id: "fixtures-b", gist: "Fixtures are regenerated weekly.", created: "2026-08-01", vec: unit(4, 5, 1)},
	})
	for i, lf := range snap.Lessons {
		switch lf.Lesson.ID {
		case "fixtures-a":
			snap.Lessons[i].Lesson.Links = []domain.LessonLink{{Rel: domain.RelSupports, Target: "bucket-new"}, {Rel: domain.RelSupports, Target: "fixtures-b"}}
		case "fixtures-b":
			snap.Lessons[i].Lesson.Links = []domain.LessonLink{{Rel: domain.RelSupports, Target: "bucket-new"}, {Rel: domain.RelSupports, Target: "bucket-old"}}
		case "bucket-old": // the keeper's own link to what it absorbs goes
			snap.Lessons[i].Lesson.Links = []domain.LessonLink{{Rel: domain.RelSupports, Target: "bucket-new"}}
		default:
			continue
		}
		snap.Lessons[i].Raw = memfs.Render(snap.Lessons[i].Lesson)
	}
	ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseMerge)
	links := map[string][]domain.LessonLink{}
	for _, c := range ph.Changes {
		if c.Delete || !strings.HasPrefix(c.Path, "lessons/") {
			continue
		}
		l, err := memfs.Parse(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		links[l.ID] = l.Links
	}
	want := map[string][]domain.LessonLink{
		"bucket-old": {{Rel: domain.RelSupersedes, Target: "bucket-new", Derived: true}},
		"fixtures-a": {{Rel: domain.RelSupports, Target: "fixtures-b"}, {Rel: domain.RelSupports, Target: "bucket-old"}},
		"fixtures-b": {{Rel: domain.RelSupports, Target: "bucket-old"}},
	}
	for id, w := range want {
		if !slices.Equal(links[id], w) {
			t.Errorf("%s links %+v, want %+v", id, links[id], w)
		}
	}
}

// TestFrameSubjects: the frame phase leaves alone a pair edge typing deems
// about different subjects (differentSubjects, one rule for both phases).
func TestFrameSubjects(t *testing.T) {
	tests := []struct {
		name             string
		oldTags, newTags []string
		oldGist, newGist string
		superseded       bool
	}{
		{name: "tags name two subjects", oldTags: []string{"http-client", "go"}, newTags: []string{"postgres", "python"},
			oldGist: "The default timeout is 30 seconds", newGist: "The default timeout is 5 seconds"},
		{name: "a shared tag", oldTags: []string{"http-client", "go"}, newTags: []string{"go"},
			oldGist: "The default timeout is 30 seconds", newGist: "The default timeout is 5 seconds", superseded: true},
		{name: "no tags", oldGist: "The default timeout is 30 seconds", newGist: "The default timeout is 5 seconds", superseded: true},
		{name: "one side tagged", oldTags: []string{"aws"},
			oldGist: "The default region is eu-west-1.", newGist: "The default region is us-east-1.", superseded: true},
		{name: "entities name two subjects", oldGist: "The Kafka consumer timeout is 30 seconds", newGist: "The Redis consumer timeout is 5 seconds"},
		// A fact rewritten in other words has another frame and one
		// subject (domain.Rewrites judges it; docs/sleep.md's example).
		{name: "rewritten in other words", oldGist: "The nightly reindex kicks off at 02:00 UTC", newGist: "The nightly reindex was moved to 03:30 UTC", superseded: true},
		{name: "rewritten in other words, tagged", oldTags: []string{"reindex"}, newTags: []string{"reindex"},
			oldGist: "The nightly reindex kicks off at 02:00 UTC", newGist: "The nightly reindex was moved to 03:30 UTC", superseded: true},
		{name: "a value raised, tagged", oldTags: []string{"sqs", "orders"}, newTags: []string{"sqs", "orders"},
			oldGist: "The order-events SQS queue visibility timeout is 30 seconds", newGist: "The order-events SQS queue visibility timeout was raised to 120 seconds", superseded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "claim-old", gist: tt.oldGist, created: "2026-05-01", tags: tt.oldTags},
				{id: "claim-new", gist: tt.newGist, created: "2026-10-01", tags: tt.newTags},
			})
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseFrame)
			if got := ph.count("superseded") == 1; got != tt.superseded {
				t.Errorf("superseded %v, want %v: %+v %v", got, tt.superseded, ph.Items, ph.Notes)
			}
			if !tt.superseded {
				if _, _, ok := typeEdge(viewOf(snap.Lessons[0].Lesson), viewOf(snap.Lessons[1].Lesson)); ok {
					t.Errorf("edge typing links a pair the frame phase deems about different subjects")
				}
			}
		})
	}
}

// TestFrameUndated: a lesson without a believed creation date (written by
// hand, or dated in the future) neither supersedes nor is superseded: which
// of the two is newer is not known.
func TestFrameUndated(t *testing.T) {
	for _, tt := range []struct {
		name, oldCreated, newCreated string
		superseded                   bool
	}{
		{"both dated", "2026-05-01", "2026-10-01", true},
		{"the older undated", "", "2026-10-01", false},
		{"the newer undated", "2026-05-01", "", false},
		{"the newer dated in the future", "2026-05-01", "2062-10-01", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "region-old", gist: "The default region is eu-west-1.", created: tt.oldCreated},
				{id: "region-new", gist: "The default region is us-east-1.", created: tt.newCreated},
			})
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseFrame)
			if got := ph.count("superseded") == 1; got != tt.superseded {
				t.Errorf("superseded %v, want %v: %+v", got, tt.superseded, ph.Items)
			}
		})
	}
}

// TestFrameAuthoredReverse: an older lesson whose author linked it as
// superseding the newer one is not superseded by it (a cycle); the pair is
// listed. A derived link the other way does not stop the phase.
func TestFrameAuthoredReverse(t *testing.T) {
	tests := []struct {
		name       string
		link       *domain.LessonLink // on region-old
		superseded bool
	}{
		{"no link", nil, true},
		{"authored reverse link", &domain.LessonLink{Rel: domain.RelSupersedes, Target: "region-new"}, false},
		{"derived reverse link", &domain.LessonLink{Rel: domain.RelSupersedes, Target: "region-new", Derived: true}, true},
		{"authored link of another relation", &domain.LessonLink{Rel: domain.RelSupports, Target: "region-new"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "region-old", gist: "The default region is eu-west-1.", created: "2026-05-01"},
				{id: "region-new", gist: "The default region is us-east-1.", created: "2026-10-01"},
			})
			if tt.link != nil {
				for i, lf := range snap.Lessons {
					if lf.Lesson.ID == "region-old" {
						snap.Lessons[i].Lesson.Links = []domain.LessonLink{*tt.link}
						snap.Lessons[i].Raw = memfs.Render(snap.Lessons[i].Lesson)
					}
				}
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseFrame)
			if got := ph.count("superseded") == 1; got != tt.superseded {
				t.Fatalf("superseded %v, want %v: %+v", got, tt.superseded, ph.Items)
			}
			if !tt.superseded {
				if ph.Changed() || ph.count("left to an authored link") != 1 || len(ph.Items) != 1 ||
					ph.Items[0].Action != "does not supersede" || !strings.Contains(ph.Items[0].Why, "authored supersedes link") {
					t.Errorf("want the pair listed and no file changed: %+v", ph)
				}
			}
		})
	}
}

// TestRetentionKeepsCurrentFact: retention never evicts a lesson that
// supersedes a live lesson it keeps; the predecessor goes first, or both
// stay.
func TestRetentionKeepsCurrentFact(t *testing.T) {
	session := domain.Event{MS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), Kind: domain.KindSession, Session: "s1"}
	tests := []struct {
		name          string
		oldWeak       bool // the predecessor scores low enough to evict
		share         float64
		evicted       []string
		guardedNewWhy string // the successor's guard, when it stays
	}{
		{name: "the predecessor stays", oldWeak: false, share: 1, evicted: nil, guardedNewWhy: "supersedes fact-old, which stays"},
		{name: "both go", oldWeak: true, share: 1, evicted: []string{"fact-new", "fact-old"}},
		{name: "the cap takes the predecessor first", oldWeak: true, share: 0.01, evicted: []string{"fact-old"}, guardedNewWhy: "over tonight's cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "fact-old", gist: "x", created: "2025-01-01"},
				{id: "fact-new", gist: "y", created: "2025-02-01"},
			})
			snap.Events = append(snap.Events, session)
			for i, lf := range snap.Lessons {
				l := lf.Lesson
				switch l.ID {
				case "fact-new":
					l.Confidence = 0.05 // the lowest score: first under the cap
					l.Links = []domain.LessonLink{{Rel: domain.RelSupersedes, Target: "fact-old", Derived: true}}
				case "fact-old":
					l.Confidence = 0.95
					l.Body = "A body long enough to be worth keeping: it names the bucket, the region, the owner and the rotation."
					if tt.oldWeak {
						l.Confidence, l.Body = 0.1, ""
					}
				}
				snap.Lessons[i] = LessonFile{Lesson: l, Raw: memfs.Render(l)}
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{MaxEvictShare: tt.share}), PhaseRetention)
			var evicted []string
			for _, it := range ph.Items {
				switch {
				case it.Action == "evict":
					evicted = append(evicted, it.Lesson)
				case it.Lesson == "fact-new" && tt.guardedNewWhy != "" && !strings.Contains(it.Why, tt.guardedNewWhy):
					t.Errorf("fact-new: %s (%s), want the guard %q", it.Action, it.Why, tt.guardedNewWhy)
				}
			}
			slices.Sort(evicted)
			if !slices.Equal(evicted, tt.evicted) {
				t.Errorf("evicted %v, want %v: %+v", evicted, tt.evicted, ph.Items)
			}
		})
	}
}

// TestReprieveFromTonight: a reprieve runs ReprieveDays from the sleep, not
// from an expiry already past (which could leave it expired again).
func TestReprieveFromTonight(t *testing.T) {
	tests := []struct{ name, until, want string }{
		{"expired tonight", "2026-11-30", "2026-12-14"},
		{"expired ten days ago", "2026-11-20", "2026-12-14"},
		{"expired a month ago", "2026-10-20", "2026-12-14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{{id: "expiring", gist: "Rotate the signing key before the audit.", created: "2026-05-01"}})
			until, err := time.Parse(time.DateOnly, tt.until)
			if err != nil {
				t.Fatal(err)
			}
			l := snap.Lessons[0].Lesson
			l.ValidUntil, l.Importance = until, 10
			snap.Lessons[0] = LessonFile{Lesson: l, Raw: memfs.Render(l)}
			ms := fixtureDate.Add(-48 * time.Hour).UnixMilli()
			for i := range 3 {
				s := fmt.Sprintf("s-%d", i)
				snap.Events = append(snap.Events, domain.Event{MS: ms, Kind: domain.KindSession, Session: s},
					domain.Event{MS: ms + 1, Kind: domain.KindAsked, Session: s, Lesson: "expiring"},
					domain.Event{MS: ms + 2, Kind: domain.KindChanged, Session: s, Lesson: "expiring"})
				ms += 60_000
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseReprieve)
			if len(ph.Items) != 1 || ph.Items[0].Action != "reprieve" || ph.Items[0].Other != "until "+tt.want {
				t.Fatalf("want a reprieve until %s: %+v", tt.want, ph.Items)
			}
		})
	}
}

// TestMessageLists: a phase's commit message lists the decisions that
// change a file, the first MessageItems of them, and counts the rest and
// those that change none.
func TestMessageLists(t *testing.T) {
	items := func(n int, noChange bool) []Item {
		out := make([]Item, n)
		for i := range out {
			out[i] = Item{Lesson: fmt.Sprintf("lesson-%04d", i), Action: "evict", NoChange: noChange}
		}
		return out
	}
	tests := []struct {
		name          string
		items         []Item
		lines         int // "- " lines
		want, wantNot []string
	}{
		{"a few changes", items(3, false), 3, nil, []string{"more", "Not listed"}},
		{"over the cap", items(MessageItems+50, false), MessageItems + 1, []string{"- … and 50 more (the diff shows every change)"}, []string{"Not listed"}},
		{"no-op decisions are counted", append(items(2, false), items(4000, true)...), 2,
			[]string{"Not listed: 4000 decisions that change no file"}, []string{"more"}},
	}
	p := newPlanner(synthSnapshot(t, nil), PlanOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := p.message(PhasePlan{Phase: PhaseRetention, Number: 6, Items: tt.items})
			if n := strings.Count(msg, "\n- "); n != tt.lines {
				t.Errorf("%d listed lines, want %d", n, tt.lines)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("message holds %q", w)
				}
			}
		})
	}
}

// TestFrameHandWrittenDatedByCommit: a lesson written by hand without a
// created date was created when its file was first committed (the
// format's default), so a fact learned after that supersedes it.
func TestFrameHandWrittenDatedByCommit(t *testing.T) {
	old := domain.Lesson{ID: "region-by-hand", Type: domain.TypeSemantic, Confidence: 0.8,
		Gist: "The default region is eu-west-1."}
	newer := domain.Lesson{ID: "region-learned", Type: domain.TypeSemantic, Confidence: 0.8,
		Gist: "The default region is us-east-1.", Created: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)}
	st := newStoreWith(t, []txtar.File{
		{Name: memfs.LessonPath(old.ID), Data: memfs.Render(old)},
		{Name: memfs.LessonPath(newer.ID), Data: memfs.Render(newer)},
	})
	snap, err := LoadSnapshot(t.Context(), st, "HEAD", fixtureDate, nil)
	if err != nil {
		t.Fatal(err)
	}
	committed := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC) // the store's clock in newStoreWith
	for _, lf := range snap.Lessons {
		if lf.Lesson.ID == old.ID && !lf.Lesson.Created.Equal(committed) {
			t.Errorf("%s created %v, want its first commit's time %v", old.ID, lf.Lesson.Created, committed)
		}
	}
	ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseFrame)
	if !slices.ContainsFunc(ph.Items, func(it Item) bool {
		return it.Lesson == newer.ID && it.Action == "supersedes" && it.Other == old.ID
	}) {
		t.Errorf("the hand-written fact is not superseded by the one learned after it: %+v", ph.Items)
	}
}

// TestMergeSkipsVetoed: a lesson a person vetoed (borg no) is never merged,
// neither kept (its veto, a session result, made it the keeper) nor dropped;
// the pair takes no role, so its other lesson may merge with another copy.
func TestMergeSkipsVetoed(t *testing.T) {
	tests := []struct {
		name   string
		vetoed string
		merged [][2]string // keep, drop
	}{
		{name: "the older copy vetoed", vetoed: "copy-old", merged: [][2]string{{"copy-mid", "copy-new"}}},
		{name: "the newer copy vetoed", vetoed: "copy-new", merged: [][2]string{{"copy-old", "copy-mid"}}},
		{name: "no veto", merged: [][2]string{{"copy-mid", "copy-new"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "copy-old", gist: "Use the staging bucket for fixtures.", created: "2026-09-01", vec: unit(0, 1, 1)},
				{id: "copy-mid", gist: "Use the staging bucket for fixtures.", created: "2026-09-15", vec: unit(0, 1, 0.97)},
				{id: "copy-new", gist: "Use the staging bucket for fixtures.", created: "2026-10-01", vec: unit(0, 1, 0.99)},
			})
			if tt.vetoed != "" {
				ms := time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC).UnixMilli()
				snap.Events = append(snap.Events, domain.Event{MS: ms, Kind: domain.KindVetoed, Session: "s-no", Lesson: tt.vetoed})
			}
			ph := phaseOf(t, MakePlan(snap, PlanOptions{}), PhaseMerge)
			var merged [][2]string
			refused := 0
			for _, it := range ph.Items {
				switch {
				case it.Action == "merged into":
					merged = append(merged, [2]string{it.Other, it.Lesson})
				case strings.Contains(it.Why, "vetoed (borg no"):
					refused++
					if it.Lesson != tt.vetoed && it.Other != tt.vetoed {
						t.Errorf("refused a pair without the vetoed lesson: %+v", it)
					}
				}
			}
			if !slices.Equal(merged, tt.merged) {
				t.Errorf("merged %v, want %v (items %+v)", merged, tt.merged, ph.Items)
			}
			if want := map[bool]int{true: 2, false: 0}[tt.vetoed != ""]; refused != want || ph.count("refused (borg no)") != want {
				t.Errorf("%d pairs refused for the veto (count %d), want %d", refused, ph.count("refused (borg no)"), want)
			}
			for _, c := range ph.Changes {
				if tt.vetoed != "" && (c.Path == memfs.ArchivePath(tt.vetoed) || c.Path == memfs.LessonPath(tt.vetoed)) {
					t.Errorf("the vetoed lesson's file changed: %s", c.Path)
				}
			}
		})
	}
}

// TestRetentionRanksSuccessorFirst: a supersedes link lends its weight to
// the lesson that replaced the stale one, never to the stale one: of two
// lessons alike but for the link, the successor scores at least as high.
// (Pointed at the stale fact, the link ranked it first, so retention never
// took it and the guard kept its successor for as long as it stayed.)
func TestRetentionRanksSuccessorFirst(t *testing.T) {
	for _, derived := range []bool{true, false} {
		t.Run(fmt.Sprintf("derived %v", derived), func(t *testing.T) {
			snap := synthSnapshot(t, []synth{
				{id: "fact-old", gist: "x", body: "The bucket, the region and the owner.", created: "2025-01-01"},
				{id: "fact-new", gist: "y", body: "The bucket, the region and the owner.", created: "2025-01-01"},
				{id: "other", gist: "z", body: "The bucket, the region and the owner.", created: "2025-01-01"},
			})
			for i, lf := range snap.Lessons {
				l := lf.Lesson
				l.Confidence = 0.3
				if l.ID == "fact-new" {
					l.Links = []domain.LessonLink{{Rel: domain.RelSupersedes, Target: "fact-old", Derived: derived}}
				}
				snap.Lessons[i] = LessonFile{Lesson: l, Raw: memfs.Render(l)}
			}
			p := newPlanner(snap, PlanOptions{})
			ids := p.active()
			g := p.retentionGraph(ids)
			score := map[string]float64{}
			for _, id := range ids {
				score[id] = domain.ScoreRetention(p.retentionInput(id, g)).Score
			}
			if g.rank["fact-old"] > g.rank["fact-new"] || score["fact-old"] > score["fact-new"] {
				t.Errorf("the superseded lesson ranks above its successor: pagerank %v > %v, score %v > %v",
					g.rank["fact-old"], g.rank["fact-new"], score["fact-old"], score["fact-new"])
			}
		})
	}
}
