package domain

import "math"

// MMRCandidate is a candidate for diversification: Score is its fused
// relevance, Vector its embedding or nil when it has none yet.
type MMRCandidate struct {
	Path   string
	Score  float64
	Vector []float32
}

// ApplyMMR greedily reorders candidates by
// lambda·relevance − (1−lambda)·max similarity to the already selected, and
// returns at most limit of them. At lambda ≥ 1 it returns the input order
// truncated. A vectorless candidate takes penalty 0. Each round folds only the
// newest selection into a per-candidate cached maximum: O(limit·n) cosines.
func ApplyMMR(candidates []MMRCandidate, limit int, lambda float64) []MMRCandidate {
	if limit <= 0 || len(candidates) == 0 {
		return nil
	}
	if limit > len(candidates) {
		limit = len(candidates)
	}
	if lambda >= 1 {
		return append([]MMRCandidate(nil), candidates[:limit]...)
	}
	n := len(candidates)
	taken := make([]bool, n)
	maxSim := make([]float64, n)
	out := make([]MMRCandidate, 0, limit)
	for len(out) < limit {
		best, bestVal := -1, math.Inf(-1)
		for i, c := range candidates {
			if taken[i] {
				continue
			}
			v := lambda*c.Score - (1-lambda)*maxSim[i]
			if best < 0 || v > bestVal {
				best, bestVal = i, v
			}
		}
		taken[best] = true
		sel := candidates[best]
		out = append(out, sel)
		if sel.Vector == nil {
			continue
		}
		for i, c := range candidates {
			if taken[i] || c.Vector == nil {
				continue
			}
			if s := Cosine(c.Vector, sel.Vector); s > maxSim[i] {
				maxSim[i] = s
			}
		}
	}
	return out
}
