package index

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/borg-memory/borg/domain"
)

// Relevance is how much of a lesson's own claim the query's text covers,
// on one scale for every store and every query: the weighted share of the
// distinct terms of the lesson's title and gist that the query holds,
//
//	relevance = (Σ w(t), t in claim ∩ query + ½ Σ w(t), t in rest ∩ query)
//	            / (Σ w(t), t in claim + prior), at most 1
//
// with claim the terms of the lesson's title and gist, rest those only its
// body or tags hold, w(t) = idf(t)³ / ln(1 + lessons)², idf the lexical
// arm's (the live lessons' whole text), and prior RelevancePrior × the
// weight of a word that only this lesson holds. The body and the tags say
// where a lesson applies and what goes wrong without it (the symptom a
// session reports, the part of the system it touches), so sharing their
// words counts, at half weight; they do not enlarge what must be covered,
// so a lesson that explains itself at length is not harder to match. The
// ratio does not grow with the query's length the way a BM25 score does,
// and it does not shrink as the store grows; the prior keeps a
// lesson of two words from reaching 1/2 on one shared word. A rank-fused
// score (RRF) says only that a lesson came first, not how well it matched:
// a hook can tell "shares one common word" from "is about this work" only
// on this scale.
//
// Words said in a lesson's order are stronger evidence than the same words
// scattered: a query that says PhraseRun or more of the claim's pairs of
// adjacent terms ("sidekiq queue", "keda scaler") has the share multiplied
// by PhraseBoost, still at most 1. Sessions describe work in their own
// words; where they also name a thing the way the lesson names it, they
// are about it more often than a session that shares the words one by one
// (measured with `borg eval asks`, BENCHMARKS.md).
//
// A query that meets a lesson's claim in one word at most has the share
// multiplied by OneWordShare: one shared word, however rare, says that the
// work names what the lesson names, not that it is about what the lesson
// says (a rota's name, a project's, a unit). Only words that weigh
// something count (distinctWeight of a word one lesson holds: a word at
// most a fifth of the lessons hold in a store of a hundred, one in
// twenty-five in a store of ten thousand);
// the words of ordinary prose and those of the body and tags alone do
// not, nor does the same word twice.
//
// A fact that says who owns a service (domain.Ownership) bears on work
// about who answers for it, not on every change to it: its relevance is 0
// for a query holding no word of such work and no word of the owner's name
// (touchesOwner).
//
// A lesson's usefulness moves its relevance within bounds (MeanWeight, in
// (0.5, 1.5)): Hit.Relevance is the text's share times that factor, so a
// proven lesson clears a floor on a somewhat weaker match and a harmful
// one needs a stronger one, and no weight can lift a lesson that matches
// nothing. Links and exploration never add relevance: a lesson is asked
// for what its own text shares with the work.
const (
	// DefaultFloor is the relevance a lesson needs before a hook may hand
	// it to an agent (asked at the Stop, delivered early); under it the
	// hook says nothing. Measured with `borg eval asks` (BENCHMARKS.md).
	DefaultFloor = 0.36
	// RelativeCut keeps a hook's slots for the lessons that match nearly
	// as well as the best one: a hit under this share of the best hit's
	// relevance is weak too. A session is usually about one thing; the
	// third-best lesson of a clear match is mostly noise.
	RelativeCut = 0.7
	// RelevancePrior is the prior mass of the relevance ratio, in words of
	// the rarest kind.
	RelevancePrior = 1.0
	// PhraseRun and PhraseBoost: a lesson whose claim and the query say at
	// least PhraseRun of the same pairs of words in the same order ("sidekiq
	// queue", "retry budget") has its share multiplied by PhraseBoost.
	PhraseRun   = 2
	PhraseBoost = 1.3
	// OneWordShare multiplies the share of a lesson whose claim the query
	// meets in one word that counts (distinctWeight) at most.
	OneWordShare = 0.5
)

