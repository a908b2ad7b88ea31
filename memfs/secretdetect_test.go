package memfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/borg-memory/borg/memfs/memfstest"
)

// The tests here hold our detector to gitleaks' own: the same findings
// (rule, line, column, secret) on the same texts, for gitleaks' default
// rule set and for a small rule set using what the default set does not
// (required rules, AND allowlists, stopwords, line and match targets,
// path rules, targeted global allowlists, a secret group).

var oracle = sync.OnceValues(func() (*detect.Detector, error) {
	logging.Logger = zerolog.Nop()
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, err
	}
	d.IgnoreGitleaksAllow = true
	return d, nil
})

// gitleaksOracle is gitleaks' detector of its default rule set, reading
// texts as FindSecret does ("gitleaks:allow" hides nothing).
func gitleaksOracle(tb testing.TB) *detect.Detector {
	tb.Helper()
	d, err := oracle()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// fromReport is gitleaks' findings as ours.
func fromReport(fs []report.Finding) []finding {
	var out []finding
	for _, f := range fs {
		out = append(out, finding{rule: f.RuleID, startLine: f.StartLine, startColumn: f.StartColumn, match: f.Match, secret: f.Secret})
	}
	return out
}

// findingKeys is fs as sorted "rule line:column secret" keys.
func findingKeys(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %d:%d %q", f.rule, f.startLine, f.startColumn, f.secret))
	}
	slices.Sort(out)
	return out
}

// ruleIDs is the sorted set of fs' rules.
func ruleIDs(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.rule)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parity counts texts compared and texts with a finding, failing tb on
// the first text where our detector and gitleaks' differ.
type parity struct {
	rs       *ruleSet
	d        *detect.Detector
	texts    int
	positive int
	rules    map[string]bool // the rules found at least once
}

func newParity(tb testing.TB) *parity {
	rs, err := rules()
	if err != nil {
		tb.Fatal(err)
	}
	return &parity{rs: rs, d: gitleaksOracle(tb), rules: map[string]bool{}}
}

func (p *parity) check(tb testing.TB, where, text string) {
	tb.Helper()
	ours, err := p.rs.findings(text, strings.ToLower(text))
	if err != nil {
		tb.Fatal(err)
	}
	theirs := fromReport(p.d.DetectString(text))
	p.texts++
	if len(theirs) > 0 {
		p.positive++
	}
	for _, id := range ruleIDs(theirs) {
		p.rules[id] = true
	}
	if o, g := findingKeys(ours), findingKeys(theirs); !slices.Equal(o, g) {
		tb.Fatalf("%s: text %.300q:\nours     %v\ngitleaks %v", where, text, o, g)
	}
}

// TestDetectorMatchesGitleaks: on the secret fixtures, the lines and
// files of the tests' and scripts' data, texts built from every rule's
// keywords, and generated matches of every rule's expression, our
// detector finds what gitleaks' finds.
func TestDetectorMatchesGitleaks(t *testing.T) {
	p := newParity(t)
	for _, s := range memfstest.Secrets() {
		p.check(t, "fixture "+s.Name, s.Text)
		p.check(t, "fixture token "+s.Name, s.Token)
	}
	fixtures := fixtureTexts(t)
	for _, f := range fixtures {
		p.check(t, f.where, f.text)
	}
	t.Logf("fixtures: %d texts, %d with a finding", p.texts, p.positive)
	n := p.texts
	for _, text := range generatedScreenTexts(p.rs, 4000) {
		p.check(t, "keyword text", text)
	}
	t.Logf("keyword texts: %d", p.texts-n)
	n, pos := p.texts, p.positive
	for _, text := range generatedPositives(p.rs, 6) {
		p.check(t, "generated match", text)
	}
	t.Logf("generated matches: %d texts, %d with a finding; %d of %d rules found at least once",
		p.texts-n, p.positive-pos, len(p.rules), len(p.rs.spec.Rules))
	var missed []string
	for _, r := range p.rs.spec.Rules {
		if !p.rules[r.ID] {
			missed = append(missed, r.ID)
		}
	}
	t.Logf("rules no text fired: %v", missed)
	if len(p.rules) < len(p.rs.spec.Rules)*3/4 {
		t.Fatalf("only %d of %d rules found: the generated matches prove little", len(p.rules), len(p.rs.spec.Rules))
	}
}

