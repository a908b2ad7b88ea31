package sleep

import (
	"fmt"

	"github.com/borg-memory/borg/domain"
)

// linkAger is phase 7: the link ager (docs/design.md, Links) over the links folded
// from the log's passing events, at the sleep's instant. Links are derived
// from events, never stored in a file, so the phase changes no file and
// commits nothing: it reports the transitions (active links now decaying,
// protos removed, archive candidates, recurring protos).
func (p *planner) linkAger() PhasePlan {
	var ph PhasePlan
	atMS := p.at.UnixMilli()
	links := domain.FoldLinks(p.snap.Events)
	r := domain.AgeLinks(links, atMS)
	recurring := domain.RecurringProtos(r.Links, atMS)
	ph.Counts = []Count{{"links", len(links)}, {"now decaying", r.Decaying}, {"protos removed", r.Removed},
		{"archive candidates", r.ArchiveCandidates}, {"recurring protos", len(recurring)}}
	ph.Notes = append(ph.Notes, "Links are derived from passing events, so the ager changes no file: nothing to commit.")
	for _, l := range recurring {
		ph.Items = append(ph.Items, Item{Lesson: l.Src, Action: "wants", Other: l.Dst,
			Why: fmt.Sprintf("recurring proto: %d uses, weight %s", l.Uses, fp4(l.WeightAt(atMS))), NoChange: true})
	}
	return ph
}
