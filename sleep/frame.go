package sleep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// frames is phase 4: lessons whose gists write different values into the
// same slot of the same subject (domain.Rewrites: the slot restated in the
// same words or the fact in others). The newest claim of a slot supersedes
// every older one it rewrites: it gains a derived supersedes link (the
// relation retrieval demotes by) and the older one's confidence is capped
// at FrameConfidenceCap. A pair already resolved that way is left alone;
// lessons of different reach are never paired, nor lessons edge typing
// deems about different subjects (differentSubjects: one rule for both),
// and a lesson a person vetoed (borg no) supersedes nothing.
// When the older lesson carries an authored supersedes link to the newer
// one, a person has said which is current: the pair is skipped (a derived
// link the other way would make a cycle) and listed.
// Older lessons are visited by their claim's Block, then newest first.
func (p *planner) frames() PhasePlan {
	var ph PhasePlan
	ids := p.active()
	claims := make([]domain.Claim, len(ids))
	for i, id := range ids {
		claims[i] = domain.ReadClaim(p.cur[id].l.Gist).Holding(domain.TagHolds(p.cur[id].l.Tags))
	}
	views := map[int]edgeView{}
	view := func(i int) edgeView {
		v, ok := views[i]
		if !ok {
			v = viewOf(p.cur[ids[i]].l)
			views[i] = v
		}
		return v
	}
	// successors[o] are the claims strictly newer than o's that rewrite it.
	successors := map[int][]int{}
	otherSubject := 0
	var reversed [][2]int // (newer, older) pairs the older one's author says run the other way
	for _, pr := range domain.SlotCandidates(claims) {
		if reachOf(p.cur[ids[pr[0]]].l) != reachOf(p.cur[ids[pr[1]]].l) {
			continue // a repo's fact never supersedes another repo's (or the team's)
		}
		for _, d := range [][2]int{{pr[0], pr[1]}, {pr[1], pr[0]}} {
			n, o := d[0], d[1]
			if p.born[ids[o]].IsZero() || !p.born[ids[n]].After(p.born[ids[o]]) {
				// Which is newer is known only when both dates are: an
				// undated lesson (written by hand) is never superseded
				// nor supersedes, as at query time (index).
				continue
			}
			if p.mems[ids[n]].Vetoed > 0 {
				// A fact a person said is wrong (borg no) supersedes
				// nothing, as at query time (index).
				continue
			}
			if _, same := domain.Rewrites(claims[n], claims[o]); !same {
				continue
			}
			if differentSubjects(view(n), view(o)) {
				otherSubject++ // edge typing would not link them either
				continue
			}
			if authoredSupersedes(p.cur[ids[o]].l, ids[n]) {
				reversed = append(reversed, [2]int{n, o})
				continue
			}
			successors[o] = append(successors[o], n)
		}
	}
	olds := make([]int, 0, len(successors))
	for o := range successors {
		olds = append(olds, o)
	}
	newestFirst := func(a, b int) int {
		if p.olderFirst(ids[a], ids[b]) {
			return 1
		}
		return -1
	}
	slices.SortFunc(olds, func(a, b int) int {
		if c := strings.Compare(claims[a].Block(), claims[b].Block()); c != 0 {
			return c
		}
		return newestFirst(a, b)
	})
	conflicts, resolved := 0, 0
	for _, oi := range olds {
		// The newest claim that rewrites old's slot supersedes it; one of
		// the same time does not (which came last is unknown).
		ni := slices.MinFunc(successors[oi], newestFirst)
		newest, old := ids[ni], ids[oi]
		m, _ := domain.Rewrites(claims[ni], claims[oi])
		n, o := p.cur[newest].l, p.cur[old].l
		linked := slices.ContainsFunc(n.Links, func(k domain.LessonLink) bool {
			return k.Rel == domain.RelSupersedes && k.Target == old
		})
		capped := o.Confidence <= p.opts.FrameConfidenceCap
		if linked && capped {
			resolved++
			continue
		}
		conflicts++
		if !linked {
			n.Links = append(slices.Clone(n.Links), domain.LessonLink{Rel: domain.RelSupersedes, Target: old, Derived: true})
			p.update(n)
		}
		before := o.Confidence
		if !capped {
			o.Confidence = p.opts.FrameConfidenceCap
			p.update(o)
		}
		ph.Items = append(ph.Items, Item{Lesson: newest, Action: "supersedes", Other: old,
			Why: fmt.Sprintf("frame %q: %q is newer than %q; %s confidence %s -> %s",
				m.Frame, strings.TrimSpace(m.A+" "+m.Suffix), strings.TrimSpace(m.B+" "+m.Suffix), old, fp4(before), fp4(o.Confidence))})
	}
	slices.SortFunc(reversed, func(a, b [2]int) int {
		if c := strings.Compare(ids[a[0]], ids[b[0]]); c != 0 {
			return c
		}
		return strings.Compare(ids[a[1]], ids[b[1]])
	})
	for _, pr := range reversed {
		newer, older := ids[pr[0]], ids[pr[1]]
		ph.Items = append(ph.Items, Item{Lesson: newer, Action: "does not supersede", Other: older,
			Why: older + " carries an authored supersedes link to " + newer + ": a person said which is current", NoChange: true})
	}
	ph.Counts = []Count{{"superseded", conflicts}, {"already resolved", resolved}, {"left to an authored link", len(reversed)}}
	if otherSubject > 0 {
		ph.Notes = append(ph.Notes, "Pairs left alone because their lessons are about different subjects: "+strconv.Itoa(otherSubject)+".")
	}
	return ph
}

// authoredSupersedes reports whether l carries an authored (not derived)
// supersedes link to target.
func authoredSupersedes(l domain.Lesson, target string) bool {
	return slices.ContainsFunc(l.Links, func(k domain.LessonLink) bool {
		return k.Rel == domain.RelSupersedes && k.Target == target && !k.Derived
	})
}
