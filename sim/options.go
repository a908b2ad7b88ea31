package sim

import (
	"errors"
	"fmt"

	"github.com/borg-memory/borg/domain"
)

// Options configures a simulation. DefaultOptions is the documented default
// scenario; the zero value of a field is not a default, Run validates it.
type Options struct {
	// Engineers, Repos and Lessons size the team and the initial corpus.
	Engineers, Repos, Lessons int
	// Sessions is the number of sessions simulated (the activity clock's
	// length, holiday or not).
	Sessions int
	// Seed drives every random choice; the same seed gives the same report,
	// byte for byte.
	Seed uint64
	// NewLessons helpful lessons are written at session NewAt (one apiece,
	// in consecutive sessions), to time how fast each policy finds them.
	NewLessons, NewAt int
	// Slots is how many lessons a session may ask (the Stop hook's
	// questions); Candidates is how deep the baselines' candidate list is.
	Slots, Candidates int
	// Censored is the fraction of sessions that never report a verdict;
	// Placebo the fraction that also ask a placebo (a verdict never shared).
	Censored, Placebo float64
	// HolidayAt is the session before which the whole team takes a holiday
	// of HolidayDays days (no sessions); 0 means none.
	HolidayAt, HolidayDays int
	// Weights are the usefulness weights the borg policy derives under.
	Weights domain.Weights
	// Judge is how verdicts are read: JudgeDefault (the product's judge
	// without BORG_JUDGE) or JudgePerfect (the hidden truth with a little
	// noise, an upper bound). Agent is how the agent declares what it did:
	// AgentOverDeclaring or AgentYesSayer.
	Judge, Agent string
	// Bar and MMRLambda are passed to every search (index.Query; 0 keeps the
	// index's defaults), so a replay can judge the ranking's own knobs.
	Bar, MMRLambda float64
	// Uncovered is the fraction of sessions whose work no lesson bears on
	// (a topic the corpus never writes about, in words it shares only by
	// chance): every ask there is a needless interruption.
	Uncovered float64
	// Floor is the relevance floor of borg's searches (index.Query.Floor:
	// 0 the index's default, negative none).
	Floor float64
}

// DefaultOptions is the default scenario: five engineers in three repos,
// 60 lessons (plus 4 helpful ones written at session 150), 600 sessions of
// three slots over ten candidates, a fifth of sessions censored, a tenth with
// a placebo, a two-week holiday at session 400, 35% of sessions about work
// no lesson covers, and the weights in force.
func DefaultOptions() Options {
	return Options{
		Engineers:   5,
		Repos:       3,
		Lessons:     60,
		Sessions:    600,
		Seed:        1,
		NewLessons:  4,
		NewAt:       150,
		Slots:       3,
		Candidates:  10,
		Censored:    0.2,
		Placebo:     0.1,
		HolidayAt:   400,
		HolidayDays: 14,
		Weights:     domain.DefaultWeights,
		Judge:       JudgeDefault,
		Agent:       AgentOverDeclaring,
		Uncovered:   0.35,
	}
}

// WithSessions returns o with n sessions and the mid-run events moved to the
// same places in the run as in the default scenario: the new lessons a
// quarter of the way in, the holiday two thirds of the way (none for a run
// too short to hold one). A --sessions flag should go through it.
func (o Options) WithSessions(n int) Options {
	o.Sessions = n
	o.NewAt = n / 4
	o.HolidayAt = 2 * n / 3
	if o.HolidayAt < 1 {
		o.HolidayAt, o.HolidayDays = 0, 0
	}
	return o
}

// Limits on Options, so a typo cannot ask for a week of simulation.
const (
	maxEngineers = 1000
	maxLessons   = 5000
	maxSessions  = 100000
)

func (o Options) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(o.Engineers >= 1 && o.Engineers <= maxEngineers, "engineers %d not in [1, %d]", o.Engineers, maxEngineers)
	check(o.Repos >= 1 && o.Repos <= len(repoNames), "repos %d not in [1, %d]", o.Repos, len(repoNames))
	check(o.Lessons >= 1 && o.Lessons <= maxLessons, "lessons %d not in [1, %d]", o.Lessons, maxLessons)
	check(o.Sessions >= 1 && o.Sessions <= maxSessions, "sessions %d not in [1, %d]", o.Sessions, maxSessions)
	check(o.NewLessons >= 0 && o.NewLessons <= maxLessons, "new lessons %d not in [0, %d]", o.NewLessons, maxLessons)
	check(o.NewLessons == 0 || (o.NewAt >= 0 && o.NewAt < o.Sessions), "new lessons at session %d, outside [0, %d)", o.NewAt, o.Sessions)
	check(o.Slots >= 1 && o.Slots <= 20, "slots %d not in [1, 20]", o.Slots)
	check(o.Candidates >= o.Slots && o.Candidates <= 100, "candidates %d not in [slots, 100]", o.Candidates)
	check(o.Censored >= 0 && o.Censored < 1, "censored fraction %v not in [0, 1)", o.Censored)
	check(o.Placebo >= 0 && o.Placebo <= 1, "placebo fraction %v not in [0, 1]", o.Placebo)
	check(o.Uncovered >= 0 && o.Uncovered < 1, "uncovered fraction %v not in [0, 1)", o.Uncovered)
	check(o.Floor <= 1, "floor %v over 1", o.Floor)
	check(o.HolidayAt >= 0 && o.HolidayAt < o.Sessions, "holiday at session %d, outside [0, %d)", o.HolidayAt, o.Sessions)
	check(o.HolidayDays >= 0 && o.HolidayDays <= 3650, "holiday of %d days not in [0, 3650]", o.HolidayDays)
	check(o.Judge == JudgeDefault || o.Judge == JudgePerfect, "judge %q is not %q or %q", o.Judge, JudgeDefault, JudgePerfect)
	check(o.Agent == AgentOverDeclaring || o.Agent == AgentYesSayer, "agent %q is not %q or %q", o.Agent, AgentOverDeclaring, AgentYesSayer)
	check(o.Weights.D > 0 && o.Weights.DConsolidated > 0, "weights: decays must be positive")
	if len(errs) > 0 {
		return fmt.Errorf("sim options: %w", errors.Join(errs...))
	}
	return nil
}
