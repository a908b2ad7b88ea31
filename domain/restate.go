package domain

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Teams rewrite a fact in other words: "The visibility timeout on the
// export queue is 45 seconds" becomes "Export queue visibility timeout
// was raised to 90s". SameSlot, which needs the frame repeated
// word for word, cannot see that; Restates can, for values it can type.
//
// A Fact is a gist's first sentence read as words and typed values:
// durations and sizes with their units, clock times, weekdays, versions
// ("Node 18.19", "iOS 15", "v1.4"), hosts and ids (words with digits, dots
// or several dashes) and the people or teams after "by" or after a role
// ("owner", "approver"). Its boundary is the first word that opens the
// predicate: a copula or auxiliary, a change marker ("now", "moved",
// "raised", "decommissioned") or a colon. What comes before it names the
// subject.
//
// Restates(newer, older) holds when the two write different values of one
// type (exactly one value each that the other does not hold) and the
// newer's subject is the older's:
//
//   - the newer has a boundary: without one its subject cannot be told
//     from its predicate;
//   - every content word the newer holds before its boundary is a word the
//     older holds before its value (or in an "of" phrase right after it,
//     which says what the value measures: "keeps 72 hours of retention",
//     or in one that names all of what holds it: "in every environment"),
//     and there are at least RestateMinSubject of them, a version's
//     product counting as one: the newer names no subject the older does
//     not;
//   - the newer's changed value comes after its boundary, in the
//     predicate, not in the subject ("the Node 20 image" is another image);
//   - any other word only the newer holds comes after its boundary, and
//     then only when the newer says something changed (a change marker): a
//     predicate reworded without one ("is run on" against "is failing on")
//     is another relation; a clause after the newer's value that gives a
//     reason or a time ("since the March upgrade") is left out;
//   - the two do not each hold a name the other lacks (a capitalised word
//     or an id), and the older's subject (before its boundary and its
//     value) holds no name the newer lacks: that is a second subject
//     however the rest reads, unless the two subjects share an id, which
//     pins the subject ("the Redpanda topic telemetry.raw"); a name the
//     newer holds in an aside, or among its lesson's tags (Claim.Holding),
//     is one it holds;
//   - the two predicates, between boundary and value, do not each hold a
//     word the other lacks: "are verified at" and "now run at" are two
//     relations of one subject;
//   - no word is the head of one subject and the owner of the other
//     ("the backup of the orders database" against "the orders table of
//     the backup");
//   - neither is negated.
//
// Otherwise the older claim may hold words the newer lacks (a qualifier,
// its own verb): a rewrite is often terser than the fact it replaces. So a
// newer claim about a whole ("the orders database was moved to …") does
// rewrite an older one about a lowercase part of it ("the orders database
// replica is hosted in …"): the words cannot tell a part from a
// qualifier. The rule uses no word frequencies and no list of verbs or
// nouns of any domain; its word lists are closed classes (function words,
// units, weekdays, change markers, role nouns, time zones).

// RestateMinSubject is the fewest words the newer claim's subject must
// share with the older: one word ("payouts") does not pin a subject down.
const RestateMinSubject = 2

// Fact is a gist read for Restates; the zero Fact states nothing.
type Fact struct {
	toks     []factToken
	values   []factValue
	boundary int  // index of the first predicate token; len(toks) when none
	changed  bool // holds a change marker
	negated  bool
	aside    map[string]bool // stems of the words of its asides in parentheses
	// was holds the values the fact says the slot held before ("from 14
	// to 7 days", "no longer kicks off at 01:30"): read by Supplants.
	was []factValue
	// lapsed: its only negation is the "no" of "no longer".
	lapsed bool
	// holds reports a word (lowercase) the lesson holds outside its gist:
	// its tags (Claim.Holding); nil when none are known.
	holds func(word string) bool
}

type factToken struct {
	word    string // lowercase, trimmed of end punctuation
	stem    string // word with a plural or possessive ending dropped
	name    bool   // capitalised past the first word, or an id
	id      bool   // an id (isID), or a name written as code (codeID)
	content bool   // not a function word, change marker, negation or time zone
	value   int    // index in Fact.values + 1; 0 when in no value
	comma   bool   // written with a comma after it
}

type factValue struct {
	typ, norm  string
	start, end int // token span
	// For a value the fact says its slot held (Fact.was): fromTo when it
	// was read from "from A to B", and after, the stem of the word after B
	// (what B counts: "replicas").
	fromTo bool
	after  string
}

// restateFunction are words that carry no subject.
var restateFunction = map[string]bool{
	"it": true, "its": true, "our": true, "their": true, "we": true, "they": true, "you": true, "your": true,
	"this": true, "that": true, "these": true, "those": true, "which": true, "who": true, "whose": true,
	"than": true, "as": true, "so": true, "then": true, "also": true, "only": true, "just": true,
	"all": true, "each": true, "every": true, "any": true, "both": true, "either": true, "there": true,
	"up": true, "about": true, "after": true, "before": true, "since": true, "until": true,
	"while": true, "between": true, "within": true, "without": true, "against": true,
	"get": true, "gets": true, "got": true, "being": true,
}

// restateAux open a predicate.
var restateAux = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"has": true, "have": true, "had": true, "will": true, "would": true, "can": true, "could": true,
	"should": true, "must": true, "may": true, "might": true, "shall": true, "do": true, "does": true, "did": true,
}

// restateChange are the words a rewrite uses to say a value changed.
var restateChange = map[string]bool{
	"now": true, "moved": true, "raised": true, "lowered": true, "bumped": true, "increased": true,
	"decreased": true, "reduced": true, "changed": true, "switched": true, "migrated": true,
	"upgraded": true, "downgraded": true, "replaced": true, "updated": true, "extended": true,
	"shortened": true, "shifted": true, "rescheduled": true, "transferred": true, "handed": true,
	"reassigned": true, "became": true, "becomes": true, "decommissioned": true, "retired": true,
	"instead": true, "anymore": true, "cut": true, "trimmed": true, "halved": true, "doubled": true,
	"pushed": true, "pulled": true, "delayed": true, "postponed": true,
}

// subjectWordsNeeded is how many words the newer's subject must share
// with the older's for a value of typ: RestateMinSubject, one fewer for a
// version of a named product, whose name is a word of the slot.
func subjectWordsNeeded(typ string) int {
	if strings.HasPrefix(typ, "version:") && typ != "version:" {
		return RestateMinSubject - 1
	}
	return RestateMinSubject
}

