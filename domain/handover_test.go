package domain

import (
	"slices"
	"testing"
)

func TestHandsOver(t *testing.T) {
	tests := []struct {
		name         string
		older, newer string
		want         string // the run handed over from; "" when none
	}{
		{"a person in the older's subject", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg took over billing-sync on-call from Ana Lima.", "ana lima"},
		{"a team after by", "The claims-engine is owned by the Falcon Squad team.", "Osprey took over the claims-engine from Falcon Squad in the reorg.", "falcon squad"},
		{"a change marker and a subject of plain words", "The vaccine reminders are sent by Team Heron.", "Vaccine reminders moved to Team Kestrel from Team Heron.", "team heron"},
		{"has taken over", "Reviews of lab-bridge changes go to Mei Chen.", "Omar Haddad has taken over lab-bridge reviews from Mei Chen.", "mei chen"},

		{"another service: a decoy", "Ana Lima is on call for gate-keeper.", "Tomas Berg took over billing-sync on-call from Ana Lima.", ""},
		{"no change said", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg pairs on billing-sync on-call with people from Ana Lima's team.", ""},
		{"negated", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg has not taken over billing-sync on-call from Ana Lima.", ""},
		{"the older lacks the run", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg took over billing-sync on-call from Rui Costa.", ""},
		{"no new name", "Ana Lima is the on-call owner for billing-sync.", "billing-sync on-call was taken over from Ana Lima.", ""},
		{"the older says it too", "Ana Lima took over billing-sync on-call from Rui Costa.", "Tomas Berg took over billing-sync on-call from Rui Costa.", ""},
		{"one plain word of subject is too few", "Reminders are sent by Team Heron.", "Kestrel took over reminders from Team Heron.", ""},
		{"a lowercase from", "The nightly export runs on export-runner-2.", "Exports now come from the warehouse; Dana Park switched them over.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, got := HandsOver(ReadClaim(tt.newer), ReadClaim(tt.older))
			if got != (tt.want != "") || got && m.B != tt.want {
				t.Errorf("HandsOver = %v (%+v), want %q", got, m, tt.want)
			}
			if _, back := HandsOver(ReadClaim(tt.older), ReadClaim(tt.newer)); back {
				t.Error("HandsOver holds with the two the other way round")
			}
			if _, viaRewrites := Rewrites(ReadClaim(tt.newer), ReadClaim(tt.older)); tt.want != "" && !viaRewrites {
				t.Error("Rewrites misses a pair HandsOver accepts")
			}
			if tt.want == "" {
				return
			}
			// SlotCandidates must list the pair for Rewrites to see it.
			pairs := SlotCandidates([]Claim{ReadClaim(tt.older), ReadClaim("Unrelated: the wiki is on Confluence."), ReadClaim(tt.newer)})
			if !slices.Contains(pairs, [2]int{0, 2}) {
				t.Errorf("SlotCandidates %v misses the pair", pairs)
			}
		})
	}
}
