package memfs

import (
	"regexp"
	"strings"
	"sync"
)

// instructionPhrase is one well-known way text tries to take over the agent
// it is shown to (a prompt injection). A lesson is quoted to an agent as
// data; one that addresses the agent this way is never quoted.
type instructionPhrase struct {
	name string // what borg says it found
	re   *regexp.Regexp
	need []string // literals (lower case) the text must hold one of
}

// phrase compiles words into a case-insensitive, word-bounded pattern that
// tolerates any run of spaces between words; a word may be an alternation
// "(a|b)" and a trailing "?" makes it optional.
func phrase(name string, need []string, words ...string) instructionPhrase {
	var b strings.Builder
	b.WriteString(`(?i)\b`)
	for i, w := range words {
		opt := strings.HasSuffix(w, "?")
		w = strings.TrimSuffix(w, "?")
		if !strings.HasPrefix(w, "(") {
			w = regexp.QuoteMeta(w)
		} else {
			w = "(?:" + w[1:]
		}
		switch {
		case i == 0:
			b.WriteString(w)
		case opt:
			b.WriteString(`(?:\s+` + w + `)?`)
		default:
			b.WriteString(`\s+` + w)
		}
	}
	b.WriteString(`\b`)
	return instructionPhrase{name: name, re: regexp.MustCompile(b.String()), need: need}
}

// instructionPhrases is kept small on purpose: phrasings aimed at the agent
// that ordinary engineering lessons do not use. Compiled on first use.
var instructionPhrases = sync.OnceValue(func() []instructionPhrase {
	const earlier = "(previous|prior|above|earlier|preceding|all|your|these)"
	const orders = "(instructions|instruction|prompts|prompt|directions|guidelines)"
	return []instructionPhrase{
		phrase("ignore previous instructions", []string{"instruction", "prompt", "direction", "guideline"}, "(ignore|disregard|forget|override)", "(all|any)?", earlier, "(previous|prior|above|earlier|system)?", orders),
		phrase("disregard the above", []string{"above"}, "(disregard|forget)", "(everything|all|anything)?", "the?", "above"),
		phrase("ignore everything above", []string{"above", "before"}, "ignore", "(everything|anything)", "(written|said)?", "(above|before)"),
		phrase("you are now …", []string{"now"}, "you", "are", "now", "(a|an|DAN|free|unrestricted|jailbroken|acting|playing)"),
		phrase("you are now …", []string{"mode"}, "you", "are", "now", "in", "(developer|god|admin|jailbreak|jailbroken|unrestricted|DAN)", "mode"),
		phrase("system prompt", []string{"system"}, "(reveal|print|show|repeat|output|leak|ignore|override|replace|disregard)", "(the|your|this|my)?", "system", "prompt"),
		phrase("do not tell the user", []string{"user"}, "(do|don't|dont|never|mustn't|shouldn't)", "not?", "(tell|inform|mention|show|reveal)", "(this|it|anything)?", "(to)?", "the", "user"),
		phrase("do not tell the user", []string{"user"}, "(must|should|shall)", "not", "(tell|inform|mention|show|reveal)", "(this|it|anything)?", "(to)?", "the", "user"),
		phrase("hide this from the user", []string{"user"}, "(hide|conceal|keep|withhold)", "(this|it|that|these|everything|all)", "(secret)?", "from", "the", "user"),
		{name: "new instructions", re: regexp.MustCompile(`(?i)\bnew\s+(?:instructions?|orders|directives?)\s*:`), need: []string{"new"}},
		phrase("without telling the user", []string{"user"}, "without", "(telling|informing|asking)", "the", "user"),
	}
})

// FindInstruction reports whether text addresses the agent reading it with
// a known prompt-injection phrasing, naming the phrase ("ignore previous
// instructions", …); the name never quotes the text.
func FindInstruction(text string) (name string, found bool) {
	lower := strings.ToLower(text)
	for _, p := range instructionPhrases() {
		if containsAny(lower, p.need) && p.re.MatchString(text) {
			return p.name, true
		}
	}
	return "", false
}
