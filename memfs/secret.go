package memfs

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// secretPattern is one kind of credential the scanner recognises.
type secretPattern struct {
	name string
	re   *regexp.Regexp
	// value, when set, must also accept the submatch named "v".
	value func(string) bool
}

// secretPatterns are checked in order; the first match names the secret.
// Specific token formats come before the generic assignment rule.
// They are compiled on first use: every borg process (a hook on each agent
// turn) would otherwise pay for them at start.
var secretPatterns = sync.OnceValue(func() []secretPattern {
	return []secretPattern{
		{name: "private key block", re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
		{name: "AWS access key", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIPA|ANPA|ANVA|AGPA)[A-Z0-9]{16}\b`),
			value: func(v string) bool { return !strings.HasSuffix(v, "EXAMPLE") }},
		{name: "GitHub token", re: regexp.MustCompile(`\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{36,255}\b`)},
		{name: "GitHub fine-grained token", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b`)},
		{name: "Slack token", re: regexp.MustCompile(`\bxox[abposre]-[0-9A-Za-z]{6,}-[0-9A-Za-z-]{6,}`)},
		{name: "Anthropic API key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{32,}`)},
		{name: "API key (sk-)", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`),
			value: func(v string) bool { return classes(v) >= 2 }},
		{name: "secret assignment", re: regexp.MustCompile(
			`(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|pass|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|token|auth[_-]?token|access[_-]?token|bearer)\b["']?\s*(?:=|:|:=)\s*["']?(?P<v>[^\s"'` + "`" + `,;)]{8,})`),
			value: highEntropy},
	}
})

// FindSecret reports whether text carries a credential, naming the kind
// ("GitHub token", "secret assignment", …) of the first one found.
func FindSecret(text string) (kind string, found bool) {
	for _, p := range secretPatterns() {
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			if p.value == nil {
				return p.name, true
			}
			v := text[m[0]:m[1]]
			if i := p.re.SubexpIndex("v"); i > 0 && m[2*i] >= 0 {
				v = text[m[2*i]:m[2*i+1]]
			}
			if p.value(v) {
				return p.name, true
			}
		}
	}
	return "", false
}

// highEntropy accepts a value that looks generated: long enough, of at least
// two character classes, with enough Shannon entropy, and not a placeholder
// or a reference to a variable.
func highEntropy(v string) bool {
	if len(v) < 8 {
		return false
	}
	switch v[0] {
	case '$', '<', '{', '%', '[', '(', '*':
		return false
	}
	lower := strings.ToLower(v)
	for _, ph := range []string{"example", "placeholder", "changeme", "redacted", "xxxx", "your", "dummy", "env.", "environ", "getenv", "process.", "os.", "config."} {
		if strings.Contains(lower, ph) {
			return false
		}
	}
	if strings.Count(v, ".") >= 1 && identifierPath(v) {
		return false
	}
	return classes(v) >= 2 && entropy(v) >= 3.0
}

// identifierPath reports whether v reads like code (a.b.c of identifiers).
func identifierPath(v string) bool {
	for _, part := range strings.Split(v, ".") {
		if part == "" {
			return false
		}
		for i, r := range part {
			if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
				return false
			}
		}
	}
	return true
}

// classes counts the character classes in s: lower, upper, digit, other.
func classes(s string) int {
	var lo, up, di, ot int
	for _, r := range s {
		switch {
		case unicode.IsLower(r):
			lo = 1
		case unicode.IsUpper(r):
			up = 1
		case unicode.IsDigit(r):
			di = 1
		default:
			ot = 1
		}
	}
	return lo + up + di + ot
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}
