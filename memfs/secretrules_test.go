package memfs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/borg-memory/borg/memfs/memfstest"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

var updateGitleaks = flag.Bool("update-gitleaks", false, "rewrite gitleaks-rules.json from gitleaks' default config")

// TestGitleaksRulesCurrent: gitleaks-rules.json is gitleaks' default config
// as gitleaks parses it, and the rules compiled from it are gitleaks' own.
func TestGitleaksRulesCurrent(t *testing.T) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(vc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateGitleaks {
		if err := os.WriteFile("gitleaks-rules.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(gitleaksRulesJSON, want) {
		t.Fatalf("gitleaks-rules.json is not gitleaks' default config: go test ./memfs/ -run TestGitleaksRulesCurrent -update-gitleaks")
	}
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	// Every rule (a text holding every keyword) compiles as gitleaks'.
	var all []string
	for k := range d.Config.Keywords {
		all = append(all, k)
	}
	ours, err := rs.detector(strings.Join(all, " "))
	if err != nil {
		t.Fatal(err)
	}
	if len(ours.Config.Rules) != len(d.Config.Rules) || !slices.Equal(slices.Sorted(slices.Values(ours.Config.OrderedRules)), slices.Sorted(slices.Values(d.Config.OrderedRules))) {
		t.Fatalf("%d rules, gitleaks has %d", len(ours.Config.Rules), len(d.Config.Rules))
	}
	for id, r := range d.Config.Rules {
		o := ours.Config.Rules[id]
		if reString(o.Regex) != reString(r.Regex) || reString(o.Path) != reString(r.Path) || o.Entropy != r.Entropy || o.SecretGroup != r.SecretGroup ||
			len(o.Allowlists) != len(r.Allowlists) || !slices.Equal(o.Keywords, r.Keywords) {
			t.Fatalf("rule %s differs from gitleaks'", id)
		}
	}
	if len(ours.Config.Allowlists) != len(d.Config.Allowlists) || len(d.Config.Keywords) != len(ours.Config.Keywords) {
		t.Fatalf("global allowlists %d, keywords %d; gitleaks: %d, %d", len(ours.Config.Allowlists), len(ours.Config.Keywords), len(d.Config.Allowlists), len(d.Config.Keywords))
	}
}

func reString(re *regexp.Regexp) string {
	if re == nil {
		return "<nil>"
	}
	return re.String()
}

// TestBulkDetectorSameVerdicts: FindSecret, which hands a text only to the
// detector of the rules its keywords select (or to none), gives the
// verdicts of gitleaks' detector of the whole rule set, on known texts and
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
	all := newRuleBits(len(rs.vc.Rules))
	for i := range rs.vc.Rules {
		all.set(i)
	}
	whole, err := rs.detectorOf(all)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, text := range texts {
		if text == "" {
			continue
		}
		wantKind, want := ownSecret(text, strings.ToLower(text))
		if !want {
			wantKind, want = firstFinding(whole.DetectString(text))
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
	for _, r := range rs.vc.Rules {
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
