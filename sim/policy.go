package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
)

// The policies, in report order.
const (
	PolicyBorg      = "borg"
	PolicyRelevance = "relevance"
	PolicyCount     = "count"
	PolicyRecency   = "recency"
	PolicyRandom    = "random"
	PolicyLastUse   = "last-use"
	PolicyRerank    = "borg-rerank"
	PolicyOracle    = "oracle"
)

// PolicyNames lists every policy in report order: borg, the four simple
// baselines, last-use (a stronger baseline: recency of the last changed
// result, activation's input without the belief), borg-rerank (a
// diagnostic: borg's weight over the relevance candidates alone) and the
// oracle, last.
var PolicyNames = []string{PolicyBorg, PolicyRelevance, PolicyCount, PolicyRecency, PolicyRandom, PolicyLastUse, PolicyRerank, PolicyOracle}

// sessionCtx is what a policy may look at to choose a session's slots: the
// task as the agent states it (never its hidden topic), the relevance
// candidates every baseline starts from, and its own ledger.
type sessionCtx struct {
	ix         *index.Index
	opts       Options
	w          *world
	t          task
	s          int
	infos      []domain.LessonInfo
	candidates []string // neutral search, relevance order
	randSeed   uint64
}

// choose returns the lessons p asks in this session, best first.
func (p *policy) choose(ctx context.Context, c sessionCtx) ([]string, error) {
	slots := c.opts.Slots
	switch p.name {
	case PolicyBorg:
		return p.chooseBorg(ctx, c)
	case PolicyRerank:
		// borg's usefulness weight (the session's draw) applied to the
		// relevance candidates alone, without the index's fusion, bar or
		// dormancy filter: which part of borg's ranking wins or loses.
		mems := p.ledger.Memories(c.infos, c.t.session, c.opts.Weights)
		p.noteConsolidated(mems)
		weight := make(map[string]float64, len(mems))
		for _, m := range mems {
			weight[m.ID] = m.Weight
		}
		return topBy(c.candidates, slots, func(a, b string) int { return cmp.Compare(weight[b], weight[a]) }), nil
	case PolicyRelevance:
		return c.candidates[:min(slots, len(c.candidates))], nil
	case PolicyCount, PolicyLastUse:
		// Success count: the most changed results first; last use: the most
		// recent use (a changed result, or the writing) first. Both read the
		// policy's own ledger; ties keep the relevance order.
		mems := p.ledger.Memories(c.infos, "", c.opts.Weights)
		p.noteConsolidated(mems)
		byID := make(map[string]domain.Memory, len(mems))
		for _, m := range mems {
			byID[m.ID] = m
		}
		key := func(id string) int {
			if p.name == PolicyCount {
				return byID[id].Changed
			}
			return byID[id].LastUseTick
		}
		return topBy(c.candidates, slots, func(a, b string) int { return key(b) - key(a) }), nil
	case PolicyRecency:
		// Recency only: the lesson touched last (written or asked) first,
		// with no outcome at all; ties keep the relevance order.
		key := func(id string) int {
			last := c.w.byID[id].introduced
			if ss := p.asked[id]; len(ss) > 0 {
				last = max(last, ss[len(ss)-1])
			}
			return last
		}
		return topBy(c.candidates, slots, func(a, b string) int { return key(b) - key(a) }), nil
	case PolicyRandom:
		r := domain.NewRng(c.randSeed ^ domain.Seed(c.t.session, ""))
		return sample(r, c.candidates, slots), nil
	case PolicyOracle:
		return chooseOracle(c), nil
	}
	return nil, fmt.Errorf("unknown policy %q", p.name)
}

// topBy is the first slots of candidates in the order cmp gives them,
// ties keeping the relevance order.
func topBy(candidates []string, slots int, cmp func(a, b string) int) []string {
	out := slices.Clone(candidates)
	slices.SortStableFunc(out, cmp)
	return out[:min(slots, len(out))]
}

// chooseBorg is the product's Stop: index.Search with the hooks' arms, the
// ledger's memories, the relative bar and the session's Thompson draw.
func (p *policy) chooseBorg(ctx context.Context, c sessionCtx) ([]string, error) {
	mems := p.ledger.Memories(c.infos, c.t.session, c.opts.Weights)
	p.noteConsolidated(mems)
	useful := make(map[string]index.Usefulness, len(mems))
	for _, m := range mems {
		useful[m.ID] = index.UsefulnessOf(m)
	}
	hits, err := c.ix.Search(ctx, index.Query{Text: c.t.text, K: c.opts.Slots, Repo: c.w.repos[c.t.repo], Arms: index.HookArmWeights(),
		Session: c.t.session, Useful: useful, OnlyOverBar: true, Floor: c.opts.Floor, Explore: true, Bar: c.opts.Bar, MMRLambda: c.opts.MMRLambda})
	if err != nil {
		return nil, fmt.Errorf("borg policy: %w", err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// chooseOracle asks the lessons of most value for the task it can reach,
// ties by id: the lower bound of regret.
func chooseOracle(c sessionCtx) []string {
	type cand struct {
		id string
		v  float64
	}
	var cs []cand
	for _, l := range c.w.available(c.s) {
		if v := value(l, c.t); v > 0 && c.w.reachable(l, c.t) {
			cs = append(cs, cand{l.lesson.ID, v})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
	ids := make([]string, 0, c.opts.Slots)
	total := 0.0
	for _, x := range cs[:min(c.opts.Slots, len(cs))] {
		ids = append(ids, x.id)
		total += x.v
	}
	if total <= interruptCost {
		return nil // not worth stopping the agent for
	}
	return ids
}

// noteConsolidated remembers which lessons were ever consolidated (a
// lesson's consolidation can end when later evidence lowers its belief).
func (p *policy) noteConsolidated(mems []domain.Memory) {
	for _, m := range mems {
		if m.Consolidated {
			p.everConsolidated[m.ID] = true
		}
	}
}