// restateReason opens a clause that says why or since when a value holds.
var restateReason = map[string]bool{"since": true, "because": true, "after": true, "following": true}

// restateRefiners open a phrase after a value that says how it is reached
// ("os-listings.prod:443 behind the SigV4 signing proxy"): the value it
// follows is the fact's, a value inside it is not.
var restateRefiners = map[string]bool{"behind": true, "via": true, "through": true, "using": true}

// restateNegation turns a claim around.
var restateNegation = map[string]bool{"not": true, "never": true, "no": true, "nor": true, "without": true, "isn't": true, "aren't": true, "doesn't": true, "don't": true, "won't": true}

// restateRoles are nouns naming who answers for something; a capitalised
// name after them (and a copula) is a person or a team.
var restateRoles = map[string]bool{
	"owner": true, "owners": true, "ownership": true, "approver": true, "approvers": true,
	"reviewer": true, "reviewers": true, "lead": true, "maintainer": true, "maintainers": true,
	"contact": true, "dri": true, "on-call": true, "oncall": true, "steward": true, "manager": true,
	"sign-off": true, "signoff": true,
}

// restateTeamNouns close a team's name ("the Anchor squad").
var restateTeamNouns = map[string]bool{"team": true, "squad": true, "group": true, "guild": true, "crew": true, "pod": true, "tribe": true, "chapter": true}

var restateWeekdays = map[string]string{
	"monday": "1", "tuesday": "2", "wednesday": "3", "thursday": "4", "friday": "5", "saturday": "6", "sunday": "7",
}

// restateDurations are duration units in seconds.
var restateDurations = map[string]float64{
	"ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
	"d": 86400, "day": 86400, "days": 86400,
	"w": 604800, "wk": 604800, "wks": 604800, "week": 604800, "weeks": 604800,
	"month": 2592000, "months": 2592000, "year": 31536000, "years": 31536000,
}

// restateSizes are size units in bytes.
var restateSizes = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// restateZones follow a clock time.
var restateZones = map[string]bool{
	"utc": true, "gmt": true, "cet": true, "cest": true, "eet": true, "est": true, "edt": true,
	"cst": true, "cdt": true, "mst": true, "pst": true, "pdt": true, "bst": true, "ist": true, "jst": true, "z": true,
}

// ReadFact reads a gist's first sentence for Restates: up to a period,
// semicolon, question or exclamation mark at a word's end or a lone dash,
// skipping asides in parentheses. Commas do not end it: a rewrite often
// lists its values after one ("twice a week, Tuesday and Friday").
func ReadFact(gist string) Fact {
	var f Fact
	colon := -1
	depth := 0
	fields := strings.Fields(gist)
	fields = fields[leadIn(fields):]
	for i, raw := range fields {
		if depth > 0 || strings.HasPrefix(raw, "(") {
			depth += strings.Count(raw, "(") - strings.Count(raw, ")")
			depth = max(depth, 0)
			if w := strings.ToLower(strings.TrimFunc(raw, unicode.IsPunct)); w != "" {
				if f.aside == nil {
					f.aside = map[string]bool{}
				}
				f.aside[restateStem(w)] = true
			}
			continue
		}
		if raw == "-" || raw == "—" || raw == "–" {
			break
		}
		t := strings.TrimRight(raw, ")\"'”’")
		end := strings.HasSuffix(t, ".") || strings.HasSuffix(t, ";") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?")
		for _, part := range splitSlash(raw) {
			w := strings.TrimFunc(part, func(r rune) bool { return unicode.IsPunct(r) && r != '%' })
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
			w, code := codeID(w)
			if w == "" {
				continue
			}
			lw := strings.ToLower(w)
			id := code || isID(lw)
			f.toks = append(f.toks, factToken{word: lw, stem: restateStem(lw), name: id || isName(w, i == 0), id: id,
				comma: strings.HasSuffix(strings.TrimRight(raw, ")\"'”’"), ",")})
		}
		if end && len(f.toks) > 0 {
			break
		}
		if colon < 0 && strings.HasSuffix(t, ":") {
			colon = len(f.toks)
		}
	}
	f.boundary = len(f.toks)
	if colon >= 0 && colon < len(f.toks) {
		f.boundary = colon
	}
	for i, t := range f.toks {
		switch {
		case restateNegation[t.word]:
			f.negated = true
		case restateChange[t.word]:
			f.changed = true
		}
		if (restateAux[t.word] || restateChange[t.word]) && i < f.boundary {
			f.boundary = i
		}
	}
	if toks, boundary, prep, ok := f.agentObject(); ok {
		if f.readValues(); !f.valueAfter(prep) {
			f.toks, f.boundary, f.values = toks, boundary, nil
			f.readValues()
		}
	} else {
		f.readValues()
	}
	f.dropAsideValues()
	for i := range f.toks {
		t := &f.toks[i]
		t.content = !slotFunction[t.word] && !restateFunction[t.word] && !restateChange[t.word] &&
			!restateNegation[t.word] && !restateZones[t.word]
	}
	f.readWas()
	return f
}

// discourseLabels open a gist with what kind of note it is, not with its
// subject: "Heads-up:", "FYI", "Decision (2025-04):", "tl;dr".
var discourseLabels = map[string]bool{
	"fyi": true, "psa": true, "heads-up": true, "headsup": true, "note": true, "nb": true, "reminder": true,
	"decision": true, "update": true, "tip": true, "warning": true, "important": true, "nit": true,
	"tl;dr": true, "tldr": true,
}

// occasionWords open a phrase that says on whose word or since when a
// claim holds, not where or when it applies; "as" only before "of".
var occasionWords = map[string]bool{"per": true, "since": true, "following": true, "effective": true, "starting": true, "as": true}

// occasionSource are the words after "per" that make it name a source
// ("per the runbook", "per our SRE lead"), not a rate or a scope ("per
// region").
var occasionSource = map[string]bool{"the": true, "our": true, "a": true, "an": true, "this": true, "that": true, "last": true, "my": true}

// leadInOccasion is the most words such a phrase may have, its comma's
// word included.
const leadInOccasion = 8