// TestDetectorMatchesGitleaksOnCorpora compares the two detectors on
// every document of BEIR-layout corpora (title, text, and both joined as
// borg eval learns them). It runs only when BORG_SCREEN_CORPORA names a
// folder of corpora.
func TestDetectorMatchesGitleaksOnCorpora(t *testing.T) {
	var p *parity
	eachCorpus(t, func(name string, docs func(func(id, title, text string))) {
		if p == nil {
			p = newParity(t)
		}
		n, pos, count := p.texts, p.positive, 0
		docs(func(id, title, text string) {
			count++
			where := name + " doc " + id
			p.check(t, where, text)
			p.check(t, where, title)
			p.check(t, where, strings.Join(strings.Fields(title+" "+text), " "))
		})
		t.Logf("%-14s %6d documents, %6d texts compared, %d with a finding", name, count, p.texts-n, p.positive-pos)
	})
}

// FuzzDetectorMatchesGitleaks: on any text, our detector finds what
// gitleaks' finds.
func FuzzDetectorMatchesGitleaks(f *testing.F) {
	rs, err := rules()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range memfstest.Secrets() {
		f.Add(s.Text)
	}
	for _, text := range generatedPositives(rs, 1) {
		f.Add(text)
	}
	f.Add("api_key: 9f8e7d6c5b4a3f2e1d0c\nAKIAIOSFODNN7EXAMPLE\n")
	f.Fuzz(func(t *testing.T, text string) {
		newParity(t).check(t, "fuzz", text)
	})
}

type fixtureText struct{ where, text string }

