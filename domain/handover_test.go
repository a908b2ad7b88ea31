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
		{"moved, and a subject of plain words", "Vaccine reminders are owned by Team Heron.", "Ownership of vaccine reminders moved to Team Kestrel from Team Heron.", "team heron"},
		{"has taken over", "Mei Chen reviews lab-bridge changes.", "Omar Haddad has taken over lab-bridge change reviews from Mei Chen.", "mei chen"},

		// Another subject, another role, or no change of hands: never.
		{"another service: a decoy", "Ana Lima is on call for gate-keeper.", "Tomas Berg took over billing-sync on-call from Ana Lima.", ""},
		{"another service named beside", "Kofi Mensah is the on-call owner for crane-ingest.", "Priya Nair took over gate-ops on-call from Kofi Mensah, who stays on crane-ingest.", ""},
		{"a team keeping what the older names", "Team Heron owns billing-sync.", "Team Kestrel took over gate-ops from Team Heron, which keeps billing-sync.", ""},
		{"another role: reviews, not on call", "Kofi Mensah is on call for crane-ingest.", "Priya Nair took over crane-ingest code reviews from Kofi Mensah.", ""},
		{"another role: approving, not on call", "Ana Lima approves billing-sync releases.", "Tomas Berg took over billing-sync on-call from Ana Lima.", ""},
		{"another role: leading", "Kofi Mensah leads the crane-ingest team.", "Priya Nair took over crane-ingest on-call from Kofi Mensah.", ""},
		{"another thing: the runbook", "Ana Lima owns the billing-sync runbook.", "Tomas Berg took over billing-sync on-call from Ana Lima.", ""},
		{"another thing: the templates, not the sending", "The vaccine reminders are sent by Team Heron.", "Team Kestrel took over the vaccine reminder templates from Team Heron.", ""},
		{"a pager moved from a phone", "Ana Lima is on call for billing-sync.", "The billing-sync pager moved to Opsgenie from Ana Lima's phone.", ""},
		{"pulled from: no change of hands", "billing-sync dashboards live in Grafana Cloud.", "Tomas Berg pulled billing-sync metrics from Grafana Cloud.", ""},
		{"now pulls from: no change of hands", "billing-sync sends receipts through Stripe.", "billing-sync now pulls invoices from Stripe into BigQuery.", ""},
		{"moved from another source", "billing-sync reads events from Kafka.", "billing-sync audit logs moved to S3 from Kafka.", ""},
		{"no change said", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg pairs on billing-sync on-call with people from Ana Lima's team.", ""},
		{"negated", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg has not taken over billing-sync on-call from Ana Lima.", ""},
		{"the older lacks the run", "Ana Lima is the on-call owner for billing-sync.", "Tomas Berg took over billing-sync on-call from Rui Costa.", ""},
		{"no new name", "Ana Lima is the on-call owner for billing-sync.", "billing-sync on-call was taken over from Ana Lima.", ""},
		{"no new name but a time after the run", "Ana Lima is the on-call owner for billing-sync.", "billing-sync on-call was taken over from Ana Lima in Q3.", ""},
		{"a time after the run", "The claims-engine is owned by the Falcon Squad team.", "The Osprey squad took over the claims-engine from Falcon Squad in Q2.", "falcon squad"},
		{"the older says it too", "Ana Lima took over billing-sync on-call from Rui Costa.", "Tomas Berg took over billing-sync on-call from Rui Costa.", ""},
		{"one plain word of subject, named as what was taken over", "opsconsole is owned by team Flightdeck.", "Team Gull took over opsconsole from Flightdeck; Flightdeck now only owns the dispatch backend.", "flightdeck"},
		{"taken over by its stem only", "The scheduler is owned by Team Heron.", "Team Kestrel took over scheduling from Team Heron.", ""},
		{"a team noun inside the subject", "Group billing is owned by Team Ledger.", "Abacus took over billing from Team Ledger.", ""},
		{"the older says nothing of owning", "Releases are cut by Team Heron.", "Kestrel took over releases from Team Heron.", ""},
		{"more taken over than the older's subject", "opsconsole is owned by team Flightdeck.", "Team Gull took over opsconsole alerting from Flightdeck.", ""},
		{"one plain word of subject is too few", "Reminders are sent by Team Heron.", "Kestrel took over reminders from Team Heron.", ""},
		{"a lowercase from", "The nightly export runs on export-runner-2.", "Exports now come from the warehouse; Dana Park switched them over.", ""},

		// Took over, from nobody named: the older's owners are the run.
		{"took over an owned service", "The matchwright service is owned by the Netcode team.", "Foundry (the platform team) took over the matchwright service last sprint — its pages now go to the foundry-primary rota.", "the netcode team"},
		{"has taken over, a plural owned", "The invoices service is owned by Team Ledger.", "Foundry has taken over the invoice service.", "team ledger"},
		{"took over a compound subject", "The yard-optimizer is owned by Yard Systems.", "Quay Platform took over the yard-optimizer in Q3.", "yard systems"},
		{"took over another service: a decoy", "The live-ops console is owned by the Foundry team.", "Foundry took over matchwright last sprint.", ""},
		{"took over something of the subject's", "matchwright is owned by the Netcode team.", "Foundry took over matchwright alerting last sprint.", ""},
		{"took over something of a compound subject's", "The yard-optimizer is owned by Yard Systems.", "Quay Platform took over the yard-optimizer dashboards.", ""},
		{"took over from a thing, not a party", "matchwright is owned by the Netcode team.", "ledger-v2 took over from matchwright last sprint.", ""},
		{"taken over, passive", "matchwright is owned by the Netcode team.", "Billing alerts were taken over by matchwright.", ""},
		{"takes over, not yet", "The matchwright service is owned by the Netcode team.", "Foundry takes over the matchwright service next quarter.", ""},
		{"took over, a condition", "The matchwright service is owned by the Netcode team.", "If Foundry took over the matchwright service, pages move.", ""},
		{"will have taken over", "The matchwright service is owned by the Netcode team.", "Foundry will have taken over the matchwright service by March.", ""},
		{"almost took over", "The matchwright service is owned by the Netcode team.", "Foundry almost took over the matchwright service last sprint.", ""},
		{"hasn't taken over", "The matchwright service is owned by the Netcode team.", "Foundry hasn't taken over the matchwright service.", ""},
		{"nobody took over", "The matchwright service is owned by the Netcode team.", "Nobody took over the matchwright service.", ""},
		{"took over in another role", "The matchwright service is owned by the Netcode team.", "Ana Lima took over the matchwright service as incident commander.", ""},
		{"took over for a while", "The matchwright service is owned by the Netcode team.", "Foundry took over the matchwright service until March.", ""},
		{"took over, one plain word", "Alerts are owned by Netcode.", "Foundry took over alerts.", ""},
		{"took over, owner unchanged", "matchwright is owned by the Netcode team.", "Netcode took over matchwright.", ""},
		{"took over, not an owning fact", "matchwright runs on three pods.", "Foundry took over matchwright last sprint.", ""},
		{"took over, negated", "matchwright is owned by the Netcode team.", "Foundry never took over matchwright.", ""},
		{"took over, another thing named beside", "matchwright is owned by the Netcode team.", "Foundry and the ledger-core crew took over matchwright.", ""},
		{"took over before another subject", "matchwright is owned by the Netcode team.", "Foundry took over the queue that matchwright reads.", ""},
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

// TestTakesOverNamedByTag: a subject of one lowercase word names a thing
// when the older lesson's tags hold it.
func TestTakesOverNamedByTag(t *testing.T) {
	older := ReadClaim("matchwright is owned by the Netcode team.")
	newer := ReadClaim("Foundry (the platform team) took over matchwright last sprint — its pages now go to the foundry-primary rota.")
	if _, ok := HandsOver(newer, older); ok {
		t.Fatal("a lone lowercase subject with no tag to name it was taken over")
	}
	tags := TagHolds([]string{"matchwright", "ownership"})
	if m, ok := HandsOver(newer.Holding(tags), older.Holding(tags)); !ok || m.B != "the netcode team" {
		t.Fatalf("HandsOver = %v (%+v), want the takeover read", ok, m)
	}
}
