package domain

import (
	"slices"
	"strings"
)

// changeWords and changePairs are the words and two-word phrases with which
// a lesson says that something changed: the value its slot holds now ("now",
// "no longer", "as of"), a move ("moved", "switched", "cut over", "migrated
// to"), a handover ("took over", "handed over"), or an end ("retired",
// "replaced by", "renamed to"). A participle that a rule uses as an
// adjective counts only with the preposition a change takes ("never upload
// a changed catalogue", "until the operators have migrated off it"), and
// "instead" and "used to" not at all: a rule prescribes an alternative with
// them ("vary on X instead", "the bucket is used to store…") far more often
// than a rewrite says what changed.
var (
	changeWords = map[string]bool{
		"now": true, "moved": true, "switched": true, "retired": true, "anymore": true,
	}
	changePairs = map[[2]string]bool{
		{"no", "longer"}: true, {"any", "more"}: true, {"cut", "over"}: true,
		{"took", "over"}: true, {"taken", "over"}: true, {"handed", "over"}: true,
		{"going", "forward"}: true, {"as", "of"}: true, {"migrated", "to"}: true,
		{"replaced", "by"}: true, {"replaced", "with"}: true, {"renamed", "to"}: true,
		{"changed", "to"}: true, {"went", "up"}: true, {"went", "down"}: true,
		{"raised", "to"}: true, {"lowered", "to"}: true, {"increased", "to"}: true,
		{"reduced", "to"}: true, {"bumped", "to"}: true,
	}
)

// sinceWords open an occasion (see leadIn) that dates a claim from a
// change: what it says holds from then on.
var sinceWords = map[string]bool{"since": true, "following": true, "effective": true, "starting": true}

// AnnouncesChange reports whether gist says that something changed (see
// changeWords). Such a lesson is most likely the rewrite of an older one
// whose content it shares; a lesson that says nothing changed is not, however
// much it shares (two services' owners, two topics' retention).
func AnnouncesChange(gist string) bool {
	if f := strings.Fields(gist); len(f) >= 4 && occasion(f) > 0 && sinceWords[strings.ToLower(f[0])] {
		return true // "Since the March policy change, …"
	}
	w := Words(gist)
	for i, x := range w {
		if changeWords[x] || i+1 < len(w) && changePairs[[2]string{x, w[i+1]}] {
			return true
		}
	}
	return false
}

// moveWords say that a value moved elsewhere, not only that it is new:
// what moved keeps its subject and changes its predicate with its value
// ("tidewater publishes claim decisions to topic X" → "claim decision
// events moved to topic Y"; "lab PDFs are stored in bucket X" → "lab PDFs
// now go to bucket Y").
var moveWords = map[string]bool{"moved": true, "migrated": true, "switched": true, "cut": true, "go": true, "goes": true, "went": true}

// MayUpdate reports whether the gist newer, which says something changed
// (AnnouncesChange), may rewrite the gist older by what their readings as
// facts allow, for a reader that pairs two lessons on shared words alone.
// When both state a typed value (ReadFact), the newer's subject must name
// no word the older lacks ("Nightly billing jobs … now start at 02:30 UTC"
// narrows "Nightly jobs … start at 01:00 UTC" and leaves it standing); the
// older's subject may say more than the newer's, which names the same
// thing more briefly ("Lab result PDFs now go to …" rewrites "Lab result
// PDFs extracted by labline are stored in …"). Their predicates must share
// a word, unless the newer says the value moved: "Staging database backups
// now run at 03:00 UTC" does not rewrite "Staging database backups are
// verified at 05:00 UTC". A newer that says the value moved may also name
// its subject more fully than the older, when it pins the value (renames).
// An older gist read as one run of words, with no predicate apart ("turnstile caches entitlement lookups for 300
// seconds"), offers each of its words that the newer's subject does not
// hold. A newer gist read as one run of words up to a value has no subject
// apart to compare, and may update the older when it names, outside its
// own values, the older's value it replaces ("Briefing weather comes from
// the METAR gateway at https://metar-gw…/v2 now; the old wx-feed v1
// endpoint was decommissioned"). A gist with no typed value leaves it to
// the words. An older gist that prescribes (prescribes) is left to the
// slot rules.
func MayUpdate(newer, older string) bool {
	if prescribes(older) {
		return false
	}
	n, o := ReadFact(newer), ReadFact(older)
	if len(n.values) == 0 || len(o.values) == 0 {
		return true
	}
	if n.boundary > n.values[0].start && n.namesValueOf(newer, o) {
		return true
	}
	if n.namesOutside(o) && !n.renames(newer, o) {
		return false
	}
	if slices.ContainsFunc(Words(newer), func(w string) bool { return moveWords[w] }) {
		return true
	}
	pred, said := n.predicateStems(), o.predicateStems()
	if len(said) == 0 {
		// The older reads as one run of words ("turnstile caches
		// entitlement lookups for 300 seconds"): what it says of its
		// subject is among them, past the words that name the newer's.
		said = o.stemsOutside(n.toks[:n.boundary])
	}
	for _, st := range said {
		if slices.Contains(pred, st) {
			return true
		}
	}
	return false
}

