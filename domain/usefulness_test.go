package domain

import (
	"math"
	"slices"
	"testing"
)

func TestActivation(t *testing.T) {
	tests := []struct {
		name string
		ages []int
		d    float64
		want float64
	}{
		{"no use", nil, 0.5, math.Inf(-1)},
		{"single use one tick old", []int{1}, 0.5, 0},
		{"age below one reads as one", []int{0}, 0.5, 0},
		{"two fresh uses", []int{1, 1}, 0.5, math.Log(2)},
		{"one use four ticks old", []int{4}, 0.5, math.Log(0.5)},
		{"slower decay", []int{4}, 0.3, math.Log(math.Pow(4, -0.3))},
		{"mixed", []int{1, 4, 9}, 0.5, math.Log(1 + 0.5 + 1.0/3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Activation(tt.ages, tt.d)
			if math.IsInf(tt.want, -1) {
				if !math.IsInf(got, -1) {
					t.Fatalf("Activation(%v) = %v, want -Inf", tt.ages, got)
				}
				return
			}
			if math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("Activation(%v, %v) = %v, want %v", tt.ages, tt.d, got, tt.want)
			}
		})
	}
}

func TestActivationSpacing(t *testing.T) {
	// The same number of uses spread later keeps a lesson more active than
	// uses massed early.
	spread := Activation([]int{2, 10, 30}, 0.5)
	massed := Activation([]int{28, 29, 30}, 0.5)
	if !(spread > massed) {
		t.Fatalf("spread %v should exceed massed %v", spread, massed)
	}
}

func TestSquash(t *testing.T) {
	tests := []struct {
		name string
		a    float64
		want float64
	}{
		{"zero is one", 0, 1},
		{"minus infinity is zero", math.Inf(-1), 0},
		{"plus infinity is two", math.Inf(1), 2},
		{"NaN reads as no use", math.NaN(), 0},
		{"ln 4", math.Log(4), 2 / (1 + math.Exp(-math.Log(4)/2))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Squash(tt.a); got != tt.want {
				t.Fatalf("Squash(%v) = %v, want %v", tt.a, got, tt.want)
			}
		})
	}
	for _, a := range []float64{-50, -3, -0.1, 0.1, 3, 50} {
		if s := Squash(a); !(s > 0 && s < 2) {
			t.Errorf("Squash(%v) = %v outside (0, 2)", a, s)
		}
	}
}

func TestDefaultWeights(t *testing.T) {
	w := DefaultWeights
	tests := []struct {
		name      string
		got, want float64
	}{
		{"D", w.D, 0.5},
		{"DConsolidated", w.DConsolidated, 0.3},
		{"TestedW", w.TestedW, 0.5},
		{"CorrectedW", w.CorrectedW, 2},
		{"VetoedW", w.VetoedW, 3},
		{"Regret is half a correction", w.Regret, w.CorrectedW / 2},
		{"RegretMax", w.RegretMax, 0.875},
		{"ConsolidateSessions", float64(w.ConsolidateSessions), 3},
		{"DormantBelow", w.DormantBelow, -2},
		{"NovelWords", float64(w.NovelWords), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("%s = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
	if !(w.Regret < w.CorrectedW && w.CorrectedW < w.VetoedW) {
		t.Fatal("want regret < corrected < vetoed")
	}
	// About 54 sessions without a use: a single use is still awake after 54
	// further sessions (age 54) and dormant at age 55, 54 sessions after the use.
	if a := Activation([]int{54}, w.D); a < w.DormantBelow {
		t.Fatalf("age 54: activation %v already dormant", a)
	}
	if a := Activation([]int{55}, w.D); !(a < w.DormantBelow) {
		t.Fatalf("age 55: activation %v not dormant", a)
	}
}

func TestBelief(t *testing.T) {
	w := DefaultWeights
	tests := []struct {
		name                                        string
		changed, ignored, corrected, vetoed, tested int
		regretted                                   float64
		alpha, beta                                 float64
	}{
		{"no evidence", 0, 0, 0, 0, 0, 0, 1, 1},
		{"changed and tested", 2, 0, 0, 0, 1, 0, 3.5, 1},
		{"ignored corrected vetoed", 0, 1, 1, 1, 0, 0, 1, 7},
		{"regret", 0, 0, 0, 0, 0, 0.875, 1, 1.875},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := BeliefOf(tt.changed, tt.ignored, tt.corrected, tt.vetoed, tt.tested, tt.regretted, w)
			if b.Alpha != tt.alpha || b.Beta != tt.beta {
				t.Fatalf("BeliefOf = %+v, want α=%v β=%v", b, tt.alpha, tt.beta)
			}
			if m := b.Mean(); m != tt.alpha/(tt.alpha+tt.beta) {
				t.Fatalf("Mean = %v", m)
			}
		})
	}
	if m := (Belief{}).Mean(); m != 0.5 {
		t.Fatalf("degenerate mean = %v, want 0.5", m)
	}
}

func TestUsefulnessWeight(t *testing.T) {
	// A lesson created this session without outcomes weighs 1 in expectation.
	if got := UsefulnessWeight(0, 0.5); got != 1 {
		t.Fatalf("UsefulnessWeight(0, 0.5) = %v, want 1", got)
	}
	if got := UsefulnessWeight(math.Inf(-1), 0.9); got != 0 {
		t.Fatalf("no use: %v, want 0", got)
	}
	if got := UsefulnessWeight(0, 7); got != 1.5 {
		t.Fatalf("x clamps to 1: %v", got)
	}
}

func TestRegretCap(t *testing.T) {
	tests := []struct {
		name  string
		times []int64
		want  int
	}{
		{"no correction still allows one", nil, 1},
		{"one", []int64{5}, 1},
		{"distinct times", []int64{5, 7, 9}, 3},
		{"one correction of several lessons counts once", []int64{5, 5, 5, 8}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RegretCap(tt.times); got != tt.want {
				t.Fatalf("RegretCap(%v) = %d, want %d", tt.times, got, tt.want)
			}
		})
	}
}

