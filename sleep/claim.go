package sleep

import (
	"sort"
	"strings"
	"unicode"
)

// Claims whose relation is a verb. The copula frames of frame.go read "the
// default region is eu-west-1"; a team writes as many facts with a verb:
// "the nightly export of billing runs at 02:00 UTC", "the primary database
// of search lives in eu-west-1", "the payments repository is owned by team
// ledger". readVerbClaim reads such a gist as subject, relation and value,
// so a later gist that writes another value for the same subject and
// relation supersedes it, while two subjects that share a relation (two
// services whose exports both run at 02:00) stay two facts.

// relationSlots maps a relation phrase (lowercased, space-separated) to the
// slot it writes. Phrases that write the same slot are interchangeable
// ("lives in" and "moved to" both say where a thing is). Only relations
// with one value at a time belong here: "uses" or "depends on" hold many
// values at once, and a second one is no rewrite of the first.
var relationSlots = map[string]string{}

func init() {
	for slot, phrases := range map[string][]string{
		"located": {"lives in", "live in", "lives on", "resides in", "is hosted in", "are hosted in", "is hosted on",
			"are hosted on", "is located in", "are located in", "is deployed to", "are deployed to", "is deployed in",
			"are deployed in", "deploys to", "deploy to", "moved to", "has moved to", "have moved to", "was moved to",
			"were moved to", "migrated to", "has migrated to", "was migrated to", "now lives in", "runs in", "run in",
			"sits in", "is stored in", "are stored in", "is kept in", "are kept in"},
		"scheduled": {"runs at", "run at", "starts at", "start at", "is scheduled at", "is scheduled for", "are scheduled for",
			"happens at", "happen at", "kicks off at", "fires at", "runs every", "run every", "runs daily at", "runs nightly at"},
		"owned": {"is owned by", "are owned by", "owned by", "belongs to", "belong to", "is maintained by",
			"are maintained by", "is managed by", "are managed by", "is run by", "are run by"},
		"points":    {"points to", "point to", "resolves to", "redirects to", "forwards to"},
		"listens":   {"listens on", "listen on", "is served on", "is exposed on", "serves on"},
		"defaults":  {"defaults to", "default to", "is set to", "are set to", "is configured to", "is capped at", "is limited to"},
		"expires":   {"expires after", "expire after", "times out after", "time out after", "rotates every", "rotate every", "is rotated every"},
		"language":  {"is written in", "are written in"},
		"contacted": {"is reached at", "can be reached at"},
	} {
		for _, p := range phrases {
			relationSlots[p] = slot
		}
	}
	for p := range relationSlots {
		if n := len(strings.Fields(p)); n > maxRelationTokens {
			maxRelationTokens = n
		}
	}
}

var maxRelationTokens int

// leading words a subject drops: "the primary database of search" and
// "primary database of search" are one subject.
var subjectArticles = map[string]bool{"the": true, "a": true, "an": true, "our": true, "its": true, "their": true}

// Value bounds of a verb claim: a value is a short slot filler (a region, a
// time, a team), not a clause.
const (
	verbClaimMinSubject = 1
	verbClaimMaxValue   = 6
)

// readVerbClaim reads a gist as a claim whose relation is one of
// relationSlots: the leftmost, longest relation phrase after at least one
// subject token; the value is what follows up to the end of the first
// clause (a period, a semicolon, a comma or a dash ends it) and must be one
// to verbClaimMaxValue tokens. It fails closed: no relation, an empty
// subject, a subject that is a pronoun, or a long value.
func readVerbClaim(id, gist string) (frameClaim, bool) {
	words, clauseEnd := claimTokens(gist)
	for i := verbClaimMinSubject; i < len(words) && i < clauseEnd; i++ {
		for n := min(maxRelationTokens, clauseEnd-i); n >= 1; n-- {
			phrase := strings.Join(words[i:i+n], " ")
			slot, ok := relationSlots[phrase]
			if !ok {
				continue
			}
			subject := words[:i]
			for len(subject) > 0 && subjectArticles[subject[0]] {
				subject = subject[1:]
			}
			value := words[i+n : clauseEnd]
			if len(subject) == 0 || pronouns[strings.Join(subject, " ")] || len(value) == 0 || len(value) > verbClaimMaxValue {
				return frameClaim{}, false
			}
			subj := strings.Join(subject, " ")
			v := strings.Join(value, " ")
			return frameClaim{id: id, key: "verb: " + subj + " | " + slot, subject: subj, value: v,
				numeric: digits.MatchString(v)}, true
		}
	}
	return frameClaim{}, false
}

var pronouns = map[string]bool{"it": true, "we": true, "they": true, "this": true, "that": true, "you": true, "he": true, "she": true, "i": true}

// claimTokens lowercases gist into words with the punctuation at their
// ends removed (inner punctuation stays: eu-west-1, 02:00, api.example.com),
// and returns the index of the first word after the first clause's end.
func claimTokens(gist string) ([]string, int) {
	var words []string
	end := -1
	for _, raw := range strings.Fields(strings.ToLower(gist)) {
		w := strings.TrimFunc(raw, func(r rune) bool { return unicode.IsPunct(r) && r != '%' && r != '/' })
		if w != "" {
			words = append(words, w)
		}
		if end < 0 && len(words) > 0 && endsClause(raw) {
			end = len(words)
		}
	}
	if end < 0 {
		end = len(words)
	}
	return words, end
}

// endsClause reports a word that closes a clause: a trailing period (not
// an inner one), semicolon, comma, colon, or a lone dash.
func endsClause(raw string) bool {
	if raw == "-" || raw == "—" || raw == "–" {
		return true
	}
	trimmed := strings.TrimRightFunc(raw, func(r rune) bool { return r == ')' || r == '"' || r == '\'' })
	return strings.HasSuffix(trimmed, ".") || strings.HasSuffix(trimmed, ";") || strings.HasSuffix(trimmed, ",") ||
		strings.HasSuffix(trimmed, ":") || strings.HasSuffix(trimmed, "!") || strings.HasSuffix(trimmed, "?")
}

// relationPhrases lists relationSlots' phrases, sorted (for tests and docs).
func relationPhrases() []string {
	out := make([]string, 0, len(relationSlots))
	for p := range relationSlots {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
