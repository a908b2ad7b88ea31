package memfs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestJudgeTally: updates from parallel hooks all count; a missing tally is
// the zero tally; a corrupt one is reported by JudgeTally and replaced by
// the next update.
func TestJudgeTally(t *testing.T) {
	// Every update waits for the lock, however slow the machine: the test
	// is about counting, not about the hooks' bound on waiting.
	defer func(w time.Duration) { judgeTallyWait = w }(judgeTallyWait)
	judgeTallyWait = -1
	s := newTestStore(t)
	if tl, err := s.JudgeTally(); err != nil || tl != (domain.JudgeTally{}) {
		t.Fatalf("JudgeTally on a new store = %+v, %v", tl, err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.UpdateJudgeTally(func(tl *domain.JudgeTally) { tl.Add(i%2 == 0, true) }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	tl, err := s.JudgeTally()
	if want := (domain.JudgeTally{Asks: 4, AsksActed: 4, Placebos: 4, PlacebosActed: 4}); err != nil || tl != want {
		t.Fatalf("after 8 parallel updates: %+v, %v; want %+v", tl, err, want)
	}
	p := filepath.Join(s.Dir(), filepath.FromSlash(judgeTallyFile))
	if err := os.WriteFile(p, []byte(`{"asks":1,"asks_acted":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JudgeTally(); err == nil {
		t.Fatal("a tally with more acted readings than asks was read")
	}
	tl, err = s.UpdateJudgeTally(func(tl *domain.JudgeTally) { tl.Add(false, false) })
	if want := (domain.JudgeTally{Asks: 1}); err != nil || tl != want {
		t.Fatalf("update over a corrupt tally = %+v, %v; want %+v", tl, err, want)
	}
}