// distinctWeight is the share of a rare word's weight (rareWeight) a
// claim's word must have to count as a word the query meets for
// OneWordShare.
const distinctWeight = 0.05

// termIDF is the lexical arm's IDF of t over v's live lessons (0 for a
// term no lesson holds).
func (v *view) termIDF(t string, cache map[string]float64) float64 {
	if w, ok := cache[t]; ok {
		return w
	}
	df := 0
	for i, c := range [2]*catalog{v.base, v.delta} {
		df += v.livePostings(i, c.postings(fieldAll, t))
	}
	w := 0.0
	if df > 0 {
		N := float64(v.len())
		w = math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
	}
	cache[t] = w
	return w
}

// restWeight is the share of its weight a term only a lesson's body or
// tags hold adds to the lesson's relevance when the query holds it.
const restWeight = 0.5

// relevanceQuery is one search's query as Relevance reads it: its distinct
// terms, and the weight and postings (in the whole text, per segment) of
// each that weighs enough to count, found once for all the candidates.
type relevanceQuery struct {
	terms map[string]bool
	// pairs holds each two terms the query says one after the other.
	pairs map[termPair]bool
	idf   map[string]float64
	rest  []restTerm
	// words analyses the candidates' claims (each distinct word stemmed
	// once for all of them), into claim.
	words *termCache
	claim []string
}

// termPair is two terms in the order a text says them, stop words left
// out between them.
type termPair struct{ a, b string }

type restTerm struct {
	term string
	w    float64
	post [2][]byte // in v.base, v.delta
}

// newRelevanceQuery reads terms (the analysed terms of a query's text)
// against v.
func (v *view) newRelevanceQuery(terms []string, text string) *relevanceQuery {
	rq := &relevanceQuery{terms: termSet(terms), pairs: make(map[termPair]bool, len(terms)), idf: map[string]float64{}, words: newTermCache()}
	// A query joins a prompt, a message and a diff line by line: two
	// words on two lines were not said one after the other.
	var seq []string
	for line := range strings.Lines(text) {
		seq = slices.DeleteFunc(rq.words.appendWords(seq[:0], line), func(t string) bool { return urlScaffold[t] })
		for i := 1; i < len(seq); i++ {
			rq.pairs[termPair{seq[i-1], seq[i]}] = true
		}
	}
	floor := 0.01 * v.rareWeight() // a term weighing less adds nothing a floor could see
	for t := range rq.terms {
		w := v.termWeight(t, rq.idf)
		if w < floor {
			continue
		}
		rq.rest = append(rq.rest, restTerm{t, w, [2][]byte{v.base.postings(fieldAll, t), v.delta.postings(fieldAll, t)}})
	}
	slices.SortFunc(rq.rest, func(a, b restTerm) int { return strings.Compare(a.term, b.term) })
	return rq
}

// termWeight is w(t) of Relevance: IDF cubed over the largest IDF squared,
// to stay in its units. A rare word of a lesson (a service, a tool, a
// flag) weighs far more than an ordinary one (test, service, fix), so
// sharing only ordinary words never covers much of a lesson.
func (v *view) termWeight(t string, cache map[string]float64) float64 {
	if urlScaffold[t] {
		return 0
	}
	maxIDF := math.Log(1 + float64(v.len()))
	w := v.termIDF(t, cache)
	return w * w * w / (maxIDF * maxIDF)
}

// urlScaffold are the terms every web address carries, whatever it names:
// they say nothing of what a lesson or a piece of work is about, so they
// weigh nothing in Relevance, and no phrase holds them. Few lessons name
// an address, so their IDF is high: a session that links any page shared
// "https" with every lesson that names one.
var urlScaffold = map[string]bool{"http": true, "https": true, "www": true}

// rareWeight is the weight of a word one lesson holds.
func (v *view) rareWeight() float64 {
	maxIDF := math.Log(1 + float64(v.len()))
	rare := math.Log(1 + (float64(v.len())-0.5)/1.5)
	return rare * rare * rare / (maxIDF * maxIDF)
}

