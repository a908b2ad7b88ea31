package sim

import "github.com/borg-memory/borg/domain"

// Reaction model constants: the probabilities the hidden truth turns into
// events with. They describe the simulated team, not borg; they are fixed
// before any run and never tuned to a result.
const (
	// Whether the agent acts on an asked lesson: base + slope × relevance,
	// by what following it would do, for a lesson that bears on the task at
	// all; a lesson with no relevance gives the agent nothing to act on.
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

	// perfectNoise is the perfect judge's error (JudgePerfect): the chance it
	// reads an acted-on lesson as ignored or an ignored one as changed.
	perfectNoise = 0.05

	// What the default judge sees (JudgeDefault). The agent's declaration:
	// having acted, it says "applies" (else nothing); not having acted, the
	// over-declaring agent still says "applies" now and then, "skip" or
	// nothing otherwise. The yes-sayer says "applies" of everything.
	declareActed       = 0.9
	overDeclareApplies = 0.3
	overDeclareSkip    = 0.5
	// The word rule: the lesson's distinctive words are new in the work
	// since the ask. Having acted, the work usually carries them; not having
	// acted, they turn up by chance at the rate the seed measured on a
	// mismatched control (38%), and more often the closer the lesson is to
	// the task (shared vocabulary).
	wordsActed, wordsChance, wordsTopic = 0.85, 0.38, 0.15
)

// Judges (Options.Judge).
const (
	// JudgeDefault is the product's judge without BORG_JUDGE: the agent's
	// declaration and the word rule, credited by the placebo tally
	// (domain.DefaultVerdict).
	JudgeDefault = "default"
	// JudgePerfect reads the hidden truth with perfectNoise: an upper bound.
	JudgePerfect = "perfect"
)

// Agents (Options.Agent): how the agent declares what it did.
const (
	AgentOverDeclaring = "over-declaring"
	AgentYesSayer      = "yes-sayer"
)

// reaction is what one asked lesson's session produced.
type reaction struct {
	// result is the engineer's own verdict when there is one (corrected,
	// vetoed); otherwise the judge's (changed, ignored, unclear).
	result      domain.EventKind
	w           float64 // a changed result's credit (JudgeDefault)
	acted       bool    // the judge's reading, JudgeDefault only
	tested      bool
	regretDelay int // > 0: a regret lands this many sessions later
}

// draws are the uniform numbers one (session, lesson) pair reacts with,
// shared by every policy that asks that lesson in that session (common
// random numbers: a policy differs from another by its choices, never by
// its luck).
type draws [8]float64

func drawsFor(seed uint64, session, lesson string) draws {
	r := domain.NewRng(seed ^ domain.Seed(session, lesson))
	var d draws
	for i := range d {
		d[i] = r.Float64()
	}
	return d
}

// declare draws the agent's declaration of a lesson it acted on or not.
func declare(agent string, acted bool, u float64) domain.Declaration {
	switch {
	case agent == AgentYesSayer:
		return domain.DeclaredApplies
	case acted:
		if u < declareActed {
			return domain.DeclaredApplies
		}
	case u < overDeclareApplies:
		return domain.DeclaredApplies
	case u < overDeclareApplies+overDeclareSkip:
		return domain.DeclaredSkip
	}
	return domain.DeclaredNone
}

// observe draws what the default judge sees of a lesson of relevance rel
// the agent acted on or not.
func observe(agent string, acted bool, rel float64, uDeclare, uWords float64) domain.Observation {
	p := wordsChance + wordsTopic*rel
	if acted {
		p = wordsActed
	}
	return domain.Observation{Declared: declare(agent, acted, uDeclare), Words: uWords < p}
}

// judgeCtx is how a session's verdicts are read: the judge, the agent and,
// for the default judge, the credit of the engineer's machine's tally.
type judgeCtx struct {
	judge, agent string
	credit       float64
}

// react draws the session's reaction to asking l for t.
func react(l *simLesson, t task, d draws, jc judgeCtx) reaction {
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
	case applied && eff < 0:
		pTested -= testedBad
	case applied && eff > 0:
		pTested += testedGood
	}
	out.tested = d[2] < pTested
	if applied && eff < 0 {
		switch {
		case d[3] < correctP:
			out.result = domain.KindCorrected
			return out
		case d[3] < correctP+vetoP:
			out.result = domain.KindVetoed
			return out
		case d[4] < regretP:
			out.regretDelay = 1 + int(d[5]*regretDelayMax)
		}
	}
	if jc.judge == JudgePerfect {
		out.result = domain.KindIgnored
		if applied != (d[1] < perfectNoise) {
			out.result = domain.KindChanged
		}
		return out
	}
	obs := observe(jc.agent, applied, rel, d[6], d[7])
	out.acted = obs.Acted()
	out.result, out.w = domain.DefaultVerdict(obs, jc.credit)
	return out
}

// sessionDraws are the per-session uniform numbers: whether the session
// reports at all, whether it also asks a placebo, which one, and what the
// agent declares of it and whether its words turn up in the work.
type sessionDraw struct {
	censored, placebo, placeboID, placeboDeclare, placeboWords float64
}

func sessionDraws(seed uint64, session string) sessionDraw {
	r := domain.NewRng(seed ^ domain.Seed(session, ""))
	return sessionDraw{r.Float64(), r.Float64(), r.Float64(), r.Float64(), r.Float64()}
}
