package memfs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/bits"
	"regexp"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Loading gitleaks' default rule set as gitleaks loads it (viper's TOML
// decoding, then compiling every rule's expressions) costs more than a whole
// hook may spend (BENCHMARKS.md, figures taken from code comments). A screen here pays for what it screens instead: the rule
// set is read from a JSON copy of gitleaks' parsed default config
// (gitleaks-rules.json, checked against gitleaks' own by
// TestGitleaksRulesCurrent; regenerate it with `go test ./memfs/ -run
// TestGitleaksRulesCurrent -update-gitleaks`), and a rule's expressions
// are compiled the first time a text holds one of its keywords.
//
// That is gitleaks' own prefilter (a rule runs only on a text holding one
// of its keywords, lower-cased; one without keywords always runs;
// DetectString decodes nothing), so a detector of the rules a text's
// keywords select finds what the whole set finds. The keywords are found
// in one pass over the text (keywordIndex), and a text that selects no
// rule that could fire is not handed to gitleaks at all: most lesson text
// holds no keyword, and gitleaks' per-text cost (a logger, a keyword map,
// a loop over every rule of its set) was most of a bulk screen's time.

//go:embed gitleaks-rules.json
var gitleaksRulesJSON []byte

// ruleSet is the parsed rule set and the rules compiled so far. It is safe
// for concurrent use: gitleaks' Detector.DetectString only reads the
// detector (its byte counter is atomic), and the caches here are guarded.
type ruleSet struct {
	vc     config.ViperConfig // rules not compiled; no global allowlist
	global []*config.Allowlist
	kw     keywordIndex
	always ruleBits // the rules without keywords: they run on every text
	// quiet: every rule without keywords is path-only and finds nothing
	// without a path (DetectString gives none), so a text selecting no
	// other rule has no finding.
	quiet bool
	// require[i]: the rules rule i's findings need (gitleaks' multi-part
	// rules run their required rules without a keyword check).
	require map[int]ruleBits
	// maybe[i]: a necessary condition of rule i's expression matching
	// (see necessaryPart): a text failing it drops the rule.
	maybe map[int]*regexp.Regexp

	mu       sync.Mutex
	compiled map[string]config.Rule // by rule id
	// detectors caches a detector per set of rules (by ruleBits.key).
	detectors map[string]*detect.Detector
}

// maxDetectors bounds the detector cache: past it a text's detector is
// built for it alone (same findings, only slower).
const maxDetectors = 1024

var rules = sync.OnceValues(func() (*ruleSet, error) {
	// Nothing gitleaks logs may reach a hook's stdout or stderr.
	logging.Logger = zerolog.Nop()
	rs := &ruleSet{compiled: map[string]config.Rule{}, detectors: map[string]*detect.Detector{},
		require: map[int]ruleBits{}, maybe: map[int]*regexp.Regexp{}}
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
	rs.always = newRuleBits(len(rs.vc.Rules))
	index := map[string]int{}
	for i, r := range rs.vc.Rules {
		index[r.ID] = i
	}
	var keywords [][]string
	rs.quiet = true
	for i, r := range rs.vc.Rules {
		var kws []string
		for _, k := range r.Keywords {
			kws = append(kws, strings.ToLower(k))
		}
		keywords = append(keywords, kws)
		if len(kws) == 0 {
			rs.always.set(i)
			rs.quiet = rs.quiet && r.Regex == "" && r.Path != "" && !regexp.MustCompile(r.Path).MatchString("")
		}
		for _, req := range r.Required {
			if j, ok := index[req.ID]; ok {
				b, ok := rs.require[i]
				if !ok {
					b = newRuleBits(len(rs.vc.Rules))
				}
				b.set(j)
				rs.require[i] = b
			}
		}
		if part, ok := necessaryPart(r.Regex); ok {
			re, err := regexp.Compile(part)
			if err != nil {
				return nil, fmt.Errorf("load secret rules: %s: %w", r.ID, err)
			}
			rs.maybe[i] = re
		}
	}
	rs.kw = newKeywordIndex(keywords)
	return rs, nil
})

// genericHead and genericCore split gitleaks' generic-api-key expression:
// a match is a run of name characters (genericHead, possibly empty), then
// a keyword and an assignment (genericCore), then the value. Any text the
// whole expression matches holds a match of genericCore alone, which is a
// far cheaper expression to run (no 50-character lazy run at every word):
// a text without one cannot match the rule.
const (
	genericHead = `(?i)[\w.-]{0,50}?`
	genericCore = `(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`
)

// assignChars are the characters of which genericCore's assignment holds
// one: a text without any cannot match it.
const assignChars = "=>:|,"

// necessaryPart is an expression every text matching re also matches, when
// one is known for re (gitleaks' generic rule, as gitleaks v8.30.1 writes
// it; another expression has none and is always run).
func necessaryPart(re string) (string, bool) {
	if strings.HasPrefix(re, genericHead+genericCore) {
		return "(?i)" + genericCore, true
	}
	return "", false
}

// ruleBits is a set of rules by index.
type ruleBits []uint64

func newRuleBits(n int) ruleBits { return make(ruleBits, (n+63)/64) }
func (b ruleBits) set(i int)     { b[i/64] |= 1 << (i % 64) }
func (b ruleBits) has(i int) bool {
	return b[i/64]&(1<<(i%64)) != 0
}
func (b ruleBits) clear(i int) { b[i/64] &^= 1 << (i % 64) }

