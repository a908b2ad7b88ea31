package domain

import (
	"math"
	"sort"
)

// Fusion constants (memhtml-domain ranking.ts).
const (
	// RRFK is reciprocal-rank fusion's rank offset, the published default.
	RRFK = 60
	// MMRLambda is maximal marginal relevance's relevance/diversity split.
	MMRLambda = 0.5
	// ReinforceCooldownS is the seconds an access bump waits before it counts again.
	ReinforceCooldownS = 900
)

// ArmHit is one arm's hit: Rank is 1-based within that arm's own list.
type ArmHit struct {
	Path string
	Rank int
}

// RRFScore is one arm's contribution weight / (rank + k): strictly decreasing
// in rank and linear in weight, so a weight-0 arm contributes exactly 0.
func RRFScore(rank int, weight, k float64) float64 {
	return weight / (float64(rank) + k)
}

// RRFContribution is RRFScore as an option: ok is false for a zero (or
// non-finite, or negative) weight or a rank below 1, so a disabled arm is
// absent from the fold rather than a neutral term.
func RRFContribution(rank int, weight, k float64) (float64, bool) {
	if rank < 1 || !(weight > 0) || math.IsInf(weight, 0) {
		return 0, false
	}
	return RRFScore(rank, weight, k), true
}

// FuseArms sums each arm's RRF contributions into a path → score map.
// arms[i] pairs with weights[i]; an arm without a weight contributes nothing.
// The result does not depend on the order of the arms, and a path listed twice
// in one arm accumulates both contributions.
func FuseArms(arms [][]ArmHit, weights []float64, k float64) map[string]float64 {
	// Each path's contributions are summed in a canonical (sorted) order
	// with compensated summation, so the result is bit-identical whatever
	// the order of the arms: floating-point addition is not associative.
	parts := make(map[string][]float64)
	for i, arm := range arms {
		if i >= len(weights) {
			break
		}
		for _, h := range arm {
			if c, ok := RRFContribution(h.Rank, weights[i], k); ok {
				parts[h.Path] = append(parts[h.Path], c)
			}
		}
	}
	out := make(map[string]float64, len(parts))
	for p, cs := range parts {
		if len(cs) == 1 {
			out[p] = cs[0]
			continue
		}
		sort.Float64s(cs)
		out[p] = CompensatedSum(cs)
	}
	return out
}

// Scored is one path with its fused score.
type Scored struct {
	Path  string
	Score float64
}

// RankFused orders fused scores best first, ties broken by path ascending, so
// the order is total and reproducible. A NaN score ranks last.
func RankFused(fused map[string]float64) []Scored {
	out := make([]Scored, 0, len(fused))
	for p, s := range fused {
		out = append(out, Scored{p, s})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Score, out[j].Score
		if na, nb := math.IsNaN(a), math.IsNaN(b); na || nb {
			if na != nb {
				return nb
			}
		} else if a != b {
			return a > b
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// FuseLateral folds a graph walk's best-first order into fused as one more
// arm. A path absent from fused enters at its lateral-only contribution.
// With strength non-nil, each path's vote is scaled by strength[path] in
// [0, 1] (the link that reached it; absent counts 0). An empty order or a
// non-positive weight returns the scores unchanged.
func FuseLateral(fused map[string]float64, order []string, strength map[string]float64, weight, k float64) map[string]float64 {
	out := make(map[string]float64, len(fused)+len(order))
	for p, s := range fused {
		out[p] = s
	}
	if len(order) == 0 || !(weight > 0) {
		return out
	}
	for i, p := range order {
		w := weight
		if strength != nil {
			w *= strengthOf(strength[p])
		}
		out[p] += RRFScore(i+1, w, k)
	}
	return out
}