// relevance is Relevance's text share for ordinal o against q.
func (v *view) relevance(o int, q *relevanceQuery) float64 {
	terms, phrases := q.claimTerms(v.str(o, slotTitle), v.str(o, slotGist))
	slices.Sort(terms)
	terms = slices.Compact(terms)
	q.claim = terms
	var own, shared float64
	rare := v.rareWeight()
	met := 0 // the claim's words the query holds that count (distinctWeight)
	for _, t := range terms {
		w := v.termWeight(t, q.idf)
		own += w
		if q.terms[t] {
			shared += w
			if w >= distinctWeight*rare {
				met++
			}
		}
	}
	seg, local := 0, o
	if b := v.base.len(); o >= b {
		seg, local = 1, o-b
	}
	for _, r := range q.rest {
		if _, inClaim := slices.BinarySearch(terms, r.term); !inClaim && holds(r.post[seg], local) {
			shared += restWeight * r.w
		}
	}
	if shared == 0 || !q.touchesOwner(v.str(o, slotGist), terms) {
		return 0
	}
	share := shared / (own + RelevancePrior*rare)
	if met < 2 {
		share *= OneWordShare
	}
	if phrases >= PhraseRun {
		share *= PhraseBoost
	}
	return min(1, share)
}

// claimTerms analyses a lesson's title and gist into q.claim, and counts
// the distinct pairs of terms that the title or the gist, each on its own,
// and the query both say one after the other, an identifier being one
// word: the words appendTerms adds after an identifier's own term (marked)
// are not a phrase of it, and a web address's scheme (urlScaffold) is no
// word of either.
func (q *relevanceQuery) claimTerms(title, gist string) (terms []string, phrases int) {
	c := q.words
	c.marking, c.marks = true, c.marks[:0]
	terms = c.appendTerms(q.claim[:0], title)
	split := len(terms)
	terms = c.appendTerms(terms, gist)
	c.marking = false
	var found []termPair
	for _, r := range [2][2]int{{0, split}, {split, len(terms)}} {
		prev := ""
		for i := r[0]; i < r[1]; i++ {
			if c.marks[i] || urlScaffold[terms[i]] {
				continue
			}
			p := termPair{prev, terms[i]}
			prev = terms[i]
			if p.a != "" && p.a != p.b && q.pairs[p] && !slices.Contains(found, p) {
				found = append(found, p)
			}
		}
	}
	return terms, len(found)
}

// ownershipWork are the words of work about who answers for a service: its
// owners, its reviewers, where its alerts and pages go, whom to call. A
// fact saying who owns a service bears on such work, or on work that names
// the owner; a change to the service itself does not need it.
const ownershipWork = "own owns owned owner owners ownership codeowners maintainer maintainers " +
	"review reviews reviewer reviewers alert alerts alerting alertmanager pager pagerduty " +
	"on-call oncall escalation escalate contact ping team squad"

// ownershipTerms is ownershipWork analysed as a query is.
var ownershipTerms = sync.OnceValue(func() []string { return analyze(ownershipWork) })

// touchesOwner reports whether the query may bear on a lesson with this
// gist (whose title and gist analyse to terms) as far as ownership goes:
// true unless the gist says who owns something (domain.Ownership) and the
// query holds neither a word of ownershipWork nor a word of the owner's
// name that the rest of the gist does not hold ("forecast is owned by the
// Forecasting team": "forecast" names the service, not its owner).
func (q *relevanceQuery) touchesOwner(gist string, terms []string) bool {
	if !slices.ContainsFunc(terms, func(t string) bool {
		return strings.HasPrefix(t, "own") || strings.HasPrefix(t, "maintain")
	}) {
		return true
	}
	owners, rest, ok := domain.Ownership(gist)
	if !ok {
		return true
	}
	for _, t := range ownershipTerms() {
		if q.terms[t] {
			return true
		}
	}
	other := termSet(analyze(strings.Join(rest, " ")))
	for _, t := range analyze(strings.Join(owners, " ")) {
		if q.terms[t] && !other[t] {
			return true
		}
	}
	return false
}