// occasion is how many of fields an occasion phrase opening them takes
// (see leadIn), 0 when they open with none.
func occasion(fields []string) int {
	w, next := strings.ToLower(fields[0]), fields[1]
	switch {
	case !occasionWords[w]:
		return 0
	case w == "as" && strings.ToLower(next) != "of":
		return 0
	case w == "per" && !occasionSource[strings.ToLower(next)] && !isName(next, false):
		return 0 // "Per region," is a scope
	}
	for i := 1; i < min(leadInOccasion, len(fields)-3); i++ {
		switch {
		case strings.HasSuffix(fields[i], ","):
			return i + 1
		case endsClause(fields[i]):
			return 0
		}
	}
	return 0
}

// leadInSource is the most words what a tl;dr sums up may have ("tl;dr
// from the #netcode thread:").
const leadInSource = 5

// leadIn is how many of a gist's fields (split on spaces) are a discourse
// label before its claim: the label with a colon or a comma after it, or
// "FYI" and "PSA" alone, and an aside after it that holds a date or a
// number ("Decision (2025-04):"), or, after "tl;dr", a phrase of up to
// leadInSource words that says what it sums up and ends on a colon
// ("tl;dr from the #client thread:"). After another label such a phrase
// may limit the claim ("Heads-up from staging: the pod limit is 40"), as
// an aside of words may ("Note (staging):"), so the label and it stay.
// What follows must be three words at least. A phrase that says on whose
// word or since when the claim holds, up to leadInOccasion words ending on
// a comma ("Per the INC-4219 follow-up,", "Since the March policy change,",
// "As of v3,"), is a lead-in too (occasion); a condition ("After a
// deploy,", "From the VPN,", "In staging,") is not: it limits the claim.
func leadIn(fields []string) int {
	if len(fields) < 4 {
		return 0
	}
	if n := occasion(fields); n > 0 {
		return n
	}
	w := strings.ToLower(strings.TrimRight(fields[0], ":,"))
	if !discourseLabels[w] {
		return 0
	}
	ends := strings.HasSuffix(fields[0], ":") || strings.HasSuffix(fields[0], ",") || w == "fyi" || w == "psa"
	if (w == "tl;dr" || w == "tldr") && !ends && strings.ToLower(fields[1]) == "from" {
		for i := 2; i <= min(leadInSource, len(fields)-4); i++ {
			if endsClause(fields[i]) {
				if strings.HasSuffix(fields[i], ":") {
					return i + 1
				}
				return 0
			}
		}
		return 0
	}
	if !strings.HasPrefix(fields[1], "(") {
		if ends {
			return 1
		}
		return 0
	}
	for i := 1; i < min(len(fields)-3, 6); i++ {
		if !strings.Contains(fields[i], ")") {
			continue
		}
		if !strings.ContainsAny(strings.Join(fields[1:i+1], " "), "0123456789") {
			return 0
		}
		if ends || strings.HasSuffix(fields[i], "):") || strings.HasSuffix(fields[i], "),") {
			return i + 1
		}
		return 0
	}
	return 0
}

// agentObject reads a fact told as what someone did to its subject ("We
// moved frontdesk onto Node 22"): when a pronoun alone ("we", "they")
// stands before a change marker that opens the predicate, the words after
// the marker up to a preposition that leads to the value ("to", "onto",
// "into", "back", "from") are the subject, and the fact is read as
// "frontdesk moved onto Node 22". It returns the tokens and boundary as
// they were, and the preposition's index in the new tokens; ok is false
// when the fact is not so told. The caller keeps the new reading only if
// a value follows the preposition (valueAfter): "We pushed the hotfix to
// production at 14:00" moved no slot to production.
func (f *Fact) agentObject() (toks []factToken, boundary, prep int, ok bool) {
	b := f.boundary
	if b != 1 || b >= len(f.toks) || !restateChange[f.toks[b].word] || !agentPronouns[f.toks[0].word] {
		return nil, 0, 0, false
	}
	for j := b + 1; j < len(f.toks); j++ {
		switch f.toks[j].word {
		case "to", "onto", "into", "back", "from":
			if j == b+1 {
				return nil, 0, 0, false
			}
			toks, boundary = f.toks, f.boundary
			f.toks = append(append(slices.Clone(f.toks[b+1:j]), f.toks[b]), f.toks[j:]...)
			f.boundary = j - b - 1
			return toks, boundary, j - 1, true
		}
		if restateAux[f.toks[j].word] || restateChange[f.toks[j].word] {
			return nil, 0, 0, false
		}
	}
	return nil, 0, 0, false
}

// agentPronouns are the agents agentObject reads past.
var agentPronouns = map[string]bool{"we": true, "they": true, "you": true, "i": true}

// valueAfter reports whether a value starts right after the preposition
// at prep ("onto Node 22", "back to 05:30 UTC").
func (f *Fact) valueAfter(prep int) bool {
	t := prep + 1
	if t < len(f.toks) && f.toks[prep].word == "back" && f.toks[t].word == "to" {
		t++
	}
	return t < len(f.toks) && f.toks[t].value > 0 && f.values[f.toks[t].value-1].start == t
}

// dropAsideValues forgets the values after a clause that follows a value
// and gives a reason or a way (restateReason, restateRefiners): "raised to
// 120s since the 2.14 upgrade" writes one value, 120s, and "is now
// host-2:443 behind the SigV4 proxy" one host. A fact's other values
// would count as a second change of the slot.
func (f *Fact) dropAsideValues() {
	seen := false
	for i, t := range f.toks {
		if seen && t.value == 0 && (restateReason[t.word] || restateRefiners[t.word]) {
			n := len(f.values)
			for n > 0 && f.values[n-1].start > i {
				n--
			}
			for k := i; k < len(f.toks); k++ {
				f.toks[k].value = 0
			}
			f.values = f.values[:n]
			return
		}
		seen = seen || t.value != 0
	}
}

// splitSlash splits "macOS/iOS" into its words; a path, a URL or a ratio
// ("24/7") stays one token.
func splitSlash(raw string) []string {
	if !strings.Contains(raw, "/") || strings.ContainsAny(raw, ".:0123456789") {
		return []string{raw}
	}
	return strings.Split(raw, "/")
}

// isName reports a word written with a capital: a name ("GitLab",
// "iOS"), unless the capital only opens the sentence.
func isName(w string, first bool) bool {
	for i, r := range w {
		if unicode.IsUpper(r) && (i > 0 || !first) {
			return true
		}
	}
	return false
}

