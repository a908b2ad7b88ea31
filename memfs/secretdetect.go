package memfs

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// The detector here runs gitleaks' rule data (gitleaks_rules.go) with the
// semantics of gitleaks' own detector on a string (Detector.DetectString:
// no file path, no commit, no decoding pass, "gitleaks:allow" ignored), so
// borg finds the rule ids gitleaks finds without linking gitleaks' engine
// and its dependencies. TestDetectorMatchesGitleaks and FuzzDetectorMatchesGitleaks
// hold the two to the same findings.

// rulesSpec is gitleaks' parsed configuration, as gitleaks_rules.go holds
// it (the field names of gitleaks' config.ViperConfig; a field this type
// lacks fails TestRulesSpecComplete).
type rulesSpec struct {
	Title       string
	Description string
	// Extend names a configuration to extend: gitleaks' default has none,
	// and this detector extends nothing (TestRulesSpecComplete).
	Extend struct {
		Path          string
		URL           string
		UseDefault    bool
		DisabledRules []string
	}
	Rules      []ruleSpec
	AllowList  *allowSpec // the older single-allowlist form
	Allowlists []*allowSpec
	MinVersion string
}

type ruleSpec struct {
	ID          string
	Description string
	Path        string
	Regex       string
	SecretGroup int
	Entropy     float64
	Keywords    []string
	Tags        []string
	AllowList   *allowSpec // the older single-allowlist form
	Allowlists  []*allowSpec
	Required    []*requiredSpec
	SkipReport  bool
}

type allowSpec struct {
	TargetRules []string // global allowlists only: the rules it belongs to
	Description string
	Condition   string
	Commits     []string
	Paths       []string
	RegexTarget string
	Regexes     []string
	StopWords   []string
}

type requiredSpec struct {
	ID            string
	WithinLines   *int
	WithinColumns *int
}

// rule is a compiled rule.
type rule struct {
	id      string
	re      *regexp.Regexp // nil for a path-only rule
	group   int
	entropy float64
	// pathless: the rule may fire on a text without a path (it has no path
	// expression, or its path expression matches the empty path).
	pathless   bool
	allow      []*allowlist
	required   []required
	skipReport bool
}

type required struct {
	rule          int // index in the rule set
	withinLines   *int
	withinColumns *int
}

// allowlist is a compiled allowlist. Its regexes are joined into one
// alternation, as gitleaks joins them (so a flag group such as (?i) at the
// start of one regex also covers those after it).
type allowlist struct {
	and bool
	// pathOrCommit: the allowlist has paths or commits, which a text never
	// matches.
	pathOrCommit bool
	target       string // "" (the secret), "match" or "line"
	re           *regexp.Regexp
	stop         []string // lower case
}

// finding is one match of a rule in a text, located as gitleaks locates it.
type finding struct {
	rule        string
	startLine   int // from 0
	startColumn int
	match       string
	secret      string
}

// compileAllowlist compiles one allowlist, refusing what gitleaks refuses.
func compileAllowlist(a *allowSpec) (*allowlist, error) {
	out := &allowlist{}
	switch strings.ToUpper(a.Condition) {
	case "AND", "&&":
		out.and = true
	case "", "OR", "||":
	default:
		return nil, fmt.Errorf("unknown allowlist condition %q", a.Condition)
	}
	switch a.RegexTarget {
	case "", "secret":
	case "match", "line":
		out.target = a.RegexTarget
	default:
		return nil, fmt.Errorf("unknown allowlist regex target %q", a.RegexTarget)
	}
	if len(a.Commits) == 0 && len(a.Paths) == 0 && len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return nil, errors.New("empty allowlist")
	}
	for _, p := range a.Paths {
		if _, err := regexp.Compile(p); err != nil {
			return nil, err
		}
	}
	out.pathOrCommit = len(a.Paths) > 0 || len(a.Commits) > 0
	if len(a.Regexes) > 0 {
		for _, r := range a.Regexes {
			if _, err := regexp.Compile(r); err != nil {
				return nil, err
			}
		}
		re, err := regexp.Compile("(?:" + strings.Join(a.Regexes, "|") + ")")
		if err != nil {
			return nil, err
		}
		out.re = re
	}
	for _, w := range a.StopWords {
		out.stop = append(out.stop, strings.ToLower(w))
	}
	return out, nil
}

