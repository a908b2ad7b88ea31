package domain

import (
	"slices"
	"strings"
	"unicode"
)

// A lesson's gist often states one fact: a subject, a relation and a value
// ("The staging database of the payments service is pay-db-stage-1."). A
// later gist that repeats the subject and the relation with another value
// rewrites that fact, and the older one must stop being handed out. The
// seed's frame key is the claim with its value taken out;
// SameSlot finds it without knowing any predicate: two claims state one slot
// when they differ in exactly one span of value-like words at the end of
// their first clause, after an identical frame that names a subject.
//
// The rule is built for precision: a pair it accepts is a rewrite, and two
// subjects that share a relation and a value ("the nightly export of
// Billing runs at 02:00" and "… of Search runs at 02:00") differ before the
// relation, which the rule never accepts.

// Slot-rule bounds.
const (
	// SlotMinFrame is the fewest words the shared frame (subject and
	// relation) must have: fewer cannot name a subject and a relation.
	SlotMinFrame = 3
	// SlotMaxValue is the most words a value may have: a value fills a
	// slot (a host, a weekday, a team, "self-hosted large"); a longer
	// difference is a different claim.
	SlotMaxValue = 6
	// SlotMaxTail is the most words the two claims may share after their
	// values ("02:00 UTC", "large runners"): a unit or a head noun. A
	// longer shared tail means the difference was not at the value: it
	// was the subject ("the export of Billing runs at 02:00") or the
	// relation. Only a qualifying phrase ("in CI", "for staging") may be
	// longer, up to SlotMaxQualifier words.
	SlotMaxTail      = 1
	SlotMaxQualifier = 3
	// SlotMaxCondition bounds a shared condition after the values ("when
	// the primary is down").
	SlotMaxCondition = 6
)

// slotQualifiers open a phrase that may follow a value and qualify it ("is
// pinned to 1.21 in CI").
var slotQualifiers = map[string]bool{"in": true, "on": true, "at": true, "for": true, "per": true, "during": true, "across": true}

// slotFunction are words a value never holds: a difference that contains
// one of them is a change of relation, of polarity or of structure ("is
// pay-db-1" against "has 40 tables", "in eu-west-1" against "on gcp"), not
// another value in one slot.
var slotFunction = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "being": true,
	"has": true, "have": true, "had": true, "do": true, "does": true, "did": true,
	"will": true, "would": true, "can": true, "could": true, "should": true, "must": true, "may": true,
	"not": true, "no": true, "never": true, "nor": true,
	"a": true, "an": true, "the": true,
	"of": true, "in": true, "on": true, "at": true, "to": true, "by": true, "for": true, "from": true,
	"with": true, "into": true, "onto": true, "over": true, "under": true, "via": true, "per": true,
	"and": true, "or": true, "but": true, "if": true, "when": true, "unless": true, "because": true,
}

// slotOpenEnds are words a frame cannot end on: what follows them completes
// the subject ("the rotation of api-tokens"), it is not a value.
var slotOpenEnds = map[string]bool{
	"of": true, "for": true, "the": true, "a": true, "an": true, "and": true, "or": true,
	"our": true, "its": true, "their": true, "this": true, "that": true, "these": true, "those": true,
}

// slotArticles are dropped where a claim starts: "The payments repository"
// and "Payments repository" name one subject.
var slotArticles = map[string]bool{"the": true, "a": true, "an": true, "our": true}

// slotRelations maps relation phrases that say the same thing in other
// words to one token, so "lives in eu-west-1" and "moved to eu-central-1"
// differ only in their value. It adds recall for paraphrased relations; the
// rule itself (SameSlot) needs no list and accepts any predicate repeated
// word for word.
var slotRelations = map[string]string{}

// slotRelationWords is the longest phrase of slotRelations, in words.
var slotRelationWords int

