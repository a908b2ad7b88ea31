package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
)

// Retrieval constants (docs/design.md, "Choosing a lesson"), measured on the shared sets where a
// choice was open (BENCHMARKS.md).
const (
	// DefaultK is the number of hits Search returns when Query.K is 0.
	DefaultK = 10
	// MinArmDepth is the shortest list each arm contributes to fusion: a
	// lesson one arm ranks 80th can still win with another arm's vote.
	MinArmDepth = 100
	// DefaultBar is the usefulness bar: a lesson is over it when its
	// fused × MeanWeight is at least this fraction of the best candidate's.
	// Only lessons over the bar may take a hook's slots. Measured with
	// `borg eval learning` over seeds 1–8 (BENCHMARKS.md): at 0.8 or 0.5 the
	// bar let too few lessons be asked for the belief to learn from them
	// (borg lost to the success-count baseline); at 0.25 it beat every
	// baseline on all eight seeds. Retrieval figures do not depend on it
	// (MMRScope bounds diversification separately).
	DefaultBar = 0.25
	// MMRScope bounds diversification to the hits over the bar whose fused ×
	// MeanWeight is at least this fraction of the best one's: MMR spreads
	// the few strongest matches, and lower-ranked hits keep their order (on
	// the shared retrieval sets MMR over a wider span cost nDCG@10).
	MMRScope = 0.8
	// LateralSeeds is how many of the best fused hits seed the graph walk.
	LateralSeeds = 5
)

// ArmWeights weights each arm in the reciprocal-rank fusion. A weight of 0
// switches the arm off. The zero value means DefaultArmWeights.
type ArmWeights struct {
	Lexical  float64 `json:"lexical"`
	Vector   float64 `json:"vector"`
	Salience float64 `json:"salience"`
	Lateral  float64 `json:"lateral"`
}

// DefaultArmWeights are the fusion weights Search uses by default.
func DefaultArmWeights() ArmWeights {
	return ArmWeights{Lexical: 1, Vector: 0.1, Salience: 0, Lateral: 0.5}
}

// HookArmWeights are the arms a hook's recall fuses: the default ones but
// the vector arm. A hook hands out only lessons over the relevance floor,
// and relevance is the lexical match (Relevance): a lesson the vector arm
// alone finds never clears it, and the arm's order among the lessons that
// do changed no figure of the labelled ask sets (BENCHMARKS.md), while
// embedding the query and scanning every lesson's vector are a quarter of
// a Stop's time on a large store.
func HookArmWeights() ArmWeights {
	return ArmWeights{Lexical: 1, Vector: 0, Salience: 0, Lateral: 0.5}
}

func (a ArmWeights) isZero() bool { return a == ArmWeights{} }

// ArmNames lists the arms in fusion order, as ParseArms accepts them.
var ArmNames = []string{"lexical", "vector", "salience", "lateral"}

// NamedSalience is the salience arm's weight when an arm selection names it
// without one: off by default, it would otherwise stay off when named.
const NamedSalience = 0.5

// ParseArms reads an arm selection such as "lexical,vector" (the named arms
// at their default weight, salience at NamedSalience, the others off) or
// "lexical=1,vector=0.7" (explicit weights). "all" or "" is
// DefaultArmWeights.
func ParseArms(s string) (ArmWeights, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return DefaultArmWeights(), nil
	}
	def := DefaultArmWeights()
	var out ArmWeights
	for _, part := range strings.Split(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		var slot *float64
		var d float64
		switch name {
		case "lexical":
			slot, d = &out.Lexical, def.Lexical
		case "vector":
			slot, d = &out.Vector, def.Vector
		case "salience":
			slot, d = &out.Salience, NamedSalience
		case "lateral":
			slot, d = &out.Lateral, def.Lateral
		default:
			return ArmWeights{}, fmt.Errorf("parse arms: unknown arm %q (want %s)", name, strings.Join(ArmNames, ", "))
		}
		if hasVal {
			w, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
				return ArmWeights{}, fmt.Errorf("parse arms: bad weight %q for %s", val, name)
			}
			d = w
		}
		*slot = d
	}
	if out.isZero() {
		return ArmWeights{}, errors.New("parse arms: every arm is off")
	}
	return out, nil
}

// DefaultArmsText says what the default arm selection is, for a flag's help.
func DefaultArmsText() string {
	return DefaultArmWeights().String() + "; salience off unless named"
}

