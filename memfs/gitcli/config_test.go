package gitcli

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// configCases are config files git reads (or refuses) in ways a reader
// can get wrong: comments, quoting, escapes, continuations, blanks,
// subsections in both spellings, a section and a variable on one line,
// CRLF line ends, a byte-order mark, and the lines git calls bad.
var configCases = []struct{ name, text string }{
	{"plain", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n"},
	{"comments", "# top\n; also\n[user] # after a header\n\tname = Ada # after a value\n\temail = ada@example.com;x\n"},
	{"quotes", "[user]\n\tname = \"  Ada  # not a comment ; nor this \"\n\temail = a\"b c\"d\n"},
	{"escapes", "[x]\n\ta = tab\\there\n\tb = line\\nbreak\n\tc = \"q\\\"q\" back\\\\slash\n\td = bs\\b\n"},
	{"continuation", "[x]\n\ta = one \\\n  two\n\tb = \"in \\\nquotes\"\n"},
	{"blanks", "[x]\n\ta =    spaced\t\tout   \n\tb =\n\tc=d\n\te\t=\tf\t\n"},
	{"no value", "[x]\n\tflag\n\tother  \n\tthird=\n"},
	{"bad: a comment after a name", "[x]\n\tflag # comment\n"},
	{"subsections", "[remote \"origin\"]\n\turl = git@example.com:t/m.git\n[branch \"a\\\"b\\\\c\\d\"]\n\tmerge = refs/heads/main\n[Section.SubName]\n\tKey = v\n"},
	{"dotted section with a subsection", "[a.b \"C\"]\n\tk = v\n"},
	{"odd headers git takes", "[.]\na=1\n[. \"X y\"]\nb=2\n[a.]\nc=3\n[a \"\"]\nd=4\n[A.B.C]\ne=5\n"},
	{"header and variable on one line", "[core] bare = false\n[user]email = a@b.c\n"},
	{"case", "[USER]\n\tNAME = Ada\n[Extensions]\n\tObjectFormat = sha1\n"},
	{"names", "[my-sect1]\n\tmy-name2 = v\n"},
	{"crlf", "[user]\r\n\tname = Ada\r\n\temail = ada@example.com \r\n"},
	{"bom", "\xef\xbb\xbf[user]\n\tname = Ada\n"},
	{"repeated", "[user]\n\tname = one\n[user]\n\tname = two\n"},
	{"empty", ""},
	{"only comments", "# nothing\n\n   ; here\n"},
	{"bad: open header", "[user\n\tname = x\n"},
	{"bad: no equals", "[user]\n\tname value\n"},
	{"bad: no name", "[user]\n\t= value\n"},
	{"bad: open subsection", "[remote \"origin]\n"},
	{"bad: open quote", "[user]\n\tname = \"Ada\n"},
	{"bad: unknown escape", "[user]\n\tname = A\\qda\n"},
	{"variable before a section", "name = Ada\n[user]\n\tname = B\n"},
	{"bad: empty section", "[]\n"},
	{"bad: name starts with a digit", "[x]\n\t1a = v\n"},
	{"bad: underscore", "[x]\n\ta_b = v\n"},
	{"bad: text after a subsection", "[remote \"o\" x]\n"},
}

// TestParseConfigMatchesGit: every case reads as `git config --list`
// reads it, variable for variable, and what git refuses is refused with
// the line git names.
func TestParseConfigMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	badLine := regexp.MustCompile(`bad config line (\d+)`)
	for i, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.Repeat("c", i+1))
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "config", "--file", path, "--list", "--null")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			out, gitErr := cmd.Output()
			c, err := ParseConfig([]byte(tc.text))
			if gitErr != nil {
				msg := ""
				if ee, ok := gitErr.(*exec.ExitError); ok {
					msg = string(ee.Stderr)
				}
				if err == nil {
					t.Fatalf("git refuses it (%s), ParseConfig reads %+v", strings.TrimSpace(msg), c.Vars)
				}
				if m := badLine.FindStringSubmatch(msg); m != nil && !strings.Contains(err.Error(), "line "+m[1]) {
					t.Errorf("ParseConfig: %v; git: %s", err, strings.TrimSpace(msg))
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConfig: %v; git reads %q", err, out)
			}
			var want, got []string
			for _, entry := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
				if entry != "" {
					want = append(want, entry)
				}
			}
			for _, v := range c.Vars {
				key := v.Key
				if !v.NoValue {
					key += "\n" + v.Value
				}
				got = append(got, key)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseConfig reads\n%q\ngit reads\n%q", got, want)
			}
		})
	}
}

