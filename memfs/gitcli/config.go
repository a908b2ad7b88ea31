package gitcli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Reading git's config files without starting git, for the few settings
// borg needs on every open (the repository's format and extensions, the
// user's name and email). The syntax is git-config(1)'s; include and
// includeIf are not followed, so a setting made only through them is not
// seen.

// ConfigVar is one variable of a config file: its key as git names it
// (git config --list), the section in lower case, then the subsection
// (as written between quotes, in lower case in the old "[section.sub]"
// spelling), then the name in lower case, joined by dots; and its value as
// git reads it. A name written without "=" is a boolean true: its value is
// "" and NoValue is set. A variable before any section header is its name
// alone.
type ConfigVar struct {
	Key, Value string
	NoValue    bool
}

// Config is a config file's variables in the order they appear.
type Config struct {
	Vars []ConfigVar
}

// configKey is the key of section.subsection.name ("" subsection: none).
func configKey(section, subsection, name string) string {
	if subsection == "" {
		return strings.ToLower(section) + "." + strings.ToLower(name)
	}
	return strings.ToLower(section) + "." + subsection + "." + strings.ToLower(name)
}

// Get is the value of section.subsection.name (the last one set wins, as in
// git), and whether it is set at all. Section and name match in any case,
// a subsection only as written.
func (c *Config) Get(section, subsection, name string) (string, bool) {
	key := configKey(section, subsection, name)
	for i := len(c.Vars) - 1; i >= 0; i-- {
		if c.Vars[i].Key == key {
			return c.Vars[i].Value, true
		}
	}
	return "", false
}

