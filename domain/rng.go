package domain

import (
	"hash/fnv"
	"math"
)

// Seed is a stable 64-bit seed for a (session, lesson) pair: FNV-1a over
// session, a NUL byte and lesson. It never changes between Go versions, so a
// session sees the same draw on every machine and every rebuild.
func Seed(session, lesson string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(session))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(lesson))
	return h.Sum64()
}

// Rng is SplitMix64: a tiny, fast, seedable generator whose whole state is one
// word, so a draw is reproducible from its seed alone.
type Rng struct {
	state uint64
}

// NewRng returns a SplitMix64 generator started at seed.
func NewRng(seed uint64) *Rng { return &Rng{state: seed} }

// Uint64 returns the next 64 random bits.
func (r *Rng) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a uniform value in [0, 1) with 53 random bits.
func (r *Rng) Float64() float64 {
	return float64(r.Uint64()>>11) * (1.0 / (1 << 53))
}

// Intn returns a uniform value in [0, n); n must be positive. It rejects the
// biased tail, so every value is equally likely.
func (r *Rng) Intn(n int) int {
	if n <= 0 {
		panic("domain: Rng.Intn with n <= 0")
	}
	un := uint64(n)
	limit := math.MaxUint64 - math.MaxUint64%un
	for {
		v := r.Uint64()
		if v < limit {
			return int(v % un)
		}
	}
}

// exp1 is one Exp(1) variate: −ln U with U in (0, 1].
func (r *Rng) exp1() float64 {
	return -math.Log(1 - r.Float64())
}

// RoundSeeded rounds x to an integer at random, without bias: ⌊x⌋ + 1 with
// probability frac(x), drawn from seed. An integer x is returned as is without
// a draw, so a lesson without fractional counts samples exactly as before.
// A non-finite x rounds to 0.
func RoundSeeded(x float64, seed uint64) int {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	f := math.Floor(x)
	frac := x - f
	if frac == 0 {
		return int(f)
	}
	if NewRng(seed).Float64() < frac {
		return int(f) + 1
	}
	return int(f)
}

// BetaCountMax bounds the Beta parameters SampleBeta sums exponentials for:
// above it both counts are scaled down together, which keeps the cost bounded
// while the shape (mean and spread at that size) barely moves.
const BetaCountMax = 1000

// SampleBeta draws from Beta(a, b) for integer a, b (each read as at least
// 1): X / (X + Y) with X ~ Gamma(a) and Y ~ Gamma(b), each a sum of Exp(1)
// variates. Counts above BetaCountMax are scaled down proportionally.
func SampleBeta(a, b int, r *Rng) float64 {
	a, b = max(a, 1), max(b, 1)
	if m := max(a, b); m > BetaCountMax {
		scale := float64(BetaCountMax) / float64(m)
		a = max(1, int(math.Round(float64(a)*scale)))
		b = max(1, int(math.Round(float64(b)*scale)))
	}
	var x, y float64
	for i := 0; i < a; i++ {
		x += r.exp1()
	}
	for i := 0; i < b; i++ {
		y += r.exp1()
	}
	return x / (x + y)
}

// Draw is a Thompson draw from Beta(alpha, beta) for one seed: both parameters
// are randomised-rounded (RoundSeeded, on seeds derived from seed) and the
// Beta sample runs on an Rng started at seed, so integer parameters draw
// exactly as an integer Beta would.
func Draw(alpha, beta float64, seed uint64) float64 {
	a := RoundSeeded(alpha, mixSeed(seed, 1))
	b := RoundSeeded(beta, mixSeed(seed, 2))
	return SampleBeta(a, b, NewRng(seed))
}

// mixSeed derives an independent seed for a sub-draw.
func mixSeed(seed, k uint64) uint64 {
	r := Rng{state: seed ^ (k * 0xd1b54a32d192ed03)}
	return r.Uint64()
}

// Shuffle returns a copy of items in a deterministic order for session
// (Fisher-Yates on an Rng seeded by the session): the order questions are
// shown in, so that no lesson always sits first.
func Shuffle[T any](items []T, session string) []T {
	out := append([]T(nil), items...)
	r := NewRng(Seed(session, ""))
	for i := len(out) - 1; i > 0; i-- {
		j := r.Intn(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}
