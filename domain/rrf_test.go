package domain

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestRRF(t *testing.T) {
	if RRFK != 60 || MMRLambda != 0.5 || ReinforceCooldownS != 900 {
		t.Fatal("ranking constants moved")
	}
	if got := RRFScore(1, 1, RRFK); got != 1.0/61 {
		t.Fatalf("RRFScore(1) = %v", got)
	}
	if RRFScore(2, 1, RRFK) >= RRFScore(1, 1, RRFK) {
		t.Fatal("RRFScore must decrease in rank")
	}
	if RRFScore(3, 0, RRFK) != 0 {
		t.Fatal("a weight-0 arm contributes 0")
	}
	tests := []struct {
		name   string
		rank   int
		weight float64
		ok     bool
	}{
		{"normal", 1, 1, true},
		{"zero weight", 1, 0, false},
		{"negative weight", 1, -1, false},
		{"NaN weight", 1, math.NaN(), false},
		{"rank 0", 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := RRFContribution(tt.rank, tt.weight, RRFK); ok != tt.ok {
				t.Fatalf("RRFContribution ok = %v, want %v", ok, tt.ok)
			}
		})
	}
}

func TestFuseArms(t *testing.T) {
	arms := [][]ArmHit{
		{{"a", 1}, {"b", 2}},
		{{"b", 1}, {"c", 2}, {"b", 3}},
		{{"z", 1}},
	}
	got := FuseArms(arms, []float64{1, 2}, RRFK)
	want := map[string]float64{
		"a": 1.0 / 61,
		"b": 1.0/62 + 2.0/61 + 2.0/63,
		"c": 2.0 / 62,
	}
	if len(got) != len(want) {
		t.Fatalf("FuseArms = %v", got)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-15 {
			t.Fatalf("FuseArms[%s] = %v, want %v", k, got[k], v)
		}
	}
	ranked := RankFused(map[string]float64{"b": 1, "a": 1, "c": 2, "d": math.NaN()})
	if !reflect.DeepEqual([]string{ranked[0].Path, ranked[1].Path, ranked[2].Path, ranked[3].Path}, []string{"c", "a", "b", "d"}) {
		t.Fatalf("RankFused = %v", ranked)
	}
}

func TestFuseArmsOrderInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 5))
	paths := []string{"a", "b", "c", "d", "e", "f"}
	for round := 0; round < 300; round++ {
		n := 1 + r.IntN(5)
		arms := make([][]ArmHit, n)
		weights := make([]float64, n)
		for i := range arms {
			weights[i] = []float64{0, 0.5, 1, 2}[r.IntN(4)]
			for j := 0; j < r.IntN(6); j++ {
				arms[i] = append(arms[i], ArmHit{paths[r.IntN(len(paths))], j + 1})
			}
		}
		want := RankFused(FuseArms(arms, weights, RRFK))
		perm := r.Perm(n)
		pa, pw := make([][]ArmHit, n), make([]float64, n)
		for i, p := range perm {
			pa[i], pw[i] = arms[p], weights[p]
		}
		got := RankFused(FuseArms(pa, pw, RRFK))
		if len(got) != len(want) {
			t.Fatalf("round %d: %v vs %v", round, got, want)
		}
		for i := range got {
			if got[i].Path != want[i].Path || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
				t.Fatalf("round %d: arm order changed the fusion: %v vs %v", round, got, want)
			}
		}
	}
}

func TestFuseLateral(t *testing.T) {
	fused := map[string]float64{"a": 0.5}
	if got := FuseLateral(fused, nil, nil, 1, RRFK); !reflect.DeepEqual(got, fused) {
		t.Fatal("an empty order is inert")
	}
	if got := FuseLateral(fused, []string{"b"}, nil, 0, RRFK); !reflect.DeepEqual(got, fused) {
		t.Fatal("a zero weight is inert")
	}
	got := FuseLateral(fused, []string{"b", "a"}, nil, 1, RRFK)
	if got["b"] != 1.0/61 || got["a"] != 0.5+1.0/62 || fused["a"] != 0.5 {
		t.Fatalf("FuseLateral = %v", got)
	}
	// Strengths scale each vote; an absent strength is no vote.
	got = FuseLateral(fused, []string{"b", "a", "c"}, map[string]float64{"b": 0.3, "a": 1}, 1, RRFK)
	if math.Abs(got["b"]-0.3/61) > 1e-15 || got["a"] != 0.5+1.0/62 || got["c"] != 0 {
		t.Fatalf("FuseLateral with strengths = %v", got)
	}
}

func TestApplyMMR(t *testing.T) {
	c := []MMRCandidate{
		{"a", 1.0, []float32{1, 0}},
		{"a2", 0.95, []float32{1, 0.01}},
		{"b", 0.9, []float32{0, 1}},
		{"v", 0.5, nil},
		{"w", 0.4, nil},
	}
	names := func(cs []MMRCandidate) []string {
		var out []string
		for _, x := range cs {
			out = append(out, x.Path)
		}
		return out
	}
	tests := []struct {
		name   string
		limit  int
		lambda float64
		want   []string
	}{
		{"pure relevance truncates", 3, 1, []string{"a", "a2", "b"}},
		{"diversity pushes the near-duplicate down", 3, 0.5, []string{"a", "b", "v"}},
		{"vectorless keep their order", 5, 0.5, []string{"a", "b", "v", "w", "a2"}},
		{"zero limit", 0, 0.5, nil},
		{"limit above size", 9, 0.7, []string{"a", "b", "a2", "v", "w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(ApplyMMR(c, tt.limit, tt.lambda)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ApplyMMR = %v, want %v", got, tt.want)
			}
		})
	}
}
