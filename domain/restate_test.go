package domain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func TestReadFact(t *testing.T) {
	tests := []struct{ gist, want string }{
		{"The export queue visibility timeout is 45 seconds.", "the export queue visibility timeout | is 45 seconds<duration>"},
		{"Export queue timeout was raised to 90s, since retries pile up.", "export queue timeout | was raised to 90s<duration> since retries pile up"},
		{"Invoices go out on Tuesday and Thursday at 7am CET.", "invoices go out on tuesday and thursday<weekday> at 7am cet<time>"},
		{"The kiosk app's minimum Android version is Android 12.", "the kiosk app minimum android version | is android 12<version:android>"},
		{"Workers are pinned to v2.3 (see the runbook) until March.", "workers | are pinned to v2.3<version:> until march"},
		{"Metrics ship to graphite-02.ops.internal; the old box is gone.", "metrics ship to graphite-02.ops.internal<id>"},
		{"The billing dashboards are owned by the Kestrel team.", "the billing dashboards | are owned by the kestrel team<party>"},
		{"The approver for firewall changes is Noor Haddad.", "the approver for firewall changes | is noor haddad<party>"},
		{"Cache entries are capped at 512 MB.", "cache entries | are capped at 512 mb<size>"},
		{"Approver for payouts: Lena Fischer.", "approver for payouts | lena fischer<party>"},
		{"macOS/iOS builds use Xcode 15.4.", "macos ios builds use xcode 15.4<version:xcode>"},
		{"Retries give up after 5 attempts.", "retries give up after 5<number> attempts"},
		{"Settlements now run on 15-minute periods.", "settlements | now run on 15-minute<duration> periods"},
		{"Search is now os-02.prod.internal:443, behind the SigV4 proxy.", "search | is now os-02.prod.internal:443<id> behind the sigv4 proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := ReadFact(tt.gist).String(); got != tt.want {
				t.Errorf("ReadFact(%q)\n got %s\nwant %s", tt.gist, got, tt.want)
			}
		})
	}
}