// isID reports a word that names one thing by its shape: letters with
// digits (eu-west-1, pay-db-stage-2), a dotted host or a URL, or a word of
// three or more dashed parts (redis-sessions-a).
func isID(w string) bool {
	letters, digits := false, false
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters = true
		case unicode.IsDigit(r):
			digits = true
		}
	}
	if !letters {
		return false
	}
	if digits || strings.Contains(w, "://") || strings.Count(w, "-") >= 2 {
		return true
	}
	i := strings.Index(w, ".")
	return i > 0 && i < len(w)-1
}

// codeID reads a word written as code, in backticks: it returns the word
// without its quotes, the same word as when written plainly, and whether
// it names a thing as an id does. Words joined by a hyphen or an
// underscore, often an English compound outside backticks ("front-end"),
// are a name inside them ("`foyer-web`", "`orders_v2`").
func codeID(w string) (string, bool) {
	if len(w) < 3 || w[0] != '`' || w[len(w)-1] != '`' || strings.Count(w, "`") != 2 {
		return w, false
	}
	in := w[1 : len(w)-1]
	return in, strings.ContainsAny(in, "-_") && strings.ContainsFunc(in, unicode.IsLetter)
}

// restateStem is a word without its inflection: a plural ("payouts",
// "batches", "deliveries"), then, for a word of letters only, one
// derivational or verbal ending ("owner", "owned" and "ownership" are
// "own"; "deployed" and "deployment" are "deploy"), as long as three
// letters stay.
func restateStem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	if strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return w
	}
	for _, suf := range restateSuffixes {
		if len(w)-len(suf) >= 3 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// restateSuffixes are the endings restateStem drops, longest first.
var restateSuffixes = []string{"ership", "ment", "ing", "er", "ed", "al"}

// readValues finds the typed values, left to right, each token in at most
// one.
func (f *Fact) readValues() {
	toks := f.toks
	add := func(typ, norm string, start, end int) {
		f.values = append(f.values, factValue{typ: typ, norm: norm, start: start, end: end})
		for k := start; k < end; k++ {
			toks[k].value = len(f.values)
		}
	}
	for i := 0; i < len(toks); i++ {
		w := toks[i].word
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].word
		}
		// A weekday, or a list of them.
		if d, ok := weekday(w); ok {
			days := []string{d}
			j := i + 1
			for j+1 < len(toks) && (toks[j].word == "and" || toks[j].word == "or" || toks[j].word == "&") {
				d, ok := weekday(toks[j+1].word)
				if !ok {
					break
				}
				days = append(days, d)
				j += 2
			}
			for j < len(toks) {
				d, ok := weekday(toks[j].word)
				if !ok {
					break
				}
				days = append(days, d)
				j++
			}
			slices.Sort(days)
			add("weekday", strings.Join(slices.Compact(days), ","), i, j)
			i = j - 1
			continue
		}
		// A clock time with its zone.
		if hm, ok := clockTime(w, next); ok {
			j := i + 1
			if next == "am" || next == "pm" {
				j++
			}
			for j < len(toks) && (restateZones[toks[j].word] || (toks[j].word == "local" && j+1 < len(toks) && toks[j+1].word == "time")) {
				if toks[j].word == "local" {
					j++
				}
				j++
			}
			add("time", hm, i, j)
			i = j - 1
			continue
		}
		// A number with a unit: a duration, a size, a share.
		if n, unit, ok := numberUnit(w); ok {
			if unit == "" && next != "" {
				if _, d := restateDurations[next]; d || restateSizes[next] != 0 || next == "percent" {
					unit = next
				}
			}
			j := i + 1
			if unit != "" && !strings.HasSuffix(w, unit) {
				j++
			}
			switch {
			case restateDurations[unit] != 0:
				add("duration", strconv.FormatFloat(n*restateDurations[unit], 'g', -1, 64), i, j)
				i = j - 1
				continue
			case restateSizes[unit] != 0:
				add("size", strconv.FormatFloat(n*restateSizes[unit], 'g', -1, 64), i, j)
				i = j - 1
				continue
			case unit == "%" || unit == "percent":
				add("share", strconv.FormatFloat(n, 'g', -1, 64), i, j)
				i = j - 1
				continue
			}
		}
		// A version: v1.4, 18.19, or a number after a product's name
		// ("iOS 15", "Node 20.11 LTS", "Oracle 19c": there one letter may
		// close it), the name being part of its type.
		named := i > 0 && toks[i-1].name && toks[i-1].value == 0 && !toks[i-1].id
		v, ok := version(w)
		if !ok && named {
			v, ok = lettered(w)
		}
		if ok {
			product, start := "", i
			if i > 0 && toks[i-1].value == 0 && !slotFunction[toks[i-1].word] && !restateFunction[toks[i-1].word] &&
				!restateAux[toks[i-1].word] && !restateChange[toks[i-1].word] && (toks[i-1].name || strings.HasPrefix(w, "v") || strings.Contains(w, ".")) {
				product, start = toks[i-1].stem, i-1
			}
			if product != "" || strings.HasPrefix(w, "v") || strings.Contains(w, ".") {
				j := i + 1
				if next == "lts" {
					j++
				}
				add("version:"+product, v, start, j)
				i = j - 1
				continue
			}
			add("number", v, i, i+1)
			continue
		}
		if toks[i].id {
			add("id", w, i, i+1)
			continue
		}
		if party, j := f.party(i); j > i {
			add("party", party, i, j)
			i = j - 1
		}
	}
}

func weekday(w string) (string, bool) {
	d, ok := restateWeekdays[strings.TrimSuffix(w, "s")]
	return d, ok
}