// TestConfigGet: the last value set wins, names and sections match in
// any case, a subsection only as written.
func TestConfigGet(t *testing.T) {
	c, err := ParseConfig([]byte("[user]\n\tname = one\n[User]\n\tNAME = two\n[remote \"Origin\"]\n\turl = u\n[extensions]\n\tnoop\n\tobjectFormat = sha1\n\tnoop = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		section, sub, name, want string
		ok                       bool
	}{
		{"user", "", "name", "two", true},
		{"USER", "", "Name", "two", true},
		{"remote", "Origin", "url", "u", true},
		{"remote", "origin", "url", "", false},
		{"user", "", "email", "", false},
		{"extensions", "", "objectformat", "sha1", true},
	} {
		if got, ok := c.Get(tc.section, tc.sub, tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("Get(%s, %s, %s) = %q, %v; want %q, %v", tc.section, tc.sub, tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got := strings.Join(c.Names("Extensions"), " "); got != "noop objectformat" {
		t.Errorf("Names(extensions) = %s", got)
	}
}

// TestGlobalConfigFiles: git's --global files, in the order their values
// apply.
func TestGlobalConfigFiles(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		want   []string
	}{
		{"home", env("HOME", "/h"), []string{"/h/.config/git/config", "/h/.gitconfig"}},
		{"xdg", env("HOME", "/h", "XDG_CONFIG_HOME", "/x"), []string{"/x/git/config", "/h/.gitconfig"}},
		{"GIT_CONFIG_GLOBAL", env("HOME", "/h", "GIT_CONFIG_GLOBAL", "/g"), []string{"/g"}},
		{"nothing", env(), nil},
	} {
		got := GlobalConfigFiles(tc.getenv)
		for i := range got {
			got[i] = filepath.ToSlash(got[i])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzParseConfig: any text either is refused or reads as variables that,
// written back in git's syntax, read again the same; nothing panics.
func FuzzParseConfig(f *testing.F) {
	for _, tc := range configCases {
		f.Add([]byte(tc.text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bad config line ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		var b strings.Builder
		header := ""
		for i, v := range c.Vars {
			h, name, dotted := cutLast(v.Key)
			if name == "" || !isAlpha(name[0]) || !dotted && i > 0 && strings.Contains(c.Vars[i-1].Key, ".") {
				t.Fatalf("variable %+v", v)
			}
			if dotted && (i == 0 || h != header) {
				b.WriteString(headerLine(h))
			}
			header = h
			writeVar(&b, name, v)
		}
		again, err := ParseConfig([]byte(b.String()))
		if err != nil {
			t.Fatalf("written back, %q is refused: %v", b.String(), err)
		}
		if len(again.Vars) != len(c.Vars) || len(c.Vars) > 0 && !reflect.DeepEqual(again.Vars, c.Vars) {
			t.Fatalf("written back as %q, reads %+v; was %+v", b.String(), again.Vars, c.Vars)
		}
	})
}

// cutLast splits a key at its last dot: the section's part and the name.
func cutLast(key string) (header, name string, dotted bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return "", key, false
	}
	return key[:i], key[i+1:], true
}

// headerLine is a section header whose key prefix is h: `[s "q"]` for the
// first split of h into a section's name and a subsection, else "[h]".
func headerLine(h string) string {
	for i := 1; i < len(h); i++ {
		if h[i] == '.' && !strings.ContainsFunc(h[:i], func(r rune) bool { return !(r < 128 && (isAlnum(byte(r)) || r == '-' || r == '.')) }) {
			return "[" + h[:i] + ` "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(h[i+1:]) + "\"]\n"
		}
	}
	return "[" + h + "]\n"
}

// writeVar writes v's line in git's syntax, its value quoted.
func writeVar(b *strings.Builder, name string, v ConfigVar) {
	b.WriteString(name)
	if !v.NoValue {
		b.WriteString(` = "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`).Replace(v.Value) + `"`)
	}
	b.WriteString("\n")
}
