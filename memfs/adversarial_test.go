package memfs

import (
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestAdversarialFutureCreatedDate: a lesson whose file says it was created
// in the year 3000 would sit after every session on the clock and never
// decay. Its date is not believed: it ages like a lesson with no date, and
// decays below a lesson created at the first session.
func TestAdversarialFutureCreatedDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := newTestStore(t)
	s.now = func() time.Time { return now }
	start := now.Add(-30 * 24 * time.Hour)
	lessons := []domain.Lesson{
		{ID: "dated-far-future", Created: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "dated-tomorrow", Created: now.Add(20 * time.Hour)},
		{ID: "undated"},
		{ID: "dated-first-session", Created: start},
	}
	for i := range 40 {
		ms := start.Add(time.Duration(i) * 12 * time.Hour).UnixMilli()
		if err := s.Append(domain.Event{MS: ms, Kind: domain.KindSession, Session: HashSession(string(rune('a' + i)))}); err != nil {
			t.Fatal(err)
		}
	}
	mems, err := s.Memories(lessons, "", domain.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	act := map[string]float64{}
	for _, m := range mems {
		act[m.ID] = m.Activation
	}
	if act["dated-far-future"] != act["undated"] {
		t.Errorf("a far-future date is believed: activation %v, an undated lesson's %v", act["dated-far-future"], act["undated"])
	}
	if act["dated-far-future"] > act["dated-first-session"] {
		t.Errorf("a far-future date decays slower (%v) than a lesson as old as the clock (%v)", act["dated-far-future"], act["dated-first-session"])
	}
	// Within the slack (a teammate's clock a few hours ahead) the date holds.
	if act["dated-tomorrow"] <= act["dated-first-session"] {
		t.Errorf("a date within the slack was dropped: activation %v", act["dated-tomorrow"])
	}
	infos := LessonInfos(lessons, now)
	if infos[0].CreatedMS != 0 || infos[1].CreatedMS == 0 {
		t.Errorf("LessonInfos: %+v", infos)
	}
}
