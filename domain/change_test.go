package domain

import "testing"

func TestAnnouncesChange(t *testing.T) {
	for _, tt := range []struct {
		gist string
		want bool
	}{
		{"The croft canary now takes a fifth of production traffic.", true},
		{"Ines moved over to the Parlour crew, so Dele is who store incidents go to.", true},
		{"Tomás Ferreira took over Android release management from Marta.", true},
		{"The v1 topic is no longer written.", true},
		{"As of March, exports land in the new container.", true},
		{"Claim events MOVED to the v2 topic.", true},
		{"Escalation contact for ledger incidents is Ines Varga.", false},
		{"Vary on the edge-computed header instead.", false},
		{"The bucket is used to store lab PDFs.", false},
		{"Know the snowplow's nowcast before deploying.", false}, // "now" only as a word
		{"Never upload a changed catalogue under an existing name.", false},
		{"Don't break /api/v1 until the operators have migrated off it.", false},
		{"The queue was migrated to quorum queues in May.", true},
		{"Since the March policy change, ledger discrepancies go to the compliance head.", true},
		{"Effective next sprint, release branches are cut on Thursday.", true},
		{"Per the runbook, ledger discrepancies go to the compliance head.", false},
		{"Since staging has no TLS the client port is 8080.", false},
		{"The search API's throttle went up to 50 requests per second.", true},
		{"The upload size limit was raised to 50 MB.", true},
		{"The upload size limit was raised in review.", false},
		{"", false},
	} {
		if got := AnnouncesChange(tt.gist); got != tt.want {
			t.Errorf("AnnouncesChange(%q) = %v, want %v", tt.gist, got, tt.want)
		}
	}
}

func TestMayUpdate(t *testing.T) {
	for _, tt := range []struct {
		newer, older string
		want         bool
	}{
		// Without a typed value on both sides the words decide.
		{"Since the reorganisation, refund disputes now go to the finance desk.", "Refund disputes are escalated to the payments on-call engineer.", true},
		// The same subject and a predicate word in common.
		{"We now cut the client release branch on Thursday at 10:00 CET.", "Client release branches are cut on Tuesdays at 10:00 CET.", true},
		// A value that moved may change the predicate with it.
		{"The build cache moved to cache-2.corp.internal last sprint.", "The build cache is served from cache-1.corp.internal.", true},
		{"Lab result PDFs now go to `gs://clinical-attachments` under the `lab/` prefix.", "Lab result PDFs extracted by labline are stored in `gs://lab-pdfs`.", true},
		// The older names its subject at more length than the newer.
		{"Release branches are now cut on Thursday at 10:00 CET.", "Client release branches are cut on Tuesdays at 10:00 CET.", true},
		// A rule is not a value that changed.
		{"Retries now go through the shared payments client.", "Never retry the payments client without backoff and jitter.", false},
		{"Deploys now go out from the release branch.", "Don't deploy on Fridays from the release branch.", false},
		// A narrower subject, another subject, another predicate.
		{"Nightly billing jobs on the data cluster now start at 02:30 UTC.", "Nightly jobs on the data cluster start at 01:00 UTC.", false},
		{"The production cluster tsl-prod-us is now in us-east-2.", "The production cluster tsl-prod-eu runs in eu-west-1.", false},
		{"Staging database backups now run at 03:00 UTC.", "Staging database backups are verified at 05:00 UTC.", false},
		{"Invoice PDFs now go to `gs://clinical-attachments`.", "Lab result PDFs are stored in `gs://lab-pdfs`.", false},
		// An older fact read as one run of words shares its predicate
		// with the newer past the subject's words, or does not.
		{"Per the INC-4219 follow-up, turnstile now keeps entitlement lookups cached for only 60 seconds.", "turnstile caches entitlement lookups for 300 seconds.", true},
		{"turnstile now keeps sessions for 60 seconds.", "turnstile caches entitlement lookups for 300 seconds.", false},
		// A newer read as one run of words updates the fact whose value it
		// names as replaced, and no other.
		{"Briefing weather comes from the METAR gateway at https://metar-gw.ops.corp.internal/v2 now; the old wx-feed v1 endpoint was decommissioned.", "dispatch pulls weather for briefings from https://wx-feed.corp.internal/v1.", true},
		{"Briefing weather comes from the METAR gateway at https://metar-gw.ops.corp.internal/v2 now.", "dispatch pulls weather for briefings from https://wx-feed.corp.internal/v1.", false},
		{"Briefing weather comes from the METAR gateway at https://metar-gw.ops.corp.internal/v2 now; the old wx-feed v1 endpoint was decommissioned.", "dispatch pulls radar tiles from https://radar.corp.internal/v1.", false},
		// What moved may be named by its head ("order confirmation
		// events") or with the change's own words ("throttle went up"),
		// when the value is pinned: called old, or the same rate.
		{"Order confirmation events moved to the `orders-confirmed-v3` queue; the old v2 queue is drained.", "checkout publishes order confirmations to the queue `orders.confirmations.v2`.", true},
		{"The search API's throttle went up to 50 requests per second per key.", "search API rate-limits callers to 20 requests per second per key.", true},
		{"Order confirmation events moved to the `orders-confirmed-v3` queue.", "checkout publishes order confirmations to the queue `orders.confirmations.v2`.", false},
		{"Order confirmation emails moved to the `orders-confirmed-v3` template; the old v2 template is gone.", "checkout publishes order confirmations to the queue `orders.confirmations.v2`.", false},
		{"Nightly billing jobs moved to 02:30 UTC.", "Nightly jobs on the data cluster start at 01:00 UTC.", false},
		{"The search API's throttle went up to 50 requests per second per key.", "search API keeps 20 workers per key.", false},
		// Another fact about the same thing, a narrower subject, a rate
		// narrowed after it, a move said of something else.
		{"Kafka consumer lag alert threshold went up to 5000 messages.", "Kafka consumer batch size is 500 messages.", false},
		{"The export queue consumer moved to the `export-worker-v2` deployment.", "The export queue producer runs in the `export-api-v1` deployment.", false},
		{"The checkout service in staging went down to 2 replicas.", "The checkout service runs 6 replicas.", false},
		{"The checkout service canary went up to 3 replicas.", "The checkout service runs 12 replicas in prod.", false},
		{"Nightly jobs for billing moved to the `billing-nightly-v2` queue.", "Nightly jobs run on the `nightly-v1` queue.", false},
		{"CI runners for the mobile repo moved to 8 vCPU machines.", "CI runners use 4 vCPU machines.", false},
		{"Search API rate limit went up to 200 requests per second for internal callers.", "Search API rate limit is 20 requests per second.", false},
		{"Checkout API rate limit for partners went up to 50 requests per second.", "Checkout API rate limit is 20 requests per second.", false},
		{"The checkout service in staging now runs 2 replicas, so deploys go faster.", "The checkout service runs 6 replicas.", false},
		{"The build farm scheduler moved to a new host and runs 3 jobs at once.", "The build farm runs 12 agents.", false},
	} {
		if got := MayUpdate(tt.newer, tt.older); got != tt.want {
			t.Errorf("MayUpdate(%q, %q) = %v, want %v", tt.newer, tt.older, got, tt.want)
		}
	}
}
