package memfs

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs/memfstest"
)

// benchTexts are seeded texts of three kinds: lesson-like prose without a
// rule keyword, prose with keywords and assignments (which select rules,
// mostly without a finding), and the secret fixtures.
func benchTexts() map[string][]string {
	rng := rand.New(rand.NewPCG(29, 7))
	prose := strings.Fields("run the migrations before the integration tests because the schema is not applied on start and the nightly export of billing runs at two")
	keyed := strings.Fields("api_key token secret password auth credentials aws github slack stripe bearer client_id jwt private")
	vals := []string{"=", ": ", " => ", "9f8e7d6c5b4a3f2e1d0c", "Zx8Qp3Lm9Tr2Vb7Nc4", "changeme", "$TOKEN", "os.Getenv(\"KEY\")"}
	sentence := func(words []string, n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	out := map[string][]string{}
	for range 200 {
		out["prose"] = append(out["prose"], sentence(prose, 40))
		out["keywords"] = append(out["keywords"], sentence(prose, 20)+" "+sentence(keyed, 2)+sentence(vals, 2)+" "+sentence(prose, 10))
	}
	for _, s := range memfstest.Secrets() {
		out["secrets"] = append(out["secrets"], s.Text)
	}
	return out
}

// BenchmarkFindSecret is the cost of screening one text, rules compiled.
func BenchmarkFindSecret(b *testing.B) {
	texts := benchTexts()
	for _, kind := range []string{"prose", "keywords", "secrets"} {
		b.Run(kind, func(b *testing.B) {
			for _, t := range texts[kind] {
				FindSecret(t) // compile the rules these texts select
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				FindSecret(texts[kind][i%len(texts[kind])])
			}
		})
	}
}

// BenchmarkRuleSetLoad is what the first screen of a process pays before
// any rule runs: the rule set made ready from gitleaks_rules.go (its
// keyword index, the generic rule's prefilter, the path-only rules). The
// rule data itself is static: reading it allocates nothing.
func BenchmarkRuleSetLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newRuleSet(gitleaksRules); err != nil {
			b.Fatal(err)
		}
	}
}
