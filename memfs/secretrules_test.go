package memfs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
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

// TestBulkDetectorSameVerdicts: the detector of the whole rule set a bulk
// screening switches to finds what the per-keyword detectors find, on the
// secret formats and on clean prose.
func TestBulkDetectorSameVerdicts(t *testing.T) {
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Run make migrate before go test ./integration/...; the schema is not auto-applied.",
		"The nightly export of Billing runs at 02:00 UTC.", "token rotation happens weekly; ask the vault owners"}
	for _, s := range memfstest.Secrets() {
		texts = append(texts, s.Text)
	}
	verdicts := func(screened int) []string {
		rs.mu.Lock()
		saved := rs.texts
		rs.texts = screened
		rs.mu.Unlock()
		defer func() {
			rs.mu.Lock()
			rs.texts = saved
			rs.mu.Unlock()
		}()
		var out []string
		for _, text := range texts {
			kind, found := FindSecret(text)
			out = append(out, fmt.Sprintf("%v %s", found, kind))
		}
		return out
	}
	lazy, bulk := verdicts(0), verdicts(bulkAfter+1)
	if !slices.Equal(lazy, bulk) {
		t.Fatalf("per-keyword detectors found %q, the whole set %q", lazy, bulk)
	}
}
