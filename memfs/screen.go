package memfs

import (
	"fmt"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// Screen says why lesson l must never be quoted to an agent, or "" when
// nothing was found: a secret in any field (its id included; a
// hand-committed lesson's id is whatever its author wrote), or text that
// addresses the agent with a prompt-injection phrasing (title, gist,
// body). The reason names the kind and the field, never the text found:
// "secret (github-pat) in the body", `instruction-like text ("ignore
// previous instructions") in the gist`.
//
// The first call compiles the secret rules, which is costly; the
// index calls Screen when it reads a new or changed lesson and keeps the
// verdict, so a query never scans.
func Screen(l domain.Lesson) string {
	for _, f := range []struct{ name, text string }{
		{"id", l.ID}, {"title", l.Title}, {"gist", l.Gist}, {"body", l.Body},
		{"tags", strings.Join(l.Tags, " ")}, {"anchors", strings.Join(l.Anchors, " ")},
	} {
		if kind, found := FindSecret(f.text); found {
			return fmt.Sprintf("secret (%s) in the %s", kind, f.name)
		}
	}
	for _, f := range []struct{ name, text string }{{"title", l.Title}, {"gist", l.Gist}, {"body", l.Body}} {
		if p, found := FindInstruction(f.text); found {
			return fmt.Sprintf("instruction-like text (%q) in the %s", p, f.name)
		}
	}
	return ""
}

// IsSecretVerdict reports whether a Screen verdict is about a secret (the
// lesson's text must then be redacted wherever it is shown, not only kept
// from agents).
func IsSecretVerdict(v string) bool { return strings.HasPrefix(v, "secret ") }

// ScreenID names Screen's rules for the index (index.Options.ScreenID): a
// catalog whose verdicts another version gave is rebuilt. Change it with
// the gitleaks version in go.mod (TestScreenID checks) or with any change
// to this package's own rules.
const ScreenID = "gitleaks-v8.30.1+borg-1"
