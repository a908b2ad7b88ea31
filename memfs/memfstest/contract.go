package memfstest

import (
	"sync"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// Store is what the hooks need of a store (hooks.Store, restated here so
// that this package imports neither hooks nor memfs and both can run the
// suite): the disk store (memfs.Store) and the hooks' in-memory test store
// implement it.
type Store interface {
	Append(events ...domain.Event) error
	Lesson(id string) (domain.Lesson, error)
	UpdateJudgeTally(fn func(*domain.JudgeTally)) (domain.JudgeTally, error)
	JudgeTally() (domain.JudgeTally, error)
}

// NewStore makes a fresh, empty store holding lessons, for one test.
type NewStore func(t *testing.T, lessons []domain.Lesson) Store

// ContractLessons are the lessons TestStore seeds each store with.
func ContractLessons() []domain.Lesson {
	return []domain.Lesson{
		{
			ID: "contract-lesson-one", Type: domain.TypeProcedural, Confidence: 0.8, Title: "Migrations first",
			Created: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Tags: []string{"db"},
			Gist: "Run the migrations before the integration tests.", Body: "Why: the schema is not auto-applied.",
		},
		{
			ID: "contract-lesson-two", Type: domain.TypeSemantic, Confidence: 0.5,
			Created: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
			Gist:    "The staging database is shared with the nightly jobs.",
		},
	}
}

// TestStore is the contract every Store keeps (STYLE.md §9): run it with
// each implementation's constructor.
func TestStore(t *testing.T, newStore NewStore) {
	t.Run("Lesson", func(t *testing.T) {
		s := newStore(t, ContractLessons())
		for _, want := range ContractLessons() {
			got, err := s.Lesson(want.ID)
			if err != nil {
				t.Fatalf("Lesson(%s): %v", want.ID, err)
			}
			if got.ID != want.ID || got.Gist != want.Gist || got.Body != want.Body || got.Title != want.Title || got.Type != want.Type {
				t.Errorf("Lesson(%s) = %+v, want %+v", want.ID, got, want)
			}
		}
		if _, err := s.Lesson("contract-no-such-lesson"); err == nil {
			t.Error("Lesson of a missing id: no error")
		}
	})
	t.Run("Append", func(t *testing.T) {
		s := newStore(t, ContractLessons())
		e := domain.Event{MS: 1_790_000_000_000, Kind: domain.KindAsked, Session: "s-0000000000000001", Lesson: "contract-lesson-one"}
		if err := s.Append(e); err != nil {
			t.Fatalf("Append one: %v", err)
		}
		if err := s.Append(); err != nil {
			t.Fatalf("Append none: %v", err)
		}
		e2 := e
		e2.MS++
		e2.Kind = domain.KindChanged
		if err := s.Append(e, e2); err != nil {
			t.Fatalf("Append two (one again): %v", err)
		}
	})
	t.Run("JudgeTally", func(t *testing.T) {
		s := newStore(t, nil)
		if got, err := s.JudgeTally(); err != nil || got != (domain.JudgeTally{}) {
			t.Fatalf("a fresh tally = %+v, %v; want zero", got, err)
		}
		got, err := s.UpdateJudgeTally(func(j *domain.JudgeTally) { j.Asks += 2; j.AsksActed++ })
		if want := (domain.JudgeTally{Asks: 2, AsksActed: 1}); err != nil || got != want {
			t.Fatalf("UpdateJudgeTally = %+v, %v; want %+v", got, err, want)
		}
		// Concurrent updates all land.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := s.UpdateJudgeTally(func(j *domain.JudgeTally) { j.Placebos++ }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, err := s.JudgeTally(); err != nil || got != (domain.JudgeTally{Asks: 2, AsksActed: 1, Placebos: 8}) {
			t.Fatalf("after 8 concurrent updates: %+v, %v", got, err)
		}
	})
}
