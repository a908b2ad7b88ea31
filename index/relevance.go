package index

import (
	"math"
	"slices"

	"github.com/borg-memory/borg/domain"
)

// Relevance is how much of a lesson's own claim the query's text covers,
// on one scale for every store and every query: the weighted share of the
// distinct terms of the lesson's title and gist that the query holds,
//
//	relevance = Σ w(t), t in lesson ∩ query / (Σ w(t), t in lesson + prior)
//
// with w(t) = idf(t)³ / ln(1 + lessons)², idf the lexical arm's (the live
// lessons' whole text), and prior RelevancePrior × the weight of a word
// that only this lesson holds. The ratio does not grow with the query's length the way a BM25
// score does, and it does not shrink as the store grows; the prior keeps a
// lesson of two words from reaching 1/2 on one shared word. A rank-fused
// score (RRF) says only that a lesson came first, not how well it matched:
// a hook can tell "shares one common word" from "is about this work" only
// on this scale.
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
	DefaultFloor = 0.30
	// RelativeCut keeps a hook's slots for the lessons that match nearly
	// as well as the best one: a hit under this share of the best hit's
	// relevance is weak too. A session is usually about one thing; the
	// third-best lesson of a clear match is mostly noise.
	RelativeCut = 0.6
	// RelevancePrior is the prior mass of the relevance ratio, in words of
	// the rarest kind.
	RelevancePrior = 1.0
)

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

// relevance is Relevance's text share for ordinal o, against the query's
// distinct terms.
func (v *view) relevance(o int, query map[string]bool, cache map[string]float64) float64 {
	terms := analyze(v.str(o, slotTitle) + "\n" + v.str(o, slotGist))
	slices.Sort(terms)
	terms = slices.Compact(terms)
	var own, shared float64
	maxIDF := math.Log(1 + float64(v.len()))
	for _, t := range terms {
		// IDF cubed (over the largest IDF squared, to stay in its
		// units): a rare word of the lesson (a service, a tool, a flag)
		// weighs far more than an ordinary one (test, service, fix),
		// so sharing only ordinary words never covers much of a lesson.
		w := v.termIDF(t, cache)
		w = w * w * w / (maxIDF * maxIDF)
		own += w
		if query[t] {
			shared += w
		}
	}
	if shared == 0 {
		return 0
	}
	rare := math.Log(1 + (float64(v.len())-0.5)/1.5) // the IDF of a word one lesson holds
	prior := RelevancePrior * rare * rare * rare / (maxIDF * maxIDF)
	return shared / (own + prior)
}

// termSet is the distinct terms of text.
func termSet(terms []string) map[string]bool {
	set := make(map[string]bool, len(terms))
	for _, t := range terms {
		set[t] = true
	}
	return set
}

// supersedeBySlot marks, among hits, each lesson whose gist states a slot a
// strictly newer hit rewrites (domain.SameSlot): the newer one supersedes
// it for this query, as a declared or sleep-derived supersedes would, so
// the current value of a fact wins at once, before any sleep makes the
// link durable. Lessons of unknown created time are left alone.
func (ix *Index) supersedeBySlot(hits []Hit) {
	type claimed struct {
		i       int
		claim   domain.Claim
		created int64
	}
	blocks := map[string][]claimed{}
	for i, h := range hits {
		o, ok := ix.cat.find(h.ID)
		if !ok {
			continue
		}
		created := ix.cat.created(o)
		if created == 0 {
			continue
		}
		c := domain.ReadClaim(h.Gist)
		if b := c.Block(); b != "" {
			blocks[b] = append(blocks[b], claimed{i, c, created})
		}
	}
	for _, g := range blocks {
		for _, old := range g {
			for _, n := range g {
				if n.created <= old.created {
					continue
				}
				if _, same := domain.SameSlot(n.claim, old.claim); same && !slices.Contains(hits[old.i].SupersededBy, hits[n.i].ID) {
					hits[old.i].SupersededBy = append(hits[old.i].SupersededBy, hits[n.i].ID)
				}
			}
		}
	}
	for i := range hits {
		slices.Sort(hits[i].SupersededBy)
	}
}
