package memfs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"

	"github.com/borg-memory/borg/memfs/memfstest"
)

var updateGitleaks = flag.Bool("update-gitleaks", false, "rewrite gitleaks_rules.go from gitleaks' default config")

// TestGitleaksRulesCurrent: gitleaks_rules.go holds gitleaks' default
// config as gitleaks parses it, and the rules compiled from it are
// gitleaks' own.
func TestGitleaksRulesCurrent(t *testing.T) {
	var spec rulesSpec
	if err := json.Unmarshal(gitleaksParse(t), &spec); err != nil {
		t.Fatal(err)
	}
	src, err := gitleaksRulesSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	if *updateGitleaks {
		if err := os.WriteFile("gitleaks_rules.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !reflect.DeepEqual(gitleaksRules, spec) {
		t.Fatalf("gitleaks_rules.go is not gitleaks' default config: go test ./memfs/ -run TestGitleaksRulesCurrent -update-gitleaks")
	}
	if have, err := os.ReadFile("gitleaks_rules.go"); err != nil || !bytes.Equal(have, src) {
		t.Fatalf("gitleaks_rules.go is not as generated (%v): go test ./memfs/ -run TestGitleaksRulesCurrent -update-gitleaks", err)
	}
	d := gitleaksOracle(t)
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.spec.Rules) != len(d.Config.Rules) {
		t.Fatalf("%d rules, gitleaks has %d", len(rs.spec.Rules), len(d.Config.Rules))
	}
	// Every rule compiles as gitleaks compiles it.
	for i, spec := range rs.spec.Rules {
		g, ok := d.Config.Rules[spec.ID]
		if !ok {
			t.Fatalf("rule %s is not gitleaks'", spec.ID)
		}
		o, err := rs.compiled[i]()
		if err != nil {
			t.Fatal(err)
		}
		var kws []string
		for _, k := range spec.Keywords {
			kws = append(kws, strings.ToLower(k))
		}
		if reString(o.re) != reString(g.Regex) || o.pathless != (g.Path == nil || g.Path.MatchString("")) ||
			o.entropy != g.Entropy || o.group != g.SecretGroup || o.skipReport != g.SkipReport ||
			!slices.Equal(kws, g.Keywords) && len(kws)+len(g.Keywords) > 0 || len(o.required) != len(g.RequiredRules) {
			t.Fatalf("rule %s differs from gitleaks'", spec.ID)
		}
		sameAllowlists(t, spec.ID, o.allow, g.Allowlists)
	}
	global, err := rs.global()
	if err != nil {
		t.Fatal(err)
	}
	sameAllowlists(t, "global", global, d.Config.Allowlists)
}