// tagHolds is domain.TagHolds for ordinal o, read from the tags field.
func (v *view) tagHolds(o int) func(word string) bool {
	c, local := v.base, o
	if b := v.base.len(); o >= b {
		c, local = v.delta, o-b
	}
	return tagWord(func(t string) bool { return holds(c.postings(fieldTags, t), local) })
}

// TagHolds is a lesson's tags read as the index reads them when it decides
// whether a supersedes link is earned (a tag holds a word when it holds
// all of the word's analysed terms: "order" holds "orders"), for a caller
// that reads links without the index (a listing); nil for no tags.
func TagHolds(tags []string) func(word string) bool {
	if len(tags) == 0 {
		return nil
	}
	terms := termSet(analyze(strings.Join(tags, " ")))
	return tagWord(func(t string) bool { return terms[t] })
}

// tagWord is a domain.TagHolds function over a lesson's tags field, which
// has reports term by term: a word is held when all its analysed terms are.
func tagWord(has func(term string) bool) func(word string) bool {
	return func(word string) bool {
		terms := analyze(word)
		return len(terms) > 0 && !slices.ContainsFunc(terms, func(t string) bool { return !has(t) })
	}
}

// holds reports whether postings post (in ordinal order) hold ordinal o.
func holds(post []byte, o int) bool {
	n := len(post) / postingSize
	i := sort.Search(n, func(i int) bool { return int(le32(post[i*postingSize:])) >= o })
	return i < n && int(le32(post[i*postingSize:])) == o
}

// termSet is the distinct terms of text.
func termSet(terms []string) map[string]bool {
	set := make(map[string]bool, len(terms))
	for _, t := range terms {
		set[t] = true
	}
	return set
}

// supersedeBySlot marks, among hits, each lesson whose gist states a fact
// a strictly newer hit rewrites (domain.Rewrites: the slot restated with
// another value, in the same words or in others): the newer one supersedes
// it for this query, as a declared or sleep-derived supersedes would, so
// the current value of a fact wins at once, before any sleep makes the
// link durable. Lessons of unknown created time are left alone.
func (ix *Index) supersedeBySlot(hits []Hit, latest int64, useful func(string) Usefulness) {
	at := make([]int, 0, len(hits)) // hit index of each claim
	claims := make([]domain.Claim, 0, len(hits))
	created := make([]int64, 0, len(hits))
	for i, h := range hits {
		o, ok := ix.cat.find(h.ID)
		if !ok {
			continue
		}
		c := ix.createdBy(o, latest)
		if c == 0 {
			continue
		}
		at, claims, created = append(at, i), append(claims, domain.ReadClaim(h.Gist).Holding(ix.cat.tagHolds(o))), append(created, c)
	}
	for _, p := range domain.SlotCandidates(claims) {
		n, old := p[0], p[1]
		if created[n] < created[old] {
			n, old = old, n
		}
		if created[n] == created[old] || repoTag(hits[at[n]].Reach) != repoTag(hits[at[old]].Reach) {
			continue // no order known, or two reaches: a repo's fact never supersedes the team's, nor the team's a repo's (sleep pairs so too)
		}
		if vetoed(useful, hits[at[n]].ID) {
			continue
		}
		if _, same := domain.Rewrites(claims[n], claims[old]); same && !slices.Contains(hits[at[old]].SupersededBy, hits[at[n]].ID) {
			hits[at[old]].SupersededBy = append(hits[at[old]].SupersededBy, hits[at[n]].ID)
		}
	}
	for i := range hits {
		slices.Sort(hits[i].SupersededBy)
	}
}

