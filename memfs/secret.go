package memfs

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// gitleaks' default rule set (over 200 maintained token and credential
// formats, read as data by secretrules.go and run by secretdetect.go) and
// the rules below are the secret scanner of borg learn and of every
// lesson the index reads.

// ownRule is a format gitleaks' default rules demonstrably miss (checked
// against v8.30.1 by TestFindSecret's cases).
type ownRule struct {
	name string
	re   *regexp.Regexp
	// skip, when set, rejects a match (its last submatch, or the whole
	// match) as no secret: a placeholder, a variable.
	skip func(string) bool
	// need lists literals (lower case) of which the text must hold one for
	// the pattern to be tried: the cheap test before the regular expression.
	need []string
}

var ownRules = sync.OnceValue(func() []ownRule {
	return []ownRule{
		// A URL with a password in its user info: postgres://user:pass@host,
		// mysql://, mongodb+srv://, amqp://, redis://… gitleaks has no rule
		// for these.
		{"connection string with a password", regexp.MustCompile(`\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'"]+:[^\s/@'"]{3,}@[^\s/@'"]+`), placeholderUserInfo, []string{"://"}},
		// A private key cut short: gitleaks wants 64 characters of body and
		// the END line, but a pasted first lines leak key material too.
		{"private key block", regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*[A-Za-z0-9+/=]{16,}`), nil, []string{"private key"}},
		// OpenAI's prefixed keys: gitleaks requires the T3BlbkFJ marker,
		// which a key cut short (or of a newer layout) lacks.
		{"openai-api-key", regexp.MustCompile(`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}`), nil, []string{"sk-"}},
		// A password with punctuation in it (p@ss!W0rd#…): gitleaks' generic
		// rule takes word characters only.
		// Said in prose too ("the staging db password is Tr0ub4dor&3xQ!").
		{"password assignment", regexp.MustCompile(`(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|passphrase)\b["']?(?:\s*(?:=|:|:=)\s*|\s+(?:is|was|is\s+now|now\s+is)\s+)["']?([^\s"'\x60,;)]{8,})`), notPassword, []string{"pass", "pwd"}},
		// An AWS secret access key named as one, however it is said
		// ("uses aws_secret_access_key wJalr…", "secret: aws_secret_access_key
		// = wJalr…"): gitleaks has no rule for the 40 characters alone, and
		// its generic rule, matching "secret: aws_secret_access_key" first,
		// never reaches the value.
		{"aws-secret-access-key", regexp.MustCompile(`(?i)\baws.{0,4}secret.{0,4}(?:access.{0,4})?key\b[^A-Za-z0-9/+]{1,8}(?:is\s+)?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), notAWSSecret, []string{"secret"}},
	}
})

// placeholderPassword is what a documented connection string uses instead of
// a real password.
var placeholderPassword = []string{"password", "passwd", "pass", "pwd", "secret", "xxx", "***", "changeme", "example", "<", "$", "{", "%"}

// FindSecret reports whether text carries a credential, naming the kind of
// the first one found: the gitleaks rule id ("github-pat", "aws-access-token",
// …) or one of ours. The kind never carries any part of the secret. An
// error building the rule set counts as a secret ("scanner unavailable"):
// text that cannot be checked is not trusted.
func FindSecret(text string) (kind string, found bool) {
	if text == "" {
		return "", false
	}
	lower := strings.ToLower(text)
	if kind, found := ownSecret(text, lower); found {
		return kind, true
	}
	rs, err := rules()
	if err != nil {
		return "scanner unavailable", true
	}
	findings, err := rs.findings(text, lower)
	if err != nil {
		return "scanner unavailable", true
	}
	return firstFinding(findings)
}

// ownSecret is FindSecret by our own rules alone (lower is text's lower
// case).
func ownSecret(text, lower string) (kind string, found bool) {
	for _, r := range ownRules() {
		if !containsAny(lower, r.need) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatch(text, -1) {
			if r.skip != nil && r.skip(m[len(m)-1]) {
				continue
			}
			return r.name, true
		}
	}
	return "", false
}

// firstFinding is the rule of the first finding in the text (of two at one
// place, the rule id first in order), so the answer depends neither on the
// rules' order nor on which rules a detector held.
func firstFinding(findings []finding) (kind string, found bool) {
	if len(findings) == 0 {
		return "", false
	}
	best := findings[0]
	for _, f := range findings[1:] {
		if f.startLine != best.startLine {
			if f.startLine < best.startLine {
				best = f
			}
			continue
		}
		if f.startColumn < best.startColumn || f.startColumn == best.startColumn && f.rule < best.rule {
			best = f
		}
	}
	return best.rule, true
}

// placeholderUserInfo reports whether the password of a URL match is a
// placeholder (postgres://user:password@host, :$PASS@, :<pw>@).
func placeholderUserInfo(m string) bool {
	rest := m[strings.Index(m, "://")+3:]
	at := strings.LastIndexByte(rest, '@')
	colon := strings.IndexByte(rest, ':')
	if at < 0 || colon < 0 || colon > at {
		return true
	}
	pw := strings.ToLower(rest[colon+1 : at])
	for _, p := range placeholderPassword {
		if pw == p || strings.HasPrefix(pw, p) && (p == "<" || p == "$" || p == "{" || p == "%") {
			return true
		}
	}
	return false
}

// notPassword reports whether an assigned password value is no secret: a
// placeholder, a variable, code, or too regular to be generated.
func notPassword(v string) bool {
	switch v[0] {
	case '$', '<', '{', '%', '[', '(', '*':
		return true
	}
	lower := strings.ToLower(v)
	for _, ph := range []string{"example", "placeholder", "changeme", "redacted", "xxxx", "your", "dummy", "env.", "environ", "getenv", "process.", "os.", "config."} {
		if strings.Contains(lower, ph) {
			return true
		}
	}
	if strings.Contains(v, ".") && identifierPath(v) {
		return true
	}
	return classes(v) < 3 || entropy(v) < 3.0
}

// notAWSSecret reports whether the 40 characters after an AWS secret key's
// name are no key: a placeholder, or too regular to be generated.
func notAWSSecret(v string) bool {
	lower := strings.ToLower(v)
	for _, ph := range []string{"example", "xxxx", "your"} {
		if strings.Contains(lower, ph) {
			return true
		}
	}
	return classes(v) < 3 || entropy(v) < 3.5
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

// containsAny reports whether s holds one of subs (true when subs is empty).
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return len(subs) == 0
}
