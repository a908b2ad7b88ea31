package domain

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

const day = msPerDay

func passing(ms int64, src, dst, dstV string) Event {
	return Event{MS: ms, Kind: KindPassing, Src: src, Dst: dst, DstV: dstV}.WithID()
}

func TestReinforce(t *testing.T) {
	l := NewLink("grep", "1", "read", "2", 0)
	if l.Weight != 0.30 || l.Uses != 1 || l.State != LinkActive || l.FirstMS != 0 || l.LastMS != 0 {
		t.Fatalf("NewLink = %+v", l)
	}
	if p := NewLink("grep", "1", "summarise", ProtoVersion, 0); p.State != LinkProto {
		t.Fatalf("a passing to ProtoVersion makes a proto: %+v", p)
	}
	tests := []struct {
		name   string
		weight float64
		gapMS  int64
		want   float64
	}{
		{"same day", 0.30, 0, 0.45},
		{"ten days later", 0.30, 10 * day, 0.30*math.Exp(-0.018*10) + 0.15},
		{"clamped at one", 0.95, 0, 1},
		{"clock skew decays nothing", 0.30, -5 * day, 0.45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLink("a", "", "b", "", 100*day)
			l.Weight = tt.weight
			r := Reinforce(l, 100*day+tt.gapMS)
			if math.Abs(r.Weight-tt.want) > 1e-12 || r.Uses != 2 {
				t.Fatalf("Reinforce = %+v, want weight %v", r, tt.want)
			}
			if r.LastMS < l.LastMS {
				t.Fatal("LastMS moved backwards")
			}
		})
	}
	if got := NewLink("a", "", "b", "", 0).WeightAt(math.MaxInt32 * day); got < 0 || got > 1 {
		t.Fatalf("WeightAt far future = %v", got)
	}
}

func TestAgeLinks(t *testing.T) {
	mk := func(state LinkState, w float64, lastDay int64) Link {
		return Link{Src: "a", Dst: "b", Weight: w, Uses: 1, LastMS: lastDay * day, State: state}
	}
	now := int64(200)
	tests := []struct {
		name     string
		link     Link
		kept     bool
		state    LinkState
		decaying int
		archive  int
	}{
		{"strong active stays", mk(LinkActive, 0.9, now), true, LinkActive, 0, 0},
		{"active at 0.20 stays", mk(LinkActive, 0.20, now), true, LinkActive, 0, 0},
		{"active under 0.20 decays", mk(LinkActive, 0.1999, now), true, LinkDecaying, 1, 0},
		{"active decayed by time", mk(LinkActive, 0.30, now-30), true, LinkDecaying, 1, 0},
		{"proto at 0.05 stays", mk(LinkProto, 0.05, now), true, LinkProto, 0, 0},
		{"proto under 0.05 is removed", mk(LinkProto, 0.0499, now), false, "", 0, 0},
		{"weak decaying link idle 90 days is a candidate", mk(LinkDecaying, 0.2, now-90), true, LinkDecaying, 0, 1},
		{"weak decaying link idle 89 days is not", mk(LinkDecaying, 0.04, now-89), true, LinkDecaying, 0, 0},
		{"old active link decays and is a candidate", mk(LinkActive, 0.3, now-200), true, LinkDecaying, 1, 1},
		{"superseded untouched", mk(LinkSuperseded, 0.001, 0), true, LinkSuperseded, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := AgeLinks([]Link{tt.link}, now*day)
			if kept := len(r.Links) == 1; kept != tt.kept {
				t.Fatalf("kept = %v, want %v (%+v)", kept, tt.kept, r)
			}
			if !tt.kept {
				if r.Removed != 1 {
					t.Fatalf("Removed = %d", r.Removed)
				}
				return
			}
			if r.Links[0].State != tt.state || r.Decaying != tt.decaying || r.ArchiveCandidates != tt.archive {
				t.Fatalf("AgeLinks = %+v, want state %s decaying %d archive %d", r, tt.state, tt.decaying, tt.archive)
			}
			if r.Links[0].Weight != tt.link.Weight {
				t.Fatal("the ager must not rewrite weights")
			}
			again := AgeLinks(r.Links, now*day)
			if !reflect.DeepEqual(again.Links, r.Links) || again.Decaying != 0 {
				t.Fatalf("a second pass changed more: %+v", again)
			}
		})
	}
}

