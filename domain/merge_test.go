package domain

import (
	"reflect"
	"testing"
)

func TestMergeGuards(t *testing.T) {
	tests := []struct {
		name              string
		a, b              string
		neg, num, variant bool
	}{
		{"identical", "X is safe", "X is safe", false, false, false},
		{"negation", "X is safe", "X is NOT safe", true, false, false},
		{"contraction", "retries are safe", "retries aren't safe", true, false, false},
		{"curly contraction", "it works", "it doesn’t work", true, false, false},
		{"both negate", "never run it", "do not run it", false, false, false},
		{"numbers differ", "retry 3 times", "retry 13 times", false, true, false},
		{"number against none", "retry 3 times", "retry a few times", false, true, false},
		{"same numbers, any order", "ports 80 and 443", "443 then 80", false, false, false},
		{"decimals", "use go 1.26", "use go 1.25", false, true, false},
		{"variant", "runs on the M1", "runs on the M1 Pro", false, false, true},
		{"same variant", "M1 Pro only", "only the m1 pro", false, false, false},
		{"deprecated", "the v2 API", "the deprecated v2 API", false, false, true},
		{"nothing to compare", "", "", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, swap := range []bool{false, true} {
				a, b := tt.a, tt.b
				if swap {
					a, b = b, a
				}
				if got := NegationDivergent(a, b); got != tt.neg {
					t.Fatalf("NegationDivergent(%q, %q) = %v", a, b, got)
				}
				if got := NumericTokenDivergent(a, b); got != tt.num {
					t.Fatalf("NumericTokenDivergent(%q, %q) = %v", a, b, got)
				}
				if got := VariantQualifierDivergent(a, b); got != tt.variant {
					t.Fatalf("VariantQualifierDivergent(%q, %q) = %v", a, b, got)
				}
			}
		})
	}
}

func TestMergeVetoReasons(t *testing.T) {
	tests := []struct {
		name string
		a, b MergeText
		want []MergeVetoReason
	}{
		{"true duplicate with different citations", MergeText{Gist: "Run the cutover off-hours", Body: "Seen in PR 123 on 2026-01-02"},
			MergeText{Gist: "Run the cutover off-hours", Body: "See ticket 987, exit code 3"}, nil},
		{"number in the claim", MergeText{Gist: "Retry 3 times", Body: ""}, MergeText{Gist: "Retry 13 times", Body: ""}, []MergeVetoReason{VetoNumeric}},
		{"negation only in the body", MergeText{Gist: "Run the cutover during business hours", Body: "Draining completes."},
			MergeText{Gist: "Run the cutover during business hours", Body: "Draining does NOT complete."}, []MergeVetoReason{VetoNegation}},
		{"all three", MergeText{Gist: "M1 takes 3 s", Body: ""}, MergeText{Gist: "M1 Pro takes 4 s", Body: "not always"},
			[]MergeVetoReason{VetoNegation, VetoNumeric, VetoVariant}},
		// A rewrite whose tags name the old subject's "Postgres" is one
		// fact with two values, not a duplicate; without the tag, two
		// subjects (left to the cosine).
		{"a rewrite named by its tags", MergeText{Gist: "Schema changes to the ledger Postgres database are approved by Noor Haddad."},
			MergeText{Gist: "Ledger database schema changes are now approved by Tomas Lind.", Tags: []string{"postgres"}}, []MergeVetoReason{VetoValue}},
		{"the same rewrite untagged", MergeText{Gist: "Schema changes to the ledger Postgres database are approved by Noor Haddad."},
			MergeText{Gist: "Ledger database schema changes are now approved by Tomas Lind."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeVetoReasons(tt.a, tt.b)
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(MergeVetoReasons(tt.b, tt.a), tt.want) {
				t.Fatalf("MergeVetoReasons = %v, want %v", got, tt.want)
			}
			if MergeVetoed(tt.a, tt.b) != (len(tt.want) > 0) {
				t.Fatal("MergeVetoed disagrees with its reasons")
			}
		})
	}
	if JoinMergeText(MergeText{Gist: "g", Body: "b"}) != "g\nb" {
		t.Fatal("JoinMergeText")
	}
}

func TestMergeOutcomes(t *testing.T) {
	p := func(keep, drop string, sim float64) MergePair {
		return MergePair{KeepPath: keep, DropPath: drop, Similarity: sim}
	}
	safe, notSafe := &MergeText{Gist: "X is safe"}, &MergeText{Gist: "X is not safe"}
	tests := []struct {
		name  string
		pairs []MergePair
		opts  MergeOptions
		want  []MergeStage
	}{
		{"threshold is strict", []MergePair{p("a", "b", 0.92), p("a", "c", 0.9200001)}, MergeOptions{},
			[]MergeStage{StageThreshold, StageCommitted}},
		{"veto needs both texts", []MergePair{
			{KeepPath: "a", DropPath: "b", Similarity: 0.99, KeepText: safe, DropText: notSafe},
			{KeepPath: "a", DropPath: "c", Similarity: 0.99, KeepText: safe}},
			MergeOptions{}, []MergeStage{StageVetoed, StageCommitted}},
		{"self", []MergePair{p("a", "a", 0.99)}, MergeOptions{}, []MergeStage{StageSelf}},
		{"keeper may not be dropped: [(gf→a), (b→gf)]", []MergePair{p("gf", "a", 0.99), p("b", "gf", 0.99)}, MergeOptions{},
			[]MergeStage{StageCommitted, StageRoleGuard}},
		{"dropped may not be dropped again", []MergePair{p("k", "a", 0.99), p("j", "a", 0.99)}, MergeOptions{},
			[]MergeStage{StageCommitted, StageRoleGuard}},
		{"dropped may not keep", []MergePair{p("k", "a", 0.99), p("a", "z", 0.99)}, MergeOptions{},
			[]MergeStage{StageCommitted, StageRoleGuard}},
		{"a keeper may keep again", []MergePair{p("k", "a", 0.99), p("k", "b", 0.99), p("k", "c", 0.99)}, MergeOptions{},
			[]MergeStage{StageCommitted, StageCommitted, StageCommitted}},
		{"cap counts decisions and comes first", []MergePair{p("k", "a", 0.99), p("k", "b", 0.5), p("k", "c", 0.99), p("k", "d", 0.5), p("k", "k", 0.99)},
			MergeOptions{MaxPairs: 2}, []MergeStage{StageCommitted, StageThreshold, StageCommitted, StageCap, StageCap}},
		{"own threshold", []MergePair{p("k", "a", 0.85)}, MergeOptions{Threshold: 0.8}, []MergeStage{StageCommitted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := MergeOutcomes(tt.pairs, tt.opts)
			var got []MergeStage
			for i, o := range outs {
				got = append(got, o.Stage)
				if o.Pair.KeepPath != tt.pairs[i].KeepPath || o.Pair.DropPath != tt.pairs[i].DropPath {
					t.Fatal("outcomes must follow input order")
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("stages %v, want %v", got, tt.want)
			}
		})
	}
	many := make([]MergePair, 150)
	for i := range many {
		many[i] = p("k", string(rune('a'+i%26))+string(rune('a'+i/26)), 0.99)
	}
	committed := 0
	for _, o := range MergeOutcomes(many, MergeOptions{}) {
		if o.Stage == StageCommitted {
			committed++
		}
	}
	if got := committed; got != MaxMergePairs {
		t.Fatalf("default cap: %d committed", got)
	}
}