// fixtureTexts are the test data of memfs, cmd/borg and hooks: every
// test source and testdata file whole (up to 256 KiB), and each of its
// lines.
func fixtureTexts(t *testing.T) []fixtureText {
	t.Helper()
	var out []fixtureText
	add := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= 256<<10 {
			out = append(out, fixtureText{path, string(b)})
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) != "" {
				out = append(out, fixtureText{fmt.Sprintf("%s:%d", path, i+1), line})
			}
		}
	}
	for _, dir := range []string{".", "../cmd/borg", "../hooks"} {
		tests, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range tests {
			add(path)
		}
		err = filepath.WalkDir(filepath.Join(dir, "testdata"), func(path string, d fs.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			if err != nil {
				return err
			}
			if !d.IsDir() {
				add(path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// generatedPositives are texts holding strings generated from every
// rule's expression (n of each, seeded): each alone, on a line of an
// assignment, and two rules' strings on the lines of one text.
func generatedPositives(rs *ruleSet, n int) []string {
	rng := rand.New(rand.NewPCG(29, 4))
	var gen []string
	for _, r := range rs.spec.Rules {
		if r.Regex == "" {
			continue
		}
		re, err := syntax.Parse(r.Regex, syntax.Perl)
		if err != nil {
			continue
		}
		for range n {
			var sb strings.Builder
			generate(rng, re, &sb)
			gen = append(gen, sb.String())
		}
	}
	var out []string
	for i, s := range gen {
		out = append(out, s, "config:\n  value = "+s+"\n# end", "see "+s+" and "+gen[rng.IntN(len(gen))]+"\n"+gen[(i+1)%len(gen)])
	}
	return out
}

// generate writes a string matching re (empty-width assertions aside,
// which the text around it may break), choosing printable ASCII where a
// class allows it.
func generate(rng *rand.Rand, re *syntax.Regexp, sb *strings.Builder) {
	repeat := func(lo, hi int) {
		if hi < 0 {
			hi = lo + 3
		}
		for range lo + rng.IntN(hi-lo+1) {
			generate(rng, re.Sub[0], sb)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && rng.IntN(2) == 0 {
				r = unicode.SimpleFold(r)
			}
			sb.WriteRune(r)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return
		}
		k := rng.IntN(len(re.Rune)/2) * 2
		lo, hi := re.Rune[k], re.Rune[k+1]
		if lo <= '~' {
			lo, hi = max(lo, '!'), min(hi, '~')
			if lo > hi {
				lo, hi = re.Rune[k], re.Rune[k]
			}
		}
		sb.WriteRune(lo + rune(rng.IntN(int(hi-lo)+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		sb.WriteByte(alnum[rng.IntN(len(alnum))])
	case syntax.OpCapture:
		generate(rng, re.Sub[0], sb)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			generate(rng, sub, sb)
		}
	case syntax.OpAlternate:
		generate(rng, re.Sub[rng.IntN(len(re.Sub))], sb)
	case syntax.OpStar:
		repeat(0, 3)
	case syntax.OpPlus:
		repeat(1, 4)
	case syntax.OpQuest:
		repeat(0, 1)
	case syntax.OpRepeat:
		repeat(re.Min, re.Max)
	}
}

// syntheticRules uses what gitleaks' default rule set does not: required
// rules with line and column distances, a rule reported only as a
// required one, AND allowlists with stopwords, match and line targets,
// allowlists with paths, the older single allowlist, a targeted global
// allowlist, path rules, a secret group with an entropy threshold, and a
// generic rule shadowed by a specific one.
const syntheticRules = `{
 "Rules": [
  {"ID": "primary-key", "Regex": "(?i)primary[_-]?key\\s*=\\s*([a-z0-9]{8,})", "Keywords": ["PRIMARY"],
   "Required": [{"ID": "companion-id", "WithinLines": 1}, {"ID": "other-token", "WithinColumns": 12}]},
  {"ID": "companion-id", "Regex": "companion=([0-9]{4,})", "Keywords": ["companion"], "SkipReport": true},
  {"ID": "other-token", "Regex": "otk_[a-z]{6}", "Keywords": ["otk_"]},
  {"ID": "stopword-rule", "Regex": "stw_([a-z0-9]{10})", "Keywords": ["stw_"],
   "Allowlists": [{"Condition": "AND", "RegexTarget": "match", "Regexes": ["^stw_"], "StopWords": ["DEAD"]},
                  {"RegexTarget": "line", "Regexes": ["(?i)example"]}]},
  {"ID": "and-path", "Regex": "apk_[A-Z]{8}", "Keywords": ["apk_"],
   "Allowlists": [{"Condition": "&&", "Paths": ["\\.md$"], "Regexes": ["."]}, {"Paths": ["x"], "StopWords": ["Q"]}]},
  {"ID": "path-keyword", "Path": "^$|\\.env$", "Keywords": ["dotenv"]},
  {"ID": "path-never", "Path": "\\.tf$", "Regex": "tfp_[a-z]{5}", "Keywords": ["tfp_"]},
  {"ID": "path-only-never", "Path": "\\.p12$"},
  {"ID": "generic-token", "Regex": "(?i)token\\s*=\\s*([a-z0-9_]{6,})", "Keywords": ["token"]},
  {"ID": "specific-tok", "Regex": "tok_[a-z0-9]{6,}", "Keywords": ["tok_"]},
  {"ID": "grouped", "Regex": "grp(\\d)_([a-z]+)", "SecretGroup": 2, "Entropy": 1.5, "Keywords": ["grp"]},
  {"ID": "old-allowlist", "Regex": "old_[a-z]{4,}", "Keywords": ["old_"], "AllowList": {"StopWords": ["zzz"]}},
  {"ID": "multiline", "Regex": "\\nml:([a-z]+)\\n", "Keywords": ["ml:"]}
 ],
 "Allowlists": [
  {"Regexes": ["(?i)^dummy", "^x+$"]},
  {"TargetRules": ["other-token"], "Regexes": ["otk_aaaaaa"]},
  {"Paths": ["foo"]}
 ]
}`

// syntheticText is a text of the pieces syntheticRules look for.
func syntheticText(rng *rand.Rand) string {
	pieces := []string{"primary_key = abcd1234x", "PRIMARY-KEY=dummy12345", "companion=12345", "otk_abcdef", "otk_aaaaaa",
		"stw_dead012345", "stw_a1b2c3d4e5", "example", "apk_ABCDEFGH", "dotenv", "tfp_abcde", "token = tok_abc123",
		"token = xyz789abc", "TOKEN=xxxxxxx", "grp1_hello", "grp2_aaaa", "old_abcd", "old_zzzz", "ml:abc", "gitleaks:allow"}
	seps := []string{" ", "\n", "  ", "\t", ", ", "\r\n", "\n\n", ""}
	var sb strings.Builder
	for range 1 + rng.IntN(8) {
		sb.WriteString(strings.Repeat(" ", rng.IntN(3)*7))
		sb.WriteString(pieces[rng.IntN(len(pieces))])
		sb.WriteString(seps[rng.IntN(len(seps))])
	}
	return sb.String()
}

// syntheticParity is our rule set and gitleaks' detector of syntheticRules.
func syntheticParity(tb testing.TB) *parity {
	tb.Helper()
	var spec rulesSpec
	if err := json.Unmarshal([]byte(syntheticRules), &spec); err != nil {
		tb.Fatal(err)
	}
	rs, err := newRuleSet(spec)
	if err != nil {
		tb.Fatal(err)
	}
	var vc config.ViperConfig
	if err := json.Unmarshal([]byte(syntheticRules), &vc); err != nil {
		tb.Fatal(err)
	}
	logging.Logger = zerolog.Nop()
	cfg, err := vc.Translate()
	if err != nil {
		tb.Fatal(err)
	}
	d := detect.NewDetector(cfg)
	d.IgnoreGitleaksAllow = true
	return &parity{rs: rs, d: d, rules: map[string]bool{}}
}

// TestDetectorMatchesGitleaksSynthetic: on texts of the pieces
// syntheticRules look for, our detector finds what gitleaks' finds, and
// every rule that can fire on a text does.
func TestDetectorMatchesGitleaksSynthetic(t *testing.T) {
	p := syntheticParity(t)
	rng := rand.New(rand.NewPCG(29, 5))
	for range 5000 {
		p.check(t, "synthetic", syntheticText(rng))
	}
	for _, id := range []string{"primary-key", "other-token", "stopword-rule", "and-path", "path-keyword", "generic-token", "specific-tok", "grouped", "old-allowlist", "multiline"} {
		if !p.rules[id] {
			t.Errorf("rule %s never fired: the comparison proves little for it", id)
		}
	}
	t.Logf("%d texts, %d with a finding, rules found: %v", p.texts, p.positive, slices.Sorted(func(yield func(string) bool) {
		for id := range p.rules {
			if !yield(id) {
				return
			}
		}
	}))
}

// FuzzDetectorMatchesGitleaksSynthetic: on any text, our detector of
// syntheticRules finds what gitleaks' finds.
func FuzzDetectorMatchesGitleaksSynthetic(f *testing.F) {
	rng := rand.New(rand.NewPCG(29, 6))
	for range 20 {
		f.Add(syntheticText(rng))
	}
	f.Fuzz(func(t *testing.T, text string) {
		syntheticParity(t).check(t, "fuzz", text)
	})
}

// TestLocate: a match's line, column and line text, as gitleaks places
// them (a line after the first starts at its newline, which its columns
// count; a match after the last newline is a line further on, and its
// line text starts at the text's start).
func TestLocate(t *testing.T) {
	cases := []struct {
		name       string
		text       string
		start, end int
		line, col  int
		lineText   string
	}{
		{"one line", "a secret here", 2, 8, 0, 3, "a secret here"},
		{"first of two", "ab\ncd", 0, 2, 0, 1, "ab"},
		{"second line, terminated", "ab\ncd\n", 3, 5, 1, 2, "\ncd"},
		{"last line, unterminated", "ab\ncd", 3, 5, 1, 2, "ab\ncd"},
		{"last line up to a carriage return", "ab\ncd\rx", 3, 5, 1, 2, "ab\ncd"},
		{"third line, unterminated", "ab\ncd\nef", 6, 8, 2, 2, "ab\ncd\nef"},
		{"spanning lines", "ab\ncd\nef\n", 1, 4, 0, 2, "ab\ncd"},
		{"into the last line", "ab\ncd", 1, 4, 0, 2, "ab\nc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line, col, ls, le := locate(newlines(tc.text), tc.text, tc.start, tc.end)
			if line != tc.line || col != tc.col || tc.text[ls:le] != tc.lineText {
				t.Fatalf("locate = line %d col %d %q; want %d %d %q", line, col, tc.text[ls:le], tc.line, tc.col, tc.lineText)
			}
		})
	}
}

// TestRulesSpecComplete: gitleaks' parse of its default config holds no
// field rulesSpec lacks (a field gitleaks adds would otherwise be left out
// of gitleaks_rules.go in silence), and extends no other configuration.
func TestRulesSpecComplete(t *testing.T) {
	dec := json.NewDecoder(bytes.NewReader(gitleaksParse(t)))
	dec.DisallowUnknownFields()
	var spec rulesSpec
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("gitleaks' default config: %v", err)
	}
	if e := spec.Extend; e.Path != "" || e.URL != "" || e.UseDefault || len(e.DisabledRules) > 0 {
		t.Fatalf("gitleaks' default config extends another configuration: %+v", e)
	}
}

// TestNoGitleaksEngine: memfs, built without its tests, links no package
// of gitleaks nor the libraries its engine brings (gitleaks stays a test
// oracle).
func TestNoGitleaksEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/zricethezav/gitleaks", "github.com/rs/zerolog", "github.com/spf13/viper", "github.com/charmbracelet/", "github.com/BobuSumisu/aho-corasick"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("memfs depends on %s", p)
			}
		}
	}
}
