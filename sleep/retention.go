package sleep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
)

// Link strengths in the retention graph: an authored link counts fully, a
// derived one (a suspicion sleep mined) half.
const (
	authoredStrength = 1.0
	derivedStrength  = 0.5
)

// retention is phase 6: domain.ScoreRetention over every active lesson, with
// PageRank, label-propagation communities and bridge counts over the lesson
// graph (memhtml links plus lesson-to-lesson links from passing events), and
// access and outcomes from the log. Evict moves the file to archive/,
// compress is listed, keep stays.
//
// The guard: a lesson created within YoungDays of the sleep, or with any
// changed or tested outcome, is never evicted (it is listed as kept by the
// guard); when the log holds no session at all, nothing is evicted, because
// every access signal would read zero for want of data rather than for want
// of use; and at most MaxEvictShare of the lessons are evicted in one night,
// the lowest scores first, so a store that has just started logging is
// thinned over several nights, each reviewable. A lesson that supersedes a
// live lesson is evicted only with or after that predecessor (capEvictions).
func (p *planner) retention() PhasePlan {
	ids := p.active()
	g := p.retentionGraph(ids)
	verdicts, evictable := p.retentionVerdicts(ids, g)
	p.capEvictions(verdicts, evictable, len(ids))
	return p.applyVerdicts(verdicts)
}

// retentionGraph is what retention reads off the lesson graph: PageRank,
// bridge counts, and the authored supports and contradictions per lesson.
type retentionGraph struct {
	rank           map[string]float64
	maxRank        float64
	bridges        map[string]int
	inSupports     map[string]int
	contradictions map[string]int
}

// retentionGraph builds the graph over ids: their memhtml links (derived
// ones at half strength, never counted as authored evidence; a supersedes
// link from the stale lesson to its successor) plus the lesson-to-lesson
// links of passing events, then ranks it.
func (p *planner) retentionGraph(ids []string) retentionGraph {
	g := retentionGraph{inSupports: map[string]int{}, contradictions: map[string]int{}}
	var edges []domain.GraphEdge
	isActive := map[string]bool{}
	for _, id := range ids {
		isActive[id] = true
	}
	for _, id := range ids {
		for _, k := range p.cur[id].l.Links {
			if !isActive[k.Target] || k.Target == id {
				continue
			}
			w := authoredStrength
			if k.Derived {
				w = derivedStrength
			}
			src, dst := id, k.Target
			if k.Rel == domain.RelSupersedes {
				// A supersedes link says the target's fact is stale: the
				// weight it carries runs to the lesson that replaced it.
				// Pointed at the stale fact, it ranked that one above its
				// successor, which the guard below then could never evict.
				src, dst = dst, src
			}
			edges = append(edges, domain.GraphEdge{Src: src, Dst: dst, Strength: w})
			if k.Derived {
				continue // suspicions never count as authored evidence
			}
			switch k.Rel {
			case domain.RelSupports:
				g.inSupports[k.Target]++
			case domain.RelContradicts:
				g.contradictions[id]++
				g.contradictions[k.Target]++
			}
		}
	}
	for _, e := range domain.LinkEdges(domain.FoldLinks(p.snap.Events), p.at.UnixMilli()) {
		if isActive[e.Src] && isActive[e.Dst] {
			edges = append(edges, e)
		}
	}
	g.rank = domain.Pagerank(ids, edges, domain.PagerankOptions{})
	communities := domain.LabelPropagation(ids, edges, domain.LabelPropagationOptions{})
	g.bridges = domain.BridgeCounts(ids, edges, communities)
	for _, id := range ids {
		g.maxRank = math.Max(g.maxRank, g.rank[id])
	}
	return g
}

// verdict is one lesson's retention score and, for an evict it will not
// carry out, the guard's reason.
type verdict struct {
	id, why, guard string
	score          domain.RetentionScore
}

// retentionVerdicts scores ids in order and applies the guard; evictable
// indexes the verdicts the guard lets evict.
func (p *planner) retentionVerdicts(ids []string, g retentionGraph) (verdicts []verdict, evictable []int) {
	atMS := p.at.UnixMilli()
	sessions := false
	for _, e := range p.snap.Events {
		if e.Kind == domain.KindSession && e.MS < atMS {
			sessions = true
			break
		}
	}
	young := p.at.Add(-time.Duration(p.opts.YoungDays) * 24 * time.Hour)
	verdicts = make([]verdict, 0, len(ids))
	for _, id := range ids {
		m, born := p.mems[id], p.born[id]
		sc := domain.ScoreRetention(p.retentionInput(id, g))
		v := verdict{id: id, score: sc, why: fmt.Sprintf("score %s: recency %.2f, access %.2f, confidence %.2f, pagerank %.2f, bridges %.2f, supports %.2f, density %.2f, uncontested %.2f",
			fp4(sc.Score), sc.Signals.Recency, sc.Signals.AccessFrequency, sc.Signals.Confidence, sc.Signals.Pagerank,
			sc.Signals.BridgeImportance, sc.Signals.ReinforcementCount, sc.Signals.ContentDensity, sc.Signals.ContestedStatus)}
		if sc.Action == domain.TriageEvict {
			switch {
			case !sessions:
				v.guard = "the log has no sessions yet"
			case !born.IsZero() && born.After(young):
				v.guard = fmt.Sprintf("created %s, within %d days", born.UTC().Format(time.DateOnly), p.opts.YoungDays)
			case m.Changed > 0 || m.Tested > 0:
				v.guard = fmt.Sprintf("positive outcomes: %d changed, %d tested", m.Changed, m.Tested)
			default:
				evictable = append(evictable, len(verdicts))
			}
		}
		verdicts = append(verdicts, v)
	}
	return verdicts, evictable
}