func TestRecurringProtos(t *testing.T) {
	links := []Link{
		{Src: "a", Dst: "x", Uses: 3, Weight: 0.30, State: LinkProto},
		{Src: "a", Dst: "y", Uses: 2, Weight: 0.9, State: LinkProto},
		{Src: "a", Dst: "z", Uses: 5, Weight: 0.29, State: LinkProto},
		{Src: "a", Dst: "w", Uses: 9, Weight: 0.9, State: LinkActive},
		{Src: "b", Dst: "x", Uses: 4, Weight: 0.9, State: LinkProto},
	}
	got := RecurringProtos(links, 0)
	if len(got) != 2 || got[0].Dst != "x" || got[1].Src != "b" {
		t.Fatalf("RecurringProtos = %+v", got)
	}
	if got := RecurringProtos(links, 10*day); len(got) != 1 || got[0].Src != "b" {
		t.Fatalf("after 10 days: %+v", got)
	}
}

func TestFoldLinks(t *testing.T) {
	events := []Event{
		passing(0, "grep", "read", ""),
		passing(0, "grep", "read", ""), // the same event twice
		passing(day, "grep", "read", ""),
		passing(2*day, "grep", "read", "v2"), // a new version is a distinct link
		passing(0, "read", "grep", ""),       // direction matters
		passing(0, "grep", "summarise", ProtoVersion),
		passing(1000*day, "read", "grep", ""), // long gap: the link starts afresh
		ev(KindSession, 5, "s1", "", "", ""),
		{Kind: KindPassing, Src: "", Dst: "x"},
	}
	got := FoldLinks(events)
	want := []Link{
		{Src: "grep", Dst: "read", Weight: 0.30*math.Exp(-0.018) + 0.15, Uses: 2, FirstMS: 0, LastMS: day, State: LinkActive},
		{Src: "grep", Dst: "read", DstV: "v2", Weight: 0.30, Uses: 1, FirstMS: 2 * day, LastMS: 2 * day, State: LinkActive},
		{Src: "grep", Dst: "summarise", DstV: ProtoVersion, Weight: 0.30, Uses: 1, State: LinkProto},
		{Src: "read", Dst: "grep", Weight: 0.30, Uses: 1, FirstMS: 1000 * day, LastMS: 1000 * day, State: LinkActive},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("FoldLinks =\n%+v\nwant\n%+v", got, want)
	}
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	if !reflect.DeepEqual(l.Links(), want) {
		t.Fatalf("Ledger.Links = %+v", l.Links())
	}
	edges := LinkEdges(got, day)
	wantEdges := []GraphEdge{{"grep", "read", 0.30}, {"read", "grep", 0.30}}
	if len(edges) != 2 || edges[0].Src != "grep" || edges[0].Dst != "read" || edges[1].Src != "read" {
		t.Fatalf("LinkEdges = %+v, want like %+v", edges, wantEdges)
	}
	if math.Abs(edges[0].Strength-got[0].WeightAt(day)) > 1e-15 {
		t.Fatalf("the strongest version's weight: %v", edges[0].Strength)
	}
}

func TestFoldLinksOrderInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 6))
	names := []string{"grep", "read", "edit", "test"}
	for round := 0; round < 200; round++ {
		var events []Event
		for i := 0; i < r.IntN(40); i++ {
			events = append(events, passing(int64(r.IntN(60))*day/2, names[r.IntN(4)], names[r.IntN(4)], []string{"", "v2", ProtoVersion}[r.IntN(3)]))
		}
		want := FoldLinks(events)
		shuffled := append(append([]Event(nil), events...), events...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := FoldLinks(shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: order or duplicates changed the links", round)
		}
		for _, l := range want {
			if l.Weight < 0 || l.Weight > 1 || l.Uses < 1 || l.LastMS < l.FirstMS {
				t.Fatalf("round %d: invariant broken: %+v", round, l)
			}
		}
	}
}
