package domain

import (
	"math"
	"testing"
)

func TestCosine(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	sub := math.SmallestNonzeroFloat64
	tests := []struct {
		name string
		a, b []float64
		want float64
	}{
		{"same direction", []float64{1, 2, 3}, []float64{2, 4, 6}, 1},
		{"opposite", []float64{1, 0}, []float64{-1, 0}, -1},
		{"orthogonal", []float64{1, 0}, []float64{0, 1}, 0},
		{"zero vector", []float64{0, 0}, []float64{1, 1}, 0},
		{"NaN component", []float64{nan, 1}, []float64{1, 1}, 0},
		{"infinite component", []float64{inf, 1}, []float64{1, 1}, 0},
		{"empty", nil, nil, 0},
		{"shorter walked", []float64{1, 0, 5}, []float64{1, 0}, 1},
		{"subnormal same direction", []float64{sub, sub}, []float64{sub, sub}, 1},
		{"huge", []float64{1e300, 1e300}, []float64{1e300, 0}, 1 / math.Sqrt2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cosine(tt.a, tt.b)
			if math.Abs(got-tt.want) > 1e-12 || got > 1 || got < -1 {
				t.Fatalf("Cosine = %v, want %v", got, tt.want)
			}
		})
	}
	// Subnormal float64 magnitudes whose squares underflow stay at most 1.
	a := []float64{3e-162, 4e-162, 1e-170}
	if c := Cosine(a, a); c > 1 || c < 0.999999 {
		t.Fatalf("subnormal self-cosine %v", c)
	}
	f := []float32{1e-40, 2e-40}
	if c := Cosine(f, f); c > 1 {
		t.Fatalf("float32 subnormal self-cosine %v", c)
	}
}

func TestCompensatedSum(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"tenths", []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1},
		{"cancellation", []float64{1, 1e100, 1, -1e100}, 2},
		{"infinity", []float64{1, math.Inf(1)}, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompensatedSum(tt.in); got != tt.want {
				t.Fatalf("CompensatedSum = %v, want %v", got, tt.want)
			}
		})
	}
	if !math.IsNaN(CompensatedSum([]float64{math.Inf(1), math.Inf(-1)})) {
		t.Fatal("Inf − Inf is NaN")
	}
}

func FuzzCosine(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
	f.Add(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
	f.Add(math.SmallestNonzeroFloat64, 1e-310, 0.0, 1e-320, 5e-324, 0.0)
	f.Add(math.NaN(), 1.0, 1.0, math.Inf(1), 1.0, 1.0)
	f.Add(1e308, -1e308, 1e308, 1e308, 1e308, -1e308)
	f.Fuzz(func(t *testing.T, a0, a1, a2, b0, b1, b2 float64) {
		a, b := []float64{a0, a1, a2}, []float64{b0, b1, b2}
		c := Cosine(a, b)
		if math.IsNaN(c) || c > 1 || c < -1 {
			t.Fatalf("Cosine(%v, %v) = %v", a, b, c)
		}
		if Cosine(b, a) != c {
			t.Fatalf("not symmetric")
		}
		a32 := []float32{float32(a0), float32(a1), float32(a2)}
		b32 := []float32{float32(b0), float32(b1), float32(b2)}
		if c32 := Cosine(a32, b32); math.IsNaN(c32) || c32 > 1 || c32 < -1 {
			t.Fatalf("float32 Cosine = %v", c32)
		}
		kv := []KeyedVector{{"a", a32}, {"b", b32}}
		for _, p := range TopNeighborPairs(kv, NeighborOptions{Floor: -1}) {
			if math.Float64bits(p.Sim) != math.Float64bits(Cosine(a32, b32)) {
				t.Fatalf("neighbour sim %v, Cosine %v", p.Sim, Cosine(a32, b32))
			}
		}
	})
}
