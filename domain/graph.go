package domain

import (
	"math"
	"slices"
	"sort"
)

// Graph constants (memhtml-domain graph.ts).
const (
	// PagerankDamping is PageRank's follow-a-link probability, the networkx
	// default kept from the predecessor memory system.
	PagerankDamping = 0.85
	// PagerankMaxIterations caps the power iteration; graphs of this size
	// converge well inside it.
	PagerankMaxIterations = 100
	// PagerankTolerance is the L1 convergence tolerance per node.
	PagerankTolerance = 1e-6
	// MinCommunitySize is the smallest group label propagation calls a
	// community; a pair passed off as one would make every cross-pair edge
	// look like a bridge.
	MinCommunitySize = 3
	// LabelPropagationMaxSweeps caps label propagation; sorted-order sweeps
	// settle well inside it.
	LabelPropagationMaxSweeps = 100
)

// GraphEdge is one directed, weighted edge; Strength is unitless in [0, 1]
// (clamped, NaN reads 0).
type GraphEdge struct {
	Src, Dst string
	Strength float64
}

// PagerankOptions are Pagerank's knobs; a zero field takes its default.
type PagerankOptions struct {
	Damping       float64 // 0: PagerankDamping
	MaxIterations int     // 0: PagerankMaxIterations
	Tolerance     float64 // 0: PagerankTolerance
	// Seeds makes the walk personalized: the teleport distribution is
	// proportional to these weights instead of uniform. Seeds naming absent
	// nodes, or with a weight that is not positive, are dropped; when none is
	// left the prior is uniform.
	Seeds map[string]float64
}

// graphIndex is a sorted, deduplicated node list with edges folded to their
// maximum strength per (src, dst).
type graphIndex struct {
	nodes []string
	index map[string]int
	out   [][]wEdge // per source, sorted by destination
}

type wEdge struct {
	to int
	w  float64
}

func strengthOf(s float64) float64 {
	if math.IsNaN(s) {
		return 0
	}
	return clamp(s, 0, 1)
}

// newGraphIndex keeps the edges whose endpoints are both among nodes;
// undirected adds each edge in both directions, selfLoops keeps a→a.
func newGraphIndex(nodes []string, edges []GraphEdge, undirected, selfLoops bool) *graphIndex {
	sorted := slices.Clone(nodes)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	g := &graphIndex{nodes: sorted, index: make(map[string]int, len(sorted)), out: make([][]wEdge, len(sorted))}
	for i, n := range sorted {
		g.index[n] = i
	}
	best := make(map[[2]int]float64)
	add := func(u, v int, w float64) {
		k := [2]int{u, v}
		if old, ok := best[k]; !ok || w > old {
			best[k] = w
		}
	}
	for _, e := range edges {
		u, okU := g.index[e.Src]
		v, okV := g.index[e.Dst]
		if !okU || !okV || (u == v && !selfLoops) {
			continue
		}
		w := strengthOf(e.Strength)
		add(u, v, w)
		if undirected {
			add(v, u, w)
		}
	}
	for k, w := range best {
		g.out[k[0]] = append(g.out[k[0]], wEdge{to: k[1], w: w})
	}
	for _, es := range g.out {
		sort.Slice(es, func(i, j int) bool { return es[i].to < es[j].to })
	}
	return g
}