// successors are the lessons that supersede h, and the one that most likely
// updates it (UpdatedBy): the order puts each above h, and each gets h's
// match.
func (h *Hit) successors() []string {
	if h.UpdatedBy == "" {
		return h.SupersededBy
	}
	return append(slices.Clip(h.SupersededBy), h.UpdatedBy)
}

// vetoed reports whether a person vetoed lesson id (borg no), as useful
// (nil: nothing known) says: a fact someone said is wrong supersedes
// nothing, so the value it rewrites stays current (sleep's frame phase
// pairs so too).
func vetoed(useful func(string) Usefulness, id string) bool {
	return useful != nil && useful(id).Vetoed > 0
}

// createdBy is lesson o's creation time in Unix ms as the newer-fact rule
// believes it: 0 (unknown) for none, or for one past latest
// (domain.BelievedCreated), which would otherwise be the newest forever.
func (ix *Index) createdBy(o int, latest int64) int64 {
	if c := ix.cat.created(o); c <= latest {
		return c
	}
	return 0
}

// successorDepth is how many of the lexical arm's best matches for a hit's
// own gist supersedeFromStore reads for a newer lesson that rewrites it, and
// successorTerms how many of the gist's rarest terms it searches with: a
// rewrite shares the fact's subject, whose names and ids are its rarest
// words, and a search over common words would read long postings for
// nothing.
// A term more than successorMaxShare of the lessons hold (past the first
// successorMinDF) is not searched at all.
const (
	successorDepth    = 10
	successorTerms    = 6
	successorMaxShare = 0.01
	successorMinDF    = 20
)

// rarestTerms is up to n distinct terms of text, the rarest in v first,
// leaving out those more than successorMaxShare of the lessons hold.
func rarestTerms(v *view, text string, n int) []string {
	terms := analyze(text)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	idf := make(map[string]float64, len(terms))
	N := float64(v.len())
	df := max(successorMinDF, successorMaxShare*N)
	rare := math.Log(1 + (N-df+0.5)/(df+0.5))
	terms = slices.DeleteFunc(terms, func(t string) bool { return v.termIDF(t, idf) < rare })
	slices.SortStableFunc(terms, func(a, b string) int { return cmp.Compare(idf[b], idf[a]) })
	return terms[:min(n, len(terms))]
}

// supersedeFromStore gives the current value of a fact the relevance its
// old value has: a session written in a fact's old words asks for the slot
// its rewrite now fills, before any sleep links the two.
//
// For each hit that clears the floor (one a hook could hand out) and that
// nothing supersedes yet, it looks through the whole store for a newer
// lesson that rewrites its fact (domain.Rewrites), among the lexical arm's
// best matches for the hit's own gist; one found supersedes the hit, and,
// when the query may see it and it is not a hit already, joins the hits
// with the old fact's fused score. Then each successor among the hits of a
// hit that clears the floor gets at least that hit's match (capSuperseded
// later gives it the old fact's place in the order). Only the few hits over
// the floor are looked up, with one short search each.
func (ix *Index) supersedeFromStore(ctx context.Context, all []Hit, q Query, floor float64, useful func(string) Usefulness, latest int64) []Hit {
	if floor <= 0 {
		return all
	}
	top := 0.0
	at := make(map[string]int, len(all))
	for i, h := range all {
		at[h.ID] = i
		top = max(top, h.Relevance)
	}
	// A successor the query may not see (refused by the screen, another
	// repository's) supersedes nothing here; one it excludes (asked
	// already) still does, but does not join the hits.
	visible := ix.allowedOrd(Query{Repo: q.Repo})
	joins := ix.allowedOrd(q)
	for i, n := 0, len(all); i < n; i++ {
		h := all[i]
		if h.Relevance < floor || h.Relevance < RelativeCut*top {
			continue
		}
		if len(h.SupersededBy) == 0 {
			all = ix.successorsInStore(ctx, all, i, at, visible, joins, useful, latest)
		}
		for _, id := range all[i].successors() {
			if j, ok := at[id]; ok && all[j].Match < h.Match {
				all[j].Match = h.Match
				all[j].Relevance = min(h.Match*all[j].MeanWeight, 1)
			}
		}
	}
	return all
}

