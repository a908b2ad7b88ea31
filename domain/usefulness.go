package domain

import "math"

// Weights holds the belief's and the activation's hand-set constants in one
// value, so that an offline replay (borg debug ope) can re-derive memory under
// other values. Derive's counts never depend on them; only the belief, the
// activation and the flags read them.
type Weights struct {
	// D is ACT-R's base-level decay of a use's activation: the value of the
	// ACT-R literature, not fitted to borg's outcomes.
	D float64
	// DConsolidated is the slower decay of a consolidated lesson, so proven
	// knowledge fades more slowly than a fresh note.
	DConsolidated float64
	// TestedW is what one tested result adds to α: half a change, because the
	// session's own test runner said the work passes but said nothing about
	// the lesson itself.
	TestedW float64
	// CorrectedW is what one correction adds to β: a correction is the
	// engineer saying the point was missed, twice the weight of an ignore.
	CorrectedW float64
	// VetoedW is what one veto (borg no) adds to β: above a correction, as the
	// design asks (no evaluation behind the 3 yet).
	VetoedW float64
	// Regret is what one full-strength regret adds to β: half a correction,
	// since a regret is delayed and shared among every lesson asked, where a
	// correction is same-session, same-concern evidence. So
	// Regret < CorrectedW < VetoedW.
	Regret float64
	// RegretMax caps one regret's share: a later fix is never wholly one
	// lesson's fault (the fix may have had other causes), so a single regret
	// adds at most Regret × RegretMax.
	RegretMax float64
	// ConsolidateSessions is how many distinct sessions must have changed
	// their work on a lesson (across two repos or two engineers) before it is
	// consolidated: three, so one enthusiastic session or one person's habit
	// cannot promote a lesson alone.
	ConsolidateSessions int
	// ConsolidateMean and ConsolidateZ are the proof a lesson needs besides
	// its sessions to be consolidated: the belief of its vouched changes
	// against the results against it, less ConsolidateZ standard deviations,
	// above ConsolidateMean: ½ (acted on more often than not) at 3.09, a
	// one-sided 99.9% bound. So strict because every lesson is looked at
	// again after every session: among hundreds of lessons and thousands of
	// looks, a 95% or 99% bound let a lucky streak of a useless lesson
	// through under a yes-saying agent (`borg eval learning --agent
	// yes-sayer`, BENCHMARKS.md). Six clean full changes are proof; three,
	// the seed's count, are not.
	ConsolidateMean, ConsolidateZ float64
	// DormantBelow is the activation under which an unconsolidated lesson is
	// dormant: −2.0, which a single use reaches after 54 further sessions at
	// D = 0.5 (−½·ln 55 ≈ −2.004 while −½·ln 54 ≈ −1.994).
	DormantBelow float64
	// NovelWords is how many of a lesson's distinctive words must be new in
	// the drone's work for the undeclared word rule to call it changed: three,
	// because one or two shared words happen by chance.
	NovelWords int
}

// DefaultWeights are the weights in force.
var DefaultWeights = Weights{
	D:                   0.5,
	DConsolidated:       0.3,
	TestedW:             0.5,
	CorrectedW:          2,
	VetoedW:             3,
	Regret:              1.0,
	RegretMax:           0.875,
	ConsolidateSessions: 3,
	ConsolidateMean:     0.5,
	ConsolidateZ:        3.09,
	DormantBelow:        -2.0,
	NovelWords:          3,
}

// Activation is ACT-R's base-level activation ln(Σ age^(−d)) over the ages
// of a lesson's uses, in ticks of the activity clock. Each age is at least 1
// (a smaller one is read as 1); without any use the activation is −Inf. A
// single use one tick old has activation 0.
func Activation(ages []int, d float64) float64 {
	if len(ages) == 0 {
		return math.Inf(-1)
	}
	var s float64
	for _, a := range ages {
		s += agePow(a, d)
	}
	return math.Log(s)
}

// agePow is age^(−d) with age read as at least 1; the two decays borg uses
// take a faster path than math.Pow.
func agePow(age int, d float64) float64 {
	if age <= 1 {
		return 1
	}
	x := float64(age)
	switch d {
	case 0.5:
		return 1 / math.Sqrt(x)
	case 0:
		return 1
	}
	return math.Pow(x, -d)
}

// Squash maps an activation into (0, 2): 2 / (1 + e^(−A/2)). Squash(0) is 1
// (a lesson created this session ranks as its lexical score ranks it) and
// Squash(−Inf) is 0. A NaN activation reads as no use at all: 0.
func Squash(a float64) float64 {
	if math.IsNaN(a) {
		return 0
	}
	return 2 / (1 + math.Exp(-a/2))
}

// Belief is the Beta usefulness belief of one lesson.
type Belief struct {
	Alpha, Beta float64
}

// BeliefOf builds the belief from the counts under w:
// Beta(1 + changed + TestedW·tested, 1 + ignored + CorrectedW·corrected +
// VetoedW·vetoed + Regret·regretted).
func BeliefOf(changed, ignored, corrected, vetoed, tested int, regretted float64, w Weights) Belief {
	return Belief{
		Alpha: 1 + float64(changed) + w.TestedW*float64(tested),
		Beta: 1 + float64(ignored) + w.CorrectedW*float64(corrected) +
			w.VetoedW*float64(vetoed) + w.Regret*regretted,
	}
}

// SD is the belief's standard deviation, √(αβ / ((α+β)²(α+β+1))); 0 for a
// degenerate belief.
func (b Belief) SD() float64 {
	s := b.Alpha + b.Beta
	if !(s > 0) || math.IsInf(s, 0) || !(b.Alpha >= 0) || !(b.Beta >= 0) {
		return 0
	}
	return math.Sqrt(b.Alpha * b.Beta / (s * s * (s + 1)))
}

// Mean is the belief's mean α / (α + β); 0.5 for a degenerate belief.
func (b Belief) Mean() float64 {
	s := b.Alpha + b.Beta
	if !(s > 0) || math.IsInf(s, 0) {
		return 0.5
	}
	return b.Alpha / s
}

// UsefulnessWeight is squash(A) × (0.5 + x): the factor a lesson's fused
// score is multiplied by. x in [0, 1] is a Thompson draw or the belief mean;
// the (0.5, 1.5) temper keeps a lesson without evidence from dropping a strong
// lexical match to nothing.
func UsefulnessWeight(activation, x float64) float64 {
	return Squash(activation) * (0.5 + clamp(x, 0, 1))
}

// RegretCap is the most regret credit (in full regrets) one deciding session
// gives one lesson: the number of distinct times the engineer corrected that
// session, at least one. correctionTimes are the ms stamps of the session's
// correction results, duplicates allowed. Without the cap one session whose
// work later took many fixes would outweigh every other session of a lesson.
func RegretCap(correctionTimes []int64) int {
	seen := make(map[int64]struct{}, len(correctionTimes))
	for _, t := range correctionTimes {
		seen[t] = struct{}{}
	}
	return max(1, len(seen))
}

// regretShare is one regret event's share: W in [0, RegretMax]. A missing
// (zero) W is a full-strength regret; a negative or NaN one counts nothing.
func regretShare(w, maxShare float64) float64 {
	if w == 0 {
		w = 1
	}
	if !(w > 0) {
		return 0
	}
	return math.Min(w, maxShare)
}
