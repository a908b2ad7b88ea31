package domain

import "math"

// The default judge (docs/design.md, Asking and judging): what borg records for an asked lesson
// when no external judge is configured. An agent can assert anything, so its
// declaration never counts as a change by itself; borg reads the work, and
// weighs what it reads by how often the same reading fires on placebos.

// Declaration is what the agent said about one asked lesson.
type Declaration int

// The declarations Declared reads.
const (
	DeclaredNone    Declaration = iota // no "<id>: applies|skip"
	DeclaredApplies                    // "<id>: applies"
	DeclaredSkip                       // "<id>: skip"
)

// DeclarationIn is the agent's declaration of lesson id in message.
func DeclarationIn(message, id string) Declaration {
	applies, ok := Declared(message, id)
	switch {
	case !ok:
		return DeclaredNone
	case applies:
		return DeclaredApplies
	}
	return DeclaredSkip
}

// Observation is what borg itself sees of one asked lesson at the verdict.
type Observation struct {
	Declared Declaration
	// Words: at least NovelWords of the lesson's distinctive words are new
	// in the work since the ask (the word rule).
	Words bool
}

// Acted is the default judge's reading: the work since the ask carries the
// lesson's words and the agent did not decline the lesson. "applies" alone
// is no evidence (an agent may say it of everything); "skip" is believed,
// since declining costs an agent nothing it could gain by lying.
func (o Observation) Acted() bool { return o.Words && o.Declared != DeclaredSkip }

// JudgeTally counts, on one machine, how often the default judge read
// "acted" on real asks and on placebos (lessons of low relevance asked as a
// control, which no agent has reason to act on). The placebo rate is the
// judge's false-positive rate in the field.
type JudgeTally struct {
	Asks      int `json:"asks"`
	AsksActed int `json:"asks_acted"`
	Placebos  int `json:"placebos"`
	// PlacebosActed are the placebos the judge read as acted on.
	PlacebosActed int `json:"placebos_acted"`
}

// The tally's prior, from the seed's evaluation of the word rule: 55% of
// real asks read as changed against 38% of a mismatched control, so chance
// explains about 0.38/0.55 of the readings. Until a machine has placebos of
// its own, its placebo rate is taken as that share of its own ask rate, as
// if from JudgePriorN placebos; its placebos take over as they accumulate.
// (A prior on the placebo rate alone would be compared with an ask rate the
// machine's own asks have long since replaced.)
const (
	JudgePriorAskRate     = 0.55
	JudgePriorPlaceboRate = 0.38
	JudgePriorN           = 10
)

// MinCredit is the least credit a changed result is written with: a w of 0
// would read as a full change (Credit), so a judge that can vouch for
// nothing still writes a w above it.
const MinCredit = 0.001

// Add counts one reading: on a placebo or on a real ask.
func (t *JudgeTally) Add(placebo, acted bool) {
	switch {
	case placebo:
		t.Placebos++
		if acted {
			t.PlacebosActed++
		}
	default:
		t.Asks++
		if acted {
			t.AsksActed++
		}
	}
}

// Rates are the smoothed rates of "acted" on real asks and on placebos.
func (t JudgeTally) Rates() (ask, placebo float64) {
	ask = (float64(t.AsksActed) + JudgePriorAskRate*JudgePriorN) / (float64(t.Asks) + JudgePriorN)
	prior := ask * JudgePriorPlaceboRate / JudgePriorAskRate
	placebo = (float64(t.PlacebosActed) + prior*JudgePriorN) / (float64(t.Placebos) + JudgePriorN)
	return ask, placebo
}

// Credit is the share of "acted" readings on real asks that the placebos
// cannot explain: 1 − placebo rate / ask rate, the attributable fraction of
// epidemiology, in [0, 1]. It assumes a real ask the agent did not act on
// reads as acted on about as often as a placebo does; a real ask closer to
// the work shares more of its words, so the credit is an estimate, not a
// bound. An agent that says "applies" to everything (and so never declines
// a placebo) and a word rule that fires on shared vocabulary both raise the
// placebo rate with the ask rate, and the credit falls toward 0.
func (t JudgeTally) Credit() float64 {
	ask, placebo := t.Rates()
	if !(ask > 0) {
		return 0
	}
	return clamp(1-placebo/ask, 0, 1)
}

// DefaultVerdict is the default judge's result for one asked lesson and the
// w its event carries: ignored when the agent declined the lesson or the
// work since the ask does not carry it; otherwise changed, with w the
// tally's credit (rounded to thousandths, at least MinCredit). Ranking reads
// the change as the reading it is (every lesson's readings share the same
// chance rate, so they order lessons as the true rates would); every claim
// that a lesson is proven (consolidation, and so early delivery) counts only
// the credit.
func DefaultVerdict(o Observation, credit float64) (EventKind, float64) {
	if !o.Acted() {
		return KindIgnored, 0
	}
	return KindChanged, CreditW(credit)
}

// CreditW is the w a changed result with credit c is written with: c
// rounded to thousandths, within [MinCredit, 1].
func CreditW(c float64) float64 {
	if !(c > 0) {
		return MinCredit
	}
	return clamp(math.Round(c*1000)/1000, MinCredit, 1)
}
