package domain

import (
	"slices"
	"testing"
)

func TestDisowns(t *testing.T) {
	tests := []struct {
		name         string
		older, newer string
		want         string // the phrase set aside; "" when no rewrite
	}{
		{"an acronym the older gives in an aside", "Ledger discrepancies at clinics are escalated to the Named Veterinary Surgeon (NVS).", "Ledger discrepancies at clinics now go to the compliance desk, not the NVS.", "the nvs"},
		{"a rotation set aside", "Billing-sync alerts are routed to the payments rotation.", "Billing-sync alerts go to the #billing-ops channel, not the payments rotation.", "the payments rotation"},
		{"instead of", "Refund approvals for clinics are signed by the practice manager.", "Refund approvals for clinics need the finance lead instead of the practice manager.", "the practice manager"},
		{"after an aside with a period", "Ledger discrepancies at clinics are escalated to the Named Veterinary Surgeon (NVS).", "Ledger discrepancies at clinics go to compliance (Dr. Hana Novak), not the NVS.", "the nvs"},

		{"another subject", "Billing-sync deploys are routed to the payments rotation.", "Billing-sync alerts go to #billing-ops, not the payments rotation.", ""},
		{"a subject of one plain word", "Refunds are approved by the clinic manager.", "Refunds go to finance, not the clinic.", ""},
		{"the phrase is not the older's value", "Billing-sync alerts are routed to the payments rotation.", "Billing-sync alerts go to #billing-ops, not email.", ""},
		{"nothing new", "Billing-sync alerts are routed to the payments rotation.", "Billing-sync alerts are routed, not the payments rotation.", ""},
		{"a plain negation", "Billing-sync alerts are routed to the payments rotation.", "Billing-sync alerts are not routed to the payments rotation.", ""},
		{"the older negated", "Billing-sync alerts are never routed to the payments rotation.", "Billing-sync alerts go to #billing-ops, not the payments rotation.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, got := Disowns(ReadClaim(tt.newer), ReadClaim(tt.older))
			if got != (tt.want != "") || got && m.B != tt.want {
				t.Errorf("Disowns = %v (%+v), want %q", got, m, tt.want)
			}
			if _, back := Disowns(ReadClaim(tt.older), ReadClaim(tt.newer)); back {
				t.Error("Disowns holds with the two the other way round")
			}
			if _, viaRewrites := Rewrites(ReadClaim(tt.newer), ReadClaim(tt.older)); tt.want != "" && !viaRewrites {
				t.Error("Rewrites misses a pair Disowns accepts")
			}
			if tt.want == "" {
				return
			}
			pairs := SlotCandidates([]Claim{ReadClaim(tt.older), ReadClaim("Unrelated: the wiki is on Confluence."), ReadClaim(tt.newer)})
			if !slices.Contains(pairs, [2]int{0, 2}) {
				t.Errorf("SlotCandidates %v misses the pair", pairs)
			}
		})
	}
}
