package domain_test

import (
	"fmt"

	"github.com/borg-memory/borg/domain"
)

func ExampleDerive() {
	events := []domain.Event{
		{MS: 100, Kind: domain.KindSession, Session: "s-1", Repo: "api"},
		{MS: 110, Kind: domain.KindCreated, Session: "s-1", Lesson: "migrate-first"},
		{MS: 200, Kind: domain.KindSession, Session: "s-2", Repo: "api"},
		{MS: 210, Kind: domain.KindAsked, Session: "s-2", Lesson: "migrate-first"},
		{MS: 250, Kind: domain.KindChanged, Session: "s-2", Lesson: "migrate-first"},
	}
	lessons := []domain.LessonInfo{{ID: "migrate-first", Reach: "repo:api"}}
	for _, m := range domain.Derive(events, lessons, "", domain.DefaultWeights) {
		fmt.Printf("%s: uses %d, activation %.3f, belief Beta(%g, %g), mean weight %.3f\n",
			m.ID, m.Uses, m.Activation, m.Alpha, m.Beta, m.MeanWeight)
	}
	// Output:
	// migrate-first: uses 2, activation 0.535, belief Beta(2, 1), mean weight 1.322
}

func ExampleSameSlot() {
	older := domain.ReadClaim("The staging database of the payments service is pay-db-stage-1.")
	newer := domain.ReadClaim("The staging database of the payments service is pay-db-stage-2.")
	m, ok := domain.SameSlot(newer, older)
	fmt.Printf("%v %q: %q replaces %q\n", ok, m.Frame, m.A, m.B)
	// Output: true "staging database of the payments service is": "pay-db-stage-2" replaces "pay-db-stage-1"
}

func ExampleRewrites() {
	older := domain.ReadClaim("The visibility timeout on the export message queue is 45 seconds.")
	newer := domain.ReadClaim("Export queue visibility timeout was raised to 90s, since retries pile up.")
	m, ok := domain.Rewrites(newer, older)
	fmt.Printf("%v %q: %q replaces %q\n", ok, m.Frame, m.A, m.B)
	// Output: true "export queue visibility timeout": "90s" replaces "45 seconds"
}

func ExampleMergeOutcomes() {
	pairs := []domain.MergePair{
		{KeepPath: "gf", DropPath: "a", Similarity: 0.97},
		{KeepPath: "b", DropPath: "gf", Similarity: 0.95},
		{KeepPath: "gf", DropPath: "c", Similarity: 0.93},
	}
	for _, o := range domain.MergeOutcomes(pairs, domain.MergeOptions{}) {
		fmt.Printf("%s → %s: %s\n", o.Pair.DropPath, o.Pair.KeepPath, o.Stage)
	}
	// Output:
	// a → gf: committed
	// gf → b: role-guard
	// c → gf: committed
}
