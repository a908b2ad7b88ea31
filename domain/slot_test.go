package domain

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSameSlot(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		// One slot, another value: any predicate, values of several kinds.
		{"host", "The staging database of the payments service is pay-db-stage-1.", "The staging database of the payments service is pay-db-stage-2.", true},
		{"weekday", "The on-call rotation changes on Monday.", "The on-call rotation changes on Thursday.", true},
		{"multi-word value", "The deploy pipeline runs on self-hosted large runners.", "The deploy pipeline runs on GitHub-hosted ubuntu runners.", true},
		{"time with unit", "The nightly export of Billing runs at 02:00 UTC.", "The nightly export of Billing runs at 03:30 UTC.", true},
		{"version", "The Go services are pinned to Go 1.21 in CI.", "The Go services are pinned to Go 1.22 in CI.", true},
		{"version at the end", "Go services are pinned to 1.21.", "Go services are pinned to 1.23.", true},
		{"person", "Schema changes are reviewed by Dana Reyes.", "Schema changes are reviewed by Sam Ortiz.", true},
		{"team", "The payments repository is owned by team Ledger.", "The payments repository is owned by team Atlas.", true},
		{"paraphrased relation", "The primary database of Search lives in eu-west-1.", "The primary database of Search moved to eu-central-1.", true},
		{"duration", "Customer session tokens expire after 30 minutes.", "Customer session tokens expire after 12 hours.", true},
		{"second clause ignored", "The gateway listens on port 8443; TLS ends there.", "The gateway listens on port 9443.", true},
		{"article dropped", "The web app ships on Tuesdays.", "Web app ships on Thursdays.", true},
		{"article before the value", "Schema migrations on fleetdb are reviewed by the Bedrock team.", "Schema migrations on fleetdb are reviewed by the Keel team.", true},
		{"value with an article", "The geocoder falls back to Nominatim when HERE times out.", "The geocoder falls back to the self-hosted Photon cluster when HERE times out.", true},
		{"condition with a verb", "The eligibility service falls back to Change Healthcare when Availity is down.", "The eligibility service falls back to Waystar when Availity is down.", true},
		{"time with a long unit", "The appointment reminder batch is sent at 18:00 clinic local time.", "The appointment reminder batch is sent at 17:00 clinic local time.", true},
		{"value refined by a phrase", "Staging deploys are triggered by merging to develop.", "Staging deploys are triggered by merging to main with the deploy-staging label.", true},
		{"a possessive and now", "storefront-web's release train leaves on Tuesdays.", "The storefront-web release train now leaves on Wednesdays, with the cut at 10:00 UTC.", true},
		{"an aside in parentheses", "Our fallback card processor is Adyen (primary stays Stripe).", "Fallback card processor is now Checkout.com; Adyen was retired at contract end.", true},
		{"an aside inside the subject", "The mobile (iOS and Android) release branch is cut on Tuesdays.", "The mobile release branch is cut on Thursdays.", true},
		{"an aside inside the subject, two subjects", "The mobile (iOS) release branch is cut on Tuesdays.", "The web release branch is cut on Thursdays.", false},
		{"an aside never closed", "The mobile (iOS release branch is cut on Tuesdays.", "The mobile release branch is cut on Thursdays.", false},
		{"a quantity, its unit and what it is counted over", "The free-trial meter allows 5 free exports per rolling 30 days.", "The free-trial meter allows 3 free exports per rolling 30 days.", true},
		{"a rate", "The geocoding API allows each internal client 50 requests per second.", "The geocoding API allows each internal client 200 requests per second.", true},
		{"a rate over two qualifiers", "The public API allows 20 requests per minute per client.", "The public API allows 60 requests per minute per client.", true},
		{"a weekday before a long time of day", "The crew roster freeze starts on Thursday at 12:00 base local time.", "The crew roster freeze starts on Wednesday at 12:00 base local time.", true},
		{"a weekday before a long time of day, another subject", "The crew roster freeze starts on Thursday at 12:00 for the cabin crew.", "The crew roster freeze starts on Wednesday at 12:00 for the pilots.", false},
		{"a number in the subject, a time after it", "The export job for shard 3 runs at 02:00 UTC.", "The export job for shard 4 runs at 02:00 UTC.", false},
		{"a quantity, its subject beside the number", "The public API allows internal clients 1000 requests per minute.", "The public API allows partners 100 requests per minute.", false},
		{"a quantity in a label, its value after the colon", "Rate limit for tier 2 requests per second: 200.", "Rate limit for tier 1 requests per second: 500.", false},
		{"a long qualifier after plain objects", "The Redis cache keeps carts for 30 minutes after last access.", "The Redis cache keeps sessions for 30 minutes after last access.", false},
		{"a quantity, then another subject", "The quota allows 5 exports per day for billing.", "The quota allows 9 exports per day for search.", false},
		{"a quantity, a tail with a verb", "The meter allows 5 articles per month that are free.", "The meter allows 3 articles per month that are free.", false},
		{"owned by the team", "The frontdesk web app is owned by the Lighthouse squad.", "The frontdesk web app is owned by the Anchor squad.", true},

		// Two subjects, one relation: never a rewrite.
		{"subject differs", "The nightly export of Billing runs at 02:00 UTC.", "The nightly export of Search runs at 02:00 UTC.", false},
		{"subject differs, value too", "The on-call rotation of Payments is managed by Priya.", "The on-call rotation of Search is managed by Tomasz.", false},
		{"subject word differs", "The web repository is owned by team Atlas.", "The mobile repository is owned by team Atlas.", false},
		{"subject after of", "The retry limit of the webhook sender is 5.", "The retry limit of the mail sender is 5.", false},
		{"subject first", "Payments deploys to eu-west-1.", "Search deploys to eu-west-1.", false},
		{"frame open on of", "Ann is responsible for the rotation of api-tokens.", "Ann is responsible for the rotation of db-credentials.", false},
		{"frame open after for a", "Steps for a new webhook: register it, then sign it.", "Steps for a new cron job: add it to the schedule file.", false},
		{"frame open after of the", "The rotation of the staging certificates is monthly.", "The rotation of the staging keys is monthly.", false},

		// Other relations or polarity: no rewrite either.
		{"negation", "Deploys are frozen on Fridays.", "Deploys are not frozen on Fridays.", false},
		{"relation differs", "The staging database of Payments is pay-db-stage-1.", "The staging database of Payments has 40 tables.", false},
		{"predicate differs before a shared value", "The deploy pipeline runs on large runners.", "The deploy pipeline fails on large runners.", false},
		{"identical", "Retries are capped at 3.", "Retries are capped at 3.", false},
		{"too short", "Use tabs.", "Use spaces.", false},
		{"long difference", "The staging database is pay-db-stage-1.", "The staging database is the one we set up for the load tests last spring.", false},
		{"subject after for", "Deploy approvals for payments in prod need two reviewers.", "Deploy approvals for search in prod need two reviewers.", false},
		{"subject before a qualifier", "Deploy approvals for payments in prod.", "Deploy approvals for search in prod.", false},
		{"subject after of the", "The owner of the payments service is Ann.", "The owner of the billing service is Ann.", false},
		{"subject after of the, long tail", "The retry limit of the webhook sender is 5 per minute.", "The retry limit of the mail sender is 5 per minute.", false},
		{"two subjects, a number and a unit", "Billing exports run at 02:00 UTC daily.", "Search exports run at 02:00 UTC daily.", false},
		{"refined value, another subject", "Billing deploys are triggered by merging to develop.", "Search deploys are triggered by merging to main with the deploy label.", false},
		{"refined value shares a word", "Deploys are triggered by merging to main.", "Deploys are triggered by merging to main with the deploy label.", false},
		{"refining phrase with a verb", "The cache is backed by Redis.", "The cache is backed by Postgres with what was left of the old cluster.", false},
		{"values share a word", "The runners are large ubuntu machines.", "The runners are small ubuntu boxes.", false},
		{"short frame, named values, a shared purpose", "The console uses Jest for unit tests.", "The console uses Vitest for unit tests.", true},
		{"short frame, the relation differs", "The deploy pipeline runs on large runners.", "The deploy pipeline fails on large runners.", false},
		{"short frame, values not names", "The console uses snapshots for unit tests.", "The console uses mocks for unit tests.", false},
		{"short frame, one word shared after", "The console uses Jest heavily.", "The console uses Vitest heavily.", false},
		{"short frame, another subject", "Billing uses Jest for unit tests.", "Search uses Jest for unit tests.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := ReadClaim(tt.a), ReadClaim(tt.b)
			_, got := SameSlot(a, b)
			_, back := SameSlot(b, a)
			if got != tt.want || back != tt.want {
				t.Errorf("SameSlot(%q, %q) = %v, reversed %v; want %v", a, b, got, back, tt.want)
			}
			if got && !shareBlock(a, b) {
				t.Errorf("a pair in no one block: %q, %q", a.blockKeys(), b.blockKeys())
			}
		})
	}
}

