package memfs

import (
	"fmt"
	"math/bits"
	"regexp"
	"strings"
	"sync"
)

// Reading gitleaks' default rule set as gitleaks reads it (viper's TOML
// decoding, then compiling every rule's expressions) costs more than a
// whole hook may spend, and gitleaks' engine links some 150 packages into
// the binary. A screen here pays for what it screens instead: the rule set
// is gitleaks' parsed default config as a Go literal (gitleaks_rules.go,
// checked against gitleaks' own by TestGitleaksRulesCurrent; regenerate it
// with `go test ./memfs/ -run TestGitleaksRulesCurrent -update-gitleaks`),
// which the compiler lays out as static data, so that reading it costs no
// parse and no allocation in a short-lived process (BENCHMARKS.md), a
// rule's expressions are
// compiled the first time a text holds one of its keywords, and our own
// detector (secretdetect.go) runs them with gitleaks' semantics.
//
// A rule runs only on a text holding one of its keywords, lower-cased
// (gitleaks' own prefilter; a rule without keywords always runs). The
// keywords are found in one pass over the text (keywordIndex), and most
// lesson text holds none, so most texts run no rule at all.

// ruleSet is the parsed rule set and its rules, each compiled on first
// use. It is safe for concurrent use.
type ruleSet struct {
	spec rulesSpec
	kw   keywordIndex
	// always: the rules without keywords, less the path-only ones whose
	// path does not match the empty path (they never fire on a text).
	always ruleBits
	// compiled[i] compiles rule i once and returns it.
	compiled []func() (*rule, error)
	// global compiles the global allowlists once.
	global func() ([]*allowlist, error)
	// maybe[i]: a necessary condition of rule i's expression matching
	// (see necessaryPart): a text failing it drops the rule.
	maybe map[int]*regexp.Regexp
}

var rules = sync.OnceValues(func() (*ruleSet, error) { return newRuleSet(gitleaksRules) })

// newRuleSet prepares spec's rules for screening, compiling none of their
// content expressions yet.
func newRuleSet(spec rulesSpec) (*ruleSet, error) {
	rs := &ruleSet{spec: spec, maybe: map[int]*regexp.Regexp{}}
	byRule, global, err := ownAllowlists(&spec)
	if err != nil {
		return nil, fmt.Errorf("load secret rules: %w", err)
	}
	index := map[string]int{}
	for i, r := range spec.Rules {
		index[r.ID] = i
	}
	rs.global = sync.OnceValues(func() ([]*allowlist, error) {
		var out []*allowlist
		for _, a := range global {
			al, err := compileAllowlist(a)
			if err != nil {
				return nil, fmt.Errorf("compile secret rules: global allowlist: %w", err)
			}
			out = append(out, al)
		}
		return out, nil
	})
	rs.always = newRuleBits(len(spec.Rules))
	var keywords [][]string
	for i, r := range spec.Rules {
		rs.compiled = append(rs.compiled, sync.OnceValues(func() (*rule, error) {
			c, err := compileRule(r, byRule[i], index)
			if err != nil {
				return nil, fmt.Errorf("compile secret rules: %s: %w", r.ID, err)
			}
			return c, nil
		}))
		var kws []string
		for _, k := range r.Keywords {
			kws = append(kws, strings.ToLower(k))
		}
		keywords = append(keywords, kws)
		if len(kws) == 0 {
			quiet := r.Regex == "" && r.Path != ""
			if quiet {
				p, err := regexp.Compile(r.Path)
				if err != nil {
					return nil, fmt.Errorf("load secret rules: %s: %w", r.ID, err)
				}
				quiet = !p.MatchString("")
			}
			if !quiet {
				rs.always.set(i)
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
}

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

// each calls fn with every rule of b, in index order.
func (b ruleBits) each(fn func(i int)) {
	for w, x := range b {
		for x != 0 {
			fn(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
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
// lower, as gitleaks decides it: those with a keyword in it and those
// without keywords (that can fire on a text).
func (rs *ruleSet) selected(lower string) ruleBits {
	b := rs.kw.selected(lower)
	b.or(rs.always)
	return b
}

// findings is what gitleaks' detector of the whole rule set finds in text
// (lower its lower case): the findings of every selected rule, less the
// generic ones a specific rule's finding shadows.
func (rs *ruleSet) findings(text, lower string) ([]finding, error) {
	b := rs.selected(lower)
	for i, re := range rs.maybe {
		if b.has(i) && !(strings.ContainsAny(text, assignChars) && re.MatchString(text)) {
			b.clear(i)
		}
	}
	var out []finding
	var err error
	var global []*allowlist
	b.each(func(i int) {
		if err != nil {
			return
		}
		var r *rule
		if r, err = rs.compiled[i](); err != nil {
			return
		}
		if global == nil {
			if global, err = rs.global(); err != nil {
				return
			}
		}
		var fs []finding
		fs, err = rs.detect(r, text, global, false)
		out = append(out, fs...)
	})
	if err != nil {
		return nil, err
	}
	return dropShadowedGeneric(out), nil
}
