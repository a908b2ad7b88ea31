package memfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// Screen says why lesson l must never be quoted to an agent, or "" when
// nothing was found: a secret, or text that addresses the agent with a
// prompt-injection phrasing, in any field (id, title, gist, body, type,
// reach, author, tags, anchors, link targets; a hand-committed lesson's
// fields are whatever its author wrote). The reason names the kind and the
// field, never the text found: "secret (github-pat) in the body",
// `instruction-like text ("ignore previous instructions") in the gist`.
//
// It screens the canonical form of l, the one Render writes and Parse
// returns, so what is screened is what is stored; and each field is
// matched both as it is and as Fold reads it, so a rule spelled with
// Unicode spaces, fullwidth or look-alike letters or entities still
// matches.
//
// The first call compiles the secret rules, which is costly; the
// index calls Screen when it reads a new or changed lesson and keeps the
// verdict, so a query never scans.
func Screen(l domain.Lesson) string {
	fields := screenFields(canonical(l))
	for _, f := range fields {
		if kind, found := FindSecretFolded(f.text); found {
			return fmt.Sprintf("secret (%s) in the %s", kind, f.name)
		}
	}
	for _, f := range fields {
		if p, found := findInstructionFolded(f.text); found {
			return fmt.Sprintf("instruction-like text (%q) in the %s", p, f.name)
		}
	}
	return ""
}

// ScreenField is Screen of one field's text, named name in the reason:
// what borg learn says of a field before it builds the lesson.
func ScreenField(name, text string) string {
	if kind, found := FindSecretFolded(text); found {
		return fmt.Sprintf("secret (%s) in the %s", kind, name)
	}
	if p, found := findInstructionFolded(text); found {
		return fmt.Sprintf("instruction-like text (%q) in the %s", p, name)
	}
	return ""
}

type screenField struct{ name, text string }

// screenFields lists every text field of l. Ids and link targets are
// matched with their hyphens read as spaces, the way an agent reads them.
func screenFields(l domain.Lesson) []screenField {
	targets := make([]string, 0, len(l.Links))
	for _, k := range l.Links {
		targets = append(targets, k.Rel+" "+k.Target)
	}
	return []screenField{
		{"id", l.ID}, {"title", l.Title}, {"gist", l.Gist}, {"body", l.Body},
		{"type", l.Type}, {"reach", l.Reach}, {"author", l.Author},
		{"tags", strings.Join(l.Tags, " ")}, {"anchors", strings.Join(l.Anchors, " ")},
		{"links", strings.Join(targets, " ")},
	}
}

// FindSecretFolded is FindSecret of text and, when it differs, of its
// folded form (Fold): the secret test Screen applies to each field.
func FindSecretFolded(text string) (string, bool) {
	if kind, found := FindSecret(text); found {
		return kind, true
	}
	if f := Fold(text); f != text {
		return FindSecret(f)
	}
	return "", false
}

// SafeID is a lesson id fit to print: the id, unless it carries a secret
// itself (a hand-committed lesson's id is whatever its author wrote), then
// its first letters and a hash that tells it apart.
func SafeID(id string) string {
	if _, found := FindSecretFolded(id); !found {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return fmt.Sprintf("%s…[id redacted: it carries a secret; sha256 %s]", id[:min(3, len(id))], hex.EncodeToString(sum[:4]))
}

// findInstructionFolded is FindInstruction of text and of its folded form,
// with hyphens and underscores read as spaces (as in an id).
func findInstructionFolded(text string) (string, bool) {
	if p, found := FindInstruction(text); found {
		return p, true
	}
	f := strings.NewReplacer("-", " ", "_", " ").Replace(Fold(text))
	if f != text {
		return FindInstruction(f)
	}
	return "", false
}

// IsSecretVerdict reports whether a Screen verdict is about a secret (the
// lesson's text must then be redacted wherever it is shown, not only kept
// from agents).
func IsSecretVerdict(v string) bool { return strings.HasPrefix(v, "secret ") }

// ScreenID names Screen's rules for the index (index.Options.ScreenID): a
// catalog whose verdicts another version gave is rebuilt. Change it with
// the gitleaks version in go.mod (TestScreenID checks) or with any change
// to this package's own rules.
const ScreenID = "gitleaks-v8.30.1+borg-4"
