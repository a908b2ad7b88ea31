package domain

import "math"

// SignalName names one of the eight retention signals.
type SignalName string

// The eight retention signals.
const (
	SignalRecency            SignalName = "recency"
	SignalAccessFrequency    SignalName = "accessFrequency"
	SignalConfidence         SignalName = "confidence"
	SignalPagerank           SignalName = "pagerank"
	SignalBridgeImportance   SignalName = "bridgeImportance"
	SignalReinforcementCount SignalName = "reinforcementCount"
	SignalContentDensity     SignalName = "contentDensity"
	SignalContestedStatus    SignalName = "contestedStatus"
)

// SignalNames lists the signals in the fixed order every profile keys on.
var SignalNames = [8]SignalName{
	SignalRecency, SignalAccessFrequency, SignalConfidence, SignalPagerank,
	SignalBridgeImportance, SignalReinforcementCount, SignalContentDensity, SignalContestedStatus,
}

// Signals is a full set of normalised signal values, each in [0, 1]. Every
// signal reads "higher is worth keeping": ContestedStatus is 1 for an
// uncontested memory.
type Signals struct {
	Recency            float64 `json:"recency"`
	AccessFrequency    float64 `json:"accessFrequency"`
	Confidence         float64 `json:"confidence"`
	Pagerank           float64 `json:"pagerank"`
	BridgeImportance   float64 `json:"bridgeImportance"`
	ReinforcementCount float64 `json:"reinforcementCount"`
	ContentDensity     float64 `json:"contentDensity"`
	ContestedStatus    float64 `json:"contestedStatus"`
}

// Values returns the signals in SignalNames order.
func (s Signals) Values() [8]float64 {
	return [8]float64{s.Recency, s.AccessFrequency, s.Confidence, s.Pagerank,
		s.BridgeImportance, s.ReinforcementCount, s.ContentDensity, s.ContestedStatus}
}

// WeightProfile holds one coefficient per signal; the eight sum to exactly 1
// under CompensatedSum, which makes the composite a convex combination of
// [0, 1] signals and so itself in [0, 1].
type WeightProfile Signals

// Values returns the weights in SignalNames order.
func (p WeightProfile) Values() [8]float64 { return Signals(p).Values() }

// The weight profiles. The seed names five typed profiles and a default
// without giving their values; these are borg's choices, all in one place:
//
//   - episodic: what happened when. Time is the type's identity, so recency
//     weighs most here (0.30, more than any other signal of any profile).
//   - semantic: facts. Confidence leads; recency barely matters.
//   - procedural: how to do something. A working procedure does not stale,
//     so recency weighs exactly 0; use and reinforcement carry it.
//   - arc: a story across lessons. Its place in the graph (PageRank, bridges)
//     is what makes it worth keeping.
//   - error_pattern: a failure and its fix. Use, reinforcement and being
//     uncontested matter; it stales slowly.
//   - default (every other type): an even-handed spread.
//
// Each profile sums to exactly 1 under CompensatedSum (a test pins it).
var (
	WeightProfiles = map[string]WeightProfile{
		TypeEpisodic: {Recency: 0.30, AccessFrequency: 0.15, Confidence: 0.10, Pagerank: 0.10,
			BridgeImportance: 0.05, ReinforcementCount: 0.10, ContentDensity: 0.10, ContestedStatus: 0.10},
		TypeSemantic: {Recency: 0.05, AccessFrequency: 0.15, Confidence: 0.25, Pagerank: 0.15,
			BridgeImportance: 0.10, ReinforcementCount: 0.15, ContentDensity: 0.10, ContestedStatus: 0.05},
		TypeProcedural: {Recency: 0, AccessFrequency: 0.25, Confidence: 0.20, Pagerank: 0.10,
			BridgeImportance: 0.05, ReinforcementCount: 0.20, ContentDensity: 0.10, ContestedStatus: 0.10},
		TypeArc: {Recency: 0.15, AccessFrequency: 0.10, Confidence: 0.15, Pagerank: 0.20,
			BridgeImportance: 0.15, ReinforcementCount: 0.10, ContentDensity: 0.10, ContestedStatus: 0.05},
		TypeErrorPattern: {Recency: 0.10, AccessFrequency: 0.20, Confidence: 0.15, Pagerank: 0.10,
			BridgeImportance: 0.05, ReinforcementCount: 0.20, ContentDensity: 0.05, ContestedStatus: 0.15},
	}
	// DefaultWeightsProfile is the profile of a type without its own.
	DefaultWeightsProfile = WeightProfile{Recency: 0.15, AccessFrequency: 0.15, Confidence: 0.15, Pagerank: 0.10,
		BridgeImportance: 0.10, ReinforcementCount: 0.15, ContentDensity: 0.10, ContestedStatus: 0.10}
)

// Recency half-lives.
var (
	// HalfLivesDays gives the recency half-life per type; a 0 entry means no
	// time decay (procedural knowledge and tasks do not stale by age).
	HalfLivesDays = map[string]float64{
		TypeEpisodic: 10, TypeSemantic: 90, TypeArc: 30, TypeErrorPattern: 14,
		TypeProcedural: 0, TypeTask: 0,
	}
)

