package domain

import (
	"slices"
	"strings"
)

// A team often writes a change of hands as who took over from whom rather
// than restating the slot: "Priya Ramanathan took over crane-ingest
// on-call from Kofi Mensah" replaces "Kofi Mensah is the on-call owner for
// crane-ingest", and "Quay Platform took over the yard-optimizer from Yard
// Systems" replaces "The yard-optimizer is owned by the Yard Systems
// team". Restates cannot read either: the new value is the sentence's
// subject, and the old one may be the older fact's.

// handoverFrom is the run of names a fact says something passed from, as
// the span [start, end) of its tokens: a first sentence that says
// something changed hands ("took", "taken" or "takes" followed by "over",
// whose index is took, -1 when none; "handed over"; or a transfer word:
// handoverVerbs) and holds "from" followed by names (capitalised words or
// ids). ok is false when it says no such thing, or is negated. Other change
// markers do not count: "pulled metrics from Grafana" moves no slot.
func (f Fact) handoverFrom() (start, end, took int, ok bool) {
	took = -1
	cue := false
	for i, t := range f.toks {
		over := i+1 < len(f.toks) && f.toks[i+1].word == "over"
		switch {
		case (t.word == "took" || t.word == "taken" || t.word == "takes") && over:
			if took < 0 {
				took = i
			}
			cue = true
		case t.word == "handed" && over, handoverVerbs[t.word]:
			cue = true
		}
	}
	if !cue || f.negated {
		return 0, 0, -1, false
	}
	for i, t := range f.toks {
		if t.word != "from" {
			continue
		}
		j := i + 1
		for j < len(f.toks) && f.toks[j].name {
			j++
		}
		if j > i+1 {
			return i + 1, j, took, true
		}
	}
	return 0, 0, -1, false
}

// handoverVerbs say a slot passed to someone else.
var handoverVerbs = map[string]bool{"moved": true, "transferred": true, "reassigned": true, "passed": true}

// handoverKey is the first word of the run of names a gist says
// something passed from (handoverFrom), "" when none: what SlotCandidates
// pairs by.
func (f Fact) handoverKey() string {
	start, _, _, ok := f.handoverFrom()
	if !ok {
		return ""
	}
	return f.toks[start].word
}

// HandsOver reports whether newer says a slot of older passed from a name
// older holds to another. It holds when
//
//   - newer says something changed hands from a run of names
//     (handoverFrom), and older holds that run word for word, without
//     itself saying something passed from it: the run is older's value,
//     wherever older puts it;
//   - newer names the new value before the run: a run of names, or who
//     "took over", in words older does not hold;
//   - the two are about one slot: newer holds every content word of older
//     outside the run (its subject, its relation, its role: "on-call",
//     "approves", "runbook"), but for the words of owning and team nouns,
//     which a handover need not repeat; at least one of them names the
//     thing (a name, an id or a compound: "crane-ingest"), or older's
//     subject holds RestateMinSubject of them;
//   - newer names no other thing: every name, id or compound it holds
//     before the run, outside the new value, older holds too ("took over
//     gate-ops from …" is another service's);
//   - neither is negated.
//
// The match's Frame is older's words outside the run, A the newer's new
// value and B the run.
func HandsOver(newer, older Claim) (SlotMatch, bool) {
	nf, of := newer.fact, older.fact
	start, end, took, ok := nf.handoverFrom()
	if !ok || of.negated {
		return SlotMatch{}, false
	}
	run := nf.toks[start:end]
	at := -1
	for i := 0; i+len(run) <= len(of.toks); i++ {
		if slices.EqualFunc(run, of.toks[i:i+len(run)], func(a, b factToken) bool { return a.word == b.word }) {
			at = i
			break
		}
	}
	if at < 0 {
		return SlotMatch{}, false
	}
	if s, e, _, ok := of.handoverFrom(); ok && s == at && e == at+len(run) {
		return SlotMatch{}, false
	}
	olderHolds := map[string]bool{}
	for _, t := range of.toks {
		olderHolds[t.stem] = true
	}
	// The new value, before the run: the run of names (or of words before
	// "took over") from the first such word older lacks. What follows the
	// run says when or why ("in Q2", "who stays on …").
	first := -1
	for i, t := range nf.toks[:start] {
		if (t.name || i < took && t.content) && !olderHolds[t.stem] {
			first = i
			break
		}
	}
	if first < 0 {
		return SlotMatch{}, false
	}
	last := first
	for last+1 < start && (nf.toks[last+1].name || last+1 < took) {
		last++
	}
	newerHolds := map[string]bool{}
	for i, t := range nf.toks {
		newerHolds[t.stem] = true
		if i < start && (i < first || i > last) && t.content && (t.name || isCompound(t.word)) && !olderHolds[t.stem] {
			return SlotMatch{}, false
		}
	}
	outside := func(i int) bool { return i < at || i >= at+len(run) }
	if !sameSlotAround(of, newerHolds, outside) {
		return SlotMatch{}, false
	}
	var frame, from, added []string
	for i, t := range of.toks {
		if outside(i) {
			frame = append(frame, t.word)
		} else {
			from = append(from, t.word)
		}
	}
	for _, t := range nf.toks[first : last+1] {
		added = append(added, t.word)
	}
	return SlotMatch{Frame: strings.Join(frame, " "), A: strings.Join(added, " "), B: strings.Join(from, " ")}, true
}

// sameSlotAround reports whether newer (the stems it holds) states the
// slot older states around its value (the tokens outside says are not
// the value): newer holds every content word of older there but for the
// words of owning ("owned", "owner", "ownership") and team nouns, and
// they name a thing: a name, an id or a compound among them, or
// RestateMinSubject of them in older's subject.
func sameSlotAround(older Fact, newerHolds map[string]bool, outside func(int) bool) bool {
	named, subject := false, 0
	for i, t := range older.toks {
		if !outside(i) || !t.content || t.stem == "own" || restateTeamNouns[t.word] {
			continue
		}
		if !newerHolds[t.stem] {
			return false
		}
		named = named || t.name || isCompound(t.word)
		if i < older.boundary {
			subject++
		}
	}
	return named || subject >= RestateMinSubject
}

// isCompound reports a word joined by a dash inside it ("crane-ingest").
func isCompound(w string) bool {
	return len(w) > 2 && strings.Contains(w[1:len(w)-1], "-")
}
