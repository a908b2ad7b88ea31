package domain

import (
	"math"
	"testing"
)

func TestWeightProfilesSumToOne(t *testing.T) {
	profiles := map[string]WeightProfile{"default": DefaultWeightsProfile}
	for k, p := range WeightProfiles {
		profiles[k] = p
	}
	for _, typ := range []string{TypeEpisodic, TypeSemantic, TypeProcedural, TypeArc, TypeErrorPattern} {
		if _, ok := WeightProfiles[typ]; !ok {
			t.Fatalf("no profile for %s", typ)
		}
	}
	for name, p := range profiles {
		t.Run(name, func(t *testing.T) {
			// Under compensated summation every shipped profile sums to
			// exactly 1.
			v := p.Values()
			if s := CompensatedSum(v[:]); s != 1 {
				t.Fatalf("sum = %v, want exactly 1", s)
			}
			for _, w := range p.Values() {
				if w < 0 || w > 1 {
					t.Fatalf("weight %v out of [0, 1]", w)
				}
			}
		})
	}
	ep := WeightProfiles[TypeEpisodic]
	for name, p := range profiles {
		if name != TypeEpisodic && p.Recency >= ep.Recency {
			t.Errorf("%s recency %v not below episodic %v", name, p.Recency, ep.Recency)
		}
	}
	for i, w := range ep.Values() {
		if i > 0 && w >= ep.Recency {
			t.Errorf("episodic %s %v not below its recency", SignalNames[i], w)
		}
	}
	if WeightProfiles[TypeProcedural].Recency != 0 {
		t.Error("procedural recency must be 0")
	}
	if WeightsFor("invented_type") != DefaultWeightsProfile {
		t.Error("an unlisted type takes the default profile")
	}
}

func TestBandFor(t *testing.T) {
	tests := []struct {
		score float64
		want  TriageAction
	}{
		{1, TriageKeep},
		{0.7001, TriageKeep},
		{0.7, TriageCompress},
		{0.5, TriageCompress},
		{0.3001, TriageCompress},
		{0.3, TriageEvict},
		{0, TriageEvict},
		{math.NaN(), TriageCompress},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			if got := BandFor(tt.score); got != tt.want {
				t.Fatalf("BandFor(%v) = %s, want %s", tt.score, got, tt.want)
			}
		})
	}
}

func TestHalfLifeAndRecency(t *testing.T) {
	tests := []struct {
		typ    string
		days   float64
		decays bool
	}{
		{TypeEpisodic, 10, true}, {TypeSemantic, 90, true}, {TypeArc, 30, true},
		{TypeErrorPattern, 14, true}, {TypeProcedural, 0, false}, {TypeTask, 0, false},
		{"invented", DefaultHalfLifeDays, true},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			d, decays := HalfLifeFor(tt.typ)
			if d != tt.days || decays != tt.decays {
				t.Fatalf("HalfLifeFor = (%v, %v), want (%v, %v)", d, decays, tt.days, tt.decays)
			}
			s := ComputeSignals(RetentionInput{MemoryType: tt.typ, AgeDays: tt.days})
			if tt.decays && s.Recency != 0.5 {
				t.Fatalf("recency at the half-life = %v, want exactly 0.5", s.Recency)
			}
			if !tt.decays && ComputeSignals(RetentionInput{MemoryType: tt.typ, AgeDays: 1e6}).Recency != 1 {
				t.Fatal("a non-decaying type must keep recency 1")
			}
		})
	}
}