// clockTime reads "02:00", "6am", "6:30pm" or "6" before "am"/"pm" as a 24-hour
// "HH:MM".
func clockTime(w, next string) (string, bool) {
	pm := strings.HasSuffix(w, "pm") || next == "pm"
	am := strings.HasSuffix(w, "am") || next == "am"
	s := strings.TrimSuffix(strings.TrimSuffix(w, "am"), "pm")
	h, m, colon := strings.Cut(s, ":")
	if !colon && !am && !pm {
		return "", false
	}
	if !colon {
		m = "00"
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || len(m) != 2 || len(h) > 2 || hh > 24 || mm > 59 {
		return "", false
	}
	if pm && hh < 12 {
		hh += 12
	}
	if am && hh == 12 {
		hh = 0
	}
	return strconv.Itoa(hh/10) + strconv.Itoa(hh%10) + ":" + m, true
}

// numberUnit reads a number with an optional unit glued to it ("120s",
// "512mb", "5%").
func numberUnit(w string) (float64, string, bool) {
	i := strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	if i == 0 {
		return 0, "", false
	}
	num, unit := w, ""
	if i > 0 {
		// "15-minute periods": a unit joined by a hyphen.
		num, unit = w[:i], strings.TrimPrefix(w[i:], "-")
		if _, d := restateDurations[unit]; !d && restateSizes[unit] == 0 && unit != "%" {
			return 0, "", false
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, "", false
	}
	return n, unit, true
}

// version reads "v1.4", "18.19" or "15" as a version's digits.
func version(w string) (string, bool) {
	s := strings.TrimPrefix(w, "v")
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return "", false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' {
			return "", false
		}
	}
	return s, true
}

// lettered reads a release named by a number and one letter ("19c",
// "11g"), which only a product's name before it makes a version.
func lettered(w string) (string, bool) {
	if len(w) < 2 || len(w) > 4 || w[len(w)-1] < 'a' || w[len(w)-1] > 'z' {
		return "", false
	}
	return version(w[:len(w)-1])
}

// party reads a person or a team at token i: a run of capitalised words
// (a leading "the" or "team" and a closing team noun kept out of its
// value) after "by", or after a copula, a colon or "to" that follows a
// role noun ("the approver is Dana Reyes", "ownership moved to Payments
// Platform"). It returns the value and the token after it; i when none.
func (f *Fact) party(i int) (string, int) {
	toks := f.toks
	start := i
	for start < len(toks) && (toks[start].word == "the" || toks[start].word == "team") {
		start++
	}
	if start >= len(toks) || !toks[start].name || toks[start].id || i == 0 {
		return "", i
	}
	prev := toks[i-1].word
	ok := prev == "by"
	if !ok && (restateAux[prev] || prev == "to" || restateChange[prev] || i == f.boundary) {
		ok = slices.ContainsFunc(toks[:i], func(t factToken) bool { return restateRoles[t.word] })
	}
	if !ok {
		return "", i
	}
	j := start
	var words []string
	for j < len(toks) && toks[j].name && !toks[j].id && toks[j].value == 0 {
		words = append(words, toks[j].word)
		j++
	}
	if len(words) == 0 {
		return "", i
	}
	if j < len(toks) && restateTeamNouns[toks[j].word] {
		j++
	}
	return strings.Join(words, " "), j
}

// String is the fact as Restates reads it: its words, each value marked
// with its type, and a bar at the boundary.
func (f Fact) String() string {
	var b strings.Builder
	for i, t := range f.toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == f.boundary {
			b.WriteString("| ")
		}
		b.WriteString(t.word)
		if t.value > 0 && f.values[t.value-1].end == i+1 {
			b.WriteString("<" + f.values[t.value-1].typ + ">")
		}
	}
	return b.String()
}

// Restates reports whether newer rewrites, in other words, a fact older
// states: another value of one type, for the same subject (the rule is
// above). The match's Frame is the newer claim's subject, A its value and
// B the older's. It is never true of a fact and itself.
func Restates(newer, older Fact) (SlotMatch, bool) {
	if newer.negated || older.negated || newer.boundary == len(newer.toks) {
		return SlotMatch{}, false
	}
	for _, typ := range newer.types() {
		vn, vo := newer.valuesOf(typ), older.valuesOf(typ)
		if len(vo) == 0 {
			continue
		}
		cn, co := without(vn, vo), without(vo, vn)
		if len(cn) == 0 || len(co) == 0 {
			continue
		}
		if m, ok := restates(newer, older, typ, cn, co); ok {
			return m, true
		}
	}
	return SlotMatch{}, false
}

// restates checks the subject of a pair whose values of typ differ: cn
// and co are the newer's and the older's changed values.
func restates(newer, older Fact, typ string, cn, co []string) (SlotMatch, bool) {
	if newer.spans(typ, cn) != 1 || older.spans(typ, co) != 1 {
		return SlotMatch{}, false
	}
	inN, inO := newer.spanned(typ, cn), older.spanned(typ, co)
	if slices.Contains(inN[:newer.boundary], true) {
		return SlotMatch{}, false
	}
	// olderWords are the older's words; olderLead those before its value,
	// where the newer's subject must be found (a word after it, a unit
	// or a qualifier of the value, names no subject).
	// The words of an "of" phrase right after the older's value name what
	// the value measures ("keeps 72 hours of retention"): they are the
	// slot's, as if before it.
	valueN, valueO := slices.Index(inN, true), slices.Index(inO, true)
	measured := valueO
	for measured < len(inO) && inO[measured] {
		measured++
	}
	switch {
	case measured < len(inO) && older.toks[measured].word == "of":
		measured++
	case measured+1 < len(inO) && restateScopes[older.toks[measured].word] && restateEvery[older.toks[measured+1].word]:
		// "OpenSearch 2.11 in every environment": what holds the value
		// is named after it.
		measured += 2
	default:
		measured = len(inO)
	}
	// A compound of the older's ("load-forecast") holds its parts: a
	// terser rewrite may name it by its head ("the forecast model").
	olderWords, olderLead := map[string]bool{}, map[string]bool{}
	for i, t := range older.toks {
		if !t.content || inO[i] {
			continue
		}
		stems := []string{t.stem}
		if !t.name && strings.Count(t.word, "-") == 1 {
			a, b, _ := strings.Cut(t.word, "-")
			stems = append(stems, restateStem(a), restateStem(b))
		}
		for _, st := range stems {
			olderWords[st] = true
			olderLead[st] = olderLead[st] || i < valueO
		}
	}
	for i := measured; i < len(older.toks) && older.toks[i].content && older.toks[i].value == 0; i++ {
		olderLead[older.toks[i].stem] = true
	}
	// A clause after the newer's value that gives the change a reason or
	// a time ("since the March upgrade", "because retries pile up") is not
	// its relation: its words are left out.
	reason := len(newer.toks)
	for i := valueN + 1; i < len(newer.toks); i++ {
		if restateReason[newer.toks[i].word] {
			reason = i
			break
		}
	}
	newerWords := map[string]bool{}
	var subject, frame []string
	onlyNewerName := false
	for i, t := range newer.toks[:reason] {
		if !t.content || inN[i] {
			continue
		}
		newerWords[t.stem] = true
		if i < newer.boundary && !olderLead[t.stem] {
			return SlotMatch{}, false
		}
		if !olderWords[t.stem] {
			if !newer.changed {
				return SlotMatch{}, false
			}
			onlyNewerName = onlyNewerName || t.name
			continue
		}
		if i < newer.boundary && !slices.Contains(subject, t.stem) {
			subject, frame = append(subject, t.stem), append(frame, t.word)
		}
	}
	// A version's product is a word of the slot: "gridstore is on Postgres
	// 16" names the store and what runs on it.
	if len(subject) < subjectWordsNeeded(typ) || swapsRoles(newer.roles(newer.boundary), older.roles(min(older.boundary, valueO))) {
		return SlotMatch{}, false
	}
	// The older's words only it holds: a name in its subject is a subject
	// the newer does not name; a word in its predicate, before its value,
	// when the newer's predicate has one of its own, is a second relation
	// ("are verified at" against "now run at").
	newerRelation := slices.ContainsFunc(newer.toks[newer.boundary:valueN], func(t factToken) bool {
		return t.content && !olderWords[t.stem]
	})
	// An id the two subjects share ("telemetry.raw") pins the subject: the
	// older's other names beside it qualify it. A name the newer holds in
	// an aside or in its lesson's tags is one it names.
	pinned := slices.ContainsFunc(newer.toks[:newer.boundary], func(t factToken) bool {
		return t.content && t.id && olderLead[t.stem]
	})
	for i, t := range older.toks {
		if !t.content || inO[i] || newerWords[t.stem] || newer.aside[t.stem] {
			continue
		}
		switch {
		case t.name && newer.holds != nil && newer.holds(t.word):
			// named by the newer lesson's tags: the subject it is about
		case t.name && (onlyNewerName || (i < min(older.boundary, valueO) && !pinned)):
			return SlotMatch{}, false
		case newerRelation && i >= older.boundary && i < valueO:
			return SlotMatch{}, false
		}
	}
	return SlotMatch{Frame: strings.Join(frame, " "), A: newer.valueText(typ, cn), B: older.valueText(typ, co)}, true
}

