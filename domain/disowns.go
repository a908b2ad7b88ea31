package domain

import (
	"slices"
	"strings"
	"unicode"
)

// A rewrite often names the value it replaces as what the slot no longer
// holds: "Ledger discrepancies go to the Head of Compliance, not the
// clinic's NVS" replaces "Ledger discrepancies are escalated to the
// clinic's Named Veterinary Surgeon (NVS)". The "not" makes the newer a
// negated fact to Restates; here it is the rewrite's mark.

// notPhrases reads the phrases a gist's first sentence sets aside as not
// its value: the words after ", not" or "instead of", up to the clause's
// end, lowercase, without punctuation or a possessive's 's.
func notPhrases(fields []string) [][]string {
	var out [][]string
	depth := 0
	for i := 0; i < len(fields); i++ {
		raw := fields[i]
		if depth > 0 || strings.HasPrefix(raw, "(") {
			// An aside: its periods ("Dr.") end nothing.
			depth = max(depth+strings.Count(raw, "(")-strings.Count(raw, ")"), 0)
			continue
		}
		prev := ""
		if i > 0 {
			prev = strings.TrimRight(fields[i-1], ")\"'”’")
		}
		start := -1
		switch {
		case raw == "not" && strings.HasSuffix(prev, ","):
			start = i + 1
		case raw == "instead" && i+1 < len(fields) && fields[i+1] == "of":
			start = i + 2
		}
		if start >= 0 {
			var p []string
			for j := start; j < len(fields); j++ {
				w := strings.TrimFunc(fields[j], func(r rune) bool { return unicode.IsPunct(r) && r != '-' })
				w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
				if w != "" {
					p = append(p, w)
				}
				if endsClause(fields[j]) {
					break
				}
			}
			if len(p) > 0 {
				out = append(out, p)
			}
		}
		if t := strings.TrimRight(raw, ")\"'”’"); strings.HasSuffix(t, ".") || strings.HasSuffix(t, ";") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?") {
			break
		}
	}
	return out
}

// Disowns reports whether newer names older's value as what the slot no
// longer holds. It holds when
//
//   - newer sets a phrase aside (", not …", "instead of …": notPhrases)
//     of content words that are all words of older's predicate (after its
//     boundary) or of its asides ("NVS");
//   - older has a boundary, and newer holds every content word of older's
//     subject, at least RestateMinSubject of them or a name, an id or a
//     compound among them;
//   - newer says something older does not between older's subject and
//     the phrase: a content word older lacks (the new value);
//   - older is not negated.
//
// The match's Frame is older's subject, A the newer's words between that
// subject and the phrase, and B the phrase.
func Disowns(newer, older Claim) (SlotMatch, bool) {
	of, nf := older.fact, newer.fact
	if len(newer.not) == 0 || of.negated || of.boundary == 0 || of.boundary >= len(of.toks) {
		return SlotMatch{}, false
	}
	predicate := map[string]bool{}
	for _, t := range of.toks[of.boundary:] {
		predicate[t.stem] = true
	}
	var phrase []string
	for _, p := range newer.not {
		content, all := 0, true
		for _, w := range p {
			if slotFunction[w] || restateFunction[w] {
				continue
			}
			content++
			if s := restateStem(w); !predicate[s] && !of.aside[s] {
				all = false
			}
		}
		if all && content > 0 {
			phrase = p
			break
		}
	}
	if phrase == nil {
		return SlotMatch{}, false
	}
	newerAt := map[string]int{} // stem → last index in newer
	for i, t := range nf.toks {
		newerAt[t.stem] = i
	}
	named, subject, after := false, 0, -1
	var frame []string
	for _, t := range of.toks[:of.boundary] {
		frame = append(frame, t.word)
		if !t.content {
			continue
		}
		i, ok := newerAt[t.stem]
		if !ok {
			return SlotMatch{}, false
		}
		after = max(after, i)
		subject++
		named = named || t.name || isCompound(t.word)
	}
	if !named && subject < RestateMinSubject {
		return SlotMatch{}, false
	}
	// The new value: newer's words after older's subject, up to the
	// phrase set aside, holding a content word older lacks.
	olderHolds := map[string]bool{}
	for _, t := range of.toks {
		olderHolds[t.stem] = true
	}
	var added []string
	fresh := false
	for _, t := range nf.toks[after+1:] {
		if t.word == "not" || t.word == "instead" {
			break
		}
		added = append(added, t.word)
		fresh = fresh || (t.content && !olderHolds[t.stem] && !of.aside[t.stem])
	}
	if !fresh {
		return SlotMatch{}, false
	}
	return SlotMatch{Frame: strings.Join(frame, " "), A: strings.Join(added, " "), B: strings.Join(phrase, " ")}, true
}

// notKeys are the words SlotCandidates pairs a claim's set-aside phrases
// by: each phrase's first content word.
func (c Claim) notKeys() []string {
	var out []string
	for _, p := range c.not {
		if i := slices.IndexFunc(p, func(w string) bool { return !slotFunction[w] && !restateFunction[w] }); i >= 0 {
			out = append(out, restateStem(p[i]))
		}
	}
	return out
}
