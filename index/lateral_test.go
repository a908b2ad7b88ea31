package index

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestLinkStrength(t *testing.T) {
	tests := []struct {
		link domain.LessonLink
		want float64
	}{
		{domain.LessonLink{Rel: domain.RelSupersedes, Target: "x"}, SupersedesStrength},
		{domain.LessonLink{Rel: domain.RelSupersedes, Target: "x", Derived: true}, SupersedesStrength},
		{domain.LessonLink{Rel: domain.RelSupports, Target: "x"}, WrittenLinkStrength},
		{domain.LessonLink{Rel: domain.RelSupports, Target: "x", Derived: true}, DerivedLinkStrength},
		{domain.LessonLink{Rel: domain.RelContradicts, Target: "x", Derived: true}, DerivedLinkStrength},
		{domain.LessonLink{Rel: "related", Target: "x"}, WrittenLinkStrength},
	}
	for _, tt := range tests {
		if got := linkStrength(tt.link); got != tt.want {
			t.Errorf("linkStrength(%+v) = %v, want %v", tt.link, got, tt.want)
		}
	}
	if !(DerivedLinkStrength < WrittenLinkStrength && WrittenLinkStrength < SupersedesStrength) {
		t.Fatal("a derived link must count less than a written one, and a written one less than supersedes")
	}
}

func lateralIndex(t *testing.T, lessons []domain.Lesson) *Index {
	t.Helper()
	ix, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if _, err := ix.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	return ix
}

// The lateral arm walks links with the strength they earned: from the same
// text hit, the lesson a person linked ranks above the one sleep linked.
func TestLateralWalksLinkStrength(t *testing.T) {
	// Five text hits linked in a chain are the walk's seeds; the first also
	// links to two lessons the query does not name.
	var lessons []domain.Lesson
	for i := 0; i < 5; i++ {
		l := domain.Lesson{ID: fmt.Sprintf("kafka-lag-%d", i), Type: "semantic",
			Gist: fmt.Sprintf("Kafka consumer lag alert rule %d pages the on-call.", i)}
		if i < 4 {
			l.Links = []domain.LessonLink{{Rel: domain.RelSupports, Target: fmt.Sprintf("kafka-lag-%d", i+1)}}
		}
		lessons = append(lessons, l)
	}
	lessons[0].Links = append(lessons[0].Links,
		domain.LessonLink{Rel: domain.RelSupports, Target: "derived-neighbour", Derived: true},
		domain.LessonLink{Rel: domain.RelSupports, Target: "written-neighbour"})
	derived := domain.Lesson{ID: "derived-neighbour", Type: "semantic", Gist: "Grafana dashboards live in the observability repository."}
	written := domain.Lesson{ID: "written-neighbour", Type: "semantic", Gist: "Terraform state is locked in a DynamoDB table."}
	ix := lateralIndex(t, append(lessons, derived, written))
	hits, err := ix.Search(context.Background(), Query{Text: "kafka consumer lag alert", Explain: true, MMRLambda: 1, Bar: -1})
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for _, h := range hits {
		rank[h.ID] = h.Ranks.Lateral
	}
	if rank["written-neighbour"] == 0 || rank["derived-neighbour"] == 0 || rank["written-neighbour"] > rank["derived-neighbour"] {
		t.Fatalf("lateral ranks %v: the written link should rank first", rank)
	}
	// Without links the arm is inert.
	for i := range lessons {
		lessons[i].Links = nil
	}
	plain := lateralIndex(t, append(lessons, derived, written))
	hits, err = plain.Search(context.Background(), Query{Text: "kafka consumer lag alert", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Ranks.Lateral != 0 {
			t.Fatalf("lateral rank without a graph: %+v", h)
		}
	}
}

// A lesson the walk reaches from every seed still ranks below the best
// text hit.
func TestLateralNeverDisplacesBestTextHit(t *testing.T) {
	var lessons []domain.Lesson
	for i := 0; i < 6; i++ {
		lessons = append(lessons, domain.Lesson{ID: fmt.Sprintf("payments-%d", i), Type: "semantic",
			Gist: "Payments gateway retries " + strings.Repeat("backoff ", 6-i) + fmt.Sprintf("note %d.", i)})
	}
	hub := domain.Lesson{ID: "payments-hub", Type: "semantic", Gist: "Payments runbook index."}
	for i := 0; i < 6; i++ {
		hub.Links = append(hub.Links, domain.LessonLink{Rel: domain.RelSupports, Target: fmt.Sprintf("payments-%d", i)})
	}
	ix := lateralIndex(t, append(lessons, hub))
	q := Query{Text: "payments gateway retries backoff", MMRLambda: 1, Bar: -1, Explain: true}
	withLateral, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	q.Arms = ArmWeights{Lexical: 1, Vector: 0.1}
	textOnly, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if withLateral[0].ID != textOnly[0].ID {
		t.Fatalf("the lateral arm displaced the best text hit %s with %s", textOnly[0].ID, withLateral[0].ID)
	}
}

// The lateral arm walks the links sessions made (Query.Links) at the weight
// they earned: with no written links at all, a lesson used together with
// the best text hit is reached, a strongly used one ranks above a weakly
// used one, edges to anything but a lesson are ignored, and the best text
// hit stays first.
func TestLateralWalksUsedLinks(t *testing.T) {
	// Five text hits used together in a chain seed the walk (the seeds
	// themselves take no lateral rank); the first was also used with two
	// lessons the query does not name.
	var lessons []domain.Lesson
	var links []domain.GraphEdge
	for i := range 5 {
		lessons = append(lessons, domain.Lesson{ID: fmt.Sprintf("kafka-lag-%d", i), Type: "semantic",
			Gist: fmt.Sprintf("Kafka consumer lag alert rule %d pages the on-call.", i)})
		if i < 4 {
			links = append(links, domain.GraphEdge{Src: fmt.Sprintf("kafka-lag-%d", i), Dst: fmt.Sprintf("kafka-lag-%d", i+1), Strength: 0.5})
		}
	}
	lessons = append(lessons,
		domain.Lesson{ID: "grafana-dashboards", Type: "semantic", Gist: "Grafana dashboards live in the observability repository."},
		domain.Lesson{ID: "terraform-state", Type: "semantic", Gist: "Terraform state is locked in a DynamoDB table."})
	ix := lateralIndex(t, lessons)
	q := Query{Text: "kafka consumer lag alert", Explain: true, MMRLambda: 1, Bar: -1, Links: append(links,
		domain.GraphEdge{Src: "kafka-lag-0", Dst: "grafana-dashboards", Strength: 0.9},
		domain.GraphEdge{Src: "terraform-state", Dst: "kafka-lag-0", Strength: 0.3},
		domain.GraphEdge{Src: "kafka-lag-0", Dst: "Bash:go", Strength: 1})}
	best, err := ix.Search(context.Background(), Query{Text: q.Text, MMRLambda: 1, Bar: -1, Arms: ArmWeights{Lexical: 1, Vector: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for _, h := range hits {
		rank[h.ID] = h.Ranks.Lateral
	}
	if rank["grafana-dashboards"] == 0 || rank["terraform-state"] == 0 || rank["grafana-dashboards"] > rank["terraform-state"] {
		t.Fatalf("lateral ranks %v: the strongly used link should rank first, both reached", rank)
	}
	if hits[0].ID != best[0].ID {
		t.Fatalf("best hit %s, want the best text hit %s", hits[0].ID, best[0].ID)
	}
	q.Links = nil
	hits, err = ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Ranks.Lateral != 0 {
			t.Fatalf("lateral rank with no links: %+v", h)
		}
	}
}