// shareBlock reports whether a and b share one of their block keys.
func shareBlock(a, b Claim) bool {
	ka, kb := a.blockKeys(), b.blockKeys()
	return slices.ContainsFunc(ka[:], func(k string) bool { return k != "" && slices.Contains(kb[:], k) })
}

// FuzzSameSlot holds the rule's invariants on any two gists: symmetric,
// never true of a claim and itself, and only within one block.
func FuzzSameSlot(f *testing.F) {
	f.Add("The on-call rotation changes on Monday.", "The on-call rotation changes on Thursday.")
	f.Add("The nightly export of Billing runs at 02:00 UTC.", "The nightly export of Search runs at 02:00 UTC.")
	f.Add("a b c", "a b c d")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := ReadClaim(x), ReadClaim(y)
		m, ok := SameSlot(a, b)
		if _, back := SameSlot(b, a); back != ok {
			t.Fatalf("not symmetric: %q %q", x, y)
		}
		if _, self := SameSlot(a, a); self {
			t.Fatalf("a claim rewrites itself: %q", x)
		}
		if ok && (!shareBlock(a, b) || m.A == m.B) {
			t.Fatalf("pair outside one block or with one value: %q %q %+v", x, y, m)
		}
	})
}

// TestSupersededBy: a listing marks a lesson only where an earned link
// replaces it: not for a link between two subjects, to itself, or to a
// lesson outside the list, and each successor once, sorted.
func TestSupersededBy(t *testing.T) {
	old := Lesson{ID: "old", Gist: "The staging database of the payments service is pay-db-stage-1."}
	newer := Lesson{ID: "new", Gist: "The staging database of the payments service is pay-db-stage-2.",
		Links: []LessonLink{{Rel: RelSupersedes, Target: "old"}, {Rel: RelSupersedes, Target: "old"}, {Rel: RelSupersedes, Target: "gone"}}}
	newest := Lesson{ID: "a-newest", Gist: "The staging database of the payments service is pay-db-stage-3.",
		Links: []LessonLink{{Rel: RelSupersedes, Target: "old"}, {Rel: RelSupersedes, Target: "a-newest"}}}
	other := Lesson{ID: "other", Gist: "Never trust the payments gateway's retries.",
		Links: []LessonLink{{Rel: RelSupersedes, Target: "new"}, {Rel: RelSupports, Target: "old"}}}
	got := SupersededBy([]Lesson{old, newer, newest, other}, nil)
	want := map[string][]string{"old": {"a-newest", "new"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SupersededBy = %v, want %v", got, want)
	}
	// The newer lesson's tags read as holds reads them: a subject word the
	// older names and only a tag of the newer holds.
	tagged := []Lesson{
		{ID: "q-old", Gist: "The visibility timeout on the export orders queue is 45 seconds."},
		{ID: "q-new", Gist: "Export queue visibility timeout was raised to 90s.", Tags: []string{"order"},
			Links: []LessonLink{{Rel: RelSupersedes, Target: "q-old"}}},
	}
	stems := func(l Lesson) func(string) bool {
		return func(w string) bool { return strings.HasPrefix(strings.ToLower(w), "order") && len(l.Tags) > 0 }
	}
	if got := SupersededBy(tagged, stems); !reflect.DeepEqual(got, map[string][]string{"q-old": {"q-new"}}) {
		t.Fatalf("SupersededBy with the tag read as a stem = %v, want q-old superseded by q-new", got)
	}
}
