package sleep

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/borg-memory/borg/domain"
)

// Entities returns the entities a text names, lowercased, sorted and
// distinct: tokens that look like paths or identifiers (holding "/", "_", an
// inner ".", or camelCase) and capitalised words that do not start a
// sentence (proper names: Kafka, PostgreSQL, API). Tokens shorter than three
// characters and plain numbers are not entities.
func Entities(text string) []string {
	seen := map[string]bool{}
	var out []string
	start := true // the next token starts a sentence
	for _, raw := range strings.Fields(text) {
		tok := strings.TrimLeftFunc(raw, func(r rune) bool { return strings.ContainsRune("\"'`([{<*", r) })
		tok = strings.TrimRightFunc(tok, func(r rune) bool { return strings.ContainsRune("\"'`)]}>,;:!?*.…", r) })
		wasStart := start
		last, _ := utf8.DecodeLastRuneInString(raw)
		start = strings.ContainsRune(".!?:", last)
		if utf8.RuneCountInString(tok) < 3 || !strings.ContainsFunc(tok, unicode.IsLetter) {
			continue
		}
		if isIdentifier(tok) || (!wasStart && isCapitalised(tok)) {
			if e := strings.ToLower(tok); !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	slices.Sort(out)
	return out
}

// isIdentifier reports a path, a dotted or snake name, or camelCase.
func isIdentifier(tok string) bool {
	if strings.ContainsAny(tok, "/_") || strings.Contains(tok, ".") {
		return true
	}
	prevLower := false
	for _, r := range tok {
		if prevLower && unicode.IsUpper(r) {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

func isCapitalised(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	return unicode.IsUpper(r)
}

// edges is phase 5: pairs of lessons that name a common entity, ranked by
// similarity (domain.RankCandidatePairs), become derived links written into
// the newer lesson: contradicts when the gists diverge in negation or
// numbers, supports otherwise. Pairs already linked either way are skipped;
// an entity named by more than EntityMaxDF lessons is too common to pair on.
func (p *planner) edges() PhasePlan {
	ids := p.active()
	cands, tooCommon := p.entityPairs(ids)
	ranked := domain.RankCandidatePairs(cands, p.vectors(ids),
		domain.NeighborOptions{Floor: p.opts.EdgeFloor, PerSourceK: p.opts.EdgePerSource, Limit: p.opts.EdgeLimit})
	ph := p.writeEdges(ranked)
	ph.Counts = append(ph.Counts, Count{"candidate pairs", len(cands)})
	if tooCommon > 0 {
		ph.Notes = append(ph.Notes, "Entities named by too many lessons to pair on: "+strconv.Itoa(tooCommon)+".")
	}
	return ph
}

// entityPairs lists the pairs of ids that name a common entity and are not
// linked yet, each once, oriented newer to older, in entity order; tooCommon
// counts the entities named by more than EntityMaxDF lessons.
func (p *planner) entityPairs(ids []string) (cands []domain.CandidatePair, tooCommon int) {
	ents := make([][]string, len(ids)) // extracted over the CPUs, read in id order
	parallelStripes(runtimeWorkers(), len(ids), func(_, i int) {
		l := p.cur[ids[i]].l
		ents[i] = Entities(l.Title + ". " + l.Gist + ". " + l.Body)
	})
	postings := map[string][]string{}
	for i, id := range ids {
		for _, e := range ents[i] {
			postings[e] = append(postings[e], id)
		}
	}
	linked := map[[2]string]bool{}
	for _, id := range ids {
		for _, k := range p.cur[id].l.Links {
			linked[[2]string{id, k.Target}] = true
			linked[[2]string{k.Target, id}] = true
		}
	}
	keys := make([]string, 0, len(postings))
	for e := range postings {
		keys = append(keys, e)
	}
	slices.Sort(keys)
	seen := map[[2]string]bool{}
	for _, e := range keys {
		ps := postings[e]
		if len(ps) > p.opts.EntityMaxDF {
			tooCommon++
			continue
		}
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				src, dst := ps[i], ps[j]
				if p.olderFirst(src, dst) {
					src, dst = dst, src // the newer lesson carries the link
				}
				k := [2]string{src, dst}
				if seen[k] || linked[k] {
					continue
				}
				seen[k] = true
				cands = append(cands, domain.CandidatePair{Src: src, Dst: dst})
			}
		}
	}
	return cands, tooCommon
}

// writeEdges types each ranked pair and writes it into the source lesson, in
// (src, dst) order so each file's links come out sorted; a pair about
// different subjects is left unlinked and counted in a note.
func (p *planner) writeEdges(ranked []domain.NeighborPair) PhasePlan {
	var ph PhasePlan
	slices.SortFunc(ranked, func(a, b domain.NeighborPair) int {
		if c := strings.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		return strings.Compare(a.Dst, b.Dst)
	})
	supports, contradicts, otherSubject := 0, 0, 0
	views := map[string]edgeView{}
	view := func(l domain.Lesson) edgeView {
		v, ok := views[l.ID]
		if !ok {
			v = viewOf(l)
			views[l.ID] = v
		}
		return v
	}
	for _, n := range ranked {
		s, d := p.cur[n.Src].l, p.cur[n.Dst].l
		vs, vd := view(s), view(d)
		rel, why, ok := typeEdge(vs, vd)
		if !ok {
			otherSubject++
			continue
		}
		if rel == domain.RelSupports {
			supports++
		} else {
			contradicts++
		}
		s.Links = append(slices.Clone(s.Links), domain.LessonLink{Rel: rel, Target: n.Dst, Derived: true})
		p.update(s)
		ph.Items = append(ph.Items, Item{Lesson: n.Src, Action: rel, Other: n.Dst,
			Why: why + "cosine " + fp4(n.Sim) + ", both name " + strings.Join(shared(vs.subjects, vd.subjects, 3), ", ")})
	}
	if otherSubject > 0 {
		ph.Notes = append(ph.Notes, "Pairs left unlinked because their lessons are about different subjects: "+strconv.Itoa(otherSubject)+".")
	}
	ph.Counts = []Count{{"supports", supports}, {"contradicts", contradicts}}
	return ph
}

// edgeView is what edge typing and the frame phase read of a lesson: its
// gist, the entities it is about and its tags' words.
type edgeView struct {
	gist     string
	frame    string // the fact's frame, canonical (domain.ClaimFrame; factRelation, namesSubject); "" when the gist states no fact
	subjects []string
	about    []string // subjects and the words of its tags, lowercased, sorted, distinct
}

// viewOf reads l for edge typing. Its subjects are the entities of its
// title, gist and body, without its claim's value (the region, the time or
// the team a fact writes into its slot) and without entities that only
// ever name a value (weekdays, months, time zones).
func viewOf(l domain.Lesson) edgeView {
	v := edgeView{gist: l.Gist}
	gist := l.Gist
	if frame, ok := domain.ClaimFrame(l.Gist); ok {
		// The value a fact writes (a region, a team) names no subject.
		gist = frame
		if w := strings.Fields(domain.ReadClaim(frame).String()); len(w) > 0 && (factRelation(w[len(w)-1]) || namesSubject(l.Gist)) {
			v.frame = strings.Join(w, " ")
		}
	}
	for _, e := range Entities(l.Title + ". " + gist + ". " + l.Body) {
		if !valueEntities[e] {
			v.subjects = append(v.subjects, e)
		}
	}
	v.about = slices.Clone(v.subjects)
	for _, tag := range l.Tags {
		// A tag's words, as domain.TagHolds reads them.
		for _, w := range strings.FieldsFunc(tag, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			v.about = append(v.about, strings.ToLower(w))
		}
	}
	slices.Sort(v.about)
	v.about = slices.Compact(v.about)
	return v
}

// differentSubjects reports whether two lessons are about different
// subjects, the one rule edge typing and the frame phase refuse a pair by:
// two lessons that each name what they are about (subject entities or
// tags) with nothing in common ("The default timeout is 30 seconds" tagged
// http-client, go and "… is 5 seconds" tagged postgres, python); or two
// facts that each name a subject word the other lacks
// (domain.DistinctSubjects). Frames are not compared here: a fact rewritten
// in other words ("kicks off at 02:00" → "was moved to 03:30") has another
// frame and one subject, which domain.Rewrites has judged (edge typing,
// which has no such judgement, compares frames itself).
func differentSubjects(s, d edgeView) bool {
	if len(s.about) > 0 && len(d.about) > 0 && len(shared(s.about, d.about, 1)) == 0 {
		return true
	}
	return domain.DistinctSubjects(domain.ReadFact(s.gist), domain.ReadFact(d.gist))
}

// typeEdge decides whether two lessons that name a common entity are one
// subject's facts, and how they relate: a derived link needs the two to be
// about the same subject, not merely to share a value. They must not be
// about different subjects (differentSubjects), and they must share a
// subject entity (viewOf: a fact's are its frame's). Then contradicts when
// the gists diverge in negation or numbers, supports otherwise.
func typeEdge(s, d edgeView) (rel, why string, ok bool) {
	if s.frame != "" && d.frame != "" && s.frame != d.frame {
		// Two facts are one subject's only in one frame: "the staging
		// database of Search" and "the primary database of Search" name
		// two things.
		return "", "", false
	}
	if differentSubjects(s, d) || len(shared(s.subjects, d.subjects, 1)) == 0 {
		return "", "", false
	}
	switch {
	case domain.NegationDivergent(s.gist, d.gist):
		return domain.RelContradicts, "negation diverges, ", true
	case domain.NumericTokenDivergent(s.gist, d.gist):
		return domain.RelContradicts, "numbers diverge, ", true
	}
	return domain.RelSupports, "", true
}

// valueEntities are capitalised words that name a value, never a subject.
var valueEntities = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`monday tuesday wednesday thursday friday saturday sunday
		mondays tuesdays wednesdays thursdays fridays saturdays sundays
		january february march april may june july august september october november december
		utc gmt cet cest pst pdt est edt`) {
		valueEntities[w] = true
	}
}

// shared lists up to n entities both sorted lists hold.
func shared(a, b []string, n int) []string {
	var out []string
	for i, j := 0, 0; i < len(a) && j < len(b) && len(out) < n; {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			out = append(out, a[i])
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return out
}

// namesSubject reports a gist that opens on a definite article ("The
// geocoder falls back to …"): a statement about a thing, where a procedure
// opens on what to do ("Enable idempotence in …").
func namesSubject(gist string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(gist), " ")
	return strings.EqualFold(first, "the")
}

// factRelation reports a frame's last word that makes it a fact's: a
// copula ("the staging database of Search is") or a relation SameSlot
// reads as one ("lives in", "is owned by"). A procedure's frame ("enable
// idempotence in the Kafka producer to") is none.
func factRelation(w string) bool {
	return w == "is" || w == "are" || w == "was" || w == "were" || strings.HasPrefix(w, "=")
}