func init() {
	for canon, phrases := range map[string][]string{
		"=located": {"lives in", "live in", "resides in", "is hosted in", "are hosted in", "is located in",
			"are located in", "is deployed to", "are deployed to", "is deployed in", "are deployed in",
			"moved to", "has moved to", "have moved to", "was moved to", "were moved to", "migrated to",
			"has migrated to", "was migrated to", "now lives in", "is now hosted in", "is stored in", "are stored in",
			"is kept in", "are kept in"},
		"=owned": {"is owned by", "are owned by", "belongs to", "belong to", "is maintained by", "are maintained by",
			"is managed by", "are managed by", "is run by", "are run by", "is now owned by", "now belongs to"},
		"=points":  {"points to", "point to", "points at", "point at", "resolves to", "now points to", "now points at"},
		"=listens": {"listens on", "listen on", "is served on", "is exposed on", "now listens on"},
	} {
		for _, p := range phrases {
			slotRelations[p] = canon
			slotRelationWords = max(slotRelationWords, len(strings.Fields(p)))
		}
	}
}

// Claim is a gist's first clause read for SameSlot: lowercase words with
// the punctuation at their ends removed (inner punctuation stays:
// eu-west-1, 02:00, v1.4), leading articles dropped and paraphrased
// relations made one word. The zero Claim states nothing.
type Claim struct {
	words []string
	fact  Fact     // the gist's first sentence read for Restates
	gone  []string // the ids the gist says are gone, for Retires
	// labelled: the clause ended on a colon with more after it, the
	// value being there ("Rate limit for tier 1 requests per second: 500").
	labelled bool
}

// ReadClaim reads a gist's first clause (up to the first period, semicolon,
// comma, colon, question or exclamation mark at a word's end, or a lone
// dash), its parenthesised asides left out: an aside is not the claim. A possessive is
// its noun ("storefront-web's release train" names what "the storefront-web
// release train" does), and "now", which a rewrite adds to say the value
// changed, is not a word of the claim.
func ReadClaim(gist string) Claim {
	var words []string
	labelled := false
	fields := strings.Fields(strings.ToLower(gist))
	fields = fields[leadIn(fields):]
	for i := 0; i < len(fields); i++ {
		raw := fields[i]
		if strings.HasPrefix(raw, "(") && len(words) > 0 {
			// An aside: skipped to its close, where the clause may go on
			// ("linesman (the field app) release train cuts on …").
			for i < len(fields) && !strings.Contains(fields[i], ")") {
				i++
			}
			if i == len(fields) || endsClause(fields[i]) {
				break
			}
			continue
		}
		w := strings.TrimFunc(raw, func(r rune) bool { return unicode.IsPunct(r) && r != '%' && r != '/' })
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if w != "" && w != "now" {
			words = append(words, w)
		}
		if endsClause(raw) && len(words) > 0 {
			labelled = strings.HasSuffix(strings.TrimRight(raw, ")\"'”’"), ":") && i+1 < len(fields)
			break
		}
	}
	for len(words) > 0 && slotArticles[words[0]] {
		words = words[1:]
	}
	return Claim{words: canonRelations(words), fact: ReadFact(gist), gone: goneIDs(fields), labelled: labelled}
}

// endsClause reports a word that closes a clause.
func endsClause(raw string) bool {
	if raw == "-" || raw == "—" || raw == "–" {
		return true
	}
	t := strings.TrimRight(raw, ")\"'”’")
	return strings.HasSuffix(t, ".") || strings.HasSuffix(t, ";") || strings.HasSuffix(t, ",") ||
		strings.HasSuffix(t, ":") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?")
}

// canonRelations replaces each slotRelations phrase (leftmost, longest) by
// its token.
func canonRelations(words []string) []string {
	out := words[:0:0]
	for i := 0; i < len(words); {
		n := min(slotRelationWords, len(words)-i)
		for ; n > 0; n-- {
			if canon, ok := slotRelations[strings.Join(words[i:i+n], " ")]; ok {
				out = append(out, canon)
				break
			}
		}
		if n == 0 {
			out, n = append(out, words[i]), 1
		}
		i += n
	}
	return out
}

// Block is the key two claims must share to state one slot: the first
// SlotMinFrame words ("" when the claim is too short to state a slot).
// Grouping claims by it and by blockKeys finds every pair SameSlot could
// accept.
func (c Claim) Block() string {
	if len(c.words) <= SlotMinFrame {
		return ""
	}
	return strings.Join(c.words[:SlotMinFrame], " ")
}