func TestRestates(t *testing.T) {
	tests := []struct {
		name         string
		older, newer string
		want         bool
	}{
		// The fact rewritten in other words: newer subject within the
		// older's, another value of one type after the newer's predicate.
		{"duration, shorter subject", "The visibility timeout on the export message queue is 45 seconds.", "Export queue visibility timeout was raised to 90s, since retries pile up.", true},
		{"weekdays, relation reworded with a marker", "Vendor invoices go out in one run on Tuesdays at 07:00 CET.", "Vendor invoice runs now happen Monday and Thursday at 07:00 CET.", true},
		{"version after a product", "The kiosk app's minimum Android version is Android 12.", "Minimum Android version for the kiosk app is now Android 13.", true},
		{"version, relation dropped", "Java services are pinned to Java 17.", "Java services are now on Java 21 after the audit.", true},
		{"a release of a number and a letter after its product", "The invoicing database runs Oracle 12c.", "invoicing has been on Oracle 19c since the spring migration.", true},
		{"a number and a letter after another product", "The invoicing database runs Oracle 12c.", "invoicing has been on Sybase 16a since the spring migration.", false},
		{"a number and a letter without a product", "The invoicing cluster keeps 12c.", "invoicing cluster keeps 19c now.", false},
		{"told as what we did to it", "The booking API is pinned to Node 18 in CI.", "We moved the booking API onto Node 22 last month.", true},
		{"told as what we did to another", "The billing API is pinned to Node 18 in CI.", "We moved the booking API onto Node 22 last month.", false},
		{"pushed back, after a decision label", "The nightly reconcile job runs at 03:00 UTC.", "Decision (2025-02): we pushed the nightly reconcile job back to 05:30 UTC so the exports land first.", true},
		{"a heads-up label", "The nightly reconcile job runs at 03:00 UTC.", "Heads-up: the nightly reconcile job now runs at 04:15 UTC.", true},
		{"a label whose aside limits the claim", "The export queue visibility timeout is 45 seconds.", "Note (staging): the export queue visibility timeout is now 90s.", false},
		{"FYI with an aside that limits the claim", "The export queue visibility timeout is 45 seconds.", "FYI (staging): the export queue visibility timeout is now 90s.", false},
		{"pushed somewhere, then a time", "The billing-sync hotfix window is at 02:00 UTC.", "We pushed the billing-sync hotfix to production at 14:00 UTC.", false},
		{"pushed to a host, then a time", "The nightly reconcile job runs at 03:00 UTC.", "We pushed the nightly reconcile job to GitHub at 05:30 UTC.", false},
		{"it is no agent", "The booking API is pinned to Node 18 in CI.", "It moved the booking API onto Node 22.", false},
		{"time, older has its own verb", "The weekly catalogue export kicks off at 01:00 UTC.", "The weekly catalogue export was moved to 02:15 UTC.", true},
		{"host", "Node metrics ship to graphite-02.ops.internal from every host.", "Node metrics now ship to victoria-01.ops.internal.", true},
		{"team", "The billing dashboards are owned by the Kestrel team.", "Billing dashboard ownership has moved to the Osprey squad.", true},
		{"person after a role", "The approver for firewall changes is Noor Haddad.", "Firewall change approver is now Tomas Lind.", true},
		{"size", "Cache entries are capped at 512 MB.", "Cache entries are now capped at 2 GB per shard.", true},
		{"colon", "Approver for payouts: Lena Fischer.", "Approver for payouts is now Ravi Menon.", true},
		{"what the value measures after it", "The audit topic ledger.events keeps 14 days of retention.", "ledger.events retention was trimmed to 3 days.", true},
		{"a version's product names the slot", "scheduler runs Quartz on Java 17.", "scheduler is on Java 21 since the spring upgrade (Quartz 2.5).", true},
		{"a reason after the value", "The nightly ledger export starts at 01:00 UTC.", "The nightly ledger export was moved to 02:30 UTC because the Finance team reads it later.", true},
		{"a way after the value holds no second value", "The search cluster endpoint is search-01.prod.internal:9200.", "Search cluster is now os-02.prod.internal:443, behind the SigV4 signing proxy.", true},
		{"what holds the value named after it", "We run Redis 6.2 in every region.", "All regions are on Redis 7.2 now.", true},
		{"a compound's head", "Churn-score model retrain runs on Sundays.", "The score model retrain was switched to Wednesday nights.", true},
		{"a shared id pins the subject", "The Kafka topic orders.v2 keeps 7 days of retention.", "orders.v2 retention is now 2 days.", true},

		// Two subjects, or not a rewrite.
		{"another subject in the newer", "The nightly catalogue export starts at 01:00 UTC.", "The nightly invoice export was moved to 03:00 UTC.", false},
		{"same value", "The kiosk app is owned by the Kestrel team.", "The vendor portal is now owned by the Kestrel team.", false},
		{"newer narrows the subject", "Nightly jobs start at 01:00 UTC.", "Nightly billing jobs now start at 02:30 UTC.", false},
		{"changed value in the subject", "The Java 17 base image is pulled from registry-01.ops.internal.", "The Java 21 base image is pulled from registry-01.ops.internal.", false},
		{"two values of the type changed", "The cluster kx-prod-eu runs in eu-west-1.", "The cluster kx-prod-us is now in us-east-2.", false},
		{"relation reworded without a marker", "The deploy job is run on build-07.", "The deploy job is failing on build-09.", false},
		{"no predicate in the newer", "The deploy job runs on build-07.", "The deploy job runs on build-09.", false},
		{"negated", "Deploys are frozen on Fridays.", "Deploys are no longer frozen on Mondays.", false},
		{"one subject word", "Payouts run on Mondays.", "Payouts now run on Fridays.", false},
		{"a name each", "The Kestrel dashboard refresh runs at 01:00 UTC.", "The dashboard refresh is now at 02:00 UTC for Osprey.", false},
		{"two value types", "The backup window is 02:00 UTC.", "The backup window is now 4 hours.", false},
		{"older names more", "The visibility timeout on the export SQS queue is 45 seconds.", "Export queue visibility timeout was raised to 90s.", false},
		{"older id in the subject", "The production cluster kx-prod-eu is in eu-west-1.", "The production cluster is now in eu-central-1.", false},
		{"two relations", "Staging database backups are verified at 05:00 UTC.", "Staging database backups now run at 03:00 UTC.", false},
		{"roles swapped", "The backup window of the orders database is 02:00 UTC.", "The orders window of the backup database is now 04:00 UTC.", false},
		{"subject word only after the older value", "The retry budget of the mailer is 5 per webhook.", "Webhook retry budget is now 8.", false},
		{"a name only the older holds, no shared id", "The Kafka topic orders keeps 7 days of retention.", "orders retention is now 2 days.", false},
		{"a holder the older does not name", "We run Redis 6.2 in every region.", "All caches are on Redis 7.2 now.", false},
		{"a word the older's compound does not hold", "Churn-score model retrain runs on Sundays.", "The price model retrain was switched to Wednesday nights.", false},
		{"another version product", "scheduler runs Quartz on Java 17.", "scheduler is on Quartz 2.5 now.", false},
		{"a reason does not make a relation", "The nightly ledger export starts at 01:00 UTC.", "The nightly ledger archive was moved to 02:30 UTC because of the export.", false},
		{"two different approvers", "Schema changes to the ledger database are approved by Noor Haddad.", "Ranking experiments in search are now approved by Tomas Lind.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, o := ReadFact(tt.newer), ReadFact(tt.older)
			m, got := Restates(n, o)
			if got != tt.want {
				t.Errorf("Restates = %v (%+v), want %v\n  newer %s\n  older %s", got, m, tt.want, n, o)
			}
			if got && (m.A == "" || m.B == "" || m.Frame == "") {
				t.Errorf("a match without its values or subject: %+v", m)
			}
			_, viaClaims := Rewrites(ReadClaim(tt.newer), ReadClaim(tt.older))
			if got && !viaClaims {
				t.Error("Rewrites misses a pair Restates accepts")
			}
		})
	}
}