// retentionInput is the eight signals' inputs for lesson id.
func (p *planner) retentionInput(id string, g retentionGraph) domain.RetentionInput {
	l, s, m := p.cur[id].l, p.stats[id], p.mems[id]
	updated := p.born[id]
	if updated.IsZero() {
		updated = p.origin // undated: as old as the log
	}
	if s.lastUseMS > 0 && (updated.IsZero() || time.UnixMilli(s.lastUseMS).After(updated)) {
		updated = time.UnixMilli(s.lastUseMS)
	}
	age := 0.0
	if !updated.IsZero() {
		age = math.Max(0, p.at.Sub(updated).Hours()/24)
	}
	return domain.RetentionInput{
		MemoryType: l.Type, AgeDays: age, AccessCount: float64(s.asked + m.Uses),
		Confidence: l.Confidence, GraphRank: g.rank[id], MaxGraphRank: g.maxRank,
		BridgeCount: float64(g.bridges[id]), ReinforcementCount: float64(g.inSupports[id]),
		WordCount: float64(len(strings.Fields(l.Body))), ContradictionCount: float64(g.contradictions[id]),
	}
}

// capEvictions picks tonight's evictions among the evictable verdicts: the
// lowest scores first, at most MaxEvictShare of the lessons, and never a
// lesson that supersedes a live lesson which stays (the current fact would
// go and the one it replaced stay): the predecessor goes first, in this
// night or an earlier one, or both stay. The others are guarded with why.
func (p *planner) capEvictions(verdicts []verdict, evictable []int, lessons int) {
	limit := int(math.Ceil(p.opts.MaxEvictShare * float64(lessons)))
	slices.SortFunc(evictable, func(a, b int) int {
		if c := cmp.Compare(verdicts[a].score.Score, verdicts[b].score.Score); c != 0 {
			return c
		}
		return strings.Compare(verdicts[a].id, verdicts[b].id)
	})
	evict := map[string]bool{}
	// A pass may free a successor whose predecessor it picked; repeat
	// until a pass picks nothing.
	for picked := true; picked && len(evict) < limit; {
		picked = false
		for _, i := range evictable {
			id := verdicts[i].id
			if len(evict) == limit {
				break
			}
			if evict[id] || p.livePredecessor(id, evict) != "" {
				continue
			}
			evict[id], picked = true, true
		}
	}
	for _, i := range evictable {
		id := verdicts[i].id
		switch pred := p.livePredecessor(id, evict); {
		case evict[id]:
		case pred != "":
			verdicts[i].guard = fmt.Sprintf("supersedes %s, which stays: the lesson it replaced goes first", pred)
		default:
			verdicts[i].guard = fmt.Sprintf("over tonight's cap of %d evictions (%.0f%% of the lessons)", limit, 100*p.opts.MaxEvictShare)
		}
	}
}

// livePredecessor is the first lesson id supersedes (by an authored or a
// derived link) that is still live and not in evict, or "".
func (p *planner) livePredecessor(id string, evict map[string]bool) string {
	for _, k := range p.cur[id].l.Links {
		if k.Rel != domain.RelSupersedes || k.Target == id || evict[k.Target] {
			continue
		}
		if e, ok := p.cur[k.Target]; ok && !e.archived {
			return k.Target
		}
	}
	return ""
}

// applyVerdicts archives the evictions and reports every verdict but keep.
func (p *planner) applyVerdicts(verdicts []verdict) PhasePlan {
	var ph PhasePlan
	kept, compressed, evicted, guarded := 0, 0, 0, 0
	for _, v := range verdicts {
		switch {
		case v.score.Action == domain.TriageKeep:
			kept++
		case v.score.Action == domain.TriageCompress:
			compressed++
			ph.Items = append(ph.Items, Item{Lesson: v.id, Action: "compress", Why: v.why, NoChange: true})
		case v.guard != "":
			guarded++
			ph.Items = append(ph.Items, Item{Lesson: v.id, Action: "kept by the guard", Why: v.why + "; " + v.guard, NoChange: true})
		default:
			evicted++
			p.archive(v.id)
			ph.Items = append(ph.Items, Item{Lesson: v.id, Action: "evict", Why: v.why})
		}
	}
	ph.Counts = []Count{{"evicted", evicted}, {"compress", compressed}, {"kept", kept}, {"kept by the guard", guarded}}
	return ph
}
