package hooks

// links.go writes the link events, passings (docs/design.md, Links), from what the hooks
// see: tool → tool (one tool's output feeding the next), lesson → lesson
// (lessons acted on together in a session, in order), and protos (the
// agent reaching for a command, script, make target or file that does not
// exist). The links themselves are derived from these events.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/borg-memory/borg/domain"
)

// lessonVersion is a lesson's version as a link endpoint: a short hash of
// its claim and body, so a rewritten lesson starts new links.
func lessonVersion(l domain.Lesson) string {
	sum := sha256.Sum256([]byte(l.Gist + "\x00" + l.Body))
	return domain.LessonVersionPrefix + hex.EncodeToString(sum[:4])
}

// actedOn records that the session acted on lesson l, and returns the
// lesson → lesson passing from the lesson acted on before it, if any (once
// per pair and within the session's passing budget).
func (d *Deps) actedOn(st *SessionState, l domain.Lesson) []domain.Event {
	prev, prevV := st.LastActed, st.LastActedV
	st.LastActed, st.LastActedV = l.ID, lessonVersion(l)
	if prev == "" || prev == l.ID || !st.markPassed(prev, l.ID) {
		return nil
	}
	e := d.event(domain.KindPassing, st.Session, "", st.Repo)
	e.Src, e.SrcV, e.Dst, e.DstV = prev, prevV, l.ID, st.LastActedV
	return []domain.Event{e}
}

// markPassed reports whether the session may record a passing from src to
// dst: not recorded yet (links count sessions, not calls) and within
// maxPassings. It marks the pair recorded.
func (st *SessionState) markPassed(src, dst string) bool {
	key := src + "\x00" + dst
	if st.Passed[key] || len(st.Passed) >= maxPassings {
		return false
	}
	if st.Passed == nil {
		st.Passed = map[string]bool{}
	}
	st.Passed[key] = true
	return true
}

// toolVersion is a tool's version as a link endpoint: for a shell call,
// the resolved path of the program it ran (another install of `go` is
// another version); "" for the agent's own tools.
func toolVersion(in Input) string {
	prog := programOf(in.ToolCommand())
	if prog == "" || prog == "sh" {
		return ""
	}
	p, err := exec.LookPath(prog)
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return PathVersion(p)
}

// PathVersion is a program's version as a shared link endpoint: a short
// hash of its resolved path (another install is another version, and no
// machine's path leaves it).
func PathVersion(p string) string {
	sum := sha256.Sum256([]byte(filepath.ToSlash(p)))
	return "p-" + hex.EncodeToString(sum[:4])
}

// wanted is what a failed tool call was reaching for, as a proto's
// destination: "cmd:NAME" (command not found), "make:TARGET",
// "npm:SCRIPT", "file:PATH"; "" when the output says nothing of the kind.
func wanted(in Input) string {
	return wantedIn(toolOutput(in.ToolResponse), in.CWD, true)
}

// wantedIn is wanted of a tool's output text; with filter, a text that
// holds none of the phrases every pattern's match holds is read without
// compiling the patterns: most tool calls succeed, and this hook runs at
// every one.
func wantedIn(text, cwd string, filter bool) string {
	if text == "" || filter && !holdsAny(text, wantPhrases) {
		return ""
	}
	for _, p := range protoPatterns() {
		if m := p.re.FindStringSubmatch(text); m != nil {
			v := strings.Trim(m[1], "'\"`‘’ ")
			if v == "" || len(v) > 120 || strings.ContainsAny(v, "\n\x00") {
				continue
			}
			if p.kind == "file" || p.kind == "make" {
				v = repoRelative(v, cwd)
			}
			return p.kind + ":" + v
		}
	}
	return ""
}

// repoRelative keeps a wanted file's path relative to the session's
// working directory when it lies under it, else only its base name: a
// shared event carries no path of anyone's machine.
func repoRelative(p, cwd string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	if cwd != "" {
		if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return path.Base(p)
}

// wantPhrases are, lower-cased, the phrases of protoPatterns: a match of
// each pattern holds one of them.
var wantPhrases = []string{"no rule to make target", "missing script", "not found", "no such file", "does not exist"}

type protoPattern struct {
	kind string
	re   *regexp.Regexp
}

// protoPatterns read the common "it does not exist" messages of shells,
// make, npm/yarn/pnpm and the file tools.
var protoPatterns = sync.OnceValue(func() []protoPattern {
	return []protoPattern{
		{"make", regexp.MustCompile(`make(?:\[\d+\])?: \*\*\* No rule to make target ['‘` + "`" + `]([A-Za-z0-9_./+-]{1,80})['’]`)},
		{"npm", regexp.MustCompile(`(?i)missing script:? ["']?([A-Za-z0-9:_.\-]+)`)},
		{"npm", regexp.MustCompile(`(?i)error Command "([A-Za-z0-9:_.\-]+)" not found`)},
		{"cmd", regexp.MustCompile(`command not found: ([A-Za-z0-9_.+\-]+)`)},
		{"cmd", regexp.MustCompile(`exec: "([A-Za-z0-9_.+\-]+)": executable file not found`)},
		// A shell's own words only ("bash: x: command not found", dash's
		// "sh: 1: x: not found"), not any "key: not found" a tool prints.
		{"cmd", regexp.MustCompile(`(?m)^(?:[a-z]*sh|/bin/[a-z]*sh)(?:: line \d+|: \d+)?: ([A-Za-z0-9_.+\-]+): (?:command )?not found\b`)},
		{"file", regexp.MustCompile(`can't open file ['"]?([A-Za-z0-9_./\-]+)['"]?: \[Errno 2\] No such file`)},
		{"file", regexp.MustCompile(`(?m)(?:cannot open|cannot access|open) ['"]?([A-Za-z0-9_./\-]+)['"]?: No such file or directory`)},
		{"file", regexp.MustCompile(`(?m)^(?:bash|sh|zsh): (?:line \d+: )?([A-Za-z0-9_./\-]+): No such file or directory`)},
		{"file", regexp.MustCompile(`(?i)file does not exist:? ['"]?([A-Za-z0-9_./\-]+)`)},
	}
})

// toolOutput is the text a tool printed, from the response shapes the
// agents send (an object with stdout/stderr/output fields, or a string).
func toolOutput(response []byte) string {
	if len(response) == 0 {
		return ""
	}
	var b strings.Builder
	var r map[string]any
	if json.Unmarshal(response, &r) == nil {
		for _, k := range []string{"stdout", "stderr", "output", "aggregated_output", "formatted_output", "error", "content"} {
			if s, ok := r[k].(string); ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	var s string
	if json.Unmarshal(response, &s) == nil {
		return s
	}
	return string(response)
}

// protoPassing returns the proto passing for a tool call that reached for
// something missing: from the tool (with its version) to the wanted
// destination at domain.ProtoVersion.
func (d *Deps) protoPassing(st *SessionState, in Input, tool string) []domain.Event {
	dst := wanted(in)
	if dst == "" || tool == "" || !st.markPassed(tool, dst) {
		return nil
	}
	e := d.event(domain.KindPassing, st.Session, "", st.Repo)
	e.Src, e.SrcV, e.Dst, e.DstV = tool, toolVersion(in), dst, domain.ProtoVersion
	return []domain.Event{e}
}