// blockKeys are the keys under which SameSlot may pair c ("" for one c
// has not): its Block, and, for a claim that may end on a qualifying
// phrase of two or three words (a pair on a short frame, shortFrame,
// shares one), its first SlotMinFrame-1 words with its last two.
func (c Claim) blockKeys() [2]string {
	keys := [2]string{c.Block()}
	if n := len(c.words); n >= SlotMinFrame+2 && (slotQualifiers[c.words[n-2]] || slotQualifiers[c.words[n-3]]) {
		keys[1] = strings.Join(c.words[:SlotMinFrame-1], " ") + " … " + strings.Join(c.words[n-2:], " ")
	}
	return keys
}

// ClaimFrame is a gist's first clause with its value taken out, as the
// seed's frame key does, in the gist's own words and case: the words up to
// and including the last function word ("The primary database of Search
// lives in", "Our Redis cache must use the"). ok is false when that leaves
// fewer than SlotMinFrame words or no value. Without a second claim the
// value's start is a guess, good enough to keep a value's words (a team, a
// region) from passing for a subject; SameSlot does not use it.
func ClaimFrame(gist string) (frame string, ok bool) {
	var words []string
	last := -1
	for _, raw := range strings.Fields(gist) {
		words = append(words, raw)
		w := strings.ToLower(strings.TrimFunc(raw, unicode.IsPunct))
		if slotFunction[w] {
			last = len(words) - 1
		}
		if endsClause(raw) {
			break
		}
	}
	if last+1 < SlotMinFrame || last == len(words)-1 {
		return "", false
	}
	return strings.Join(words[:last+1], " "), true
}

// Holding is c with the words its lesson holds outside the gist: holds
// reports whether a lowercase word is one of them (the lesson's tags,
// which name what it is about). Restates counts a name of the older
// subject that the newer lesson holds there as one the newer names: "The
// visibility timeout on the order-events SQS queue is 30 seconds" is
// rewritten by "order-events visibility timeout was raised to 120s"
// tagged sqs. Only the newer claim's holds is read.
func (c Claim) Holding(holds func(word string) bool) Claim {
	c.fact.holds = holds
	return c
}

// TagHolds is a Holding function for a lesson's tags: a word is held when
// it is a word of a tag (letters and digits: the tag "order-events" holds
// "order" and "events"), as the lexical index reads tags.
func TagHolds(tags []string) func(word string) bool {
	if len(tags) == 0 {
		return nil
	}
	return func(word string) bool {
		return slices.ContainsFunc(tags, func(tag string) bool {
			return slices.ContainsFunc(strings.FieldsFunc(tag, func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			}), func(w string) bool { return strings.EqualFold(w, word) })
		})
	}
}

// String is the claim as SameSlot reads it.
func (c Claim) String() string { return strings.Join(c.words, " ") }

// SlotMatch is how two claims state one slot: the frame they share and the
// value each writes into it.
type SlotMatch struct {
	Frame  string // the shared words before the values
	A, B   string // each claim's value
	Suffix string // the shared words after the values ("" or a unit)
}

// SameSlot reports whether a and b state the same slot of the same subject
// with different values: they share a frame of at least SlotMinFrame words
// that does not end open (slotFrameEnd), then differ in one span of one to
// SlotMaxValue words each (a leading article aside), spans that share no
// word and hold no function word (a refining phrase at a value's end
// aside: valueHead), followed by nothing or a tail both
// share that cannot hold a second subject (slotTail). It is symmetric and
// never true for identical claims.
func SameSlot(a, b Claim) (SlotMatch, bool) {
	x, y := a.words, b.words
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	va, vb := valueWords(x[p:len(x)-s]), valueWords(y[p:len(y)-s])
	if (p < SlotMinFrame && !shortFrame(p, x[len(x)-s:], a.fact.names(va), b.fact.names(vb))) || p == 0 || !slotFrameEnd(x[:p]) || len(va) == 0 || len(vb) == 0 ||
		len(va) > SlotMaxValue || len(vb) > SlotMaxValue || !slotTail(x[len(x)-s:], va, vb, a.labelled || b.labelled) {
		return SlotMatch{}, false
	}
	va, vb = valueHead(va), valueHead(vb)
	seen := make(map[string]bool, len(va))
	for _, w := range va {
		if slotFunction[w] {
			return SlotMatch{}, false
		}
		seen[w] = true
	}
	for _, w := range vb {
		if slotFunction[w] || seen[w] {
			return SlotMatch{}, false
		}
	}
	return SlotMatch{Frame: strings.Join(x[:p], " "), A: strings.Join(va, " "), B: strings.Join(vb, " "),
		Suffix: strings.Join(x[len(x)-s:], " ")}, true
}

