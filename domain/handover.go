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
// something passed from (handoverFrom), or the stem of the first content
// word of what it says a party took over (takeover); "" when none: what
// SlotCandidates pairs by, against the words and the stems of the others.
func (f Fact) handoverKey() string {
	start, _, _, ok := f.handoverFrom()
	if ok {
		return f.toks[start].word
	}
	if over, ok := f.takeover(); ok {
		return f.toks[f.nextContent(over+1)].stem
	}
	return ""
}

// nextContent is the index of the first content token of f from i on,
// len(f.toks) when none.
func (f Fact) nextContent(i int) int {
	for i < len(f.toks) && !f.toks[i].content {
		i++
	}
	return i
}

// takeover is the index of the "over" of a fact that says, in the past,
// that a party took something over ("Foundry took over matchwright last
// sprint", "Omar has taken over lab-bridge"), without saying from whom
// (handoverFrom finds no run, and no "from" follows); ok is false when it
// says no such thing. The words before "took" (or before "has taken") are
// the party and nothing else: content words, none a hedge or a negation
// ("almost", "nobody", "hasn't"), so a passive ("was taken over by"), a
// future ("will take over"), a condition ("if … takes over") or a
// negation never reads as one.
func (f Fact) takeover() (over int, ok bool) {
	if f.negated {
		return 0, false
	}
	if _, _, _, from := f.handoverFrom(); from {
		return 0, false
	}
	for i, t := range f.toks {
		if i+1 >= len(f.toks) || f.toks[i+1].word != "over" {
			continue
		}
		party := i
		switch {
		case t.word == "took":
		case t.word == "taken" && i > 0 && (f.toks[i-1].word == "has" || f.toks[i-1].word == "have" || f.toks[i-1].word == "had"):
			party = i - 1
		default:
			continue
		}
		if party == 0 || party > takeoverMaxParty || f.nextContent(i+2) == len(f.toks) ||
			slices.ContainsFunc(f.toks[i+2:], func(t factToken) bool { return t.word == "from" }) ||
			slices.ContainsFunc(f.toks[:party], func(t factToken) bool {
				return !t.content || takeoverHedges[t.word] || restateNegation[t.word] || strings.HasSuffix(t.word, "n't")
			}) {
			return 0, false
		}
		return i + 1, true
	}
	return 0, false
}

// takeoverMaxParty is the most words the party of a takeover may have.
const takeoverMaxParty = 4

