package memfs

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

func TestMergeSet(t *testing.T) {
	for _, tc := range []struct {
		name               string
		base, ours, theirs []string
		want               []string
	}{
		{"nothing changed", []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b"}},
		{"one side adds", []string{"a"}, []string{"a", "b"}, []string{"a"}, []string{"a", "b"}},
		{"each side adds", []string{"a"}, []string{"a", "b"}, []string{"a", "c"}, []string{"a", "b", "c"}},
		{"both add the same", nil, []string{"b"}, []string{"b"}, []string{"b"}},
		{"one side removes", []string{"a", "b"}, []string{"a"}, []string{"a", "b"}, []string{"a"}},
		{"the other side removes", []string{"a", "b"}, []string{"a", "b"}, []string{"b"}, []string{"b"}},
		{"one removes, the other adds", []string{"a", "b"}, []string{"b"}, []string{"a", "b", "c"}, []string{"b", "c"}},
		{"both remove everything", []string{"a"}, nil, nil, nil},
		{"a repeat on one side is one", nil, []string{"x", "x"}, nil, []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeSet(tc.base, tc.ours, tc.theirs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("mergeSet(%q, %q, %q) = %q; want %q", tc.base, tc.ours, tc.theirs, got, tc.want)
			}
		})
	}
}

// TestMergeFieldsEitherOrder: which side is "ours" does not change what a
// merge keeps (a sync run on either teammate's machine merges alike), nor
// whether it conflicts; and a side that changed nothing leaves the other's
// version whole.
func TestMergeFieldsEitherOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	base := domain.Lesson{Format: domain.FormatVersion, ID: "shared-lesson-0001", Type: "semantic", Confidence: 0.5,
		Reach: domain.ReachTeam, Gist: "Run migrations before the integration tests", Body: "Else they fail.",
		Created: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Tags: []string{"ci"},
		Links: []domain.LessonLink{{Rel: domain.RelSupports, Target: "other-0001"}}}
	edits := []func(*domain.Lesson){
		func(l *domain.Lesson) { l.Confidence = 0.4425 },
		func(l *domain.Lesson) { l.Confidence = 0.3 },
		func(l *domain.Lesson) { l.Type = "procedural" },
		func(l *domain.Lesson) { l.Importance = 8 },
		func(l *domain.Lesson) { l.Reach = "repo:api" },
		func(l *domain.Lesson) { l.Body = "Or the schema is stale." },
		func(l *domain.Lesson) { l.Gist = "Migrate first" },
		func(l *domain.Lesson) { l.ValidUntil = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) },
		func(l *domain.Lesson) {
			if !slices.Contains(l.Tags, "postgres") {
				l.Tags = append(l.Tags, "postgres")
			}
		},
		func(l *domain.Lesson) { l.Tags = nil },
		func(l *domain.Lesson) {
			k := domain.LessonLink{Rel: domain.RelContradicts, Target: "other-0002", Derived: true}
			if !slices.Contains(l.Links, k) {
				l.Links = append(l.Links, k)
			}
		},
		func(l *domain.Lesson) { l.Links = nil },
	}
	edited := func() domain.Lesson {
		l := base
		l.Tags, l.Links = slices.Clone(base.Tags), slices.Clone(base.Links)
		for range rng.IntN(3) {
			edits[rng.IntN(len(edits))](&l)
		}
		return l
	}
	sorted := func(l domain.Lesson) domain.Lesson {
		l.Tags, l.Links = slices.Clone(l.Tags), slices.Clone(l.Links)
		slices.Sort(l.Tags)
		slices.SortFunc(l.Links, func(a, b domain.LessonLink) int { return strings.Compare(a.Target, b.Target) })
		return l
	}
	for range 500 {
		ours, theirs := edited(), edited()
		m1, ok1 := mergeFields(base, ours, theirs)
		m2, ok2 := mergeFields(base, theirs, ours)
		if ok1 != ok2 {
			t.Fatalf("conflict depends on the order: %v against %v\nours %+v\ntheirs %+v", ok1, ok2, ours, theirs)
		}
		if ok1 && !reflect.DeepEqual(sorted(m1), sorted(m2)) {
			t.Fatalf("merge depends on the order:\n%+v\n%+v", m1, m2)
		}
		if m, ok := mergeFields(base, base, theirs); !ok || !reflect.DeepEqual(sorted(m), sorted(theirs)) {
			t.Fatalf("an unchanged side did not give the other's version: %v %+v; want %+v", ok, m, theirs)
		}
	}
}
