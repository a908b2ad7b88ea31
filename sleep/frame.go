package sleep

import (
	"fmt"
	"slices"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// frameClaim is an active lesson's gist read as a claim (domain.ReadClaim).
type frameClaim struct {
	id    string
	claim domain.Claim
}

// frames is phase 4: lessons whose gists write different values into the
// same slot of the same subject (domain.SameSlot). The newest claim of a
// slot supersedes every older one it rewrites: it gains a derived
// supersedes link (the relation retrieval demotes by) and the older one's
// confidence is capped at FrameConfidenceCap. A pair already resolved that
// way is left alone.
func (p *planner) frames() PhasePlan {
	var ph PhasePlan
	blocks := map[string][]frameClaim{}
	var keys []string
	for _, id := range p.active() {
		c := domain.ReadClaim(p.cur[id].l.Gist)
		b := c.Block()
		if b == "" {
			continue
		}
		if _, seen := blocks[b]; !seen {
			keys = append(keys, b)
		}
		blocks[b] = append(blocks[b], frameClaim{id: id, claim: c})
	}
	slices.Sort(keys)
	conflicts, resolved := 0, 0
	for _, key := range keys {
		g := blocks[key]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b frameClaim) int {
			if p.olderFirst(a.id, b.id) {
				return 1
			}
			return -1
		}) // newest first
		for i, old := range g {
			// The newest claim that rewrites old's slot supersedes it; one
			// of the same time does not (which came last is unknown).
			j := slices.IndexFunc(g[:i], func(n frameClaim) bool {
				_, same := domain.SameSlot(n.claim, old.claim)
				return same && p.cur[n.id].l.Created.After(p.cur[old.id].l.Created)
			})
			if j < 0 {
				continue
			}
			newest := g[j]
			m, _ := domain.SameSlot(newest.claim, old.claim)
			n, o := p.cur[newest.id].l, p.cur[old.id].l
			linked := slices.ContainsFunc(n.Links, func(k domain.LessonLink) bool {
				return k.Rel == domain.RelSupersedes && k.Target == old.id
			})
			capped := o.Confidence <= p.opts.FrameConfidenceCap
			if linked && capped {
				resolved++
				continue
			}
			conflicts++
			if !linked {
				n.Links = append(slices.Clone(n.Links), domain.LessonLink{Rel: domain.RelSupersedes, Target: old.id, Derived: true})
				p.update(n)
			}
			before := o.Confidence
			if !capped {
				o.Confidence = p.opts.FrameConfidenceCap
				p.update(o)
			}
			ph.Items = append(ph.Items, Item{Lesson: newest.id, Action: "supersedes", Other: old.id,
				Why: fmt.Sprintf("frame %q: %q is newer than %q; %s confidence %s -> %s",
					m.Frame, strings.TrimSpace(m.A+" "+m.Suffix), strings.TrimSpace(m.B+" "+m.Suffix), old.id, fp4(before), fp4(o.Confidence))})
		}
	}
	ph.Counts = []Count{{"superseded", conflicts}, {"already resolved", resolved}}
	return ph
}