// TestRestatesHolding: a name of the older subject that the newer lesson's
// tags hold (Claim.Holding) is one the newer names; one they do not hold
// still parts the two subjects.
func TestRestatesHolding(t *testing.T) {
	older := "The visibility timeout on the export SQS queue is 45 seconds."
	newer := "Export queue visibility timeout was raised to 90s."
	tests := []struct {
		tags []string
		want bool
	}{
		{nil, false},
		{[]string{"sqs", "limits"}, true},
		{[]string{"SQS"}, true},
		{[]string{"export-queue", "limits"}, false},
		{[]string{"aws/sqs"}, true},
		{[]string{"sqs-dlq"}, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.tags, ","), func(t *testing.T) {
			_, got := Rewrites(ReadClaim(newer).Holding(TagHolds(tt.tags)), ReadClaim(older))
			if got != tt.want {
				t.Errorf("Rewrites with the newer tagged %q = %v, want %v", tt.tags, got, tt.want)
			}
			// Only the newer's tags count.
			if _, rev := Rewrites(ReadClaim(newer), ReadClaim(older).Holding(TagHolds(tt.tags))); rev {
				t.Error("the older lesson's tags named the newer's subject")
			}
		})
	}
}

func TestDistinctSubjects(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"The kiosk app targets API level 33.", "The watch app targets API level 30.", true},
		{"The web backend runs Python 3.12.", "The data pipeline workers run Python 3.10.", true},
		{"The kiosk app targets API level 33.", "Kiosk app target API level was bumped to 34.", false},
		{"Enable idempotence in the Kafka producer.", "Enable retries in the HTTP client.", false},
	}
	for _, tt := range tests {
		a, b := ReadFact(tt.a), ReadFact(tt.b)
		if got, back := DistinctSubjects(a, b), DistinctSubjects(b, a); got != tt.want || back != tt.want {
			t.Errorf("DistinctSubjects(%q, %q) = %v, reversed %v; want %v", tt.a, tt.b, got, back, tt.want)
		}
	}
}

