package memfs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// gitleaks' default rule set costs about 110 ms to load as gitleaks loads
// it (viper's TOML decoding, then compiling every rule's expressions) on a
// loaded machine. A screen here pays for what it screens instead: the rule
// set is read from a JSON copy of gitleaks' parsed default config
// (gitleaks-rules.json, checked against gitleaks' own by
// TestGitleaksRulesCurrent; regenerate it with `go test ./memfs/ -run
// TestGitleaksRulesCurrent -update-gitleaks`), and a rule's expressions
// are compiled the first time a text holds one of its keywords. That is
// gitleaks' own prefilter (a rule runs only on a text holding one of its
// keywords, lower-cased; one without keywords always runs; DetectString
// decodes nothing), so the findings are the ones the whole rule set gives.

//go:embed gitleaks-rules.json
var gitleaksRulesJSON []byte

// ruleSet is the parsed rule set and the rules compiled so far.
type ruleSet struct {
	vc       config.ViperConfig // rules not compiled; no global allowlist
	keywords [][]string         // keywords[i]: vc.Rules[i]'s, lower case
	global   []*config.Allowlist

	mu       sync.Mutex
	compiled map[string]config.Rule // by rule id
	// detectors caches a detector per set of rules (by their ids).
	detectors map[string]*detect.Detector
	texts     int // texts screened so far
}

// bulkAfter is how many texts a process screens rule by rule before it
// compiles the whole rule set (see detector).
const bulkAfter = 64

var rules = sync.OnceValues(func() (*ruleSet, error) {
	// Nothing gitleaks logs may reach a hook's stdout or stderr.
	logging.Logger = zerolog.Nop()
	rs := &ruleSet{compiled: map[string]config.Rule{}, detectors: map[string]*detect.Detector{}}
	if err := json.Unmarshal(gitleaksRulesJSON, &rs.vc); err != nil {
		return nil, fmt.Errorf("load secret rules: %w", err)
	}
	// The global allowlist, compiled once (a config of no rules).
	global := rs.vc
	global.Rules = nil
	cfg, err := global.Translate()
	if err != nil {
		return nil, fmt.Errorf("load secret rules: %w", err)
	}
	rs.global = cfg.Allowlists
	rs.vc.AllowList, rs.vc.Allowlists = nil, nil
	rs.keywords = make([][]string, len(rs.vc.Rules))
	for i, r := range rs.vc.Rules {
		for _, k := range r.Keywords {
			rs.keywords[i] = append(rs.keywords[i], strings.ToLower(k))
		}
	}
	return rs, nil
})

// detector is a detector of the rules that can fire on a text whose lower
// case is lower: those with a keyword in it and those without keywords.
//
// After bulkAfter texts the process is screening in bulk (a reindex, a
// sleep, doctor): then every rule is compiled once and one detector of the
// whole set serves every text, as gitleaks' own would. Its findings are
// the same (gitleaks prefilters by keyword itself); the per-keyword
// detectors only spare a hook the whole set's compile on its first text,
// and scanning each text for every rule's keywords costs more than they
// save over thousands of texts.
func (rs *ruleSet) detector(lower string) (*detect.Detector, error) {
	rs.mu.Lock()
	rs.texts++
	bulk := rs.texts > bulkAfter
	rs.mu.Unlock()
	var need []int
	var key strings.Builder
	for i, kws := range rs.keywords {
		if bulk || len(kws) == 0 || containsAny(lower, kws) {
			need = append(need, i)
			if !bulk {
				key.WriteString(rs.vc.Rules[i].ID)
				key.WriteByte(0)
			}
		}
	}
	if bulk {
		key.WriteString("\x00all")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if d, ok := rs.detectors[key.String()]; ok {
		return d, nil
	}
	var todo config.ViperConfig
	todo.MinVersion = rs.vc.MinVersion
	for _, i := range need {
		if _, ok := rs.compiled[rs.vc.Rules[i].ID]; !ok {
			todo.Rules = append(todo.Rules, rs.vc.Rules[i])
		}
	}
	if len(todo.Rules) > 0 {
		cfg, err := todo.Translate()
		if err != nil {
			return nil, fmt.Errorf("compile secret rules: %w", err)
		}
		for id, r := range cfg.Rules {
			rs.compiled[id] = r
		}
	}
	cfg := config.Config{Title: rs.vc.Title, Description: rs.vc.Description, MinVersion: rs.vc.MinVersion,
		Rules: map[string]config.Rule{}, Keywords: map[string]struct{}{}, Allowlists: rs.global}
	for _, i := range need {
		r := rs.compiled[rs.vc.Rules[i].ID]
		cfg.Rules[r.RuleID] = r
		cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
		for _, k := range r.Keywords {
			cfg.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	d := detect.NewDetector(cfg)
	// A "gitleaks:allow" comment in a lesson must not hide its secret.
	d.IgnoreGitleaksAllow = true
	if bulk || len(rs.detectors) < 256 {
		rs.detectors[key.String()] = d
	}
	return d, nil
}
