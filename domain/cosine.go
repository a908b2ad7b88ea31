package domain

import "math"

// Cosine is the cosine similarity of a and b, clamped to [-1, 1].
//
// It is total: a zero-magnitude vector, or one holding a NaN or an infinite
// component, yields 0 (no usable direction, so no demonstrable duplication),
// never NaN. Vectors of different lengths are compared over the shorter one.
// The clamp is needed because subnormal magnitudes underflow when squared and
// push the unclamped ratio just above 1.
func Cosine[T ~float32 | ~float64](a, b []T) float64 {
	n := min(len(a), len(b))
	var dot, na, nb float64
	for i := 0; i < n; i++ {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 || math.IsNaN(dot) || math.IsInf(dot, 0) ||
		math.IsNaN(na) || math.IsInf(na, 0) || math.IsNaN(nb) || math.IsInf(nb, 0) {
		return 0
	}
	s := dot / (math.Sqrt(na) * math.Sqrt(nb))
	if math.IsNaN(s) {
		return 0
	}
	return clamp(s, -1, 1)
}

// CosineDistance is 1 - Cosine(a, b), in [0, 2].
func CosineDistance[T ~float32 | ~float64](a, b []T) float64 { return 1 - Cosine(a, b) }

// CompensatedSum adds values with Neumaier's compensated summation, so the
// retention weight profiles sum to exactly 1 where naive addition drifts to
// 0.9999999999999999.
func CompensatedSum(values []float64) float64 {
	var sum, c float64
	for _, v := range values {
		t := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			c += (sum - t) + v
		} else {
			c += (v - t) + sum
		}
		sum = t
	}
	return sum + c
}

func clamp(x, lo, hi float64) float64 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}