// subjectRoles is a subject read around its first preposition: the head
// before it ("the retry limit") and the owner after it ("of the webhook
// sender").
type subjectRoles struct {
	head, owner map[string]bool
}

// restateScopes and restateEvery open a phrase after a value that names
// all of what holds it ("in every environment", "across all services").
var (
	restateScopes = map[string]bool{"in": true, "on": true, "across": true, "for": true}
	restateEvery  = map[string]bool{"every": true, "all": true, "each": true}
)

// restatePrepositions open the owner of a subject's head.
var restatePrepositions = map[string]bool{"of": true, "for": true, "on": true, "in": true, "at": true, "from": true, "to": true}

// roles reads the fact's tokens before end as a subject's roles; both
// maps are empty when no preposition parts them.
func (f Fact) roles(end int) subjectRoles {
	r := subjectRoles{head: map[string]bool{}, owner: map[string]bool{}}
	at := slices.IndexFunc(f.toks[:end], func(t factToken) bool { return restatePrepositions[t.word] })
	if at < 0 {
		return r
	}
	for i, t := range f.toks[:end] {
		if t.content {
			if i < at {
				r.head[t.stem] = true
			} else {
				r.owner[t.stem] = true
			}
		}
	}
	return r
}

// swapsRoles reports two subjects that each have a head and an owner and
// a word that is the head in one and the owner in the other: "the backup
// of the orders database" and "the orders table of the backup" name two
// things.
func swapsRoles(a, b subjectRoles) bool {
	if len(a.head) == 0 || len(a.owner) == 0 || len(b.head) == 0 || len(b.owner) == 0 {
		return false
	}
	for w := range a.head {
		if b.owner[w] && !b.head[w] {
			return true
		}
	}
	for w := range a.owner {
		if b.head[w] && !b.owner[w] {
			return true
		}
	}
	return false
}

// types is the value types the fact holds, in order of first appearance.
func (f Fact) types() []string {
	var out []string
	for _, v := range f.values {
		if !slices.Contains(out, v.typ) {
			out = append(out, v.typ)
		}
	}
	return out
}

// valuesOf is the fact's values of typ.
func (f Fact) valuesOf(typ string) []string {
	var out []string
	for _, v := range f.values {
		if v.typ == typ {
			out = append(out, v.norm)
		}
	}
	return out
}

func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// spans counts the fact's values of typ that are in norms.
func (f Fact) spans(typ string, norms []string) int {
	n := 0
	for _, v := range f.values {
		if v.typ == typ && slices.Contains(norms, v.norm) {
			n++
		}
	}
	return n
}

// spanned marks the tokens of the fact's values of typ that are in norms.
func (f Fact) spanned(typ string, norms []string) []bool {
	in := make([]bool, len(f.toks))
	for _, v := range f.values {
		if v.typ == typ && slices.Contains(norms, v.norm) {
			for k := v.start; k < v.end; k++ {
				in[k] = true
			}
		}
	}
	return in
}

// valueText is the words of the fact's values of typ in norms.
func (f Fact) valueText(typ string, norms []string) string {
	var parts []string
	for _, v := range f.values {
		if v.typ == typ && slices.Contains(norms, v.norm) {
			var ws []string
			for _, t := range f.toks[v.start:v.end] {
				ws = append(ws, t.word)
			}
			parts = append(parts, strings.Join(ws, " "))
		}
	}
	return strings.Join(parts, ", ")
}

// Rewrites reports whether the claim newer writes another value into a
// slot the claim older states: the slot restated in the same words
// (SameSlot), the fact restated in other words (Restates), the older's
// value said to be gone (Retires), or said to have handed the slot over
// (HandsOver). Which of two lessons is newer is the caller's to know.
func Rewrites(newer, older Claim) (SlotMatch, bool) {
	if m, ok := SameSlot(newer, older); ok {
		return m, true
	}
	if m, ok := Restates(newer.fact, older.fact); ok {
		return m, true
	}
	if m, ok := Retires(newer, older); ok {
		return m, true
	}
	if m, ok := Supplants(newer.fact, older.fact); ok {
		return m, true
	}
	return HandsOver(newer, older)
}

