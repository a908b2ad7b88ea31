package domain

import (
	"strings"
	"testing"
)

func TestFrameKeyOf(t *testing.T) {
	tests := []struct {
		name  string
		claim string
		key   string
		ok    bool
	}{
		{"the document's example", "The capital of India is New Delhi", "the capital of india is", true},
		{"case- and whitespace-insensitive", "  the   Capital of INDIA\tis   Mumbai ", "the capital of india is", true},
		{"last linking token wins", "The default port of the API is set to 8080", "the default port of the api is set to", true},
		{"frame of exactly three tokens", "Deploys run by Jenkins", "deploys run by", true},
		{"frame of two tokens fails", "Alice is tall", "", false},
		{"no linking token", "Use make migrate first", "", false},
		{"linking token last leaves no value", "The capital of India is", "", false},
		{"value of six tokens", "The owner of billing is the platform team in the north", "the owner of billing is the platform team in", true},
		{"value of seven tokens fails", "The owner of billing is the platform team north east south west", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, ok := FrameKeyOf(tt.claim)
			if key != tt.key || ok != tt.ok {
				t.Fatalf("FrameKeyOf(%q) = (%q, %v), want (%q, %v)", tt.claim, key, ok, tt.key, tt.ok)
			}
		})
	}
	a, _ := FrameKeyOf("The Capital of India is X")
	b, _ := FrameKeyOf("the capital of India is Y")
	if a != b {
		t.Fatalf("restated facts should collide: %q vs %q", a, b)
	}
}

func FuzzFrameKeyOf(f *testing.F) {
	for _, s := range []string{"The capital of India is New Delhi", "a b c is d", "is is is is", "x\u00a0of y of z w", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, claim string) {
		key, ok := FrameKeyOf(claim)
		if !ok {
			if key != "" {
				t.Fatalf("failed closed with key %q", key)
			}
			return
		}
		toks := strings.Fields(key)
		if len(toks) < FrameMinTokens || !frameLinks[toks[len(toks)-1]] {
			t.Fatalf("key %q: too short or not ending on a linking token", key)
		}
		if strings.Join(toks, " ") != key || key != strings.ToLower(key) {
			t.Fatalf("key %q is not normalised", key)
		}
		if again, ok2 := FrameKeyOf(claim + "  "); !ok2 || again != key {
			t.Fatalf("trailing whitespace changed the key: %q vs %q", again, key)
		}
	})
}