// shortFrame reports whether a frame of p words, one short of
// SlotMinFrame, still names a slot: the claims then share a qualifying
// phrase after their values, of at least two words, which says what the
// value is for, and each value is a name ("console uses Jest for unit
// tests" and "… Vitest for unit tests"). Two words of plain English
// there are the relation itself ("deploy pipeline runs on large runners"
// against "… fails on …").
func shortFrame(p int, tail []string, namedA, namedB bool) bool {
	return p == SlotMinFrame-1 && len(tail) >= 2 && slotQualifiers[tail[0]] && namedA && namedB
}

// valueWords is a differing span without the article it may open with
// ("the self-hosted Photon cluster" against "Nominatim").
func valueWords(span []string) []string {
	if len(span) > 1 && slotArticles[span[0]] {
		return span[1:]
	}
	return span
}

// slotRefiners open a phrase that refines the value it follows ("main
// with the deploy-staging label", "Redis via the sidecar"): the words
// before it are the value, and the phrase says how it is used.
var slotRefiners = map[string]bool{"with": true, "via": true, "using": true, "through": true, "behind": true}

// valueHead is a value without the refining phrase it may end on: one that
// opens on a slotRefiners word after at least one word of value, is at most
// SlotMaxQualifier words long and holds no verb. Any other value is its own
// head, and its function words reject the pair.
func valueHead(v []string) []string {
	for i, w := range v {
		if !slotRefiners[w] {
			continue
		}
		if i == 0 || len(v)-i-1 > SlotMaxQualifier || slices.ContainsFunc(v[i+1:], func(w string) bool { return slotVerbs[w] }) {
			return v
		}
		return v[:i]
	}
	return v
}

// slotFrameEnd reports whether a frame may end where the values start. It
// may not end open, on a word that a noun must complete ("the rotation
// of"), since what differs then is a second subject; an article is open
// only after such a word ("the owner of the", not "reviewed by the"), and
// so are up to two words after such an article, which the value's noun
// completes ("checklist for a new" secret or rule).
func slotFrameEnd(frame []string) bool {
	n := len(frame)
	last := frame[n-1]
	if slotArticles[last] && n > 1 {
		last = frame[n-2]
		return !slotOpenEnds[last] && !slotArticles[last]
	}
	for k := n - 2; k >= max(1, n-3); k-- {
		if slotArticles[frame[k]] && slotOpenEnds[frame[k-1]] && !slotArticles[frame[k-1]] {
			return false
		}
	}
	return !slotOpenEnds[last]
}

// slotVerbs are the words that make a tail a clause of its own.
var slotVerbs = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"has": true, "have": true, "had": true, "do": true, "does": true, "did": true,
	"will": true, "would": true, "can": true, "could": true, "should": true, "must": true, "may": true,
}

// slotTail reports whether two claims may share tail after their values
// va and vb: nothing or one word (a unit, a head noun: "02:00 UTC", "large
// runners"); a short qualifying phrase that opens on a preposition and
// holds no verb ("in CI"), of up to SlotMaxCondition words when it holds a
// number after weekdays ("on Thursday at 12:00 base local time": a plain
// object there, "keeps sessions for 30 minutes after last access", is a
// subject); a condition ("when HERE times out"); or, after
// two values that hold digits (times, versions, sizes), up to
// SlotMaxQualifier words without a verb ("18:00 clinic local time") or a
// quantity's unit and what it is counted over (quantityTail). A
// tail that starts anywhere else ("runs at 02:00") carries the relation,
// and the difference before it was the subject.
func slotTail(tail, va, vb []string, labelled bool) bool {
	switch {
	case len(tail) <= SlotMaxTail:
		return true
	case slotConditions[tail[0]]:
		return len(tail) <= SlotMaxCondition
	case len(va) == 1 && len(vb) == 1 && hasDigit(va) && hasDigit(vb) && !labelled && quantityTail(tail):
		// One number each ("partners 100" against "internal clients
		// 1000" names two subjects), and a claim that ends on a colon
		// holds its value after it: the number before was the subject's.
		return true
	case allWeekdays(va) && allWeekdays(vb) && slotQualifiers[tail[0]] && hasDigit(tail[1:]) && len(tail) <= SlotMaxCondition:
		// A qualifying phrase that holds a time or a number is as long
		// as its value's words ("on Thursday at 12:00 base local time").
		return !slices.ContainsFunc(tail[1:], func(w string) bool { return slotFunction[w] || slotVerbs[w] })
	case len(tail) > SlotMaxQualifier:
		return false
	case slotQualifiers[tail[0]]:
		return !slices.ContainsFunc(tail[1:], func(w string) bool { return slotFunction[w] })
	case hasDigit(va) && hasDigit(vb):
		return !slices.ContainsFunc(tail, func(w string) bool { return slotVerbs[w] || slotFunction[w] })
	}
	return false
}