// Names are the distinct names set in section (no subsection), in the
// order each first appears.
func (c *Config) Names(section string) []string {
	prefix := strings.ToLower(section) + "."
	var names []string
	seen := map[string]bool{}
	for _, v := range c.Vars {
		name, ok := strings.CutPrefix(v.Key, prefix)
		if ok && !strings.Contains(name, ".") && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// ReadConfigFile reads the config file at path; a missing file is an
// empty config.
func ReadConfigFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// GlobalConfigFiles are the user's config files as git --global reads
// them, in order (a later one's values win): $GIT_CONFIG_GLOBAL alone when
// it is set, else $XDG_CONFIG_HOME/git/config (~/.config/git/config) and
// ~/.gitconfig.
func GlobalConfigFiles(getenv func(string) string) []string {
	if p := getenv("GIT_CONFIG_GLOBAL"); p != "" {
		return []string{p}
	}
	home := getenv("HOME")
	var files []string
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// ParseConfig reads a config file's text as git does. A line git would
// refuse ("bad config line N") is an error naming the line.
func ParseConfig(data []byte) (*Config, error) {
	p := configParser{data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), line: 1}
	c := &Config{}
	for {
		p.skipSpace(true)
		ch, ok := p.peek()
		if !ok {
			return c, nil
		}
		switch {
		case ch == '#' || ch == ';':
			p.skipLine()
		case ch == '[':
			if err := p.header(); err != nil {
				return nil, err
			}
		case isAlpha(ch):
			// A variable before any section has none; git reads it so.
			v, err := p.variable()
			if err != nil {
				return nil, err
			}
			c.Vars = append(c.Vars, v)
		default:
			return nil, p.bad()
		}
	}
}

// configParser is ParseConfig's position in the text and the section it
// is in.
type configParser struct {
	data      []byte
	pos, line int
	prefix    string // the current section's key prefix ("" before any), without its final dot
}

func (p *configParser) peek() (byte, bool) {
	if p.pos >= len(p.data) {
		return 0, false
	}
	return p.data[p.pos], true
}

func (p *configParser) next() (byte, bool) {
	ch, ok := p.peek()
	if ok {
		p.pos++
		if ch == '\n' {
			p.line++
		}
	}
	return ch, ok
}

// bad is the error for the line being read: the line of the last
// character read, as git counts them.
func (p *configParser) bad() error {
	line := p.line
	if p.pos > 0 && p.data[p.pos-1] == '\n' {
		line--
	}
	return fmt.Errorf("bad config line %d", line)
}

// skipSpace skips blanks, and line ends too when lines is set.
func (p *configParser) skipSpace(lines bool) {
	for {
		ch, ok := p.peek()
		if !ok || !(ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v' || lines && ch == '\n') {
			return
		}
		p.next()
	}
}

func (p *configParser) skipLine() {
	for {
		if ch, ok := p.next(); !ok || ch == '\n' {
			return
		}
	}
}

// header reads "[section]", `[section "subsection"]` or the old
// "[section.subsection]" (whose subsection git reads in lower case; git
// takes any dots there, even a leading or a trailing one).
func (p *configParser) header() error {
	p.next() // '['
	var name []byte
	for {
		ch, ok := p.next()
		if !ok {
			return p.bad()
		}
		switch {
		case ch == ']':
			if len(name) == 0 {
				return p.bad()
			}
			p.prefix = strings.ToLower(string(name))
			return nil
		case ch == ' ' || ch == '\t':
			return p.subsectionHeader(strings.ToLower(string(name)))
		case isAlnum(ch) || ch == '-' || ch == '.':
			name = append(name, ch)
		default:
			return p.bad()
		}
	}
}

// subsectionHeader reads the rest of `[section "subsection"]` after the
// section's name: backslash escapes the next character, and no line ends.
func (p *configParser) subsectionHeader(section string) error {
	p.skipSpace(false)
	if ch, ok := p.next(); !ok || ch != '"' || section == "" {
		return p.bad()
	}
	var sub []byte
	for {
		ch, ok := p.next()
		if !ok || ch == '\n' || ch == 0 {
			return p.bad()
		}
		if ch == '"' {
			break
		}
		if ch == '\\' {
			if ch, ok = p.next(); !ok || ch == '\n' || ch == 0 {
				return p.bad()
			}
		}
		sub = append(sub, ch)
	}
	if ch, ok := p.next(); !ok || ch != ']' {
		return p.bad()
	}
	p.prefix = section + "." + string(sub)
	return nil
}

// variable reads "name", "name = value" or "name =" up to its line's end
// (a name alone may not be followed by a comment).
func (p *configParser) variable() (ConfigVar, error) {
	var v ConfigVar
	var name []byte
	for {
		ch, ok := p.peek()
		if !ok || !(isAlnum(ch) || ch == '-') {
			break
		}
		name = append(name, ch)
		p.next()
	}
	v.Key = strings.ToLower(string(name))
	if p.prefix != "" {
		v.Key = p.prefix + "." + v.Key
	}
	p.skipSpace(false)
	ch, ok := p.peek()
	switch {
	case !ok || ch == '\n':
		v.NoValue = true
		p.next()
		return v, nil
	case ch != '=': // a comment too: git reads "name # …" as a bad line
		return v, p.bad()
	}
	p.next() // '='
	value, err := p.value()
	v.Value = value
	return v, err
}

// value reads a value up to its line's end: blanks at either end dropped
// and each one inside kept as a space, double quotes keeping what they
// hold as it is, a comment ending it outside quotes, and \\, \", \n, \t,
// \b and a backslash before the line's end (a continuation) the escapes.
func (p *configParser) value() (string, error) {
	var out []byte
	quoted := false
	spaces := 0 // blanks seen since the last character kept
	for {
		ch, ok := p.next()
		if !ok || ch == '\n' {
			if quoted {
				return "", p.bad()
			}
			return string(out), nil
		}
		if !quoted && (ch == '#' || ch == ';') {
			p.skipLine()
			return string(out), nil
		}
		if !quoted && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
			if len(out) > 0 {
				spaces++
			}
			continue
		}
		for ; spaces > 0; spaces-- {
			out = append(out, ' ')
		}
		switch ch {
		case '"':
			quoted = !quoted
		case '\\':
			esc, ok := p.next()
			switch {
			case !ok:
				return "", p.bad()
			case esc == '\n':
				// a continuation: the value goes on on the next line
			case esc == 'n':
				out = append(out, '\n')
			case esc == 't':
				out = append(out, '\t')
			case esc == 'b':
				out = append(out, '\b')
			case esc == '\\' || esc == '"':
				out = append(out, esc)
			default:
				return "", p.bad()
			}
		default:
			out = append(out, ch)
		}
	}
}

func isAlpha(ch byte) bool { return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' }

func isAlnum(ch byte) bool { return isAlpha(ch) || ch >= '0' && ch <= '9' }
