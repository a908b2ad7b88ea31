package domain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/borg-memory/borg/scripts/benchtest"
)

func TestTopNeighborPairs(t *testing.T) {
	vs := []KeyedVector{
		{"a", []float32{1, 0, 0}},
		{"b", []float32{0.9, 0.1, 0}},
		{"c", []float32{0, 1, 0}},
		{"d", []float32{0.8, 0.3, 0.1}},
		{"n", []float32{float32(math.NaN()), 1, 0}},
		{"a", []float32{0, 0, 1}}, // repeated key: the first vector stays
	}
	sim := func(x, y int) float64 { return Cosine(vs[x].Vec, vs[y].Vec) }
	tests := []struct {
		name string
		opts NeighborOptions
		want []NeighborPair
	}{
		{"per source top one", NeighborOptions{Floor: 0.5, PerSourceK: 1}, []NeighborPair{
			{"a", "b", sim(0, 1)}, {"b", "a", sim(0, 1)}, {"d", "b", sim(1, 3)}}},
		{"limit after ordering", NeighborOptions{Floor: 0.5, PerSourceK: 1, Limit: 2}, []NeighborPair{
			{"a", "b", sim(0, 1)}, {"b", "a", sim(0, 1)}}},
		{"high floor", NeighborOptions{Floor: 0.999}, nil},
		{"floor is inclusive", NeighborOptions{Floor: sim(0, 1), PerSourceK: 5}, []NeighborPair{
			{"a", "b", sim(0, 1)}, {"b", "a", sim(0, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TopNeighborPairs(vs, tt.opts)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("TopNeighborPairs = %v, want %v", got, tt.want)
			}
		})
	}
	for _, p := range TopNeighborPairs(vs, NeighborOptions{Floor: -1}) {
		if p.Src == "n" || p.Dst == "n" {
			t.Fatalf("a NaN vector joined a neighbourhood: %v", p)
		}
	}
	if got := len(TopNeighborPairs(vs, NeighborOptions{Floor: -1})); got != 12 {
		t.Fatalf("all pairs both ways: %d, want 12", got)
	}
}

func TestNeighborSimsAreCosineBits(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	vs := randomVectors(r, 40, 16)
	for _, p := range TopNeighborPairs(vs, NeighborOptions{Floor: -1}) {
		var a, b []float32
		for _, v := range vs {
			if v.Key == p.Src {
				a = v.Vec
			}
			if v.Key == p.Dst {
				b = v.Vec
			}
		}
		if c := Cosine(a, b); math.Float64bits(c) != math.Float64bits(p.Sim) {
			t.Fatalf("pair %v: sim %v, Cosine %v", p, p.Sim, c)
		}
	}
}

func TestRankCandidatePairs(t *testing.T) {
	vs := []KeyedVector{{"a", []float32{1, 0}}, {"b", []float32{1, 0.1}}, {"c", []float32{1, 0.5}}, {"d", []float32{0, 1}}}
	pairs := []CandidatePair{{"a", "c"}, {"a", "b"}, {"a", "d"}, {"a", "b"}, {"c", "zz"}, {"d", "c"}}
	got := RankCandidatePairs(pairs, vs, NeighborOptions{Floor: 0.1, PerSourceK: 1})
	want := []NeighborPair{
		{"a", "b", Cosine(vs[0].Vec, vs[1].Vec)},
		{"d", "c", Cosine(vs[3].Vec, vs[2].Vec)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RankCandidatePairs = %v, want %v", got, want)
	}
}

func randomVectors(r *rand.Rand, n, dim int) []KeyedVector {
	out := make([]KeyedVector, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = KeyedVector{Key: fmt.Sprintf("k%05d", i), Vec: v}
	}
	return out
}

func BenchmarkTopNeighborPairs2000(b *testing.B) {
	vs := randomVectors(rand.New(rand.NewPCG(5, 6)), 2000, 256)
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		TopNeighborPairs(vs, NeighborOptions{Floor: 0.1, PerSourceK: 10, Limit: 5000})
	}
}

func BenchmarkCosine256(b *testing.B) {
	vs := randomVectors(rand.New(rand.NewPCG(7, 8)), 2, 256)
	var sink float64
	defer reportCPU(b)()
	for b.Loop() {
		sink += Cosine(vs[0].Vec, vs[1].Vec)
	}
	_ = sink
}

// reportCPU starts measuring the process's CPU time; the returned func
// reports it per op as cpu-ns/op (GC included), a figure a busy machine
// distorts far less than ns/op. Call as defer reportCPU(b)() right before the
// loop.
func reportCPU(b *testing.B) func() {
	start, ok := benchtest.ProcessCPU()
	return func() {
		end, ok2 := benchtest.ProcessCPU()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