// Successors names the newer lessons of the store that rewrite lesson id's
// fact (domain.Rewrites), by the rule a search applies at query time: the
// lessons a hook asks in its place before any sleep links the two, or that
// a sleep has linked. Only lessons of its own reach count, as in a search.
// When none does, update is its likely update, as a search reads it
// (updateOf), or "". useful says which lessons a person vetoed, which
// rewrite and update nothing; nil reads none as vetoed.
func (ix *Index) Successors(ctx context.Context, id string, useful func(string) Usefulness) (succ []string, update string, err error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, "", errors.New("successors: index closed")
	}
	o, ok := ix.cat.find(id)
	if !ok {
		return nil, "", nil
	}
	if useful == nil {
		useful = func(string) Usefulness { return neutral }
	}
	all := []Hit{ix.hitAt(o, 0, 0, useful(id))}
	unscreened := func(s int) bool { return !ix.cat.flagged(s) } // a refused lesson supersedes nothing
	none := func(int) bool { return false }
	all = ix.successorsInStore(ctx, all, 0, map[string]int{id: 0}, unscreened, none, useful, (&Query{}).latestCreated())
	return all[0].SupersededBy, all[0].UpdatedBy, ctx.Err()
}

// successorsInStore marks the lessons of the store that rewrite hit i's
// fact as superseding it, and appends to all each of them visible to the
// query (joins) that is not a hit yet (at: each hit's index).
func (ix *Index) successorsInStore(ctx context.Context, all []Hit, i int, at map[string]int, visible, joins func(int) bool, useful func(string) Usefulness, latest int64) []Hit {
	cat := ix.cat
	h := all[i]
	o, ok := cat.find(h.ID)
	if !ok {
		return all
	}
	created, tag := ix.createdBy(o, latest), repoTag(cat.reach(o))
	if created == 0 {
		return all
	}
	found, err := cat.lexicalSearchTerms(ctx, rarestTerms(cat, h.Gist, successorTerms), successorDepth, func(s int) bool {
		return s != o && ix.createdBy(s, latest) > created && visible(s) && repoTag(cat.reach(s)) == tag
	})
	if err != nil {
		return all // a cancelled search: the hits as they were
	}
	claim := domain.ReadClaim(h.Gist).Holding(cat.tagHolds(o)) // its own tags, as supersedeBySlot reads both
	for _, f := range found {
		if _, same := domain.Rewrites(domain.ReadClaim(cat.str(f.ord, slotGist)).Holding(cat.tagHolds(f.ord)), claim); !same {
			continue
		}
		id := cat.id(f.ord)
		if vetoed(useful, id) {
			continue
		}
		if !slices.Contains(all[i].SupersededBy, id) {
			all[i].SupersededBy = append(all[i].SupersededBy, id)
			slices.Sort(all[i].SupersededBy)
		}
		if _, ok := at[id]; ok || !joins(f.ord) {
			continue
		}
		at[id] = len(all)
		all = append(all, ix.hitAt(f.ord, h.Fused, 0, useful(id))) // its match is lifted by the caller
	}
	if len(all[i].SupersededBy) > 0 || useful == nil {
		return all
	}
	u, ok := ix.updateOf(ctx, o, found, latest, useful)
	if !ok {
		return all
	}
	id := cat.id(u)
	all[i].UpdatedBy = id
	if _, ok := at[id]; !ok && joins(u) {
		at[id] = len(all)
		all = append(all, ix.hitAt(u, h.Fused, 0, useful(id)))
	}
	return all
}

// updateShare is how much of the lighter of two gists' IDF weight the
// other must share for updateOf to read the newer as the older's update:
// the subject's names and ids carry most of a fact's weight, and a rewrite
// keeps them while it changes the value.
const updateShare = 0.3