// Retention constants.
const (
	// DefaultHalfLifeDays is the half-life of a type HalfLivesDays lacks.
	DefaultHalfLifeDays = 30
	// LN2 is ln 2, so exp(−LN2·age/halfLife) is exactly 0.5 at the half-life.
	LN2 = math.Ln2
	// KeepThreshold and EvictThreshold are the band edges: keep is above
	// 0.7, evict at or below 0.3, compress between; each edge belongs to the
	// lower band.
	KeepThreshold  = 0.7
	EvictThreshold = 0.3
	// ScorePrecision is the decimal places the composite is rounded to.
	ScorePrecision = 4
)

// The normalisation curves' knobs (the seed names the curves without giving
// them; these are borg's choices). Counts saturate, so one runaway count
// cannot carry a memory alone.
const (
	// AccessSaturation accesses read as a full access-frequency signal; the
	// curve is log1p(n)/log1p(AccessSaturation), so the first few accesses
	// count most.
	AccessSaturation = 50
	// BridgeHalf bridges give a bridge-importance signal of 0.5 (n/(n+half)).
	BridgeHalf = 2
	// ReinforcementHalf inbound supports give 0.5 (n/(n+half)).
	ReinforcementHalf = 3
	// DensityWords body words read as a full content-density signal
	// (log1p(words)/log1p(DensityWords)): a one-line note is thin, a
	// few paragraphs are complete.
	DensityWords = 200
)

// TriageAction is the retention verdict for one memory.
type TriageAction string

// The triage actions.
const (
	TriageKeep     TriageAction = "keep"
	TriageCompress TriageAction = "compress"
	TriageEvict    TriageAction = "evict"
)

// TriageActions lists the actions from best to worst.
var TriageActions = [3]TriageAction{TriageKeep, TriageCompress, TriageEvict}

// RetentionInput holds one memory's raw quantities; ComputeSignals is the one
// place they are normalised. Negative or NaN quantities read as 0.
type RetentionInput struct {
	MemoryType         string
	AgeDays            float64 // since the memory's own last update
	AccessCount        float64
	Confidence         float64 // [0, 1], clamped
	GraphRank          float64 // PageRank in this run's scale
	MaxGraphRank       float64 // this run's maximum PageRank
	BridgeCount        float64
	ReinforcementCount float64 // inbound supports edges
	WordCount          float64
	ContradictionCount float64 // authored contradictions only
}

// RetentionScore is a memory's composite, its band and the signals behind it.
type RetentionScore struct {
	Action  TriageAction `json:"action"`
	Score   float64      `json:"score"`
	Signals Signals      `json:"signals"`
}

// WeightsFor returns the weight profile of a memory type.
func WeightsFor(memoryType string) WeightProfile {
	if p, ok := WeightProfiles[memoryType]; ok {
		return p
	}
	return DefaultWeightsProfile
}

// HalfLifeFor returns a type's recency half-life in days; decays is false for
// a type whose recency never decays.
func HalfLifeFor(memoryType string) (days float64, decays bool) {
	d, ok := HalfLivesDays[memoryType]
	if !ok {
		return DefaultHalfLifeDays, true
	}
	return d, d > 0
}

// nonNeg reads a raw quantity: NaN and negatives are 0.
func nonNeg(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return x
}

// saturate is n/(n+half) in [0, 1).
func saturate(n, half float64) float64 {
	n = nonNeg(n)
	if math.IsInf(n, 1) {
		return 1
	}
	return n / (n + half)
}

// logShare is log1p(n)/log1p(full), capped at 1.
func logShare(n, full float64) float64 {
	return math.Min(1, math.Log1p(nonNeg(n))/math.Log1p(full))
}

// ComputeSignals normalises the raw inputs into [0, 1] signals:
//
//   - recency: exp(−LN2·age/halfLife) for the type's half-life, 1 without
//     decay (exactly 0.5 at the half-life);
//   - accessFrequency: log1p(n)/log1p(AccessSaturation), capped at 1;
//   - confidence: clamped to [0, 1];
//   - pagerank: graphRank/maxGraphRank, clamped (0 when the maximum is not
//     positive);
//   - bridgeImportance: n/(n+BridgeHalf);
//   - reinforcementCount: n/(n+ReinforcementHalf);
//   - contentDensity: log1p(words)/log1p(DensityWords), capped at 1;
//   - contestedStatus: 1/(1+contradictions): 1 uncontested, 0.5 at one.
func ComputeSignals(in RetentionInput) Signals {
	var s Signals
	if hl, decays := HalfLifeFor(in.MemoryType); decays {
		s.Recency = math.Exp(-LN2 * nonNeg(in.AgeDays) / hl)
	} else {
		s.Recency = 1
	}
	s.AccessFrequency = logShare(in.AccessCount, AccessSaturation)
	s.Confidence = clamp(nonNeg(in.Confidence), 0, 1)
	if top := nonNeg(in.MaxGraphRank); top > 0 && !math.IsInf(top, 1) {
		s.Pagerank = clamp(nonNeg(in.GraphRank)/top, 0, 1)
	}
	s.BridgeImportance = saturate(in.BridgeCount, BridgeHalf)
	s.ReinforcementCount = saturate(in.ReinforcementCount, ReinforcementHalf)
	s.ContentDensity = logShare(in.WordCount, DensityWords)
	s.ContestedStatus = 1 - saturate(in.ContradictionCount, 1)
	return s
}