// allows reports whether the allowlist drops finding f found on line.
// Under AND every check the allowlist has must pass, and its path and
// commit checks fail on a text; under OR a regex or a stopword suffices
// (paths and commits are checked only against a file, never here).
func (a *allowlist) allows(f *finding, line string) bool {
	target := f.secret
	switch a.target {
	case "match":
		target = f.match
	case "line":
		target = line
	}
	regex := a.re != nil && target != "" && a.re.MatchString(target)
	stop := false
	if len(a.stop) > 0 && f.secret != "" {
		lower := strings.ToLower(f.secret)
		for _, w := range a.stop {
			if strings.Contains(lower, w) {
				stop = true
				break
			}
		}
	}
	if !a.and {
		return regex || stop
	}
	return !a.pathOrCommit && (a.re == nil || regex) && (len(a.stop) == 0 || stop)
}

// compileRule compiles spec, its allowlists being own (its own, then the
// global ones that target it); index maps rule ids to their index.
func compileRule(spec ruleSpec, own []*allowSpec, index map[string]int) (*rule, error) {
	r := &rule{id: spec.ID, group: spec.SecretGroup, entropy: spec.Entropy, skipReport: spec.SkipReport, pathless: true}
	if strings.TrimSpace(spec.ID) == "" {
		return nil, errors.New("rule without an id")
	}
	if spec.Regex == "" && spec.Path == "" {
		return nil, errors.New("rule with neither regex nor path")
	}
	if spec.Path != "" {
		p, err := regexp.Compile(spec.Path)
		if err != nil {
			return nil, err
		}
		r.pathless = p.MatchString("")
	}
	if spec.Regex != "" {
		re, err := regexp.Compile(spec.Regex)
		if err != nil {
			return nil, err
		}
		if spec.SecretGroup > re.NumSubexp() {
			return nil, fmt.Errorf("secret group %d of %d", spec.SecretGroup, re.NumSubexp())
		}
		r.re = re
	}
	for _, a := range own {
		al, err := compileAllowlist(a)
		if err != nil {
			return nil, err
		}
		r.allow = append(r.allow, al)
	}
	for _, req := range spec.Required {
		j, ok := index[req.ID]
		if !ok {
			return nil, fmt.Errorf("required rule %q does not exist", req.ID)
		}
		r.required = append(r.required, required{rule: j, withinLines: req.WithinLines, withinColumns: req.WithinColumns})
	}
	return r, nil
}

// ownAllowlists is each rule's allowlists as gitleaks assembles them: its
// own (the older single form or the list, not both), then the global
// allowlists that name it among their target rules. The global allowlists
// that target no rule are returned apart.
func ownAllowlists(spec *rulesSpec) (byRule [][]*allowSpec, global []*allowSpec, err error) {
	index := map[string]int{}
	byRule = make([][]*allowSpec, len(spec.Rules))
	for i, r := range spec.Rules {
		index[r.ID] = i
		byRule[i] = r.Allowlists
		if r.AllowList != nil {
			if len(r.Allowlists) > 0 {
				return nil, nil, fmt.Errorf("%s: both allowlist forms", r.ID)
			}
			byRule[i] = []*allowSpec{r.AllowList}
		}
	}
	all := spec.Allowlists
	if spec.AllowList != nil {
		if len(all) > 0 {
			return nil, nil, errors.New("both global allowlist forms")
		}
		all = []*allowSpec{spec.AllowList}
	}
	for _, a := range all {
		if len(a.TargetRules) == 0 {
			global = append(global, a)
			continue
		}
		for _, id := range a.TargetRules {
			i, ok := index[id]
			if !ok {
				return nil, nil, fmt.Errorf("allowlist target rule %q does not exist", id)
			}
			byRule[i] = append(byRule[i], a)
		}
	}
	return byRule, global, nil
}