// updateOf is the newer lesson among found (the lexical arm's best newer
// matches for lesson o's gist) that most likely rewrites o though no rule
// reads the two as one slot (domain.Rewrites): it says something changed
// (domain.AnnouncesChange), shares at least updateShare of the lighter
// gist's IDF weight with o's, the most of those found, and o is, of the
// lessons older than it among its own best matches that it may update
// (domain.MayUpdate: a neighbour about another subject is no rival), the
// one it shares the most with, and none of them is a fact it supersedes or
// rewrites (an update is not lent to a neighbour of the fact it rewrites).
// A vetoed lesson updates nothing. It is a guess, never made durable: a hook asks
// the update in o's place, and sleep links nothing by it.
func (ix *Index) updateOf(ctx context.Context, o int, found []scoredOrd, latest int64, useful func(string) Usefulness) (int, bool) {
	cat := ix.cat
	idf := map[string]float64{}
	own, gist := ix.gistTerms(o, idf), cat.str(o, slotGist)
	best, bestShare := -1, updateShare
	for _, f := range found {
		newer := cat.str(f.ord, slotGist)
		if !domain.AnnouncesChange(newer) || !domain.MayUpdate(newer, gist) || vetoed(useful, cat.id(f.ord)) {
			continue
		}
		if sh := own.share(ix.gistTerms(f.ord, idf), idf); sh >= bestShare {
			best, bestShare = f.ord, sh
		}
	}
	if best < 0 {
		return 0, false
	}
	created, tag := ix.createdBy(best, latest), repoTag(cat.reach(best))
	// Every term of the update's gist, not only its rarest: those are
	// mostly its new value, which the fact it rewrites does not hold.
	terms := analyze(cat.str(best, slotGist))
	slices.Sort(terms)
	rivals, err := cat.lexicalSearchTerms(ctx, slices.Compact(terms), successorDepth, func(s int) bool {
		c := ix.createdBy(s, latest)
		return s != o && s != best && c > 0 && c < created && repoTag(cat.reach(s)) == tag
	})
	if err != nil {
		return 0, false
	}
	update := ix.gistTerms(best, idf)
	claim := domain.ReadClaim(cat.str(best, slotGist)).Holding(cat.tagHolds(best))
	newer := cat.str(best, slotGist)
	for _, r := range rivals {
		if slices.Contains(cat.supersededBy(r.ord), best) {
			return 0, false
		}
		rival := cat.str(r.ord, slotGist)
		if _, same := domain.Rewrites(claim, domain.ReadClaim(rival).Holding(cat.tagHolds(r.ord))); same {
			return 0, false // the fact it rewrites is another one's
		}
		// A rival it could not update (another subject) is no rival,
		// however many words they share.
		if domain.MayUpdate(newer, rival) && update.share(ix.gistTerms(r.ord, idf), idf) > bestShare {
			return 0, false
		}
	}
	return best, true
}

// gistWeights is a gist's distinct analysed terms and their summed IDF.
type gistWeights struct {
	terms  map[string]bool
	weight float64
}

// gistTerms reads lesson o's gist for updateOf, its terms' IDF cached in idf.
func (ix *Index) gistTerms(o int, idf map[string]float64) gistWeights {
	g := gistWeights{terms: termSet(analyze(ix.cat.str(o, slotGist)))}
	for t := range g.terms {
		g.weight += ix.cat.termIDF(t, idf)
	}
	return g
}

// share is the IDF weight g and h hold in common, as a share of the
// lighter one's.
func (g gistWeights) share(h gistWeights, idf map[string]float64) float64 {
	lighter := min(g.weight, h.weight)
	if lighter <= 0 {
		return 0
	}
	common := 0.0
	for t := range g.terms {
		if h.terms[t] {
			common += idf[t]
		}
	}
	return common / lighter
}
