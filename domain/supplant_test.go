package domain

import (
	"slices"
	"testing"
)

func TestSupplants(t *testing.T) {
	tests := []struct {
		name         string
		older, newer string
		want         bool
	}{
		{"from A to B, a bare number taking the unit", "Prod Loki keeps 14 days of logs.", "Prod Loki retention was cut from 14 to 7 days to save storage.", true},
		{"from A to B, both with units", "The session cache in billing-api holds entries for 30 minutes.", "The billing-api session cache TTL went from 30 minutes to 2 hours.", true},
		{"no longer at A", "tariff's nightly fare-filing import runs at 01:30 UTC.", "The fare-filing import in tariff no longer kicks off at 01:30 - it starts at 03:15 UTC now.", true},

		{"another subject named", "Prod Grafana keeps 14 days of dashboard history.", "Prod Loki retention was cut from 14 to 7 days.", false},
		{"another compound in the subject", "tariff's nightly fare-sync import runs at 01:30 UTC.", "The fare-filing import in tariff no longer kicks off at 01:30.", false},
		{"too few words shared", "Backups keep 14 days.", "Loki retention was cut from 14 to 7 days.", false},
		{"another value", "tariff's nightly fare-filing import runs at 02:00 UTC.", "The fare-filing import in tariff no longer kicks off at 01:30.", false},
		{"negated otherwise", "Prod Loki keeps 14 days of logs.", "Prod Loki retention was not cut from 14 to 7 days.", false},
		{"the older says it too", "Prod Loki retention went from 14 to 30 days.", "Prod Loki retention was cut from 14 to 7 days.", false},
		{"a range, not a change", "The checkout HPA minimum is 3 replicas.", "The checkout HPA scales from 3 to 10 replicas.", false},
		{"another environment", "Staging log retention is 14 days.", "Prod log retention was cut from 14 to 7 days.", false},
		{"another service", "The orders service database runs on MySQL 5.7.", "The billing service database was migrated from MySQL 5.7 to MySQL 8.0.", false},
		{"another service, a count", "The checkout service in prod runs 3 replicas.", "The search service in prod was scaled from 3 to 5 replicas.", false},
		{"a number that names, not counts", "The orders database's shard 3 lives on node-7.", "The orders database was resharded from 3 to 8 shards.", false},
		{"no longer, then another clause", "Billing exports run at 02:00 UTC.", "The billing service no longer uses Redis, so exports run at 02:00 UTC now.", false},
		{"a time moved for another thing", "The orders DB vacuum runs at 02:00 UTC.", "Orders DB backups moved from 02:00 to 04:00 UTC.", false},
		{"from A, to something else", "Prod Loki keeps 14 days of logs.", "Prod Loki moved from 14 day buckets to the archive.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, o := ReadClaim(tt.newer), ReadClaim(tt.older)
			m, got := Supplants(n.fact, o.fact)
			if got != tt.want {
				t.Fatalf("Supplants = %v (%+v), want %v\nnewer %s\nolder %s", got, m, tt.want, n.fact, o.fact)
			}
			if _, viaRewrites := Rewrites(n, o); tt.want && !viaRewrites {
				t.Error("Rewrites misses a pair Supplants accepts")
			}
			if !tt.want {
				return
			}
			// SlotCandidates must list the pair for Rewrites to see it.
			pairs := SlotCandidates([]Claim{o, ReadClaim("Unrelated: the wiki is on Confluence."), n})
			if !slices.Contains(pairs, [2]int{0, 2}) {
				t.Errorf("SlotCandidates %v misses the pair", pairs)
			}
		})
	}
}
