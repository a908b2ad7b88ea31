package sleep

import (
	"fmt"
	"time"

	"github.com/borg-memory/borg/domain"
)

// reprieve is phase 2: a lesson whose memhtml-valid-until has passed is
// reprieved (valid-until becomes domain.ReprieveDays after the later of the
// sleep and the old valid-until, reprieves + 1) when its
// reprieve score clears domain.ReprieveFloor and it has reprieves left;
// otherwise it moves to archive/.
func (p *planner) reprieve() PhasePlan {
	var ph PhasePlan
	reprieved, archived := 0, 0
	for _, id := range p.active() {
		e := p.cur[id]
		if e.l.ValidUntil.IsZero() || e.l.ValidUntil.After(p.at) {
			continue
		}
		in := p.reprieveInput(id)
		score := domain.ReprieveScore(in)
		why := fmt.Sprintf("valid until %s; score %s = importance %.0f, accesses %.0f, outcome %s, %.0f h since access; reprieves %d/%d",
			e.l.ValidUntil.UTC().Format(time.DateOnly), fp4(score), in.Importance, in.AccessCount, fp4(in.OutcomeScore),
			in.HoursSinceAccess, e.l.Reprieves, domain.MaxReprieves)
		if domain.ShouldReprieve(score, e.l.Reprieves, domain.ReprieveFloor, domain.MaxReprieves) {
			l := e.l
			// From the later of the sleep and the old expiry: extended from
			// an expiry long past, the new one could be past already.
			from := l.ValidUntil
			if p.at.After(from) {
				from = p.at
			}
			l.ValidUntil = from.Add(domain.ReprieveDays * 24 * time.Hour)
			l.Reprieves++
			p.update(l)
			reprieved++
			ph.Items = append(ph.Items, Item{Lesson: id, Action: "reprieve", Other: "until " + l.ValidUntil.UTC().Format(time.DateOnly), Why: why})
			continue
		}
		p.archive(id)
		archived++
		ph.Items = append(ph.Items, Item{Lesson: id, Action: "archive", Why: why})
	}
	ph.Counts = []Count{{"reprieved", reprieved}, {"archived", archived}}
	return ph
}

// reprieveInput reads a lesson's reprieve score inputs: importance, its
// accesses (asked, changed and tested events), its outcome as the belief
// mean mapped to [-1, 1], and the hours since its last event (or since it
// was created).
func (p *planner) reprieveInput(id string) domain.ReprieveInput {
	e, s := p.cur[id], p.stats[id]
	in := domain.ReprieveInput{
		Importance:  float64(e.l.EffectiveImportance()),
		AccessCount: float64(s.asked + s.changed + s.tested),
	}
	if m, ok := p.mems[id]; ok {
		in.OutcomeScore = 2*m.Mean - 1
	}
	last := s.lastAccessMS
	if born := p.born[id]; last == 0 && !born.IsZero() {
		last = born.UnixMilli()
	}
	if last > 0 {
		in.HoursSinceAccess = max(0, float64(p.at.UnixMilli()-last)/3.6e6)
	} else {
		in.HoursSinceAccess = 24 * 365
	}
	return in
}
