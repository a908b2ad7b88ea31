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
// something changed (a change marker, or "took", "taken" or "takes"
// followed by "over", whose index is took, -1 when none) and holds "from"
// followed by names (capitalised words or ids). ok is false when it says
// no such thing, or is negated.
func (f Fact) handoverFrom() (start, end, took int, ok bool) {
	took = -1
	for i := 0; i+1 < len(f.toks); i++ {
		if w := f.toks[i].word; (w == "took" || w == "taken" || w == "takes") && f.toks[i+1].word == "over" {
			took = i
			break
		}
	}
	if (!f.changed && took < 0) || f.negated {
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

// handoverWords are the words of the run of names a gist says something
// passed from (handoverFrom), nil when none: what SlotCandidates pairs by.
func (f Fact) handoverWords() []string {
	start, end, _, ok := f.handoverFrom()
	if !ok {
		return nil
	}
	out := make([]string, 0, end-start)
	for _, t := range f.toks[start:end] {
		out = append(out, t.word)
	}
	return out
}

// HandsOver reports whether newer says a slot of older passed from a name
// older holds to another. It holds when
//
//   - newer says something passed from a run of names (handoverFrom), and
//     older holds that run word for word, without itself saying something
//     passed from it: the run is older's value, wherever older puts it;
//   - newer names, outside the run, a name older does not hold, or says
//     who took over in a word older does not hold: the new value;
//   - the two are about one thing: every word of older outside the run
//     that is a name, an id or a compound ("crane-ingest", "on-call") is a
//     word newer holds, and there is at least one; or, when older has
//     none, newer holds every content word of older's subject (before its
//     boundary, outside the run), at least RestateMinSubject of them. A
//     decoy about another service ("Kofi Mensah is on call for gate-ops")
//     names a word newer lacks;
//   - neither is negated.
//
// The match's Frame is older's words outside the run, A the newer's first
// new name and B the run.
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
	if os, oe, _, ok := of.handoverFrom(); ok && os == at && oe == at+len(run) {
		return SlotMatch{}, false
	}
	olderHolds := map[string]bool{}
	for _, t := range of.toks {
		olderHolds[t.stem] = true
	}
	newerHolds := map[string]bool{}
	for _, t := range nf.toks {
		newerHolds[t.stem] = true
	}
	// The new value: a name outside the run, or who "took over" (the
	// words before it, where a one-word team or a person's first name
	// opens the sentence uncapitalised by the reader).
	added := ""
	for i, t := range nf.toks {
		if (t.name || i < took && t.content) && (i < start || i >= end) && !olderHolds[t.stem] {
			added = t.word
			break
		}
	}
	if added == "" {
		return SlotMatch{}, false
	}
	outside := func(i int) bool { return i < at || i >= at+len(run) }
	if !sameThing(of, newerHolds, outside) {
		return SlotMatch{}, false
	}
	var frame, from []string
	for i, t := range of.toks {
		if outside(i) {
			frame = append(frame, t.word)
		} else {
			from = append(from, t.word)
		}
	}
	return SlotMatch{Frame: strings.Join(frame, " "), A: added, B: strings.Join(from, " ")}, true
}

// sameThing reports whether newer (the stems it holds) names what older
// names outside its value (the tokens outside says are not the value):
// every name, id or compound of older there, at least one; or, when older
// has none, every content word of its subject, at least RestateMinSubject.
func sameThing(older Fact, newerHolds map[string]bool, outside func(int) bool) bool {
	anchors := 0
	for i, t := range older.toks {
		if outside(i) && t.content && (t.name || isCompound(t.word)) {
			if !newerHolds[t.stem] {
				return false
			}
			anchors++
		}
	}
	if anchors > 0 {
		return true
	}
	subject := 0
	for i, t := range older.toks[:older.boundary] {
		if outside(i) && t.content {
			if !newerHolds[t.stem] {
				return false
			}
			subject++
		}
	}
	return subject >= RestateMinSubject
}

// isCompound reports a word joined by a dash inside it ("crane-ingest").
func isCompound(w string) bool {
	return len(w) > 2 && strings.Contains(w[1:len(w)-1], "-")
}