// FuzzReadFact holds the reader's invariants on any gist: values are
// disjoint spans inside the sentence, the boundary is inside it, and a fact
// never restates itself.
func FuzzReadFact(f *testing.F) {
	f.Add("Export queue timeout was raised to 90s, since retries pile up.")
	f.Add("Invoices go out on Tuesday and Thursday at 7am CET.")
	f.Add("Approver for payouts: Lena Fischer (interim).")
	f.Add("macOS/iOS builds use Xcode 15.4 — see the wiki")
	f.Add("12:99 25:00 v. v1. 1.2.3 5% 10 percent 3 mins by The")
	f.Add("Jobs run on hosted runners; mac-ci-07 was decommissioned, db-01.x.internal is no longer used.")
	f.Fuzz(func(t *testing.T, gist string) {
		fa := ReadFact(gist)
		if fa.boundary < 0 || fa.boundary > len(fa.toks) {
			t.Fatalf("boundary %d of %d tokens", fa.boundary, len(fa.toks))
		}
		last := 0
		for i, v := range fa.values {
			if v.start < last || v.end <= v.start || v.end > len(fa.toks) {
				t.Fatalf("value %d spans [%d,%d) after %d of %d tokens", i, v.start, v.end, last, len(fa.toks))
			}
			last = v.end
		}
		if _, ok := Restates(fa, fa); ok {
			t.Fatalf("a fact restates itself: %q", gist)
		}
		_ = fa.String()
		c := ReadClaim(gist)
		if _, ok := Rewrites(c, c); ok {
			t.Fatalf("a claim rewrites itself: %q", gist)
		}
		for _, g := range c.gone {
			if !strings.Contains(strings.ToLower(gist), g) {
				t.Fatalf("gone id %q is not in %q", g, gist)
			}
		}
	})
}

// factWords are the words the property test builds gists from: subjects,
// relations, markers and values of every type.
var factWords = strings.Fields(`the the kiosk vendor ledger export queue invoice dashboard app service nightly weekly
	is are was now moved raised to on at by in for of runs starts owned approver
	Monday Tuesday and Friday 02:00 03:30 UTC 45 seconds 90s 2 GB 512 MB v1.4 v2.0 Node 18 Node 20
	build-07 build-09 eu-west-1 us-east-2 Kestrel Osprey team Noor Haddad not . , ;
	took over from from Oracle 12c 19c billing-sync on-call Heads-up: FYI we pushed back onto`)

// handoverShapes are gists of who answers for what, and of its change
// of hands, which random words rarely form.
var handoverShapes = []string{"{P} took over {S} {R} from {Q}.", "{Q} is the {R} owner for {S}.", "{S} is owned by {Q}.", "{S} {R} moved to {P} from {Q}."}

func randomGist(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		pick := func(l ...string) string { return l[r.IntN(len(l))] }
		return strings.NewReplacer(
			"{P}", pick("Kestrel", "Osprey", "Noor Haddad", "Team Osprey"),
			"{Q}", pick("Kestrel", "Noor Haddad", "Team Kestrel", "Lena Fischer"),
			"{S}", pick("billing-sync", "the ledger export", "kiosk app", "build-07"),
			"{R}", pick("on-call", "approver", "release"),
		).Replace(handoverShapes[r.IntN(len(handoverShapes))])
	}
	n := 3 + r.IntN(12)
	w := make([]string, n)
	for i := range w {
		w[i] = factWords[r.IntN(len(factWords))]
	}
	return strings.Join(w, " ")
}

