package sleep

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/borg-memory/borg/domain"
)

// copulas are the verbs that make a frame a claim about its subject: "the
// capital of India is", "retries are set to". A frame without one ("we
// handle the rotation of") names a topic, and what follows it is a second
// subject, not a value: two such lessons state two facts.
var copulas = map[string]bool{"is": true, "are": true, "was": true, "were": true}

var digits = regexp.MustCompile(`[0-9]`)

// frameClaim is a gist read as subject, frame and value.
type frameClaim struct {
	id      string
	key     string // domain.FrameKeyOf
	subject string // the frame's tokens before its first copula
	value   string // normalised value
	numeric bool
}

// readFrame reads a gist as a claim a later one could contradict: a verb
// claim (readVerbClaim), or a frame
// key (domain.FrameKeyOf) that contains a copula with a non-empty subject
// before it and does not end in "of", and a value. A frame ending in "of"
// ("is responsible for the rotation of") is completed by a noun, not a
// value: "… of api-tokens" and "… of db-credentials" are about two
// different things.
func readFrame(id, gist string) (frameClaim, bool) {
	if c, ok := readVerbClaim(id, gist); ok {
		return c, true
	}
	key, ok := domain.FrameKeyOf(gist)
	if !ok {
		return frameClaim{}, false
	}
	frame := strings.Fields(key)
	cop := slices.IndexFunc(frame, func(t string) bool { return copulas[t] })
	if cop <= 0 || frame[len(frame)-1] == "of" {
		return frameClaim{}, false
	}
	tokens := strings.Fields(strings.ToLower(gist))
	value := normValue(strings.Join(tokens[len(frame):], " "))
	if value == "" {
		return frameClaim{}, false
	}
	return frameClaim{id: id, key: key, subject: strings.Join(frame[:cop], " "), value: value,
		numeric: digits.MatchString(value)}, true
}

// normValue drops punctuation at the ends of the value's words.
func normValue(v string) string {
	f := strings.Fields(v)
	out := f[:0]
	for _, w := range f {
		if w = strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) && r != '/' && r != '%' }); w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// frameConflict reports whether b contradicts a: the same frame about the
// same subject, different values of the same kind (both numeric or both
// not, so "is 30 days" against "is configurable" is left alone).
func frameConflict(a, b frameClaim) bool {
	return a.key == b.key && a.subject == b.subject && a.value != b.value && a.numeric == b.numeric
}

// frames is phase 4: lessons whose gists write different values into the
// same frame about the same subject. In each frame the newest claim
// supersedes every older one it conflicts with: it gains a derived
// supersedes link (the relation retrieval demotes by) and the older one's
// confidence is capped at FrameConfidenceCap. A pair already resolved that
// way is left alone.
func (p *planner) frames() PhasePlan {
	var ph PhasePlan
	groups := map[string][]frameClaim{}
	var keys []string
	for _, id := range p.active() {
		c, ok := readFrame(id, p.cur[id].l.Gist)
		if !ok {
			continue
		}
		if _, seen := groups[c.key]; !seen {
			keys = append(keys, c.key)
		}
		groups[c.key] = append(groups[c.key], c)
	}
	slices.Sort(keys)
	conflicts, resolved, agreeing := 0, 0, 0
	for _, key := range keys {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b frameClaim) int {
			if p.olderFirst(a.id, b.id) {
				return 1
			}
			return -1
		}) // newest first
		newest := g[0]
		for _, old := range g[1:] {
			if !frameConflict(newest, old) {
				agreeing++
				continue
			}
			n, o := p.cur[newest.id].l, p.cur[old.id].l
			linked := slices.ContainsFunc(n.Links, func(k domain.LessonLink) bool {
				return k.Rel == domain.RelSupersedes && k.Target == old.id
			})
			capped := o.Confidence <= p.opts.FrameConfidenceCap
			if linked && capped {
				resolved++
				continue
			}
			conflicts++
			if !linked {
				n.Links = append(slices.Clone(n.Links), domain.LessonLink{Rel: domain.RelSupersedes, Target: old.id, Derived: true})
				p.update(n)
			}
			before := o.Confidence
			if !capped {
				o.Confidence = p.opts.FrameConfidenceCap
				p.update(o)
			}
			ph.Items = append(ph.Items, Item{Lesson: newest.id, Action: "supersedes", Other: old.id,
				Why: fmt.Sprintf("frame %q: %q is newer than %q; %s confidence %s -> %s",
					key, newest.value, old.value, old.id, fp4(before), fp4(o.Confidence))})
		}
	}
	ph.Counts = []Count{{"superseded", conflicts}, {"already resolved", resolved}, {"not conflicting", agreeing}}
	return ph
}