// gitleaksParse is gitleaks' default config as gitleaks parses it (viper's
// TOML decoding into its ViperConfig), as JSON: the field names are
// gitleaks' own and rulesSpec's.
func gitleaksParse(t *testing.T) []byte {
	t.Helper()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(vc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// sameAllowlists fails t unless ours are gitleaks' allowlists as they
// act on a text: condition, target, regexes, stopwords, and whether they
// hold a path or commit check.
func sameAllowlists(t *testing.T, where string, ours []*allowlist, theirs []*config.Allowlist) {
	t.Helper()
	if len(ours) != len(theirs) {
		t.Fatalf("%s: %d allowlists, gitleaks has %d", where, len(ours), len(theirs))
	}
	for i, g := range theirs {
		o := ours[i]
		var res []string
		for _, re := range g.Regexes {
			res = append(res, re.String())
		}
		want := "<nil>"
		if len(res) > 0 {
			want = "(?:" + strings.Join(res, "|") + ")"
		}
		if o.and != (g.MatchCondition == config.AllowlistMatchAnd) || o.target != g.RegexTarget || reString(o.re) != want ||
			o.pathOrCommit != (len(g.Paths)+len(g.Commits) > 0) ||
			!slices.Equal(slices.Sorted(slices.Values(o.stop)), slices.Sorted(slices.Values(g.StopWords))) {
			t.Fatalf("%s: allowlist %d differs from gitleaks'", where, i)
		}
	}
}

// TestBulkDetectorSameVerdicts: FindSecret, which runs only the rules a
// text's keywords select (or none), gives the verdicts of gitleaks'
// detector of the whole rule set, on known texts and
// on generated ones built from every rule's keywords, assignment
// operators and token-like values.
func TestBulkDetectorSameVerdicts(t *testing.T) {
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Run make migrate before go test ./integration/...; the schema is not auto-applied.",
		"The nightly export of Billing runs at 02:00 UTC.", "token rotation happens weekly; ask the vault owners",
		"jsoner requests responses cookieer deploys postgres responses ledgers adminer canceling recoverer kafkas",
		"the api_key, when rotated, is 9f8e7d6c5b4a3f2e1d0c", "access: ok", "Key => Zx8Qp3Lm9Tr2Vb7Nc4", "s.ABCDEFGHIJKLMNOPQRSTUVWX"}
	for _, s := range memfstest.Secrets() {
		texts = append(texts, s.Text)
	}
	texts = append(texts, generatedScreenTexts(rs, 4000)...)
	whole := gitleaksOracle(t)
	found := 0
	for _, text := range texts {
		if text == "" {
			continue
		}
		wantKind, want := ownSecret(text, strings.ToLower(text))
		if !want {
			wantKind, want = firstFinding(fromReport(whole.DetectString(text)))
		}
		kind, got := FindSecret(text)
		if got != want || kind != wantKind {
			t.Fatalf("FindSecret(%q) = %q %v; the whole rule set: %q %v", text, kind, got, wantKind, want)
		}
		if got {
			found++
		}
	}
	if found < len(texts)/20 {
		t.Fatalf("only %d of %d generated texts hold a secret: the comparison proves little", found, len(texts))
	}
}

// generatedScreenTexts are n texts of keywords (every rule's, in any
// case), assignment operators, quotes, separators and values of the
// shapes the rules look for, seeded.
func generatedScreenTexts(rs *ruleSet, n int) []string {
	rng := rand.New(rand.NewPCG(19, 1))
	var words []string
	for _, r := range rs.spec.Rules {
		words = append(words, r.Keywords...)
	}
	words = append(words, "password", "api_key", "token", "Secret", "AUTH", "credentials", "deploys", "the", "is", "postgres://u:Zx8Qp3Lm9Tr@db")
	ops := []string{"=", ": ", " => ", ":=", "||", ",", " ", "\n", "?=", "> ", "\"", "'"}
	seps := []string{" ", "\n", ", ", "; ", "\t", "", "_", "-", "."}
	alnum := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	value := func() string {
		b := make([]byte, 8+rng.IntN(40))
		for i := range b {
			b[i] = alnum[rng.IntN(len(alnum))]
		}
		switch rng.IntN(4) {
		case 0:
			return strings.ToLower(string(b))
		case 1:
			return string(b[:4]) + "_" + string(b[4:])
		}
		return string(b)
	}
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for range 1 + rng.IntN(6) {
			w := words[rng.IntN(len(words))]
			if rng.IntN(3) == 0 {
				w = strings.ToUpper(w)
			}
			sb.WriteString(w)
			if rng.IntN(2) == 0 {
				sb.WriteString(ops[rng.IntN(len(ops))])
				sb.WriteString(value())
			}
			sb.WriteString(seps[rng.IntN(len(seps))])
		}
		out[i] = sb.String()
	}
	return out
}

// TestScreenConcurrent: screens running at once (the index screens on
// every core) give the verdicts one screen gives.
func TestScreenConcurrent(t *testing.T) {
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	texts := generatedScreenTexts(rs, 400)
	want := make([]string, len(texts))
	for i, text := range texts {
		kind, found := FindSecret(text)
		want[i] = fmt.Sprintf("%v %s", found, kind)
	}
	var wg sync.WaitGroup
	got := make([][]string, 4)
	for w := range got {
		wg.Go(func() {
			for i := range texts {
				j := (i + w*len(texts)/4) % len(texts)
				kind, found := FindSecret(texts[j])
				got[w] = append(got[w], fmt.Sprintf("%d %v %s", j, found, kind))
			}
		})
	}
	wg.Wait()
	for w := range got {
		for _, line := range got[w] {
			var j int
			fmt.Sscanf(line, "%d", &j)
			if v := line[strings.IndexByte(line, ' ')+1:]; v != want[j] {
				t.Fatalf("concurrent FindSecret(%q) = %s, alone %s", texts[j], v, want[j])
			}
		}
	}
}

func reString(re *regexp.Regexp) string {
	if re == nil {
		return "<nil>"
	}
	return re.String()
}