// TestRewritesProperties checks, on random gists (the seed is printed),
// that no claim rewrites itself, that the merge veto is symmetric, that
// SlotCandidates lists every pair Rewrites accepts in either order, and
// that it lists the same pairs whatever order the claims come in.
func TestRewritesProperties(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	prop := func() bool {
		gists := make([]string, 24)
		for i := range gists {
			gists[i] = randomGist(r)
		}
		claims := make([]Claim, len(gists))
		for i, g := range gists {
			claims[i] = ReadClaim(g)
			if _, ok := Rewrites(claims[i], claims[i]); ok {
				t.Logf("rewrites itself: %q", g)
				return false
			}
		}
		listed := map[[2]string]bool{}
		for _, p := range SlotCandidates(claims) {
			listed[[2]string{min(gists[p[0]], gists[p[1]]), max(gists[p[0]], gists[p[1]])}] = true
		}
		for i := range claims {
			for j := range claims {
				if i == j || gists[i] == gists[j] {
					continue
				}
				a, b := MergeText{Gist: gists[i]}, MergeText{Gist: gists[j]}
				if !slices.Equal(MergeVetoReasons(a, b), MergeVetoReasons(b, a)) {
					t.Logf("veto not symmetric: %q %q", gists[i], gists[j])
					return false
				}
				if _, ok := Rewrites(claims[i], claims[j]); ok && !listed[[2]string{min(gists[i], gists[j]), max(gists[i], gists[j])}] {
					t.Logf("candidates miss a rewrite: %q of %q", gists[i], gists[j])
					return false
				}
			}
		}
		perm := r.Perm(len(claims))
		shuffled := make([]Claim, len(claims))
		for k, i := range perm {
			shuffled[k] = claims[i]
		}
		again := map[[2]string]bool{}
		for _, p := range SlotCandidates(shuffled) {
			a, b := gists[perm[p[0]]], gists[perm[p[1]]]
			again[[2]string{min(a, b), max(a, b)}] = true
		}
		if len(again) != len(listed) {
			t.Logf("candidates depend on order: %d pairs, %d shuffled", len(listed), len(again))
			return false
		}
		for p := range listed {
			if !again[p] {
				t.Logf("candidates depend on order: %q", p)
				return false
			}
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 300}); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
}

