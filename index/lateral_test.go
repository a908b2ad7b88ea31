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
