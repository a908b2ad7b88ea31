package sim

import "github.com/borg-memory/borg/domain"

// Reaction model constants: the probabilities the hidden truth turns into
// events with. They describe the simulated team, not borg; they are fixed
// before any run and never tuned to a result.
const (
	// judgeNoise is the chance the judge reads an acted-on lesson as ignored
	// or an ignored one as changed.
	judgeNoise = 0.05
	// Whether the agent acts on an asked lesson: base + slope × relevance,
	// by what following it would do, for a lesson that bears on the task at
	// all; a lesson with no relevance gives the agent nothing to act on (only
	// the judge's noise reads it as changed).
	applyGoodBase, applyGoodSlope       = 0.15, 0.75 // helps
	applyNeutralBase, applyNeutralSlope = 0.05, 0.35 // changes nothing that matters
	applyBadBase, applyBadSlope         = 0.10, 0.60 // harms: plausible advice gets followed
	// When a harmful lesson was followed: the engineer corrects the point,
	// or vetoes the lesson (borg no), or it slips through and a later fix
	// regrets it.
	correctP, vetoP, regretP = 0.55, 0.15, 0.60
	// regretDelayMax bounds how many sessions later the fix lands.
	regretDelayMax = 10
	// Chance the session's tests go green after the ask: a base, raised by
	// a followed helpful lesson and lowered by a followed harmful one.
	testedBase, testedGood, testedBad = 0.25, 0.35, 0.15
)

// reaction is what one asked lesson's session produced.
type reaction struct {
	result      domain.EventKind // changed, ignored, corrected or vetoed; "" when censored
	tested      bool
	regretDelay int // > 0: a regret lands this many sessions later
}

// draws are the uniform numbers one (session, lesson) pair reacts with,
// shared by every policy that asks that lesson in that session (common
// random numbers: a policy differs from another by its choices, never by
// its luck).
type draws [6]float64

func drawsFor(seed uint64, session, lesson string) draws {
	r := domain.NewRng(seed ^ domain.Seed(session, lesson))
	var d draws
	for i := range d {
		d[i] = r.Float64()
	}
	return d
}

// react draws the session's reaction to asking l for t.
func react(l *simLesson, t task, d draws) reaction {
	rel, eff := relevance(l, t), effectIn(l, t.repo)
	var base, slope float64
	switch {
	case eff > 0:
		base, slope = applyGoodBase, applyGoodSlope
	case eff < 0:
		base, slope = applyBadBase, applyBadSlope
	default:
		base, slope = applyNeutralBase, applyNeutralSlope
	}
	applied := rel > 0 && d[0] < base+slope*rel
	var out reaction
	pTested := testedBase
	switch {
	case !applied:
		out.result = domain.KindIgnored
		if d[1] < judgeNoise {
			out.result = domain.KindChanged
		}
	case eff < 0:
		pTested -= testedBad
		switch {
		case d[3] < correctP:
			out.result = domain.KindCorrected
		case d[3] < correctP+vetoP:
			out.result = domain.KindVetoed
		default:
			out.result = domain.KindChanged
			if d[4] < regretP {
				out.regretDelay = 1 + int(d[5]*regretDelayMax)
			}
		}
	default:
		if eff > 0 {
			pTested += testedGood
		}
		out.result = domain.KindChanged
		if d[1] < judgeNoise {
			out.result = domain.KindIgnored
		}
	}
	out.tested = d[2] < pTested
	return out
}

// sessionDraws are the per-session uniform numbers: whether the session
// reports at all, and whether it also asks a placebo.
func sessionDraws(seed uint64, session string) (censored, placebo, placeboID float64) {
	r := domain.NewRng(seed ^ domain.Seed(session, ""))
	return r.Float64(), r.Float64(), r.Float64()
}