func TestComputeSignals(t *testing.T) {
	tests := []struct {
		name string
		in   RetentionInput
		want Signals
	}{
		{"empty", RetentionInput{MemoryType: TypeSemantic}, Signals{Recency: 1, ContestedStatus: 1}},
		{"saturated", RetentionInput{MemoryType: TypeProcedural, AccessCount: 1e9, Confidence: 3, GraphRank: 2, MaxGraphRank: 1,
			BridgeCount: math.Inf(1), ReinforcementCount: math.Inf(1), WordCount: 1e9},
			Signals{Recency: 1, AccessFrequency: 1, Confidence: 1, Pagerank: 1, BridgeImportance: 1, ReinforcementCount: 1, ContentDensity: 1, ContestedStatus: 1}},
		{"garbage reads as zero", RetentionInput{MemoryType: TypeProcedural, AccessCount: -3, Confidence: math.NaN(), GraphRank: math.NaN(), MaxGraphRank: 0,
			BridgeCount: -1, ReinforcementCount: math.NaN(), WordCount: -5, ContradictionCount: math.NaN()},
			Signals{Recency: 1, ContestedStatus: 1}},
		{"halves", RetentionInput{MemoryType: TypeProcedural, BridgeCount: BridgeHalf, ReinforcementCount: ReinforcementHalf,
			ContradictionCount: 1, GraphRank: 0.5, MaxGraphRank: 2, Confidence: 0.25},
			Signals{Recency: 1, Confidence: 0.25, Pagerank: 0.25, BridgeImportance: 0.5, ReinforcementCount: 0.5, ContestedStatus: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ComputeSignals(tt.in); got != tt.want {
				t.Fatalf("ComputeSignals = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScoreRetention(t *testing.T) {
	all := func(v float64) Signals { return Signals{v, v, v, v, v, v, v, v} }
	for name, p := range WeightProfiles {
		for _, v := range []float64{0, 0.3, 0.7, 1} {
			if got := CompositeScore(all(v), p); got != v {
				t.Errorf("%s: composite of all-%v signals = %v", name, v, got)
			}
		}
	}
	// Exactly 0.7 compresses and exactly 0.3 evicts through the whole scorer.
	if got := BandFor(CompositeScore(all(0.7), DefaultWeightsProfile)); got != TriageCompress {
		t.Fatalf("all-0.7 bands %s", got)
	}
	if got := BandFor(CompositeScore(all(0.3), DefaultWeightsProfile)); got != TriageEvict {
		t.Fatalf("all-0.3 bands %s", got)
	}
	if got := CompositeScore(Signals{Recency: math.NaN(), Confidence: 5}, DefaultWeightsProfile); got != 0.15 {
		t.Fatalf("NaN and out-of-range signals: %v", got)
	}
	tests := []struct {
		name string
		in   RetentionInput
		want TriageAction
	}{
		{"fresh, used, trusted procedure", RetentionInput{MemoryType: TypeProcedural, AccessCount: 40, Confidence: 0.9, GraphRank: 1, MaxGraphRank: 1,
			BridgeCount: 3, ReinforcementCount: 5, WordCount: 150}, TriageKeep},
		{"old unused episode", RetentionInput{MemoryType: TypeEpisodic, AgeDays: 200, Confidence: 0.2, WordCount: 5, ContradictionCount: 3}, TriageEvict},
		{"middling fact", RetentionInput{MemoryType: TypeSemantic, AgeDays: 30, AccessCount: 3, Confidence: 0.6, WordCount: 60}, TriageCompress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScoreRetention(tt.in)
			if got.Action != tt.want || got.Action != BandFor(got.Score) || got.Score < 0 || got.Score > 1 {
				t.Fatalf("ScoreRetention = %+v, want %s", got, tt.want)
			}
			if r := math.Round(got.Score*1e4) / 1e4; r != got.Score {
				t.Fatalf("score %v not rounded to %d places", got.Score, ScorePrecision)
			}
		})
	}
}

func TestReprieve(t *testing.T) {
	if s := ReprieveWImportance + ReprieveWAccess + ReprieveWOutcome + ReprieveWRecency; math.Abs(s-1) > 1e-15 {
		t.Fatalf("coefficients sum to %v", s)
	}
	tests := []struct {
		name string
		in   ReprieveInput
		want float64
	}{
		{"all zero", ReprieveInput{}, 0.4*0.1 + 0.1},
		{"importance clamps", ReprieveInput{Importance: 99, HoursSinceAccess: math.Inf(1)}, 0.4},
		{"negative outcome counts nothing", ReprieveInput{Importance: 10, OutcomeScore: -1, HoursSinceAccess: math.Inf(1)}, 0.4},
		{"positive outcome", ReprieveInput{Importance: 10, OutcomeScore: 0.5, HoursSinceAccess: math.Inf(1)}, 0.5},
		{"access is unbounded", ReprieveInput{Importance: 1, AccessCount: math.E*math.E - 1, HoursSinceAccess: math.Inf(1)}, 0.04 + 0.6},
		{"recency decays per hour", ReprieveInput{Importance: 1, HoursSinceAccess: 100}, 0.04 + 0.1*math.Exp(-1)},
		{"own decay rate", ReprieveInput{Importance: 1, HoursSinceAccess: 10, DecayRate: 0.1}, 0.04 + 0.1*math.Exp(-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReprieveScore(tt.in); math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("ReprieveScore = %v, want %v", got, tt.want)
			}
		})
	}
	if ReprieveScore(ReprieveInput{Importance: math.NaN(), AccessCount: math.NaN(), OutcomeScore: math.NaN(), HoursSinceAccess: math.NaN()}) <= 0 {
		t.Fatal("the score is always above 0")
	}
	gate := []struct {
		name         string
		score        float64
		count, maxRe int
		want         bool
	}{
		{"at the floor", ReprieveFloor, 0, MaxReprieves, true},
		{"below the floor", 0.4999, 0, MaxReprieves, false},
		{"last reprieve", 2, MaxReprieves - 1, MaxReprieves, true},
		{"cap reached", 2, MaxReprieves, MaxReprieves, false},
		{"kill switch", 100, 0, 0, false},
		{"NaN", math.NaN(), 0, MaxReprieves, false},
	}
	for _, tt := range gate {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShouldReprieve(tt.score, tt.count, ReprieveFloor, tt.maxRe); got != tt.want {
				t.Fatalf("ShouldReprieve = %v, want %v", got, tt.want)
			}
		})
	}
	if ReprieveDays != 14 || SalienceDecayRate != 0.01 {
		t.Fatal("reprieve constants moved")
	}
}

// TestNaiveSumDrifts pins why CompensatedSum exists: plain left-to-right
// addition of two of the six shipped profiles misses 1 by an ulp.
func TestNaiveSumDrifts(t *testing.T) {
	profiles := []WeightProfile{DefaultWeightsProfile}
	for _, typ := range []string{TypeEpisodic, TypeSemantic, TypeProcedural, TypeArc, TypeErrorPattern} {
		profiles = append(profiles, WeightProfiles[typ])
	}
	drift := 0
	for _, p := range profiles {
		var s float64
		for _, w := range p.Values() {
			s += w
		}
		if s != 1 {
			drift++
		}
	}
	if drift != 2 {
		t.Fatalf("naive sums off 1 for %d profiles, want 2", drift)
	}
}
