package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/borg-memory/borg/domain"
)

// Spacing compares two lessons with the same number of uses, one massed in
// consecutive sessions and one spread out, on a clock of filler sessions:
// the real Ledger derives their activation as the clock runs on.
type Spacing struct {
	// Uses is the number of changed results each lesson gets (its creation
	// is one more use).
	Uses   int   `json:"uses"`
	Massed []int `json:"massed_sessions"`
	Spaced []int `json:"spaced_sessions"`
	// Points are the two activations at chosen sessions of the clock.
	Points []SpacingPoint `json:"points"`
	// MassedDormantAt and SpacedDormantAt are the first sessions at which
	// each lesson is dormant (-1: not within Horizon).
	MassedDormantAt int `json:"massed_dormant_at"`
	SpacedDormantAt int `json:"spaced_dormant_at"`
	Horizon         int `json:"horizon"`
}

// SpacingPoint is both activations as of one session.
type SpacingPoint struct {
	Session int     `json:"session"`
	Massed  float64 `json:"massed"`
	Spaced  float64 `json:"spaced"`
}

// spacingExperiment runs the spacing comparison under w: four uses at
// sessions 0–3 against four at sessions 0, 20, 40 and 60, by one engineer in
// one repo (so neither consolidates and both decay at w.D), over 2,000
// sessions.
func spacingExperiment(w domain.Weights) Spacing {
	const horizon = 2000
	sp := Spacing{Uses: 4, Massed: []int{0, 1, 2, 3}, Spaced: []int{0, 20, 40, 60},
		MassedDormantAt: -1, SpacedDormantAt: -1, Horizon: horizon}
	const author, repo = "e-00000001", "api"
	infos := []domain.LessonInfo{{ID: "massed-lesson", CreatedMS: baseMS - 1}, {ID: "spaced-lesson", CreatedMS: baseMS - 1}}
	// The ledger grows session by session, as a live store's does, so each
	// reading sees only the uses made so far.
	led := domain.NewLedger()
	for _, li := range infos {
		led.Add(domain.Event{MS: baseMS - 1, Kind: domain.KindCreated, Lesson: li.ID, Repo: repo, Author: author}.WithID())
	}
	points := []int{3, 60, 100, 200, 400, 1000, horizon - 1}
	lastUse := max(slices.Max(sp.Massed), slices.Max(sp.Spaced))
	sessions := make([]string, horizon)
	dormantAt := []*int{&sp.MassedDormantAt, &sp.SpacedDormantAt}
	for s := 0; s < horizon; s++ {
		sessions[s] = fmt.Sprintf("s-%016x", s+1)
		ms := baseMS + int64(s)*sessionGapMS
		led.Add(domain.Event{MS: ms, Kind: domain.KindSession, Session: sessions[s], Repo: repo, Author: author}.WithID())
		for i, at := range [][]int{sp.Massed, sp.Spaced} {
			if slices.Contains(at, s) {
				led.Add(domain.Event{MS: ms + 1000, Kind: domain.KindChanged, Session: sessions[s],
					Lesson: infos[i].ID, Repo: repo, Author: author}.WithID())
			}
		}
		// Up to the last use, read every session as it ends (a later use
		// must not count); dormancy may come and go between uses.
		if s <= lastUse {
			mems := led.Memories(infos, sessions[s], w)
			for i, m := range mems {
				if m.Dormant && *dormantAt[i] < 0 {
					*dormantAt[i] = s
				}
			}
			if slices.Contains(points, s) {
				sp.Points = append(sp.Points, SpacingPoint{Session: s, Massed: round4(mems[0].Activation), Spaced: round4(mems[1].Activation)})
			}
		}
	}
	// After the last use nothing but the clock moves, so a reading as of any
	// later session is exact on the whole ledger, and activation only falls:
	// the first dormant session is found by bisection.
	for i := range infos {
		if *dormantAt[i] >= 0 {
			continue
		}
		dormant := func(s int) bool { return led.Memories(infos[i:i+1], sessions[s], w)[0].Dormant }
		if lo, hi := lastUse+1, horizon; lo < hi && dormant(hi-1) {
			for lo < hi {
				mid := (lo + hi) / 2
				if dormant(mid) {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			*dormantAt[i] = lo
		}
	}
	for _, s := range points {
		if s > lastUse {
			mems := led.Memories(infos, sessions[s], w)
			sp.Points = append(sp.Points, SpacingPoint{Session: s, Massed: round4(mems[0].Activation), Spaced: round4(mems[1].Activation)})
		}
	}
	return sp
}

// Holiday shows that a stretch without sessions erases nothing: the borg
// policy's log, derived as of the first session after the holiday, against
// the same log with the holiday's wall time cut out.
type Holiday struct {
	AtSession int `json:"at_session"`
	Days      int `json:"days"`
	// Mean activation over the lessons written before the holiday, as of the
	// last session before it, the first after it, and the first after it
	// with the gap removed from the log.
	MeanActivationBefore         float64 `json:"mean_activation_before"`
	MeanActivationAfter          float64 `json:"mean_activation_after"`
	MeanActivationWithoutHoliday float64 `json:"mean_activation_without_holiday"`
	// MaxActivationDiff is the largest per-lesson difference between the
	// last two: 0 when the clock counts sessions, not days.
	MaxActivationDiff float64 `json:"max_activation_diff"`
	DormantBefore     int     `json:"dormant_before"`
	DormantAfter      int     `json:"dormant_after"`
	// SingleUseSessionClock is the activation, just after the holiday, of
	// one use made in the last session before it (borg's clock: one tick
	// old); SingleUseWallClock is what it would be if ages counted wall
	// time in session-length steps, the holiday included (a clock borg does
	// not use).
	SingleUseSessionClock float64 `json:"single_use_session_clock"`
	SingleUseWallClock    float64 `json:"single_use_wall_clock"`
}

func holidayExperiment(opts Options, w *world, events []domain.Event) Holiday {
	h := Holiday{AtSession: opts.HolidayAt, Days: opts.HolidayDays}
	if opts.HolidayAt <= 0 || opts.HolidayDays <= 0 || w.holidayMS == 0 {
		return h
	}
	gap := int64(opts.HolidayDays) * 24 * 3600 * 1000
	before, after := w.tasks[opts.HolidayAt-1], w.tasks[opts.HolidayAt]
	var infos []domain.LessonInfo
	for _, l := range w.available(opts.HolidayAt - 1) {
		infos = append(infos, domain.LessonInfo{ID: l.lesson.ID, Reach: l.lesson.Reach, CreatedMS: l.createdMS})
	}
	// Each reading folds the events written up to the end of its session
	// (a live store holds nothing later): before the holiday, and through
	// the first session after it, with and without the gap.
	end := int64(math.MaxInt64)
	if opts.HolidayAt+1 < len(w.tasks) {
		end = w.tasks[opts.HolidayAt+1].ms
	}
	pre, led, cut := domain.NewLedger(), domain.NewLedger(), domain.NewLedger()
	for _, e := range events {
		if e.MS < after.ms {
			pre.Add(e)
		}
		if e.MS >= end {
			continue
		}
		led.Add(e)
		if e.MS >= w.holidayMS {
			e.MS -= gap
		}
		cut.Add(e)
	}
	mb := pre.Memories(infos, before.session, opts.Weights)
	ma := led.Memories(infos, after.session, opts.Weights)
	mc := cut.Memories(infos, after.session, opts.Weights)
	acts := func(ms []domain.Memory) ([]float64, int) {
		out := make([]float64, len(ms))
		dormant := 0
		for i, m := range ms {
			out[i] = m.Activation
			if m.Dormant {
				dormant++
			}
		}
		return out, dormant
	}
	ab, db := acts(mb)
	aa, da := acts(ma)
	ac, _ := acts(mc)
	h.MeanActivationBefore, h.DormantBefore = round4(meanFinite(ab)), db
	h.MeanActivationAfter, h.DormantAfter = round4(meanFinite(aa)), da
	h.MeanActivationWithoutHoliday = round4(meanFinite(ac))
	for i := range aa {
		if d := math.Abs(aa[i] - ac[i]); d > h.MaxActivationDiff {
			h.MaxActivationDiff = d
		}
	}
	steps := int((after.ms-before.ms)/sessionGapMS) + 1
	h.SingleUseSessionClock = round4(domain.Activation([]int{2}, opts.Weights.D))
	h.SingleUseWallClock = round4(domain.Activation([]int{steps}, opts.Weights.D))
	return h
}