// Pagerank is weighted PageRank by power iteration over the directed edges
// among nodes (an edge naming an absent node is dropped; parallel edges fold
// to their maximum strength). Nodes are visited in sorted order, so the same
// graph gives the same scores bit for bit. Mass at a dangling node (no
// positive out-strength) is spread over the teleport prior, so the scores sum
// to 1. Personalized with opts.Seeds.
func Pagerank(nodes []string, edges []GraphEdge, opts PagerankOptions) map[string]float64 {
	g := newGraphIndex(nodes, edges, false, true)
	n := len(g.nodes)
	out := make(map[string]float64, n)
	if n == 0 {
		return out
	}
	d, iters, tol := opts.resolved()
	prior := teleportPrior(g.nodes, opts.Seeds)

	outW := make([]float64, n)
	for u, es := range g.out {
		for _, e := range es {
			outW[u] += e.w
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = 1 / float64(n)
	}
	next := make([]float64, n)
	for it := 0; it < iters; it++ {
		var dangling float64
		for u := range x {
			if outW[u] == 0 {
				dangling += x[u]
			}
		}
		for i := range next {
			next[i] = (d*dangling + (1 - d)) * prior[i]
		}
		for u, es := range g.out {
			if outW[u] == 0 {
				continue
			}
			share := d * x[u] / outW[u]
			for _, e := range es {
				next[e.to] += share * e.w
			}
		}
		var diff float64
		for i := range x {
			diff += math.Abs(next[i] - x[i])
		}
		x, next = next, x
		if diff < float64(n)*tol {
			break
		}
	}
	total := CompensatedSum(x)
	for i, name := range g.nodes {
		out[name] = x[i] / total
	}
	return out
}

// resolved is opts with every zero or invalid knob at its default:
// damping (clamped to [0, 1]), iterations, tolerance.
func (opts PagerankOptions) resolved() (d float64, iters int, tol float64) {
	d = opts.Damping
	if d == 0 || math.IsNaN(d) {
		d = PagerankDamping
	}
	d = clamp(d, 0, 1)
	iters = opts.MaxIterations
	if iters <= 0 {
		iters = PagerankMaxIterations
	}
	tol = opts.Tolerance
	if !(tol > 0) {
		tol = PagerankTolerance
	}
	return d, iters, tol
}

// teleportPrior is PageRank's teleport distribution over nodes: the
// positive, finite seeds normalised, or uniform without any.
func teleportPrior(nodes []string, seeds map[string]float64) []float64 {
	n := len(nodes)
	prior := make([]float64, n)
	var seeded []float64
	for _, name := range nodes {
		if w, ok := seeds[name]; ok && w > 0 && !math.IsInf(w, 1) {
			seeded = append(seeded, w)
		}
	}
	if total := CompensatedSum(seeded); total > 0 {
		for i, name := range nodes {
			if w, ok := seeds[name]; ok && w > 0 && !math.IsInf(w, 1) {
				prior[i] = w / total
			}
		}
	} else {
		for i := range prior {
			prior[i] = 1 / float64(n)
		}
	}
	return prior
}

// LabelPropagationOptions are LabelPropagation's knobs; a zero field takes
// its default.
type LabelPropagationOptions struct {
	MaxSweeps        int // 0: LabelPropagationMaxSweeps
	MinCommunitySize int // 0: MinCommunitySize
}

// LabelPropagation finds communities over the edges read as undirected,
// deterministically: every node starts labelled by itself, sweeps visit nodes
// in sorted order, and a node adopts the neighbouring label of highest total
// strength, the smallest label breaking a tie. Each community is then named by
// its smallest member; a node in a community smaller than the minimum size
// maps to "" (no community). Every node of nodes is in the result.
func LabelPropagation(nodes []string, edges []GraphEdge, opts LabelPropagationOptions) map[string]string {
	sweeps := opts.MaxSweeps
	if sweeps <= 0 {
		sweeps = LabelPropagationMaxSweeps
	}
	minSize := opts.MinCommunitySize
	if minSize <= 0 {
		minSize = MinCommunitySize
	}
	g := newGraphIndex(nodes, edges, true, false)
	n := len(g.nodes)
	label := make([]int, n)
	for i := range label {
		label[i] = i
	}
	weight := make(map[int]float64)
	for s := 0; s < sweeps; s++ {
		changed := false
		for u := 0; u < n; u++ {
			clear(weight)
			for _, e := range g.out[u] {
				if e.w > 0 {
					weight[label[e.to]] += e.w
				}
			}
			best, bestW := -1, 0.0
			for l, w := range weight {
				if best < 0 || w > bestW || (w == bestW && l < best) {
					best, bestW = l, w
				}
			}
			if best >= 0 && best != label[u] {
				label[u] = best
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	members := make(map[int][]int)
	for u, l := range label {
		members[l] = append(members[l], u)
	}
	out := make(map[string]string, n)
	for _, ms := range members {
		name := ""
		if len(ms) >= minSize {
			name = g.nodes[ms[0]] // members are in index (sorted) order
		}
		for _, u := range ms {
			out[g.nodes[u]] = name
		}
	}
	return out
}

// BridgeCounts counts, per node, its distinct incident edges (read as
// undirected, self-loops aside) that leave its community: the raw input of
// the bridge-importance signal. A node in no community ("" or absent from
// communities) has no boundary to cross and counts 0.
func BridgeCounts(nodes []string, edges []GraphEdge, communities map[string]string) map[string]int {
	g := newGraphIndex(nodes, edges, true, false)
	out := make(map[string]int, len(g.nodes))
	for u, name := range g.nodes {
		c := communities[name]
		count := 0
		if c != "" {
			for _, e := range g.out[u] {
				if communities[g.nodes[e.to]] != c {
					count++
				}
			}
		}
		out[name] = count
	}
	return out
}