// restateGone says a thing is gone; "no longer", "shut down" and "turned
// off" are read as pairs.
var restateGone = map[string]bool{
	"decommissioned": true, "retired": true, "deprecated": true, "removed": true, "gone": true,
	"sunset": true, "sunsetted": true, "shutdown": true, "dismantled": true, "deleted": true,
	"archived": true,
}

// goneIDs reads the ids a gist says are gone, one per clause at most, from
// its lowercase words (fields).
func goneIDs(fields []string) []string {
	var out, ids []string
	gone, negated := false, false
	words := make([]string, len(fields))
	code := make([]bool, len(fields))
	for i, raw := range fields {
		words[i] = strings.TrimFunc(raw, func(r rune) bool { return unicode.IsPunct(r) && r != '%' })
		words[i], code[i] = codeID(words[i])
	}
	// The id's place, and whether only backticks make it one; the gone
	// word's place, and whether it is "archived".
	idAt, goneAt, codeOnly, archived := -1, -1, false, false
	for i, w := range words {
		next, prev := "", ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case w == "archived" && !restateAux[prev]:
			// "archived to X", "archived logs": where things are kept,
			// not that something is gone.
		case restateGone[w], w == "no" && next == "longer", (w == "shut" || w == "turned") && (next == "down" || next == "off"):
			if !gone {
				goneAt, archived = i, w == "archived"
			}
			gone = true
		case restateNegation[w]:
			negated = true
		case (code[i] || isID(w)) && !slices.Contains(ids, w):
			if len(ids) == 0 {
				idAt, codeOnly = i, !isID(w)
			}
			ids = append(ids, w)
		}
		if endsClause(fields[i]) || i == len(words)-1 {
			if gone && !negated && len(ids) == 1 && !slices.Contains(out, ids[0]) && saidGone(words, idAt, goneAt, codeOnly, archived) {
				out = append(out, ids[0])
			}
			ids, gone, negated, idAt, goneAt = ids[:0], false, false, -1, -1
		}
	}
	return out
}

// saidGone reports whether the gone word at goneAt is said of the id at
// idAt. A name that only backticks make an id is often shared by things
// of one name ("the `billing-api` Jira board is archived" is not the
// billing-api service): it must be the gone word's subject, with nothing
// but auxiliaries between ("`shop-web` is archived", "`shop-web` no longer
// …"). "archived" needs its id before it (not "archived to s3-archive-01").
func saidGone(words []string, idAt, goneAt int, codeOnly, archived bool) bool {
	if !codeOnly && !archived {
		return true
	}
	if idAt < 0 || goneAt < idAt {
		return false
	}
	return !codeOnly || !slices.ContainsFunc(words[idAt+1:goneAt], func(w string) bool { return !restateAux[w] })
}

// Retires reports whether newer says a value of older is gone. A rewrite
// often says what became of the old value rather than restating the slot
// ("Staging access now goes through jump-stg; bastion-stg-01 is
// decommissioned"): whatever an older fact's subject, a value its newer
// neighbour says is gone is no longer current.
//
// It holds when a clause of newer's gist holds exactly one id (isID: a
// host, a runner, a bucket) and a word saying it is gone
// ("decommissioned", "retired", "deprecated", "removed", "no longer",
// "shut down"), without a negation; and older's first sentence, not
// negated and not itself saying so, holds that id as one of its values, or
// a host whose first label it is ("bastion-stg-01" of
// "bastion-stg-01.example.internal"). The match's Frame is the older's
// words before that value, A what the newer says of it and B the value.
func Retires(newer, older Claim) (SlotMatch, bool) {
	if len(newer.gone) == 0 || older.fact.negated {
		return SlotMatch{}, false
	}
	for _, v := range older.fact.values {
		if v.typ != "id" {
			continue
		}
		for _, g := range newer.gone {
			if (v.norm != g && hostLabel(v.norm) != g) || slices.Contains(older.gone, g) {
				continue
			}
			var frame []string
			for _, t := range older.fact.toks[:v.start] {
				frame = append(frame, t.word)
			}
			return SlotMatch{Frame: strings.Join(frame, " "), A: g + " gone", B: v.norm}, true
		}
	}
	return SlotMatch{}, false
}

// hostLabel is a dotted host's first label ("" for a word without dots or
// a URL).
func hostLabel(id string) string {
	if strings.Contains(id, "://") {
		return ""
	}
	label, _, ok := strings.Cut(id, ".")
	if !ok {
		return ""
	}
	return label
}