// prescribes reports whether gist states a rule ("must", "never",
// "always", "should", "don't", …) rather than a fact: a newer lesson that
// shares a rule's words is most often another rule about the same work,
// and asking it in the rule's place would drop the rule.
func prescribes(gist string) bool {
	w := Words(gist)
	for i, x := range w {
		if prescriptive[x] || x == "do" && i+1 < len(w) && w[i+1] == "not" || x == "don" && i+1 < len(w) && w[i+1] == "t" {
			return true
		}
	}
	return false
}

// prescriptive are the words with which a lesson states a rule rather
// than a fact.
var prescriptive = map[string]bool{"must": true, "never": true, "always": true, "should": true, "avoid": true, "mustn": true, "shouldn": true}

// renames reports whether newer, the gist f reads, says that the value of
// older's slot moved while naming its subject more fully than older does.
// It says so with a move word before its first value, and names a subject
// that shares RestateMinSubject content words or more with older's words
// and adds to them only after the last of them, with no phrase of its own
// ("claim decision events", "chat throttle went up"; not "nightly billing
// jobs", nor "jobs for billing"). That much is said of many facts about
// one thing (a consumer's lag and its batch size, a service's replicas in
// staging and in production), so the value must also be pinned: newer
// calls older's value old (callsOld), or the two values count the same
// rate to the end of their clauses (sameRate).
func (f Fact) renames(newer string, older Fact) bool {
	first := f.values[0].start
	if !slices.ContainsFunc(f.toks[:first], func(t factToken) bool { return moveWords[t.word] }) {
		return false
	}
	lead := f.toks[:min(f.boundary, first)]
	holds := map[string]bool{}
	for _, t := range older.toks {
		holds[t.stem] = true
	}
	var shared []string
	last := -1
	for i, t := range lead {
		if t.content && holds[t.stem] {
			if !slices.Contains(shared, t.stem) {
				shared = append(shared, t.stem)
			}
			last = i
		}
	}
	if len(shared) < RestateMinSubject || lacksBefore(lead, older.toks) {
		return false
	}
	for i := last + 1; i < len(lead); i++ {
		if restatePrepositions[lead[i].word] && slices.ContainsFunc(lead[i+1:], func(t factToken) bool { return t.content }) {
			return false // a phrase that narrows the subject
		}
	}
	return f.callsOld(newer, older) || f.sameRate(older)
}

// oldWords call a value the one that was.
var oldWords = map[string]bool{"old": true, "previous": true, "former": true}

// callsOld reports whether newer, the gist f reads, calls a value of older
// old by a part of it that f's values do not hold and by the noun that
// labels it there, within four words ("the old v1 topic" of "the topic
// `claims.decisions.v1`").
func (f Fact) callsOld(newer string, older Fact) bool {
	own := f.valueWords()
	words := Words(newer)
	for i, w := range words {
		if !oldWords[w] {
			continue
		}
		window := words[i+1 : min(len(words), i+5)]
		for _, v := range older.values {
			labels := older.labels(v)
			var parts []string
			for _, t := range older.toks[v.start:v.end] {
				parts = append(parts, Words(t.word)...)
			}
			part := slices.ContainsFunc(window, func(x string) bool { return !own[x] && slices.Contains(parts, x) })
			label := slices.ContainsFunc(window, func(x string) bool { return slices.Contains(labels, restateStem(x)) })
			if part && label {
				return true
			}
		}
	}
	return false
}

// sameRate reports whether f and older each hold a number, the two
// different, followed to the end of its clause by the same rate ("8
// messages per 10 s per player" and "5 messages per 10 seconds per
// player"): the count, what it counts and per what, with no word after it
// that narrows it ("… per second for internal callers").
func (f Fact) sameRate(older Fact) bool {
	for _, v := range f.values {
		if v.typ != "number" {
			continue
		}
		unit := f.unitAfter(v)
		if len(unit) < 3 || !slices.Contains(unit, "per") {
			continue
		}
		for _, w := range older.values {
			if w.typ == "number" && w.norm != v.norm && slices.Equal(unit, older.unitAfter(w)) {
				return true
			}
		}
	}
	return false
}

// unitAfter is what follows value v to the end of its clause (a comma, or
// the fact's end): each word's stem, each value as its type and norm.
func (f Fact) unitAfter(v factValue) []string {
	var out []string
	for i := v.end; i < len(f.toks); i++ {
		t := f.toks[i]
		switch {
		case t.value == 0:
			out = append(out, t.stem)
		case i == f.values[t.value-1].start:
			u := f.values[t.value-1]
			out = append(out, u.typ+":"+u.norm)
		}
		if t.comma {
			break
		}
	}
	return out
}

// labels are the stems of the content words right before and right after
// value v, outside any value: the nouns that say what kind of thing it is.
func (f Fact) labels(v factValue) []string {
	var out []string
	for _, i := range []int{v.start - 1, v.end} {
		if i >= 0 && i < len(f.toks) && f.toks[i].content && f.toks[i].value == 0 {
			out = append(out, f.toks[i].stem)
		}
	}
	return out
}