// quantityTail reports whether tail, after two values that hold digits, is
// the quantity's unit and a phrase that says what it is counted over: one
// or two words of unit, then nothing or a phrase opening on "per" of at
// most SlotMaxQualifier words after it, none of them a verb or a function
// word other than a preposition such as "per" ("free articles per rolling
// 30 days", "requests per minute per client"). A relation or a second
// clause there fails it.
func quantityTail(tail []string) bool {
	unit, qual := tail, []string(nil)
	if i := slices.IndexFunc(tail, func(w string) bool { return slotQualifiers[w] }); i >= 0 {
		// Only "per" counts a quantity over something: after "runs at"
		// the value is the time, and the number before was the subject's
		// ("the job for shard 3 runs at 02:00").
		unit, qual = tail[:i], tail[i+1:]
		if tail[i] != "per" || len(qual) == 0 || len(qual) > SlotMaxQualifier {
			return false
		}
	}
	plain := func(w string) bool { return slotVerbs[w] || slotFunction[w] }
	return len(unit) >= 1 && len(unit) <= 2 && !slices.ContainsFunc(unit, plain) &&
		!slices.ContainsFunc(qual, func(w string) bool { return plain(w) && !slotQualifiers[w] })
}

// slotConditions open a condition a fact may hold under.
var slotConditions = map[string]bool{"when": true, "if": true, "unless": true, "until": true, "while": true}

func hasDigit(words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.ContainsAny(w, "0123456789") })
}

// EarnedSupersedes reports whether a lesson whose gist is by may take the
// place of one whose gist is of, as a supersedes link claims: only when by
// rewrites of's slot (Rewrites). A link is a claim anyone who can commit a
// file can write, whatever author or flag it names; letting it rank would
// let one lesson silence another on any subject. An unearned link stays a
// link between the two, and doctor names it. byHolds is the newer lesson's
// Holding function (its tags: TagHolds), nil when none.
func EarnedSupersedes(by, of string, byHolds func(word string) bool) bool {
	_, ok := Rewrites(ReadClaim(by).Holding(byHolds), ReadClaim(of))
	return ok
}

// SupersededBy maps each lesson of lessons that another of them supersedes
// by an earned link (EarnedSupersedes: a sleep's, or a declared one that
// rewrites its slot) to those others' ids, sorted: what a listing of the
// lessons marks as superseded without a search. holds is the Holding
// function of a newer lesson's tags (nil: TagHolds).
func SupersededBy(lessons []Lesson, holds func(Lesson) func(word string) bool) map[string][]string {
	if holds == nil {
		holds = func(l Lesson) func(string) bool { return TagHolds(l.Tags) }
	}
	gist := make(map[string]string, len(lessons))
	for _, l := range lessons {
		gist[l.ID] = l.Gist
	}
	out := map[string][]string{}
	for _, l := range lessons {
		for _, k := range l.Links {
			old, ok := gist[k.Target]
			if k.Rel != RelSupersedes || !ok || k.Target == l.ID || slices.Contains(out[k.Target], l.ID) ||
				!EarnedSupersedes(l.Gist, old, holds(l)) {
				continue
			}
			out[k.Target] = append(out[k.Target], l.ID)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// allWeekdays reports a value made of weekdays only.
func allWeekdays(ws []string) bool {
	return len(ws) > 0 && !slices.ContainsFunc(ws, func(w string) bool {
		_, ok := weekday(w)
		return !ok
	})
}
