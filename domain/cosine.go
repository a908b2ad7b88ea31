package domain

import "math"

// Cosine is the cosine similarity of a and b, clamped to [-1, 1].
//
// It is total: a zero-magnitude vector, or one holding a NaN or an infinite
// component, yields 0 (no usable direction, so no demonstrable duplication),
// never NaN. Vectors of different lengths are compared over the shorter one.
// The clamp is needed because subnormal magnitudes underflow when squared and
// push the unclamped ratio just above 1; such tiny (and overflowing huge)
// magnitudes are also rescaled by the largest component first, so they keep
// their direction instead of reading as zero.
func Cosine[T ~float32 | ~float64](a, b []T) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	return cosineOf(a, b, dot, na, nb)
}

// dot is the dot product of equal-length a and b, summed in Cosine's order,
// so TopNeighborPairs' hoisted magnitudes give exactly Cosine's bits. (A
// single pass with one chain per sum measured fastest: four-lane unrolling
// bought nothing on 256-dim float32 vectors and three passes cost double.)
func dot[T ~float32 | ~float64](a, b []T) float64 {
	b = b[:len(a)]
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// sq is a's squared magnitude in Cosine's order.
func sq[T ~float32 | ~float64](a []T) float64 { return dot(a, a) }

// safeSquares bounds the squared magnitudes whose square roots and product
// are exact enough: below it squares of subnormal components have lost their
// precision, above it the product may overflow.
const (
	minSafeSquares = 0x1p-900
	maxSafeSquares = 0x1p+900
)

// cosineOf finishes a cosine from its three sums, falling back to a rescaled
// recomputation when the magnitudes are too small or too large to trust.
func cosineOf[T ~float32 | ~float64](a, b []T, dot, na, nb float64) float64 {
	if math.IsNaN(dot) || math.IsNaN(na) || math.IsNaN(nb) {
		return 0
	}
	if na < minSafeSquares || nb < minSafeSquares || na > maxSafeSquares || nb > maxSafeSquares {
		return cosineScaled(a, b)
	}
	return clamp(dot/(math.Sqrt(na)*math.Sqrt(nb)), -1, 1)
}

// cosineScaled recomputes a cosine with each vector divided by its largest
// magnitude, so subnormal or huge components keep their direction.
func cosineScaled[T ~float32 | ~float64](a, b []T) float64 {
	sa, sb := maxAbs(a), maxAbs(b)
	if sa == 0 || sb == 0 || math.IsInf(sa, 0) || math.IsInf(sb, 0) || math.IsNaN(sa) || math.IsNaN(sb) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i])/sa, float64(b[i])/sb
		dot += x * y
		na += x * x
		nb += y * y
	}
	s := dot / (math.Sqrt(na) * math.Sqrt(nb))
	if math.IsNaN(s) {
		return 0
	}
	return clamp(s, -1, 1)
}

func maxAbs[T ~float32 | ~float64](v []T) float64 {
	var m float64
	for _, x := range v {
		f := math.Abs(float64(x))
		if f > m || math.IsNaN(f) {
			m = f
			if math.IsNaN(f) {
				return f
			}
		}
	}
	return m
}

// CompensatedSum adds values with Neumaier's compensated summation, so the
// retention weight profiles sum to exactly 1 where naive addition drifts to
// 0.9999999999999999. An infinite or NaN value makes the plain sum the
// answer (the compensation would turn it into NaN).
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
	if math.IsInf(sum, 0) || math.IsNaN(sum) {
		var plain float64
		for _, v := range values {
			plain += v
		}
		return plain
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
