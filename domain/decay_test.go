package domain

import (
	"math"
	"testing"
)

func TestGrid(t *testing.T) {
	tests := []struct {
		in   float64
		want int64
	}{
		{0, 0}, {1, PosOneFp}, {-1, NegOneFp}, {2, PosOneFp}, {-3, NegOneFp}, {math.NaN(), 0},
		{0.12345, 1235}, {-0.12345, -1235}, {0.8, 8000},
	}
	for _, tt := range tests {
		if got := ToFp(tt.in); got != tt.want {
			t.Errorf("ToFp(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
	for fp := int64(NegOneFp); fp <= PosOneFp; fp += 37 {
		if ToFp(FromFp(fp)) != fp {
			t.Fatalf("grid round trip of %d", fp)
		}
	}
}

func TestEWMAStepFp(t *testing.T) {
	a := ToFp(0.3)
	tests := []struct {
		name             string
		alpha, prev, sig int64
		want             int64
	}{
		{"toward +1", a, 0, PosOneFp, 3000},
		{"toward -1 floors", a, 1, NegOneFp, -3000},
		{"alpha 0 keeps prev", 0, 1234, PosOneFp, 1234},
		{"alpha 1 takes the signal", Scale, 1234, NegOneFp, NegOneFp},
		{"floor of a negative", 3333, 0, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EWMAStepFp(tt.alpha, tt.prev, tt.sig); got != tt.want {
				t.Fatalf("EWMAStepFp = %d, want %d", got, tt.want)
			}
		})
	}
	// The step stays between prev and signal, so a negative signal never raises.
	for prev := int64(NegOneFp); prev <= PosOneFp; prev += 499 {
		for _, sig := range []int64{NegOneFp, -1, 0, 1, PosOneFp} {
			for _, alpha := range []int64{0, 1, 3000, 9999, Scale} {
				got := EWMAStepFp(alpha, prev, sig)
				if got < min(prev, sig) || got > max(prev, sig) {
					t.Fatalf("EWMAStepFp(%d, %d, %d) = %d outside", alpha, prev, sig, got)
				}
			}
		}
	}
}

func TestDecayConfidence(t *testing.T) {
	tests := []struct {
		name               string
		prev, alpha, floor float64
		want               float64
	}{
		{"a tenth of the way", 0.8, DefaultConfidenceDecayAlpha, DefaultConfidenceFloor, 0.74},
		{"at the floor stays", 0.2, DefaultConfidenceDecayAlpha, DefaultConfidenceFloor, 0.2},
		{"below the floor is never raised", 0.05, DefaultConfidenceDecayAlpha, DefaultConfidenceFloor, 0.05},
		{"alpha 0 keeps", 0.9, 0, DefaultConfidenceFloor, 0.9},
		{"alpha 1 drops to the floor", 0.9, 1, DefaultConfidenceFloor, 0.2},
		{"clamped input", 7, DefaultConfidenceDecayAlpha, DefaultConfidenceFloor, 0.92},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecayConfidence(tt.prev, tt.alpha, tt.floor); got != tt.want {
				t.Fatalf("DecayConfidence(%v) = %v, want %v", tt.prev, got, tt.want)
			}
		})
	}
	for conf := int64(0); conf <= Scale; conf += 97 {
		if got := DecayConfidenceFp(1000, conf, 2000); got > conf {
			t.Fatalf("decay raised %d to %d", conf, got)
		}
	}
}

func TestIsCommittableConfidenceChange(t *testing.T) {
	tests := []struct {
		before, after float64
		want          bool
	}{
		{0.8, 0.795, true}, {0.2, 0.195, true}, {0.8, 0.7951, false}, {0.8, 0.8, false}, {0.5, 0.6, true}, {0.6, 0.5, true},
	}
	for _, tt := range tests {
		if got := IsCommittableConfidenceChange(tt.before, tt.after); got != tt.want {
			t.Errorf("IsCommittableConfidenceChange(%v, %v) = %v, want %v", tt.before, tt.after, got, tt.want)
		}
	}
	if ConfidenceCommitDelta != 0.005 || Scale != 10_000 {
		t.Fatal("decay constants moved")
	}
}
