package domain

import (
	"slices"
	"strconv"
	"strings"
)

// A rewrite often names the value it replaces: "Prod Loki retention was cut
// from 14 to 7 days" rewrites "Prod Loki keeps 14 days of logs", and "The
// fare-filing import in tariff no longer kicks off at 01:30" retires
// "tariff's nightly fare-filing import runs at 01:30 UTC", whatever words
// each uses for the relation. The value it names pins the slot; the names
// the two share pin the subject.

// readWas reads the values the fact says the slot held before: A of "from
// A to B" said of a change ("was cut from 14 to 7 days", "moved from 02:00
// to 04:00"; not a range, "scales from 3 to 10 replicas") when B is a
// value of A's type (a bare number taking B's unit), and the first value
// after "no longer" in its clause, before any comma. It sets lapsed when
// the fact's only negation is "no longer".
func (f *Fact) readWas() {
	for k := 0; k+1 < len(f.values); k++ {
		a, b := f.values[k], f.values[k+1]
		if a.start < 2 || f.toks[a.start-1].word != "from" || !changeWord(f.toks[a.start-2].word) ||
			a.end >= len(f.toks) || f.toks[a.end].word != "to" || b.start != a.end+1 {
			continue
		}
		if a.typ == "number" && b.typ != "number" {
			a = f.withUnitOf(a, b)
		}
		if a.typ == b.typ && a.norm != b.norm {
			a.fromTo = true
			if b.end < len(f.toks) {
				a.after = f.toks[b.end].stem
			}
			f.was = append(f.was, a)
		}
	}
	negations, noLonger := 0, 0
	for i, t := range f.toks {
		if !restateNegation[t.word] {
			continue
		}
		negations++
		if t.word != "no" || i+1 >= len(f.toks) || f.toks[i+1].word != "longer" {
			continue
		}
		noLonger++
		at := slices.IndexFunc(f.values, func(v factValue) bool { return v.start > i+1 })
		if at >= 0 && !slices.ContainsFunc(f.toks[i:f.values[at].start], func(t factToken) bool { return t.comma }) {
			f.was = append(f.was, f.values[at])
		}
	}
	f.lapsed = negations > 0 && negations == noLonger
}

// changeWord reports a word that says a value changed before "from":
// a change marker, or a verb in the past ("cut", "scaled", "went").
func changeWord(w string) bool {
	return restateChange[w] || strings.HasSuffix(w, "ed") || w == "went" || w == "grew" || w == "rose" || w == "fell" || w == "dropped"
}

// withUnitOf is the bare number a with the unit of the value b that
// follows it ("14" of "from 14 to 7 days" read as 14 days), or a as it
// is when b's unit cannot be read.
func (f *Fact) withUnitOf(a, b factValue) factValue {
	n, err := strconv.ParseFloat(a.norm, 64)
	m, _, ok := numberUnit(f.toks[b.start].word)
	bn, err2 := strconv.ParseFloat(b.norm, 64)
	if err != nil || err2 != nil || !ok || m == 0 {
		return a
	}
	a.typ, a.norm = b.typ, strconv.FormatFloat(n*bn/m, 'g', -1, 64)
	return a
}

// Supplants reports whether newer names a value of older as the value its
// slot held before (readWas) and is about older's subject: older is not
// negated and names no value of its own as gone, newer is negated only by
// its "no longer", and newer holds every name, id and compound older says
// before that value, and at least RestateMinSubject of older's content words
// there. Two subjects told apart by a word each holds before the words
// they share ("staging log retention" and "prod log retention") are two;
// a bare number counts the same thing in both ("3 replicas" and "from 3
// to 5 replicas", not "shard 3" and "from 3 to 8 shards"); and a value
// that is no quantity (a time, a host) is moved for the older's subject
// only when newer's subject adds no word to it ("orders DB backups moved
// from 02:00" is not "the orders DB vacuum runs at 02:00").
// The match's Frame is the shared words, A what newer says and B the value.
func Supplants(newer, older Fact) (SlotMatch, bool) {
	if len(newer.was) == 0 || older.negated || len(older.was) > 0 || newer.negated && !newer.lapsed {
		return SlotMatch{}, false
	}
	newerHolds := map[string]bool{}
	for _, t := range newer.toks {
		newerHolds[t.stem] = true
	}
	for _, w := range newer.was {
		at := slices.IndexFunc(older.values, func(v factValue) bool { return v.typ == w.typ && v.norm == w.norm })
		if at < 0 {
			continue
		}
		v := older.values[at]
		if w.after != "" && w.typ == "number" && (v.end >= len(older.toks) || older.toks[v.end].stem != w.after) {
			continue
		}
		if contrasted(newer.toks[:w.start], older.toks[:v.start]) {
			continue
		}
		if w.fromTo && !quantity(w.typ) && addsWord(newer.toks[:min(newer.boundary, w.start)], older.toks[:v.start]) {
			continue
		}
		var shared []string
		named := true
		for _, t := range older.toks[:v.start] {
			if !t.content {
				continue
			}
			if newerHolds[t.stem] {
				shared = append(shared, t.word)
			} else if t.name || t.id || isCompound(t.word) {
				named = false
			}
		}
		if !named || len(shared) < RestateMinSubject {
			continue
		}
		return SlotMatch{Frame: strings.Join(shared, " "), A: "was " + w.norm, B: v.norm}, true
	}
	return SlotMatch{}, false
}

// contrasted reports two subjects that each hold, before the last word
// the other holds too, a content word the other lacks: "Staging log
// retention" and "Prod log retention", "tier 1 support" and "tier 2".
func contrasted(a, b []factToken) bool {
	return lacksBefore(a, b) && lacksBefore(b, a)
}

// lacksBefore reports whether toks hold, before their last content word
// other holds, a content word other lacks.
func lacksBefore(toks, other []factToken) bool {
	holds := map[string]bool{}
	for _, t := range other {
		holds[t.stem] = true
	}
	last := -1
	for i, t := range toks {
		if t.content && holds[t.stem] {
			last = i
		}
	}
	return last > 0 && slices.ContainsFunc(toks[:last], func(t factToken) bool { return t.content && !holds[t.stem] })
}

// addsWord reports whether toks hold a content word other lacks.
func addsWord(toks, other []factToken) bool {
	holds := map[string]bool{}
	for _, t := range other {
		holds[t.stem] = true
	}
	return slices.ContainsFunc(toks, func(t factToken) bool { return t.content && !holds[t.stem] })
}

// quantity reports a value type that counts or measures.
func quantity(typ string) bool {
	return typ == "duration" || typ == "size" || typ == "number" || typ == "share"
}
