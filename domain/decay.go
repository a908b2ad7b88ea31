package domain

import "math"

// The fixed-point grid confidence decay runs on, so its boundary claims hold
// exactly rather than within an ulp. (memhtml's outcome EWMA ran on it too;
// borg's outcome score is the Beta belief of usefulness.go, so only the EWMA
// step confidence decay takes is kept.)
const (
	// Scale is 10^4: the grid step is the fourth decimal place, the precision
	// memhtml-confidence is written with.
	Scale = 10_000
	// PosOneFp and NegOneFp are +1.0 and −1.0 on the grid, the bounds ToFp
	// clamps to.
	PosOneFp = Scale
	NegOneFp = -Scale
)

// Decay defaults.
const (
	// DefaultConfidenceFloor is where confidence erodes to and never past: an
	// old uncorroborated claim is weak evidence, not absent evidence, and a
	// claim decayed to 0 would look retracted.
	DefaultConfidenceFloor = 0.2
	// DefaultConfidenceDecayAlpha closes a tenth of the distance to the floor
	// per sleep cycle: confidence erodes over many unreinforced nights rather
	// than collapsing in one.
	DefaultConfidenceDecayAlpha = 0.1
	// ConfidenceCommitDelta is the smallest confidence change worth a commit,
	// so the night's widest commit stays reviewable.
	ConfidenceCommitDelta = 0.005
)

// ToFp puts a float onto the grid, clamped to [−1, 1] and rounded to the
// nearest grid point (halves away from zero); NaN is 0.
func ToFp(value float64) int64 {
	if math.IsNaN(value) {
		return 0
	}
	return int64(math.Round(clamp(value, -1, 1) * Scale))
}

// FromFp is a grid value as the nearest float.
func FromFp(valueFp int64) float64 { return float64(valueFp) / Scale }

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// EWMAStepFp is one EWMA step on the grid: ⌊(α·signal + (Scale−α)·prev) /
// Scale⌋. Floor division composes reproducibly and drifts at most one grid
// step from an unrounded fold. For α in [0, Scale] the result lies between
// prev and signal, so a negative signal never raises the score.
func EWMAStepFp(alphaFp, prevFp, signalFp int64) int64 {
	return floorDiv(alphaFp*signalFp+(Scale-alphaFp)*prevFp, Scale)
}

// DecayConfidenceFp is one confidence-decay step on the grid: an EWMA toward
// the floor, then the minimum with the previous value, so decay never raises
// a claim (one already below the floor stays where an operator put it).
func DecayConfidenceFp(alphaFp, confFp, floorFp int64) int64 {
	return min(confFp, EWMAStepFp(alphaFp, confFp, floorFp))
}

// DecayConfidence is one sleep cycle of confidence decay in the [0, 1] float
// space of memhtml-confidence, on the grid: alpha is the share of the distance
// to floor closed per cycle (callers pass DefaultConfidenceDecayAlpha and
// DefaultConfidenceFloor unless configured). Inputs are clamped to [0, 1].
func DecayConfidence(prev, alpha, floor float64) float64 {
	return FromFp(DecayConfidenceFp(unitFp(alpha), unitFp(prev), unitFp(floor)))
}

// unitFp is ToFp clamped to [0, 1].
func unitFp(x float64) int64 { return max(0, ToFp(x)) }

// IsCommittableConfidenceChange reports whether a decayed confidence differs
// from the stored one by at least ConfidenceCommitDelta, compared on the grid
// so 0.005 itself is exact.
func IsCommittableConfidenceChange(before, after float64) bool {
	d := ToFp(after) - ToFp(before)
	if d < 0 {
		d = -d
	}
	return d >= ToFp(ConfidenceCommitDelta)
}