// roundScore rounds to ScorePrecision decimal places.
func roundScore(x float64) float64 {
	const p = 1e4 // 10^ScorePrecision
	return math.Round(x*p) / p
}

// CompositeScore is the profile-weighted sum of the signals under
// compensated summation, clamped to [0, 1] and rounded to ScorePrecision
// places. A NaN signal counts 0.
func CompositeScore(s Signals, p WeightProfile) float64 {
	sv, wv := s.Values(), p.Values()
	var terms [8]float64
	for i := range sv {
		v := sv[i]
		if math.IsNaN(v) {
			v = 0
		}
		terms[i] = wv[i] * clamp(v, 0, 1)
	}
	return roundScore(clamp(CompensatedSum(terms[:]), 0, 1))
}

// BandFor is the band a composite falls in: keep above KeepThreshold, evict
// at or below EvictThreshold, compress between. Exactly 0.7 compresses and
// exactly 0.3 evicts, so the bands partition [0, 1]; a NaN score, which no
// scorer here produces, compresses (neither kept as good nor destroyed).
func BandFor(score float64) TriageAction {
	switch {
	case score > KeepThreshold:
		return TriageKeep
	case score <= EvictThreshold:
		return TriageEvict
	}
	return TriageCompress
}

// ScoreRetention scores one memory: normalise, weight by its type's profile,
// band the composite.
func ScoreRetention(in RetentionInput) RetentionScore {
	s := ComputeSignals(in)
	score := CompositeScore(s, WeightsFor(in.MemoryType))
	return RetentionScore{Action: BandFor(score), Score: score, Signals: s}
}

// The reprieve gate's constants.
const (
	// ReprieveFloor: a TTL-passed memory scoring at least this (under the
	// reprieve cap) is extended instead of archived.
	ReprieveFloor = 0.5
	// ReprieveDays is how far a reprieve pushes memhtml-valid-until.
	ReprieveDays = 14
	// MaxReprieves is how many reprieves a memory may earn; 0 is the kill
	// switch that restores pure-age TTL.
	MaxReprieves = 3
	// SalienceDecayRate is the recency term's decay per hour.
	SalienceDecayRate = 0.01
	// The four coefficients: they sum to 1, but the score is not convex
	// because the log1p(access) term is unbounded.
	ReprieveWImportance = 0.4
	ReprieveWAccess     = 0.3
	ReprieveWOutcome    = 0.2
	ReprieveWRecency    = 0.1
)

// ReprieveInput is what the reprieve score reads.
type ReprieveInput struct {
	Importance       float64 // 1..10, clamped; divided by 10
	AccessCount      float64 // lifetime accesses
	OutcomeScore     float64 // [-1, 1]; a negative value contributes 0
	HoursSinceAccess float64 // non-negative
	DecayRate        float64 // per hour; 0 means SalienceDecayRate
}

// ReprieveScore is 0.4·importance/10 + 0.3·log1p(accesses) +
// 0.2·max(outcome, 0) + 0.1·exp(−rate·hours). Every term is non-negative, so
// the score is always above 0 and monotone in each input; it can exceed 1. A
// negative outcome contributes exactly 0: the outcome EWMA already punished
// it once.
func ReprieveScore(in ReprieveInput) float64 {
	imp := in.Importance
	if math.IsNaN(imp) {
		imp = 1
	}
	imp = clamp(imp, 1, 10) / 10
	rate := in.DecayRate
	if rate == 0 || math.IsNaN(rate) {
		rate = SalienceDecayRate
	}
	rate = nonNeg(rate)
	outcome := clamp(nonNeg(in.OutcomeScore), 0, 1)
	access := math.Log1p(nonNeg(in.AccessCount))
	recency := math.Exp(-rate * nonNeg(in.HoursSinceAccess))
	return ReprieveWImportance*imp + ReprieveWAccess*access + ReprieveWOutcome*outcome + ReprieveWRecency*recency
}

// ShouldReprieve is the bounded reprieve gate, without side effects: true
// when score is at least floor and the memory has been reprieved fewer than
// maxReprieves times (0 forces every TTL-passed memory to expire). Callers
// pass ReprieveFloor and MaxReprieves unless configured otherwise.
func ShouldReprieve(score float64, reprieveCount int, floor float64, maxReprieves int) bool {
	return score >= floor && reprieveCount < maxReprieves
}