// detect is what rule r finds in text: every match of its expression
// whose secret passes the entropy threshold and no allowlist (global
// first, then the rule's), then, for a rule with required rules, those of
// its findings with a finding of every required rule close enough.
// inherited marks a required rule's run (it neither skips its report nor
// recurses); rs supplies the required rules.
func (rs *ruleSet) detect(r *rule, text string, global []*allowlist, inherited bool) ([]finding, error) {
	if r.skipReport && !inherited {
		return nil, nil
	}
	if !r.pathless {
		return nil, nil
	}
	if r.re == nil {
		// A path-only rule whose path matches the empty path: gitleaks
		// reports the "file" of a text.
		return []finding{{rule: r.id, match: "file detected: "}}, nil
	}
	matches := r.re.FindAllStringIndex(text, -1)
	if len(matches) == 0 {
		return nil, nil
	}
	nls := newlines(text)
	var out []finding
	for _, m := range matches {
		match := strings.Trim(text[m[0]:m[1]], "\n")
		start, end := m[0], m[0]+len(match)
		line, col, lineStart, lineEnd := locate(nls, text, start, end)
		f := finding{rule: r.id, startLine: line, startColumn: col, match: match, secret: match}
		// The secret is the rule's secret group (or its first non-empty
		// group) in a match of the expression against the match alone.
		if groups := r.re.FindStringSubmatch(match); len(groups) >= 2 {
			if r.group > 0 {
				if len(groups) <= r.group {
					continue
				}
				f.secret = groups[r.group]
			} else {
				for _, g := range groups[1:] {
					if g != "" {
						f.secret = g
						break
					}
				}
			}
		}
		if r.entropy != 0 && shannonEntropy(f.secret) <= r.entropy {
			continue
		}
		lineText := text[lineStart:lineEnd]
		if anyAllows(global, &f, lineText) || anyAllows(r.allow, &f, lineText) {
			continue
		}
		out = append(out, f)
	}
	if inherited || len(r.required) == 0 || len(out) == 0 {
		return out, nil
	}
	return rs.withRequired(r, text, global, out)
}

// withRequired keeps the findings of r that have, for every rule r
// requires, a finding of it within the required distance (any distance
// when none is set).
func (rs *ruleSet) withRequired(r *rule, text string, global []*allowlist, primary []finding) ([]finding, error) {
	found := make([][]finding, len(r.required))
	for i, req := range r.required {
		rr, err := rs.compiled[req.rule]()
		if err != nil {
			return nil, err
		}
		if found[i], err = rs.detect(rr, text, global, true); err != nil {
			return nil, err
		}
	}
	var out []finding
	for _, p := range primary {
		all := true
		for i, req := range r.required {
			near := false
			for _, f := range found[i] {
				if (req.withinLines == nil || abs(p.startLine-f.startLine) <= *req.withinLines) &&
					(req.withinColumns == nil || abs(p.startColumn-f.startColumn) <= *req.withinColumns) {
					near = true
					break
				}
			}
			if !near {
				all = false
				break
			}
		}
		if all {
			out = append(out, p)
		}
	}
	return out, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func anyAllows(as []*allowlist, f *finding, line string) bool {
	for _, a := range as {
		if a.allows(f, line) {
			return true
		}
	}
	return false
}

// newlines is the offsets of text's newlines; a text without one has a
// single one placed just past its end.
func newlines(text string) []int {
	var nls []int
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		nls = append(nls, i+j)
		i += j + 1
	}
	if len(nls) == 0 {
		nls = []int{len(text)}
	}
	return nls
}

// locate places the match [start, end) as gitleaks does: its line (from
// 0) and column, and the bounds of the line text its allowlists test.
// Line k spans from the newline ending line k-1 (included; 0 for the
// first line) to the newline ending line k. A match that starts past the
// last newline is on line len(nls), and its line text runs from the
// start of text to the end of that line; a match ending past its start
// line takes the line text to its end.
func locate(nls []int, text string, start, end int) (line, col, lineStart, lineEnd int) {
	prev, set := 0, false
	for k, nl := range nls {
		if prev <= start && start < nl {
			set = true
			line, col, lineStart, lineEnd = k, start-prev+1, prev, nl
		}
		if prev < end && end <= nl {
			lineEnd = nl
		}
		prev = nl
	}
	if !set {
		line, col, lineStart = len(nls), start-prev+1, 0
		lineEnd = end
		for lineEnd < len(text) && text[lineEnd] != '\n' && text[lineEnd] != '\r' {
			lineEnd++
		}
	}
	if end > lineEnd {
		lineEnd = end
	}
	return line, col, lineStart, lineEnd
}

// shannonEntropy is gitleaks' entropy of s: over its runes, each rune's
// frequency taken against the length in bytes.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	inv := 1 / float64(len(s))
	var h float64
	for _, c := range counts {
		p := float64(c) * inv
		h -= p * math.Log2(p)
	}
	return h
}

// dropShadowedGeneric drops, as gitleaks does, a finding of a generic rule
// (its id holding "generic") when a finding of a specific rule on the same
// line has a secret holding its secret.
func dropShadowedGeneric(fs []finding) []finding {
	var out []finding
	for _, f := range fs {
		keep := true
		if strings.Contains(strings.ToLower(f.rule), "generic") {
			for _, g := range fs {
				if g.startLine == f.startLine && g.rule != f.rule && strings.Contains(g.secret, f.secret) &&
					!strings.Contains(strings.ToLower(g.rule), "generic") {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}