// SlotCandidates lists the pairs of claims (i < j) that Rewrites could
// accept in either order, without comparing every claim with every other:
// the pairs of one Block, the pairs where one claim holds, with a value of
// the other's type, a word the other must share, those where one holds
// the first name of a run the other says it passed from, and those where
// one holds a value the other says its slot held. Every pair Rewrites
// accepts is listed; most listed pairs are not rewrites.
func SlotCandidates(claims []Claim) [][2]int {
	// The pairs are listed with repeats, then sorted and the repeats
	// dropped: a set of them was a map as big as the list, grown a pair at
	// a time, in every hook.
	var out [][2]int
	pair := func(i, j int) {
		if i != j {
			out = append(out, [2]int{min(i, j), max(i, j)})
		}
	}
	blocks := map[string][]int{}
	holds := map[string][]int{} // value type and word → claims holding both
	ids := map[string][]int{}   // an id value, and a host's first label → claims holding it
	typed := map[string][]int{} // a value's type and norm → claims holding it, when some claim says a slot held it (Supplants)
	for _, c := range claims {
		for _, w := range c.fact.was {
			typed[w.typ+"\x00"+w.norm] = nil
		}
	}
	for i, c := range claims {
		for _, v := range c.fact.values {
			if l, ok := typed[v.typ+"\x00"+v.norm]; ok {
				typed[v.typ+"\x00"+v.norm] = append(l, i)
			}
			if v.typ == "id" {
				ids[v.norm] = append(ids[v.norm], i)
				if l := hostLabel(v.norm); l != "" {
					ids[l] = append(ids[l], i)
				}
			}
		}
		for _, b := range c.blockKeys() {
			if b == "" {
				continue
			}
			for _, j := range blocks[b] {
				pair(j, i)
			}
			blocks[b] = append(blocks[b], i)
		}
		for _, k := range c.fact.olderKeys() {
			holds[k] = append(holds[k], i)
		}
	}
	// A handover names the run of names it passed from, or what was taken
	// over (HandsOver): the claims holding the run's first word, or the
	// stem of what was taken over, are its candidates. Few gists
	// say one, so the words are indexed only when one does.
	handedFrom := make([]string, len(claims))
	from := map[string][]int{}
	for i, c := range claims {
		if k := c.fact.handoverKey(); k != "" {
			handedFrom[i] = k
			from[k] = nil
		}
	}
	if len(from) > 0 {
		for j, c := range claims {
			for _, t := range c.fact.toks {
				for _, w := range [2]string{t.word, t.stem} {
					if l, ok := from[w]; ok && (len(l) == 0 || l[len(l)-1] != j) {
						from[w] = append(l, j)
					}
				}
			}
		}
	}
	for i, c := range claims {
		for _, j := range from[handedFrom[i]] {
			pair(i, j)
		}
		for _, g := range c.gone {
			for _, j := range ids[g] {
				pair(i, j)
			}
		}
		for _, w := range c.fact.was {
			for _, j := range typed[w.typ+"\x00"+w.norm] {
				pair(i, j)
			}
		}
		for _, probe := range c.fact.newerProbes() {
			var best []int
			for n, k := range probe {
				if l := holds[k]; n == 0 || len(l) < len(best) {
					best = l
				}
			}
			for _, j := range best {
				pair(i, j)
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return slices.Compact(out)
}

// olderKeys are the keys under which a fact can be found as the older of
// a pair: each of its value types with each of its content words.
func (f Fact) olderKeys() []string {
	var out []string
	for _, typ := range f.types() {
		for _, t := range f.toks {
			if t.content {
				k := typ + "|" + t.stem
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// newerProbes are, for each value type of the fact, the keys an older fact
// must all hold for Restates(f, older): the type with each word of f's
// subject (the content words before its boundary).
func (f Fact) newerProbes() [][]string {
	var out [][]string
	if f.boundary == len(f.toks) {
		return nil
	}
	for _, typ := range f.types() {
		var keys []string
		for _, t := range f.toks[:f.boundary] {
			if t.content {
				keys = append(keys, typ+"|"+t.stem)
			}
		}
		if len(keys) >= subjectWordsNeeded(typ) {
			out = append(out, keys)
		}
	}
	return out
}

// Ownership reads a gist whose first sentence says who owns something:
// "The routing service is owned by team Waypoint", "Ownership of relay-gw
// moved to the Platform team". It returns the owners' words (each person or
// team the sentence names), the sentence's other words, and whether it is
// such a fact. Who owns a service bears on work about who answers for it
// (its reviewers, its alerts, its pages), not on every change to it.
func Ownership(gist string) (owners, rest []string, ok bool) {
	f := ReadFact(gist)
	if !f.saysOwning() {
		return nil, nil, false
	}
	for i, t := range f.toks {
		if f.isParty(i) {
			owners = append(owners, t.word)
		} else {
			rest = append(rest, t.word)
		}
	}
	return owners, rest, len(owners) > 0
}

// saysOwning reports whether f holds a word of owning: "owned", "owner",
// "ownership", "maintained", "maintainers", ….
func (f Fact) saysOwning() bool { return slices.ContainsFunc(f.toks, owning) }

func owning(t factToken) bool { return t.stem == "own" || t.stem == "maintain" }

// isParty reports whether f's token i is in a value that names a person or
// a team.
func (f Fact) isParty(i int) bool {
	t := f.toks[i]
	return t.value > 0 && f.values[t.value-1].typ == "party"
}

// names reports whether every word of words (lowercase, as a Claim holds
// them) is a name in f: capitalised past the first word, or an id.
func (f Fact) names(words []string) bool {
	return len(words) > 0 && !slices.ContainsFunc(words, func(w string) bool {
		return !slices.ContainsFunc(f.toks, func(t factToken) bool { return t.name && t.word == w })
	})
}

// DistinctSubjects reports whether two gists that each state a fact (a
// typed value) are about two subjects: each names, before its predicate
// (or anywhere outside its values, without a boundary), a word the other
// does not hold at all ("The Android app targets API level 33" and "The
// Wear OS app targets API level 30"). It is false when either states no
// typed value. Symmetric.
func DistinctSubjects(a, b Fact) bool {
	return len(a.values) > 0 && len(b.values) > 0 && a.namesOutside(b) && b.namesOutside(a)
}

// predicateStems are the stems of f's content words past its subject and
// outside its values: what it says of the subject ("verified", "run").
func (f Fact) predicateStems() []string {
	var out []string
	for _, t := range f.toks[f.boundary:] {
		if t.content && t.value == 0 {
			out = append(out, t.stem)
		}
	}
	return out
}

// stemsOutside are the stems of f's content words outside its values that
// none of toks holds.
func (f Fact) stemsOutside(toks []factToken) []string {
	var out []string
	for _, t := range f.toks {
		if t.content && t.value == 0 && !slices.ContainsFunc(toks, func(u factToken) bool { return u.stem == t.stem }) {
			out = append(out, t.stem)
		}
	}
	return out
}

// valueWords are the words (Words) of f's values.
func (f Fact) valueWords() map[string]bool {
	own := map[string]bool{}
	for _, t := range f.toks {
		if t.value > 0 {
			for _, w := range Words(t.word) {
				own[w] = true
			}
		}
	}
	return own
}

// namesValueOf reports whether gist, f's text, says two words or more of
// one of older's values that f's values do not hold: it names the value it
// replaces ("the old wx-feed v1 endpoint" names
// https://wx-feed.saltmarsh.internal/v1), in its claim or after it.
func (f Fact) namesValueOf(gist string, older Fact) bool {
	own := f.valueWords()
	said := map[string]bool{}
	for _, w := range Words(gist) {
		said[w] = !own[w]
	}
	for _, v := range older.values {
		named := map[string]bool{}
		for _, t := range older.toks[v.start:v.end] {
			for _, w := range Words(t.word) {
				if said[w] {
					named[w] = true
				}
			}
		}
		if len(named) >= 2 {
			return true
		}
	}
	return false
}

// namesOutside reports whether f's subject holds a word other lacks.
func (f Fact) namesOutside(other Fact) bool {
	holds := map[string]bool{}
	for _, t := range other.toks {
		holds[t.stem] = true
	}
	for _, t := range f.toks[:f.boundary] {
		if t.content && t.value == 0 && !holds[t.stem] {
			return true
		}
	}
	return false
}