// takeoverHedges before "took over" say it did not quite happen, or that
// nobody took it.
var takeoverHedges = map[string]bool{
	"almost": true, "nearly": true, "partly": true, "briefly": true, "temporarily": true, "nobody": true,
	"noone": true, "none": true, "maybe": true, "perhaps": true, "probably": true, "might": true,
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
	if !ok {
		return takesOver(nf, of)
	}
	if of.negated {
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
	// What newer says was taken over: the words between "over" and "from".
	taken := map[string]bool{}
	if took >= 0 && took+2 < start-1 {
		for _, t := range nf.toks[took+2 : start-1] {
			if t.content {
				taken[t.word] = true
			}
		}
	}
	if !sameSlotAround(of, newerHolds, taken, outside) {
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
// they name a thing: a name, an id or a compound among them,
// RestateMinSubject of them in older's subject, or what newer says was
// taken over (takenIs).
func sameSlotAround(older Fact, newerHolds, taken map[string]bool, outside func(int) bool) bool {
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
	return named || subject >= RestateMinSubject || takenIs(older, taken, outside)
}

// takenIs reports whether taken, the words newer says were taken over
// ("took over opsconsole from Flightdeck"), are word for word what older
// says is owned ("opsconsole is owned by team Flightdeck"): older says who
// owns it, and its content words outside the run (tokens outside says are
// not the run), owning words and a team noun beside the run aside, are
// taken's. A stem is not enough ("the scheduler" is not "scheduling"),
// nor is a team noun elsewhere ("Group billing" is not "billing").
func takenIs(older Fact, taken map[string]bool, outside func(int) bool) bool {
	if len(taken) == 0 || !older.saysOwning() {
		return false
	}
	n := 0
	for i, t := range older.toks {
		if !outside(i) || !t.content || owning(t) {
			continue
		}
		if restateTeamNouns[t.word] && (i+1 < len(older.toks) && !outside(i+1) || i > 0 && !outside(i-1)) {
			continue
		}
		if !taken[t.word] {
			return false
		}
		n++
	}
	return n == len(taken)
}

// isCompound reports a word joined by a dash inside it ("crane-ingest").
func isCompound(w string) bool {
	return len(w) > 2 && strings.Contains(w[1:len(w)-1], "-")
}

// takesOver reports whether newer says that who owns older's subject took
// it over, without saying from whom ("Foundry (the platform team) took
// over matchwright last sprint" replaces "matchwright is owned by the
// Netcode team"). It holds when
//
//   - newer says a party "took over" something (takeover), and that party
//     starts with a word older lacks: the new owner;
//   - older says who owns something (owning words and a party value, as
//     Ownership reads it), and newer holds no word of that party: the
//     owner changed;
//   - older's subject is what newer says was taken over: its content
//     words, in order, are the first after "over", and newer holds every
//     other content word of older outside its party, owning words and
//     team nouns aside (tookOverSubject);
//   - neither is negated.
//
// The match's Frame is older's words outside its party, A the new owner
// and B the old.
func takesOver(nf, of Fact) (SlotMatch, bool) {
	over, ok := nf.takeover()
	if !ok || of.negated || !of.saysOwning() {
		return SlotMatch{}, false
	}
	newerHolds := map[string]bool{}
	for _, t := range nf.toks {
		newerHolds[t.stem] = true
	}
	olderHolds := map[string]bool{}
	var frame, from []string
	for i, t := range of.toks {
		olderHolds[t.stem] = true
		switch {
		case !of.isParty(i):
			frame = append(frame, t.word)
		case t.content && !restateTeamNouns[t.word] && newerHolds[t.stem]:
			return SlotMatch{}, false
		default:
			from = append(from, t.word)
		}
	}
	// The party is every word before "took" or "has taken" (takeover),
	// each a content word: the new owner runs from the first of them older
	// lacks.
	end := over - 1
	if nf.toks[end].word == "taken" {
		end--
	}
	party := nf.toks[:end]
	first := slices.IndexFunc(party, func(t factToken) bool { return !olderHolds[t.stem] })
	if len(from) == 0 || first < 0 || !nf.tookOverSubject(over, of, newerHolds) {
		return SlotMatch{}, false
	}
	added := make([]string, 0, len(party)-first)
	for _, t := range party[first:] {
		added = append(added, t.word)
	}
	return SlotMatch{Frame: strings.Join(frame, " "), A: strings.Join(added, " "), B: strings.Join(from, " ")}, true
}

// tookOverSubject reports whether the content words of older's subject
// (before its predicate, its party and owning words aside) are, in order,
// the first content words after the "over" at index over of f, and f
// holds (holds: the stems of its words) every other content word of older
// outside its party. The subject must
// name a thing: RestateMinSubject words, or one that is a name, an id or a
// compound, or that older's tags hold ("matchwright"). What follows it in
// f may only say when: nothing, a word such as "last" (takeoverWhen), or
// "in", "during", "after" or "since" before a date or a name ("in Q3",
// "in March"); "took over matchwright alerting", "… as incident
// commander" or "… until March" took over something else, or not for
// good.
func (f Fact) tookOverSubject(over int, older Fact, holds map[string]bool) bool {
	var subject []factToken
	for i, t := range older.toks {
		if !t.content || owning(t) || restateTeamNouns[t.word] || older.isParty(i) {
			continue
		}
		if !holds[t.stem] {
			return false
		}
		if i < older.boundary {
			subject = append(subject, t)
		}
	}
	if len(subject) == 0 || len(subject) < RestateMinSubject && !slices.ContainsFunc(subject, func(t factToken) bool {
		return t.name || isCompound(t.word) || older.holds != nil && older.holds(t.word)
	}) {
		return false
	}
	j := over + 1
	for _, w := range subject {
		j = f.nextContent(j)
		if j == len(f.toks) || f.toks[j].stem != w.stem {
			return false
		}
		j++
	}
	switch {
	case j == len(f.toks), takeoverWhen[f.toks[j].word]:
		return true
	case takeoverAt[f.toks[j].word] && j+1 < len(f.toks):
		next := f.toks[j+1]
		return next.name || strings.ContainsAny(next.word, "0123456789")
	}
	return false
}

// takeoverWhen open a phrase that says when something was taken over.
var takeoverWhen = map[string]bool{
	"last": true, "this": true, "yesterday": true, "today": true, "recently": true, "earlier": true,
}

// takeoverAt open a phrase that says when, before a date or a name.
var takeoverAt = map[string]bool{"in": true, "during": true, "after": true, "since": true}