// String renders the weights as ParseArms reads them.
func (a ArmWeights) String() string {
	var parts []string
	for i, w := range []float64{a.Lexical, a.Vector, a.Salience, a.Lateral} {
		if w > 0 {
			parts = append(parts, ArmNames[i]+"="+strconv.FormatFloat(w, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// Usefulness is what retrieval needs of one lesson's derived memory
// (docs/usefulness.md). The caller fills it from domain (UsefulnessOf); index
// does not care how it was derived. A lesson absent from Query.Useful is
// neutral: no uses, no results, the prior's mean, not dormant.
type Usefulness struct {
	Uses    int     `json:"uses"`    // created + changed
	Results int     `json:"results"` // session results: changed, ignored, corrected, vetoed
	Asked   int     `json:"asked"`   // sessions that asked it
	Vetoed  int     `json:"vetoed"`  // sessions in which a person vetoed it (borg no)
	Mean    float64 `json:"mean"`    // belief mean in [0,1]
	Draw    float64 `json:"draw"`    // the session's Thompson draw from the belief (the mean without one)
	Dormant bool    `json:"dormant"`
}

var neutral = Usefulness{Mean: 0.5, Draw: 0.5}

// NeutralUsefulness is a lesson's usefulness without any evidence: what
// Search assumes for a lesson Query.Useful and UsefulFunc say nothing of.
func NeutralUsefulness() Usefulness { return neutral }

// UsefulnessOf is what retrieval reads of a lesson's derived memory.
func UsefulnessOf(m domain.Memory) Usefulness {
	return Usefulness{Uses: m.Uses, Results: m.Changed + m.Ignored + m.Corrected + m.Vetoed, Asked: m.Asked,
		Vetoed: m.Vetoed, Mean: m.Mean, Draw: m.Draw, Dormant: m.Dormant}
}

// EvidenceHalf is how many session results earn a lesson half the ranking
// weight its belief asks for (usefulness moves a lesson by as much as its
// evidence is worth: docs/design.md, "Choosing a lesson"). Measured with `borg eval retrieval
// --product --replay` and `borg eval learning` (BENCHMARKS.md).
const EvidenceHalf = 2.0

// trust is the share of its belief's say a lesson's evidence earns:
// r/(r + EvidenceHalf) for r session results, 0 without any.
func (u Usefulness) trust() float64 {
	r := float64(max(u.Results, 0))
	return r / (r + EvidenceHalf)
}

// ranking returns the factors ranking multiplies a lesson's fused score by:
// 1 + (x − ½) × trust, with x the session's draw (weight) or the belief's
// mean (meanWeight). The seed's temper bounds them to (0.5, 1.5); a lesson
// without results gets exactly 1 and ranks as its text matches, and a proven
// or a harmful one moves as far as its results are worth. Activation (how
// recently a lesson was used) does not rank: a fact relevant to rare work
// is not worse for being rarely needed; it decides dormancy, consolidation
// and early delivery.
func (u Usefulness) ranking() (weight, meanWeight float64) {
	t := u.trust()
	return 1 + (clamp01(u.Draw)-0.5)*t, u.Factor()
}

// Factor is the ranking factor of a lesson when no session draws from its
// belief (a listing, a hook's floor): 1 + (mean − ½) × trust, the
// meanWeight of ranking, and Hit.MeanWeight.
func (u Usefulness) Factor() float64 { return 1 + (clamp01(u.Mean)-0.5)*u.trust() }

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// Query is one retrieval request.
type Query struct {
	Text    string `json:"text"`
	K       int    `json:"k"`       // hits wanted (default DefaultK)
	Repo    string `json:"repo"`    // repo tag of the caller's working directory
	Session string `json:"session"` // for the record; the draw is in Useful[…].Weight
	// Arms weights the arms; the zero value means DefaultArmWeights.
	Arms ArmWeights `json:"arms"`
	// Useful holds each lesson's usefulness; absent lessons are neutral.
	Useful map[string]Usefulness `json:"-"`
	// UsefulFunc, when set, gives the usefulness of lessons absent from
	// Useful, one result per lesson, in order; each comes with its reach,
	// as the index holds it. Search asks it only about its candidates, each
	// once and in a few batches, so a caller can derive memory for those
	// alone instead of every lesson. It is called from one goroutine at a
	// time, not always the caller's, while the search holds the index: it
	// must not call the index back.
	UsefulFunc func(lessons []domain.LessonInfo) []Usefulness `json:"-"`
	// Bar is the relative usefulness bar as a fraction of the best
	// candidate's fused × MeanWeight (0: DefaultBar; negative: no bar, every
	// candidate is over it).
	Bar float64 `json:"bar"`
	// OnlyOverBar drops the hits under the bar or under the relevance
	// floor (a hook's limited slots); otherwise they follow the hits over
	// it, those under the floor marked Weak. A search for such hits that
	// finds no lexical candidate able to clear the floor stops there: no
	// usefulness asked, no hit.
	OnlyOverBar bool `json:"only_over_bar"`
	// Floor is the relevance a hit needs (Relevance; 0: DefaultFloor;
	// negative: no floor).
	Floor float64 `json:"floor"`
	// Explore gives the last of K ≥ 2 slots to the best lesson over the bar
	// that no session has asked yet, when none of the K is one (see
	// exploreSlot): for the Stop hook's asks, not for a listing.
	Explore bool `json:"explore"`
	// Exclude lists lessons that are no candidates at all (those a session
	// was already asked, say), so they take no rank and no slot.
	Exclude []string `json:"exclude,omitempty"`
	// Links are the lesson → lesson links the team's sessions made (the
	// mnestoma's passings, docs/design.md, "Links"), each at its weight now: the
	// lateral arm walks them beside the links lessons write, as strong as
	// they earned. Edges between anything but two lessons are ignored.
	Links []domain.GraphEdge `json:"-"`
	// LinksFunc, when set and Links is nil, gives Links: called once, by
	// the lateral arm, so that a search that ends before it (no candidate
	// clears the floor) need not have them.
	LinksFunc func() []domain.GraphEdge `json:"-"`
	// MMRLambda is MMR's relevance share (0: domain.MMRLambda; ≥ 1: no
	// diversification).
	MMRLambda float64 `json:"mmr_lambda"`
	// Explain fills Hit.Ranks; without it they are left zero.
	Explain bool `json:"explain"`
	// Matched keeps only lessons that share a word with the query (the
	// lexical arm's) or that the lateral arm reached from them: a listing's
	// hits, where one the vector arm alone finds near a query it shares no
	// word with would make every query match.
	Matched bool `json:"matched,omitempty"`
	// Now is the instant the newer-fact rule reads creation dates as of
	// (domain.BelievedCreated: one dated more than a day past it is
	// undated); zero is the clock's.
	Now time.Time `json:"-"`
	// Trace, when set, is called as each step of the search ends, with its
	// name: "lexical arm and its usefulness" (from the goroutine that runs
	// it, beside the vector arm), "vector arm", "arms joined", "fused"
	// (salience, fusion, lateral arm) and "hits" (bar, MMR, hits); or,
	// after the arms, "nothing clears the floor" (OnlyOverBar).
	Trace func(step string) `json:"-"`
	// Warn, when set, is told what the search left out and why, for a
	// person to read: an embedder that failed leaves the vector arm silent.
	Warn func(msg string) `json:"-"`
}

// ArmRanks is a hit's 1-based rank in each arm's list (0: absent from it).
type ArmRanks struct {
	Lexical  int `json:"lexical,omitempty"`
	Vector   int `json:"vector,omitempty"`
	Salience int `json:"salience,omitempty"`
	Lateral  int `json:"lateral,omitempty"`
}

// Hit is one recalled lesson.
type Hit struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Gist  string `json:"gist"`
	Type  string `json:"type,omitempty"`
	Reach string `json:"reach,omitempty"`
	// Fused is the weighted RRF score over the arms.
	Fused float64 `json:"fused"`
	// Score is the final score: Fused × Weight over the bar, Fused ×
	// MeanWeight under it.
	Score      float64 `json:"score"`
	Weight     float64 `json:"weight"`
	MeanWeight float64 `json:"mean_weight"`
	OverBar    bool    `json:"over_bar"`
	// Match is the share of the lesson's own claim the query covers (see
	// Relevance), and Relevance that share times MeanWeight: the scale the
	// floor is on. Weak marks a hit under the floor.
	Match     float64  `json:"match"`
	Relevance float64  `json:"relevance"`
	Weak      bool     `json:"weak,omitempty"`
	Dormant   bool     `json:"dormant,omitempty"`
	Ranks     ArmRanks `json:"ranks"`
	// SupersededBy names the lessons that supersede this one.
	SupersededBy []string `json:"superseded_by,omitempty"`
	// UpdatedBy names a newer lesson that most likely rewrites this one
	// though no rule reads the two as one slot (updateOf): it is ordered
	// above this one, and a hook hands it out in this one's place. Unlike
	// SupersededBy it is a guess, never made durable.
	UpdatedBy string `json:"updated_by,omitempty"`
}

// Search runs q through the pipeline: the arms (lexical BM25, vector cosine,
// salience over the candidates, lateral PageRank from the top hits) → weighted
// RRF (k = domain.RRFK) → the usefulness bar and the session's order → MMR →
// superseded lessons moved below their successors. Reach is enforced in every
// arm: a lesson of reach repo:T is a candidate only when q.Repo is T. A
// dormant lesson stays a candidate (Hit.Dormant says it is one); a
// supersedes link moves a lesson only when it is earned
// (domain.EarnedSupersedes).
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, errors.New("search: index closed")
	}
	if q.K <= 0 {
		q.K = DefaultK
	}
	// No search gives more hits than the store has lessons, and the arms
	// size their buffers by K: a K of 10^15 is the store's size.
	q.K = min(q.K, max(ix.cat.len(), 1))
	arms := q.Arms
	if arms.isZero() {
		arms = DefaultArmWeights()
	}
	uc := &usefulCache{q: &q, cat: ix.cat, asked: map[string]Usefulness{}}
	terms := analyze(q.Text)
	lexHits, vecHits, match, abstain, err := ix.runArms(ctx, q, terms, arms, uc)
	if err != nil {
		return nil, err
	}
	if abstain {
		// Nothing can clear the floor, and a query for what clears it
		// alone gets no hit (noneCanClear): a hook's usual answer.
		q.trace("nothing clears the floor")
		return nil, nil
	}
	cands := make([]string, 0, len(vecHits))
	for _, h := range vecHits {
		cands = append(cands, h.id)
	}
	uc.prefetch(cands)
	q.trace("arms joined")
	// A dormant lesson (unused for ~54 sessions of its reach) stays a
	// candidate: its results already weigh on its ranking, and a fact
	// relevant to rare work is not worse for being rarely needed. Hit.Dormant
	// reports it; early delivery and the placebo pool leave it out.

	lexArm, vecArm := armOf(lexHits), armOf(vecHits)
	var salArm []domain.ArmHit
	if arms.Salience > 0 {
		salArm = salienceArm(lexHits, vecHits, uc.get)
	}
	fused := domain.FuseArms([][]domain.ArmHit{lexArm, vecArm, salArm},
		[]float64{arms.Lexical, arms.Vector, arms.Salience}, domain.RRFK)
	var latOrder []string
	if arms.Lateral > 0 {
		var strength map[string]float64
		links := q.Links
		if links == nil && q.LinksFunc != nil {
			links = q.LinksFunc()
		}
		latOrder, strength = ix.lateralOrder(fused, links, ix.allowed(q))
		uc.prefetch(latOrder)
		fused = keepBestFirst(fused, domain.FuseLateral(fused, latOrder, strength, arms.Lateral, domain.RRFK))
	}
	ranked := domain.RankFused(fused)
	if q.Matched {
		// Before the cut to K: the lessons past it that match take the
		// places of those that do not.
		reached := make(map[string]bool, len(lexArm)+len(latOrder))
		for _, h := range lexArm {
			reached[h.Path] = true
		}
		for _, id := range latOrder {
			reached[id] = true
		}
		ranked = slices.DeleteFunc(ranked, func(s domain.Scored) bool { return !reached[s.Path] })
	}
	q.trace("fused")
	hits := ix.applyUsefulness(ctx, ranked, q, uc.get, match)
	q.trace("hits")
	if q.Explain {
		explainRanks(hits, lexArm, vecArm, salArm, latOrder)
	}
	return hits, nil
}

// latestCreated is the latest creation time, in Unix ms, the newer-fact
// rule believes as of q.Now (domain.BelievedCreated).
func (q *Query) latestCreated() int64 {
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	return now.Add(domain.FutureSlack).UnixMilli()
}

func (q *Query) trace(step string) {
	if q.Trace != nil {
		q.Trace(step)
	}
}

// usefulCache asks Query.UsefulFunc about the candidates a search meets,
// in batches, once each.
type usefulCache struct {
	q     *Query
	cat   *view
	asked map[string]Usefulness
}

// prefetch asks UsefulFunc, in one batch, about the ids not known yet,
// each found in the catalog for its reach (one the catalog does not hold
// stays neutral).
func (uc *usefulCache) prefetch(ids []string) {
	uc.ask(len(ids), func(i int) string { return ids[i] }, func(i int) (int, bool) { return uc.cat.find(ids[i]) })
}

// prefetchOrds is prefetch of lessons the search holds by ordinal, which
// it need not find again.
func (uc *usefulCache) prefetchOrds(ords []int) {
	uc.ask(len(ords), func(i int) string { return uc.cat.id(ords[i]) }, func(i int) (int, bool) { return ords[i], true })
}

// ask asks UsefulFunc about those of n lessons (lesson i's id, and its
// ordinal when the catalog holds it) that it was not asked about yet.
func (uc *usefulCache) ask(n int, id func(i int) string, ord func(i int) (int, bool)) {
	if uc.q.UsefulFunc == nil {
		return
	}
	var todo []domain.LessonInfo
	for i := range n {
		l := id(i)
		if _, known := uc.q.Useful[l]; known {
			continue
		}
		if _, asked := uc.asked[l]; asked {
			continue
		}
		l = strings.Clone(l) // it may alias the catalog's mapping
		uc.asked[l] = neutral
		if o, ok := ord(i); ok {
			todo = append(todo, domain.LessonInfo{ID: l, Reach: strings.Clone(uc.cat.reach(o))})
		}
	}
	if len(todo) == 0 {
		return
	}
	got := uc.q.UsefulFunc(todo)
	for i, l := range todo {
		if i < len(got) {
			uc.asked[l.ID] = got[i]
		}
	}
}

// get is one lesson's usefulness (neutral when nobody knows it).
func (uc *usefulCache) get(id string) Usefulness {
	if u, ok := uc.q.Useful[id]; ok {
		return u
	}
	if uc.q.UsefulFunc == nil {
		return neutral
	}
	if u, ok := uc.asked[id]; ok {
		return u
	}
	uc.prefetch([]string{id})
	return uc.asked[id]
}

// allowedOrd says whether a lesson may be a candidate for q: not refused
// by the screen, of a reach q may see, not excluded.
func (ix *Index) allowedOrd(q Query) func(o int) bool {
	cat := ix.cat
	var excluded map[string]bool
	if len(q.Exclude) > 0 {
		excluded = make(map[string]bool, len(q.Exclude))
		for _, id := range q.Exclude {
			excluded[id] = true
		}
	}
	return func(o int) bool {
		if cat.flagged(o) {
			return false // never quoted: the screen's verdict (Options.Screen)
		}
		if tag := repoTag(cat.reach(o)); tag != "" && tag != q.Repo {
			return false
		}
		return excluded == nil || !cat.idIn(o, excluded)
	}
}

// allowed is allowedOrd by id.
func (ix *Index) allowed(q Query) func(id string) bool {
	ord := ix.allowedOrd(q)
	return func(id string) bool {
		o, ok := ix.cat.find(id)
		return ok && ord(o)
	}
}

// runArms runs the lexical arm (and asks the usefulness of its
// candidates) beside the vector arm: UsefulFunc is called from one
// goroutine at a time.
//
// match is each lexical candidate's text share (view.relevance). abstain
// says that q asks for hits that clear the floor alone and that no
// candidate's share could (noneCanClear): the lexical arm then asks nothing
// about usefulness, and the search has no hit to give.
func (ix *Index) runArms(ctx context.Context, q Query, terms []string, arms ArmWeights, uc *usefulCache) (lexHits, vecHits []scored, match map[string]float64, abstain bool, err error) {
	cat := ix.cat
	depth := max(q.K, MinArmDepth)
	var lexErr error
	var wg sync.WaitGroup
	match = map[string]float64{}
	if arms.Lexical > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found, err := cat.lexicalSearchTerms(ctx, terms, depth, ix.allowedOrd(q))
			if err != nil {
				lexErr = err
				return
			}
			hits := make([]scored, len(found))
			ords := make([]int, len(found))
			rq := cat.newRelevanceQuery(terms, q.Text)
			best := 0.0
			for i, f := range found {
				hits[i] = scored{id: cat.id(f.ord), score: f.score}
				ords[i] = f.ord
				m := cat.relevance(f.ord, rq)
				match[hits[i].id] = m
				best = max(best, m)
			}
			if q.noneCanClear(best) {
				abstain = true
				return
			}
			lexHits = hits
			uc.prefetchOrds(ords)
			q.trace("lexical arm and its usefulness")
		}()
	}
	if arms.Vector > 0 {
		ix.ensureVectors()
	}
	if arms.Vector > 0 && ix.vec.len() > 0 {
		// An embedder that fails (an endpoint down) leaves the vector arm
		// silent for this query rather than failing the search.
		qv, err := ix.emb.Embed([]string{q.Text})
		if err == nil && (len(qv) != 1 || len(qv[0]) != ix.vec.dim) {
			err = fmt.Errorf("it returned %d vector(s), want one of dimension %d", len(qv), ix.vec.dim)
		}
		if err == nil {
			allowed := ix.allowed(q)
			vecHits = ix.vec.search(normalized(qv[0]), depth, func(id string) bool {
				return allowed(id) && ix.vectorIsCurrent(id)
			})
		} else if q.Warn != nil {
			q.Warn(fmt.Sprintf("the embedder (%s) failed, so meaning played no part in this search: %v", ix.emb.ID(), err))
		}
		q.trace("vector arm")
	}
	wg.Wait()
	if lexErr != nil {
		return nil, nil, nil, false, fmt.Errorf("search: %w", lexErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, false, fmt.Errorf("search: %w", err)
	}
	return lexHits, vecHits, match, abstain, nil
}

// floor is the relevance a hit of q needs (Query.Floor); 0 or less: none.
func (q *Query) floor() float64 {
	if q.Floor == 0 {
		return DefaultFloor
	}
	return q.Floor
}

// EffectiveFloor is the relevance a hit of q needs not to be weak: Floor,
// DefaultFloor when Floor is 0, and 0 when q has no floor.
func (q Query) EffectiveFloor() float64 { return max(q.floor(), 0) }

// noneCanClear reports that q wants hits over the floor alone and that a
// best text share of best leaves every candidate under it. A hit's
// relevance is its share times its usefulness factor (hitAt), which is
// under 1.5 (Usefulness.Factor); a successor found in the store takes the
// relevance of a hit that cleared the floor (supersedeFromStore); and a
// candidate of the other arms alone has no share. So no candidate of such
// a search clears the floor, and every one would be dropped as weak.
func (q *Query) noneCanClear(best float64) bool {
	f := q.floor()
	return q.OnlyOverBar && f > 0 && best*maxFactor < f
}

// maxFactor bounds Usefulness.Factor: 1 + (mean − ½) × trust, with the
// mean in [0, 1] and the trust under 1.
const maxFactor = 1.5

// explainRanks records each hit's rank in each arm (Query.Explain).
func explainRanks(hits []Hit, lexArm, vecArm, salArm []domain.ArmHit, latOrder []string) {
	rank := func(arm []domain.ArmHit) map[string]int {
		m := make(map[string]int, len(arm))
		for _, h := range arm {
			m[h.Path] = h.Rank
		}
		return m
	}
	lr, vr, sr := rank(lexArm), rank(vecArm), rank(salArm)
	ar := make(map[string]int, len(latOrder))
	for i, id := range latOrder {
		ar[id] = i + 1
	}
	for i := range hits {
		id := hits[i].ID
		hits[i].Ranks = ArmRanks{Lexical: lr[id], Vector: vr[id], Salience: sr[id], Lateral: ar[id]}
	}
}

// keepBestFirst returns after (the fusion with the lateral arm) with every
// lesson kept below the best lesson of before (the text arms' fusion): the
// lateral arm may lift a linked lesson up to second place, never over the
// best text hit.
func keepBestFirst(before, after map[string]float64) map[string]float64 {
	best, top := "", 0.0
	for id, sc := range before {
		if sc > top || sc == top && (best == "" || id < best) {
			best, top = id, sc
		}
	}
	if best == "" {
		return after
	}
	ceiling := after[best]
	for id, sc := range after {
		if id != best && sc >= ceiling {
			after[id] = math.Nextafter(ceiling, 0)
		}
	}
	return after
}

// applyUsefulness turns the fused ranking into hits: the relative bar on
// fused × MeanWeight and the relevance floor split them, the session's
// Weight orders those over both, MMR diversifies them, the rest follow by
// fused × MeanWeight, and a superseded lesson (declared, derived, or
// rewritten in its slot by a newer hit) is moved below its successor.
// match is each lexical candidate's text share (Relevance).
func (ix *Index) applyUsefulness(ctx context.Context, ranked []domain.Scored, q Query, useful func(string) Usefulness, match map[string]float64) []Hit {
	all := make([]Hit, 0, len(ranked))
	best := 0.0
	cat := ix.cat
	untried := map[string]bool{}
	for _, r := range ranked {
		o, ok := cat.find(r.Path)
		if !ok {
			continue
		}
		u := useful(r.Path)
		if u.Results == 0 && u.Asked == 0 {
			untried[r.Path] = true
		}
		h := ix.hitAt(o, r.Score, match[r.Path], u)
		h.SupersededBy = slices.DeleteFunc(h.SupersededBy, func(id string) bool { return vetoed(useful, id) })
		best = max(best, r.Score*h.MeanWeight)
		all = append(all, h)
	}
	bar, floor := q.Bar, q.floor()
	if bar == 0 {
		bar = DefaultBar
	}
	latest := q.latestCreated()
	ix.supersedeBySlot(all, latest, useful)
	all = ix.supersedeFromStore(ctx, all, q, floor, useful, latest)
	top := 0.0
	for _, h := range all {
		if len(h.SupersededBy) == 0 {
			top = max(top, h.Relevance)
		}
	}
	var over, under []Hit
	for _, h := range all {
		h.Weak = floor > 0 && (h.Relevance < floor || h.Relevance < RelativeCut*top)
		if h.Weak && q.OnlyOverBar {
			continue // a hook's slots hold only what clears the floor
		}
		if bar < 0 || h.Fused*h.MeanWeight >= bar*best {
			h.OverBar, h.Score = true, h.Fused*h.Weight
			over = append(over, h)
		} else {
			h.Score = h.Fused * h.MeanWeight
			under = append(under, h)
		}
	}
	capSuperseded(over, under)
	byScore := func(hs []Hit) {
		sort.SliceStable(hs, func(i, j int) bool {
			if hs[i].Score != hs[j].Score {
				return hs[i].Score > hs[j].Score
			}
			return hs[i].ID < hs[j].ID
		})
	}
	byScore(over)
	byScore(under)
	// MMR reorders the strongest part of the hits over the bar.
	head := 0
	for head < len(over) && over[head].Fused*over[head].MeanWeight >= MMRScope*best {
		head++
	}
	if bar >= 0 && bar > MMRScope {
		head = len(over)
	}
	over = append(ix.diversify(over[:head:head], q), over[head:]...)
	out := over
	if !q.OnlyOverBar {
		out = append(out, under...)
	}
	out = demoteSuperseded(out)
	if q.Explore {
		out = exploreSlot(out, q.K, untried)
	}
	if len(out) > q.K {
		out = out[:q.K]
	}
	return out
}

// hitAt is the hit of ordinal o at fused score fused, text share match and
// usefulness u. Hits outlive the index: the view's strings are copies, not
// views of the catalog's mapping.
func (ix *Index) hitAt(o int, fused, match float64, u Usefulness) Hit {
	cat := ix.cat
	weight, meanWeight := u.ranking()
	h := Hit{ID: cat.id(o), Title: cat.str(o, slotTitle), Gist: cat.str(o, slotGist),
		Type: cat.str(o, slotType), Reach: cat.reach(o),
		Fused: fused, Weight: weight, MeanWeight: meanWeight, Dormant: u.Dormant,
		Match: match, Relevance: min(match*meanWeight, 1)}
	for _, s := range cat.supersededBy(o) {
		if !cat.flagged(s) { // a lesson the screen refuses supersedes nothing: no agent is handed it instead
			h.SupersededBy = append(h.SupersededBy, cat.id(s))
		}
	}
	return h
}

// exploreSlot gives the last of k slots to the best untried lesson over the
// bar (one no session has asked or judged yet) when none of the first k is
// untried: a new lesson that matches the work is asked now and then, however
// many proven lessons outrank it, so that its usefulness can be learned at
// all. Only a hook's limited slots explore (Query.Explore, at least two of
// them, so the best hit keeps its place); a superseded lesson is never
// explored. (Exploring only lessons that match as well as the k-th best
// text hit saved a few asks of the initial corpus but left a new lesson on a
// large team unasked for 161 sessions: BENCHMARKS.md.)
func exploreSlot(hits []Hit, k int, untried map[string]bool) []Hit {
	if k < 2 || len(hits) <= k {
		return hits
	}
	for _, h := range hits[:k] {
		if untried[h.ID] {
			return hits
		}
	}
	for i := k; i < len(hits); i++ {
		if untried[hits[i].ID] && hits[i].OverBar && len(hits[i].SupersededBy) == 0 && hits[i].UpdatedBy == "" {
			h := hits[i]
			copy(hits[k:i+1], hits[k-1:i])
			hits[k-1] = h
			return hits
		}
	}
	return hits
}

// diversify reorders the hits over the bar by MMR over their vectors, with
// relevance the score scaled to the best one's, so λ weighs comparable
// quantities (cosines are in [0,1] for these vectors).
func (ix *Index) diversify(hits []Hit, q Query) []Hit {
	lambda := q.MMRLambda
	if lambda == 0 {
		lambda = domain.MMRLambda
	}
	if lambda >= 1 || len(hits) < 3 {
		return hits
	}
	hi, lo := hits[0].Score, hits[len(hits)-1].Score
	if !(hi > lo) {
		return hits
	}
	ix.ensureVectors()
	cands := make([]domain.MMRCandidate, len(hits))
	byID := make(map[string]Hit, len(hits))
	for i, h := range hits {
		rel := (h.Score - lo) / (hi - lo)
		cands[i] = domain.MMRCandidate{Path: h.ID, Score: rel, Vector: ix.vectorOf(h.ID)}
		byID[h.ID] = h
	}
	picked := domain.ApplyMMR(cands, len(cands), lambda)
	out := make([]Hit, len(picked))
	for i, c := range picked {
		out[i] = byID[c.Path]
	}
	return out
}

// vectorOf is id's vector when it is of the lesson's content as the
// catalog holds it, or nil: a sync that deferred the vectors
// (Options.DeferVectors) leaves a rewritten lesson its old one until a
// command catches up (a catch-up that could not be saved, for longer).
func (ix *Index) vectorOf(id string) []float32 {
	if !ix.vectorIsCurrent(id) {
		return nil
	}
	return ix.vec.vector(id)
}

// vectorIsCurrent reports whether id has a vector of its content as the
// catalog holds it.
func (ix *Index) vectorIsCurrent(id string) bool {
	h, ok := ix.vec.hash(id)
	g, live := ix.cat.find(id)
	return ok && live && ix.cat.hashIs(g, h)
}

// capSuperseded gives each successor present among the hits the place of
// the lessons it supersedes when they score higher (a query that matches an
// old fact asks for the slot its rewrite now fills), and lowers each
// superseded hit to just under its successor. It runs before MMR reads the
// scores: otherwise MMR picks the old fact first and sets its rewrite aside
// as too similar to it.
func capSuperseded(lists ...[]Hit) {
	score := map[string]float64{}
	for _, hs := range lists {
		for _, h := range hs {
			score[h.ID] = h.Score
		}
	}
	// Successors first, so a chain a ← b ← c lifts c to a's score.
	for changed, rounds := true, 0; changed && rounds < 8; rounds++ {
		changed = false
		for _, hs := range lists {
			for _, h := range hs {
				for _, succ := range h.successors() {
					if sc, ok := score[succ]; ok && score[h.ID] > sc {
						score[succ], changed = score[h.ID], true
					}
				}
			}
		}
	}
	for _, hs := range lists {
		for i := range hs {
			hs[i].Score = score[hs[i].ID]
			for _, succ := range hs[i].successors() {
				if sc, ok := score[succ]; ok && hs[i].Score >= sc {
					hs[i].Score = math.Nextafter(sc, math.Inf(-1))
				}
			}
		}
	}
}

// demoteSuperseded moves each superseded hit to just below the last of its
// successors present in hits (a lesson that supersedes it). A successor
// absent from hits leaves it where it is.
func demoteSuperseded(hits []Hit) []Hit {
	for moved := 0; moved < len(hits); moved++ {
		pos := make(map[string]int, len(hits))
		for i, h := range hits {
			pos[h.ID] = i
		}
		changed := false
		for i, h := range hits {
			last := -1
			for _, s := range h.successors() {
				if p, ok := pos[s]; ok && p > i && p > last {
					last = p
				}
			}
			if last < 0 {
				continue
			}
			out := make([]Hit, 0, len(hits))
			out = append(out, hits[:i]...)
			out = append(out, hits[i+1:last+1]...)
			out = append(out, h)
			out = append(out, hits[last+1:]...)
			hits, changed = out, true
			break
		}
		if !changed {
			break
		}
	}
	return hits
}

// salienceArm ranks the candidates the text arms found by use: ln(1 + uses)
// × belief mean. It only reorders lessons it can tell apart: lessons with
// the same standing (on a young store, every lesson used once, at creation,
// with the prior's mean) share one rank, so they enter the fusion with equal
// votes and keep the order the text arms gave them; and when every
// candidate has the same standing the arm is silent.
func salienceArm(lex, vec []scored, useful func(string) Usefulness) []domain.ArmHit {
	seen := map[string]bool{}
	var cands []scored
	for _, list := range [][]scored{lex, vec} {
		for _, s := range list {
			if seen[s.id] {
				continue
			}
			seen[s.id] = true
			if u := useful(s.id); u.Uses > 0 {
				cands = append(cands, scored{id: s.id, score: math.Log1p(float64(u.Uses)) * u.Mean})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].id < cands[j].id
	})
	// Lessons without a use stand below every ranked one (absent from the
	// arm); when no lesson stands apart from the others, the arm is silent.
	if len(cands) == 0 || len(cands) == len(seen) && cands[0].score == cands[len(cands)-1].score {
		return nil
	}
	return tiedArmOf(cands)
}

// tiedArmOf is armOf with competition ranks: equal scores share the rank of
// the first of them (1, 2, 2, 4).
func tiedArmOf(list []scored) []domain.ArmHit {
	out := make([]domain.ArmHit, len(list))
	for i, s := range list {
		rank := i + 1
		if i > 0 && s.score == list[i-1].score {
			rank = out[i-1].Rank
		}
		out[i] = domain.ArmHit{Path: s.id, Rank: rank}
	}
	return out
}

func armOf(list []scored) []domain.ArmHit {
	out := make([]domain.ArmHit, len(list))
	for i, s := range list {
		out[i] = domain.ArmHit{Path: s.id, Rank: i + 1}
	}
	return out
}