func TestRetires(t *testing.T) {
	tests := []struct {
		name         string
		older, newer string
		want         string // the value retired; "" when none
	}{
		{"host named gone after a semicolon", "iOS builds run on the self-hosted runner mac-ci-07.", "Mobile CI jobs now run on hosted runners; mac-ci-07 was decommissioned.", "mac-ci-07"},
		{"a host's first label", "The staging bastion is bastion-stg-02.corp.internal.", "Staging access goes through jump-stg.corp.internal; bastion-stg-02 is retired.", "bastion-stg-02.corp.internal"},
		{"no longer", "Exports are written to bucket exp-archive-01.", "exp-archive-01 is no longer used, exports go to the data lake.", "exp-archive-01"},
		{"shut down", "Grafana for ops is grafana-ops-1.corp.internal.", "grafana-ops-1 was shut down in May.", "grafana-ops-1.corp.internal"},
		{"archived, after a rewrite in other words", "Front-end errors go to the Sentry project `shop-web`.", "Since the rewrite, the storefront's browser errors report to the `shop-next` Sentry project; `shop-web` is archived.", "shop-web"},

		{"negated", "iOS builds run on the self-hosted runner mac-ci-07.", "mac-ci-07 is not decommissioned yet.", ""},
		{"archived to a place", "Invoice PDFs are stored in s3-archive-01.", "Old invoices are archived to s3-archive-01 after 90 days.", ""},
		{"a backticked name of another thing archived", "`billing-api` is deployed by Argo CD.", "The `billing-api` Jira board is archived.", ""},
		{"a backticked name of another thing removed", "iOS checkout uses the `new-checkout` flag.", "The `new-checkout` flag is removed for Android.", ""},
		{"two ids in the clause", "iOS builds run on the self-hosted runner mac-ci-07.", "mac-ci-07 and mac-ci-08 were retired.", ""},
		{"no word saying gone", "iOS builds run on the self-hosted runner mac-ci-07.", "mac-ci-07 now also runs Android builds.", ""},
		{"another id", "iOS builds run on the self-hosted runner mac-ci-07.", "mac-ci-09 was decommissioned.", ""},
		{"a label is not a prefix", "The staging bastion is bastion-stg-02b.corp.internal.", "bastion-stg-02 is retired.", ""},
		{"the older says it too", "mac-ci-07 is retired; iOS builds moved to hosted runners.", "mac-ci-07 was decommissioned last week.", ""},
		{"older negated", "Never route exports through exp-archive-01.", "exp-archive-01 is decommissioned.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, got := Retires(ReadClaim(tt.newer), ReadClaim(tt.older))
			if got != (tt.want != "") || got && m.B != tt.want {
				t.Errorf("Retires = %v (%+v), want %q", got, m, tt.want)
			}
			if _, viaRewrites := Rewrites(ReadClaim(tt.newer), ReadClaim(tt.older)); tt.want != "" && !viaRewrites {
				t.Error("Rewrites misses a pair Retires accepts")
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

func TestOwnership(t *testing.T) {
	tests := []struct {
		gist   string
		owners string // "" when the gist says nothing of who owns what
	}{
		{"The routing service is owned by team Waypoint.", "team waypoint"},
		{"forecast (Dagster pipelines) is owned by the Forecasting team.", "the forecasting team"},
		{"Ownership of relay-gw moved to the Platform team.", "the platform team"},
		{"payments-core is owned by the Ledger team; Ines Okafor is the lead to ping.", "the ledger team"},
		{"The billing exporter is maintained by Dana Reyes.", "dana reyes"},
		{"Terraform changes to the prod root are approved by Marcus Bell.", ""},
		{"Each service owns its database; never read another service's tables.", ""},
		{"The owner field of a lesson is optional.", ""},
	}
	for _, tt := range tests {
		owners, rest, ok := Ownership(tt.gist)
		if got := strings.Join(owners, " "); got != tt.owners || ok != (tt.owners != "") {
			t.Errorf("Ownership(%q) = %q, %v; want %q", tt.gist, got, ok, tt.owners)
		}
		if ok && len(rest) == 0 {
			t.Errorf("Ownership(%q): no words beside the owners", tt.gist)
		}
	}
}

// BenchmarkSlotCandidates lists the candidate pairs of a hook's hits: 200
// claims, 60 of them near-duplicates (the same fact learned again with a
// case number, as a team that has not slept on them yet holds).
func BenchmarkSlotCandidates(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	claims := make([]Claim, 200)
	for i := range claims {
		g := randomGist(r)
		if i%10 < 3 {
			g = fmt.Sprintf("Payments gateway retries need backoff and jitter, case %d-%d.", i, 1796512345678+i*7919)
		}
		claims[i] = ReadClaim(g)
	}
	b.ReportAllocs()
	for b.Loop() {
		SlotCandidates(claims)
	}
}

func TestLeadIn(t *testing.T) {
	tests := []struct {
		gist string
		want int
	}{
		{"Heads-up: the export bucket is exp-archive-02.", 1},
		{"FYI the canary takes 20% of traffic now.", 1},
		{"Decision (2025-04): we run the build at 05:30 UTC.", 2},
		{"Decision (made in April 2025): builds run at 05:30.", 5},
		{"Note, the staging host is stg-2 now.", 1},
		{"Note that the staging host is stg-2.", 0},
		{"Approver for payouts: Lena Fischer.", 0},
		{"Heads-up: stg-2.", 0},
		{"Decision (2025-04) was to run at 05:30 UTC.", 0},
		{"Note (staging): the export timeout is now 90s.", 0},
		{"Heads-up (staging only): the export timeout is now 90s.", 0},
		{"FYI (staging): the export timeout is now 90s.", 0},
		{"Decision (EU region): the export timeout is 90s.", 0},
		{"FYI (2025-04) the canary takes 20% of traffic now.", 2},
		{"tl;dr from the #client thread: the client caches flags for the whole session.", 5},
		{"TL;DR: the client caches flags for the whole session.", 1},
		{"Heads-up from staging: the pod limit is 40.", 0},
		{"tl;dr from the #ops thread, the main host is db-b now.", 0},
		{"tl;dr from the platform team at the offsite in May: the host is db-b now.", 0},
		{"Note from: the host is db-b.", 0},
		{"Per the INC-4219 follow-up, turnstile now caches entitlements for 60 seconds.", 4},
		{"Since the March policy change, ledger discrepancies go to the compliance head.", 5},
		{"As of v3, the export timeout is 90s.", 3},
		{"As the export is slow, its timeout is 90s.", 0},
		{"After a deploy, the cache is cold for 5 minutes.", 0},
		{"In staging, the export timeout is 90s.", 0},
		{"Since the export runs nightly its timeout is 90s.", 0},
		{"Per region, the pod limit is 40.", 0},
		{"Per Ingrid, the pod limit is 40 now.", 2},
	}
	for _, tt := range tests {
		if got := leadIn(strings.Fields(tt.gist)); got != tt.want {
			t.Errorf("leadIn(%q) = %d, want %d", tt.gist, got, tt.want)
		}
	}
}
