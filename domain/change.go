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
// its subject more fully than the older, when it renames it (renames). An older gist read as one run of words, with no
// predicate apart ("turnstile caches entitlement lookups for 300
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
	moved := slices.ContainsFunc(Words(newer), func(w string) bool { return moveWords[w] })
	if n.namesOutside(o) && !(moved && n.renames(o)) {
		return false
	}
	if moved {
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

// renames reports whether the moved value's subject, as f (the newer
// fact) names it before its predicate and its first value, is older's
// named more fully: it shares RestateMinSubject content words or more with
// older, adds words only after the last of them (a head, "claim decision
// events", or the change's own words, "chat throttle went up"; not a
// qualifier, "nightly billing jobs"), and one of its values is labelled by
// the noun that labels an older value of the same type ("the
// `tidewater-decisions-v2` topic" and "the topic `claims.decisions.v1`";
// "8 messages" and "5 messages"): what moved is the same kind of thing.
func (f Fact) renames(older Fact) bool {
	lead := f.toks[:min(f.boundary, f.values[0].start)]
	holds := map[string]bool{}
	for _, t := range older.toks {
		holds[t.stem] = true
	}
	shared := 0
	for _, t := range lead {
		if t.content && holds[t.stem] {
			shared++
		}
	}
	if shared < RestateMinSubject || lacksBefore(lead, older.toks) {
		return false
	}
	for _, v := range f.values {
		for _, w := range older.values {
			if v.typ != w.typ {
				continue
			}
			for _, a := range f.labels(v) {
				if slices.Contains(older.labels(w), a) {
					return true
				}
			}
		}
	}
	return false
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
