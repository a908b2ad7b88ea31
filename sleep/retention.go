package sleep

import (
	"fmt"
	"math"
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
// guard); and when the log holds no session at all, nothing is evicted,
// because every access signal would read zero for want of data rather than
// for want of use.
func (p *planner) retention() PhasePlan {
	var ph PhasePlan
	ids := p.active()
	atMS := p.at.UnixMilli()
	var edges []domain.GraphEdge
	inSupports := map[string]int{}
	contradictions := map[string]int{}
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
			edges = append(edges, domain.GraphEdge{Src: id, Dst: k.Target, Strength: w})
			if k.Derived {
				continue // suspicions never count as authored evidence
			}
			switch k.Rel {
			case domain.RelSupports:
				inSupports[k.Target]++
			case domain.RelContradicts:
				contradictions[id]++
				contradictions[k.Target]++
			}
		}
	}
	for _, e := range domain.LinkEdges(domain.FoldLinks(p.snap.Events), atMS) {
		if isActive[e.Src] && isActive[e.Dst] {
			edges = append(edges, e)
		}
	}
	rank := domain.Pagerank(ids, edges, domain.PagerankOptions{})
	communities := domain.LabelPropagation(ids, edges, domain.LabelPropagationOptions{})
	bridges := domain.BridgeCounts(ids, edges, communities)
	maxRank := 0.0
	for _, id := range ids {
		maxRank = math.Max(maxRank, rank[id])
	}
	sessions := false
	for _, e := range p.snap.Events {
		if e.Kind == domain.KindSession && e.MS < atMS {
			sessions = true
			break
		}
	}
	young := p.at.Add(-time.Duration(p.opts.YoungDays) * 24 * time.Hour)
	kept, compressed, evicted, guarded := 0, 0, 0, 0
	for _, id := range ids {
		l, s := p.cur[id].l, p.stats[id]
		m := p.mems[id]
		updated := l.Created
		if s.lastUseMS > 0 && (updated.IsZero() || time.UnixMilli(s.lastUseMS).After(updated)) {
			updated = time.UnixMilli(s.lastUseMS)
		}
		age := 0.0
		if !updated.IsZero() {
			age = math.Max(0, p.at.Sub(updated).Hours()/24)
		}
		sc := domain.ScoreRetention(domain.RetentionInput{
			MemoryType: l.Type, AgeDays: age, AccessCount: float64(s.asked + m.Uses),
			Confidence: l.Confidence, GraphRank: rank[id], MaxGraphRank: maxRank,
			BridgeCount: float64(bridges[id]), ReinforcementCount: float64(inSupports[id]),
			WordCount: float64(len(strings.Fields(l.Body))), ContradictionCount: float64(contradictions[id]),
		})
		why := fmt.Sprintf("score %s: recency %.2f, access %.2f, confidence %.2f, pagerank %.2f, bridges %.2f, supports %.2f, density %.2f, uncontested %.2f",
			fp4(sc.Score), sc.Signals.Recency, sc.Signals.AccessFrequency, sc.Signals.Confidence, sc.Signals.Pagerank,
			sc.Signals.BridgeImportance, sc.Signals.ReinforcementCount, sc.Signals.ContentDensity, sc.Signals.ContestedStatus)
		switch sc.Action {
		case domain.TriageKeep:
			kept++
		case domain.TriageCompress:
			compressed++
			ph.Items = append(ph.Items, Item{Lesson: id, Action: "compress", Why: why})
		case domain.TriageEvict:
			var guard string
			switch {
			case !sessions:
				guard = "the log has no sessions yet"
			case !l.Created.IsZero() && l.Created.After(young):
				guard = fmt.Sprintf("created %s, within %d days", l.Created.UTC().Format(time.DateOnly), p.opts.YoungDays)
			case m.Changed > 0 || m.Tested > 0:
				guard = fmt.Sprintf("positive outcomes: %d changed, %d tested", m.Changed, m.Tested)
			}
			if guard != "" {
				guarded++
				ph.Items = append(ph.Items, Item{Lesson: id, Action: "kept by the guard", Why: why + "; " + guard})
				continue
			}
			evicted++
			p.archive(id)
			ph.Items = append(ph.Items, Item{Lesson: id, Action: "evict", Why: why})
		}
	}
	ph.Counts = []Count{{"evicted", evicted}, {"compress", compressed}, {"kept", kept}, {"kept by the guard", guarded}}
	return ph
}