func TestSeed(t *testing.T) {
	tests := []struct {
		name            string
		session, lesson string
		want            uint64
	}{
		{"empty", "", "", 0xaf63bd4c8601b7df},
		{"s and l", "s", "l", 0x81bd81195c76bede},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Seed(tt.session, tt.lesson); got != tt.want {
				t.Fatalf("Seed = %#x, want %#x", got, tt.want)
			}
		})
	}
	if Seed("ab", "c") == Seed("a", "bc") {
		t.Fatal("the NUL separator must keep (ab, c) and (a, bc) apart")
	}
}

func TestRngSplitMix64(t *testing.T) {
	r := NewRng(0)
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := r.Uint64(); got != want {
			t.Fatalf("output %d = %#x, want %#x", i, got, want)
		}
	}
	r = NewRng(42)
	for i := 0; i < 1000; i++ {
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v outside [0, 1)", f)
		}
		if n := r.Intn(7); n < 0 || n >= 7 {
			t.Fatalf("Intn(7) = %d", n)
		}
	}
}

func TestRoundSeeded(t *testing.T) {
	tests := []struct {
		name string
		x    float64
		want []int // allowed results
	}{
		{"integer as is", 3, []int{3}},
		{"zero", 0, []int{0}},
		{"fraction", 2.25, []int{2, 3}},
		{"negative fraction", -1.5, []int{-2, -1}},
		{"NaN", math.NaN(), []int{0}},
		{"Inf", math.Inf(1), []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := uint64(0); seed < 50; seed++ {
				if got := RoundSeeded(tt.x, seed); !slices.Contains(tt.want, got) {
					t.Fatalf("RoundSeeded(%v, %d) = %d, want one of %v", tt.x, seed, got, tt.want)
				}
			}
		})
	}
	// Unbiased: the mean over many seeds approaches x.
	var sum int
	const n = 20000
	for seed := uint64(0); seed < n; seed++ {
		sum += RoundSeeded(2.25, Seed("s", string(rune(seed))))
	}
	if mean := float64(sum) / n; math.Abs(mean-2.25) > 0.02 {
		t.Fatalf("mean of RoundSeeded(2.25) = %v", mean)
	}
}

func TestSampleBeta(t *testing.T) {
	tests := []struct {
		name string
		a, b int
	}{
		{"uniform", 1, 1},
		{"skewed", 8, 2},
		{"large counts are scaled", 3000, 1000},
		{"counts below one read as one", 0, -4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRng(7)
			const n = 4000
			var sum float64
			for i := 0; i < n; i++ {
				x := SampleBeta(tt.a, tt.b, r)
				if !(x > 0 && x < 1) {
					t.Fatalf("sample %v outside (0, 1)", x)
				}
				sum += x
			}
			a, b := float64(max(tt.a, 1)), float64(max(tt.b, 1))
			if mean := sum / n; math.Abs(mean-a/(a+b)) > 0.02 {
				t.Fatalf("mean %v, want about %v", mean, a/(a+b))
			}
		})
	}
}

func TestDraw(t *testing.T) {
	seed := Seed("s-1", "lesson-a")
	if Draw(3, 2, seed) != Draw(3, 2, seed) {
		t.Fatal("Draw is not deterministic")
	}
	// Integer parameters draw exactly as the integer Beta.
	if got, want := Draw(3, 2, seed), SampleBeta(3, 2, NewRng(seed)); got != want {
		t.Fatalf("Draw(3, 2) = %v, SampleBeta = %v", got, want)
	}
	for s := uint64(0); s < 200; s++ {
		if x := Draw(1.5, 2.875, s); !(x > 0 && x < 1) {
			t.Fatalf("Draw = %v", x)
		}
	}
}

func TestShuffle(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	orig := slices.Clone(items)
	got := Shuffle(items, "s-1")
	if !slices.Equal(items, orig) {
		t.Fatal("Shuffle modified its input")
	}
	if !slices.Equal(got, Shuffle(items, "s-1")) {
		t.Fatal("Shuffle is not deterministic for one session")
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, orig) {
		t.Fatalf("Shuffle(%v) = %v is not a permutation", items, got)
	}
	firsts := map[string]bool{}
	for i := 0; i < 64; i++ {
		firsts[Shuffle(items, "s-"+string(rune('a'+i)))[0]] = true
	}
	if len(firsts) < 4 {
		t.Fatalf("only %d distinct first items over 64 sessions", len(firsts))
	}
	if got := Shuffle([]int(nil), "s"); len(got) != 0 {
		t.Fatalf("Shuffle(nil) = %v", got)
	}
}
