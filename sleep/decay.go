package sleep

import (
	"fmt"
	"time"

	"github.com/borg-memory/borg/domain"
)

// decay is phase 1: each lesson not reinforced since the last sleep (no
// created, changed or tested event in the cycle, and not created in it as
// far as borg believes its date: p.born)
// decays one cycle on the fixed-point grid; a change under
// domain.ConfidenceCommitDelta is not written, so it shows as unchanged.
func (p *planner) decay() PhasePlan {
	var ph PhasePlan
	sinceMS := p.since.UnixMilli()
	decayed, reinforced, small := 0, 0, 0
	for _, id := range p.active() {
		e, s, born := p.cur[id], p.stats[id], p.born[id]
		if s.lastUseMS >= sinceMS || !born.IsZero() && !born.Before(p.since) {
			reinforced++
			continue
		}
		before := e.l.Confidence
		after := domain.DecayConfidence(before, domain.DefaultConfidenceDecayAlpha, domain.DefaultConfidenceFloor)
		if !domain.IsCommittableConfidenceChange(before, after) {
			small++
			continue
		}
		l := e.l
		l.Confidence = after
		p.update(l)
		decayed++
		ph.Items = append(ph.Items, Item{Lesson: id, Action: "decay", Other: fp4(before) + " -> " + fp4(after),
			Why: lastSeen(s.lastUseMS, born)})
	}
	ph.Counts = []Count{{"decayed", decayed}, {"reinforced", reinforced}, {"below the commit delta", small}}
	return ph
}

// lastSeen describes a lesson's latest use for a message.
func lastSeen(ms int64, created time.Time) string {
	switch {
	case ms > 0:
		return "last used " + time.UnixMilli(ms).UTC().Format(time.DateOnly)
	case !created.IsZero():
		return fmt.Sprintf("no use since created %s", created.UTC().Format(time.DateOnly))
	}
	return "no use recorded"
}