func (b ruleBits) or(o ruleBits) {
	for i := range b {
		b[i] |= o[i]
	}
}

// subsetOf reports whether every rule of b is in o.
func (b ruleBits) subsetOf(o ruleBits) bool {
	for i := range b {
		if b[i]&^o[i] != 0 {
			return false
		}
	}
	return true
}

// each calls fn with every rule of b, in index order.
func (b ruleBits) each(fn func(i int)) {
	for w, x := range b {
		for x != 0 {
			fn(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}

func (b ruleBits) key() string {
	var sb strings.Builder
	for _, x := range b {
		for k := 0; k < 8; k++ {
			sb.WriteByte(byte(x >> (8 * k)))
		}
	}
	return sb.String()
}

// keywordIndex finds, in one pass over a lower-cased text, every keyword
// it holds (as gitleaks' Aho-Corasick prefilter does): a bitmap of the
// keywords' first two bytes rules out almost every position at once.
type keywordIndex struct {
	words  []string
	rules  []ruleBits           // rules[w]: the rules keyword w selects
	pairs  [1 << 16 / 64]uint64 // bit p: a keyword of two bytes or more starts with the pair p
	byPair map[uint16][]int32   // those keywords, by pair
	single [256][]int32         // the one-byte keywords, by byte
	nrules int
}

func newKeywordIndex(keywords [][]string) keywordIndex {
	k := keywordIndex{byPair: map[uint16][]int32{}, nrules: len(keywords)}
	at := map[string]int{}
	for r, kws := range keywords {
		for _, w := range kws {
			if w == "" {
				continue
			}
			i, ok := at[w]
			if !ok {
				i = len(k.words)
				at[w] = i
				k.words = append(k.words, w)
				k.rules = append(k.rules, newRuleBits(len(keywords)))
				if len(w) == 1 {
					k.single[w[0]] = append(k.single[w[0]], int32(i))
				} else {
					p := uint16(w[0])<<8 | uint16(w[1])
					k.pairs[p/64] |= 1 << (p % 64)
					k.byPair[p] = append(k.byPair[p], int32(i))
				}
			}
			k.rules[i].set(r)
		}
	}
	return k
}

// selected is the set of rules whose keywords lower holds.
func (k *keywordIndex) selected(lower string) ruleBits {
	out := newRuleBits(k.nrules)
	for i := 0; i < len(lower); i++ {
		for _, w := range k.single[lower[i]] {
			out.or(k.rules[w])
		}
		if i+1 >= len(lower) {
			break
		}
		p := uint16(lower[i])<<8 | uint16(lower[i+1])
		if k.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range k.byPair[p] {
			if strings.HasPrefix(lower[i:], k.words[w]) {
				out.or(k.rules[w])
			}
		}
	}
	return out
}

// selected is the set of rules that run on a text whose lower case is
// lower, as gitleaks decides it: those with a keyword in it, those without
// keywords, and the rules they require.
func (rs *ruleSet) selected(lower string) ruleBits {
	b := rs.kw.selected(lower)
	b.or(rs.always)
	b.each(func(i int) {
		if req, ok := rs.require[i]; ok {
			b.or(req)
		}
	})
	return b
}

// findings is what gitleaks' detector of the whole rule set finds in text
// (lower its lower case), by way of the detector of the rules that can
// fire on it; none, without a detector, when no rule can.
func (rs *ruleSet) findings(text, lower string) ([]report.Finding, error) {
	b := rs.selected(lower)
	for i, re := range rs.maybe {
		if b.has(i) && !(strings.ContainsAny(text, assignChars) && re.MatchString(text)) {
			b.clear(i)
		}
	}
	if rs.quiet && b.subsetOf(rs.always) {
		return nil, nil
	}
	d, err := rs.detectorOf(b)
	if err != nil {
		return nil, err
	}
	return d.DetectString(text), nil
}

// detector is the detector of the rules that run on a text whose lower
// case is lower (see selected).
func (rs *ruleSet) detector(lower string) (*detect.Detector, error) {
	return rs.detectorOf(rs.selected(lower))
}

// detectorOf is the detector of the rules of b, compiling those not yet
// compiled.
func (rs *ruleSet) detectorOf(b ruleBits) (*detect.Detector, error) {
	key := b.key()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if d, ok := rs.detectors[key]; ok {
		return d, nil
	}
	var todo config.ViperConfig
	todo.MinVersion = rs.vc.MinVersion
	b.each(func(i int) {
		if _, ok := rs.compiled[rs.vc.Rules[i].ID]; !ok {
			todo.Rules = append(todo.Rules, rs.vc.Rules[i])
		}
	})
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
	b.each(func(i int) {
		r := rs.compiled[rs.vc.Rules[i].ID]
		cfg.Rules[r.RuleID] = r
		cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
		for _, k := range r.Keywords {
			cfg.Keywords[strings.ToLower(k)] = struct{}{}
		}
	})
	d := detect.NewDetector(cfg)
	// A "gitleaks:allow" comment in a lesson must not hide its secret.
	d.IgnoreGitleaksAllow = true
	if len(rs.detectors) < maxDetectors {
		rs.detectors[key] = d
	}
	return d, nil
}
