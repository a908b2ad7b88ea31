package index

import (
	"sort"

	"github.com/borg-memory/borg/domain"
)

// lateralHops bounds the neighbourhood the walk runs over: the seeds and
// the lessons within this many links of them. A personalized walk's mass
// decays geometrically with distance, so farther lessons would rank last
// anyway; the bound keeps the arm O(neighbourhood), not O(store).
const lateralHops = 2

// Link strengths the lateral arm walks with (docs/design.md, "Choosing a
// lesson": a link counts as much as it earned). A supersedes link ties a fact to its rewrite; a link
// a person wrote is deliberate; a link sleep derived from shared entities is
// a guess, as strong as a mnestoma link seen once (domain.LinkNewWeight).
const (
	SupersedesStrength  = 1.0
	WrittenLinkStrength = 0.6
	DerivedLinkStrength = domain.LinkNewWeight
)

// linkStrength is the strength of one lesson link.
func linkStrength(l domain.LessonLink) float64 {
	switch {
	case l.Rel == domain.RelSupersedes:
		return SupersedesStrength
	case l.Derived:
		return DerivedLinkStrength
	}
	return WrittenLinkStrength
}

// usedNeighbours is the links sessions made (Query.Links) between lessons
// the index holds, by lesson, each both ways.
func (ix *Index) usedNeighbours(used []domain.GraphEdge) map[string][]domain.GraphEdge {
	usedNb := map[string][]domain.GraphEdge{}
	for _, e := range used {
		if e.Src == e.Dst || !(e.Strength > 0) {
			continue
		}
		if _, ok := ix.cat.find(e.Src); !ok {
			continue
		}
		if _, ok := ix.cat.find(e.Dst); !ok {
			continue
		}
		usedNb[e.Src] = append(usedNb[e.Src], e)
		usedNb[e.Dst] = append(usedNb[e.Dst], domain.GraphEdge{Src: e.Dst, Dst: e.Src, Strength: e.Strength})
	}
	return usedNb
}

// neighbourhood is the breadth-first neighbourhood of the seeds,
// lateralHops deep: as a set, and sorted.
func neighbourhood(seeds map[string]float64, neighbours func(string) []string) (map[string]bool, []string) {
	near := map[string]bool{}
	frontier := make([]string, 0, len(seeds))
	for s := range seeds {
		near[s] = true
		frontier = append(frontier, s)
	}
	sort.Strings(frontier)
	for hop := 0; hop < lateralHops && len(frontier) > 0; hop++ {
		var next []string
		for _, id := range frontier {
			for _, nb := range neighbours(id) {
				if !near[nb] {
					near[nb] = true
					next = append(next, nb)
				}
			}
		}
		frontier = next
	}
	nodes := make([]string, 0, len(near))
	for id := range near {
		nodes = append(nodes, id)
	}
	sort.Strings(nodes)
	return near, nodes
}

// lateralOrder is the lateral arm: a personalized PageRank over the lesson
// link graph (links read both ways: a lesson used with another is related to
// it either way), teleporting to the LateralSeeds best fused hits in
// proportion to their fused score. It returns the lessons the walk reaches,
// best first, without the seeds themselves (they already rank) and without
// the lessons keep rejects (reach), and for each the strength of the
// strongest link that touches it in the walk's neighbourhood: its vote in
// the fusion counts that much (domain.FuseLateral), so a walk over links
// sleep merely guessed counts a third of one over a supersedes link.
//
// used are the links sessions made between lessons (Query.Links), walked
// both ways at their weight beside the links lessons write.
func (ix *Index) lateralOrder(fused map[string]float64, used []domain.GraphEdge, keep func(string) bool) ([]string, map[string]float64) {
	cat := ix.cat
	usedNb := ix.usedNeighbours(used)
	if (!cat.hasGraph() && len(usedNb) == 0) || len(fused) == 0 {
		return nil, nil
	}
	neighbours := func(id string) []string {
		var out []string
		if o, ok := cat.find(id); ok {
			for _, n := range cat.neighbours(o) {
				out = append(out, cat.id(n))
			}
		}
		for _, e := range usedNb[id] {
			out = append(out, e.Dst)
		}
		return out
	}
	ranked := domain.RankFused(fused)
	seeds := map[string]float64{}
	for _, r := range ranked {
		if len(seeds) == LateralSeeds {
			break
		}
		if len(neighbours(r.Path)) > 0 {
			seeds[r.Path] = r.Score
		}
	}
	if len(seeds) == 0 {
		return nil, nil
	}
	near, nodes := neighbourhood(seeds, neighbours)
	edges, strongest := ix.lateralEdges(nodes, near, usedNb)
	pr := domain.Pagerank(nodes, edges, domain.PagerankOptions{Seeds: seeds})
	var out []scored
	for id, s := range pr {
		if _, seed := seeds[id]; seed || !(s > 0) || !keep(id) {
			continue
		}
		out = append(out, scored{id: id, score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	order := make([]string, len(out))
	for i, s := range out {
		order[i] = s.id
	}
	return order, strongest
}

// lateralEdges are the edges among the neighbourhood's nodes: each lesson
// link both ways (Pagerank keeps the strongest of parallel edges), and each
// used link its way, at its strength; strongest is each node's strongest
// link.
func (ix *Index) lateralEdges(nodes []string, near map[string]bool, usedNb map[string][]domain.GraphEdge) (edges []domain.GraphEdge, strongest map[string]float64) {
	cat := ix.cat
	strongest = map[string]float64{}
	for _, id := range nodes {
		o, ok := cat.find(id)
		if !ok {
			continue
		}
		for _, l := range cat.lessonLinks(o) {
			if !near[l.Target] || l.Target == id {
				continue
			}
			w := linkStrength(l)
			strongest[id] = max(strongest[id], w)
			strongest[l.Target] = max(strongest[l.Target], w)
			edges = append(edges, domain.GraphEdge{Src: id, Dst: l.Target, Strength: w},
				domain.GraphEdge{Src: l.Target, Dst: id, Strength: w})
		}
		for _, e := range usedNb[id] {
			if !near[e.Dst] {
				continue
			}
			w := min(e.Strength, 1)
			strongest[id] = max(strongest[id], w)
			strongest[e.Dst] = max(strongest[e.Dst], w)
			edges = append(edges, domain.GraphEdge{Src: id, Dst: e.Dst, Strength: w})
		}
	}
	return edges, strongest
}
