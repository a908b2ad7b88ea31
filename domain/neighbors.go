package domain

import (
	"math"
	"slices"
	"strings"
)

// KeyedVector is one decoded vector under the key the ranking reports.
// Keys should be unique; a repeated key keeps its first vector.
type KeyedVector struct {
	Key string
	Vec []float32
}

// NeighborPair is one selected pair; Sim is the cosine similarity in [-1, 1].
type NeighborPair struct {
	Src, Dst string
	Sim      float64
}

// NeighborOptions are the selection knobs every pair consumer states.
type NeighborOptions struct {
	// Floor: pairs below this similarity never enter ranking (a NaN
	// similarity never passes).
	Floor float64
	// PerSourceK neighbours are kept per source, ordered sim descending then
	// dst ascending; 0 or less keeps them all.
	PerSourceK int
	// Limit caps the result after the final sim DESC, src ASC, dst ASC
	// ordering; 0 or less keeps them all.
	Limit int
}

// CandidatePair is one enumerated candidate pair, oriented by the caller.
type CandidatePair struct {
	Src, Dst string
}

// normed is a vector with its squared magnitude hoisted out of the pair loop.
type normed struct {
	key string
	vec []float32
	sq  float64
	ok  bool // every component finite
}

func hoist(vectors []KeyedVector) []normed {
	seen := make(map[string]bool, len(vectors))
	out := make([]normed, 0, len(vectors))
	for _, kv := range vectors {
		if seen[kv.Key] {
			continue
		}
		seen[kv.Key] = true
		nv := normed{key: kv.Key, vec: kv.Vec, ok: true, sq: sq(kv.Vec)}
		for _, x := range kv.Vec {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				nv.ok = false
				break
			}
		}
		out = append(out, nv)
	}
	return out
}

// pairCosine is Cosine(a.vec, b.vec) with the squared magnitudes hoisted: the
// same additions in the same order, so the same bits. Vectors of different
// lengths fall back to Cosine itself.
func pairCosine(a, b *normed) float64 {
	if len(a.vec) != len(b.vec) {
		return Cosine(a.vec, b.vec)
	}
	return cosineOf(a.vec, b.vec, dot(a.vec, b.vec), a.sq, b.sq)
}

// neighborhood keeps one source's best k pairs, best first.
type neighborhood struct {
	k     int
	pairs []NeighborPair
}

func betterNeighbor(a, b NeighborPair) bool {
	if a.Sim != b.Sim {
		return a.Sim > b.Sim
	}
	return a.Dst < b.Dst
}

func (h *neighborhood) offer(p NeighborPair) {
	if h.k > 0 && len(h.pairs) == h.k && !betterNeighbor(p, h.pairs[h.k-1]) {
		return
	}
	i, _ := slices.BinarySearchFunc(h.pairs, p, func(x, y NeighborPair) int {
		if betterNeighbor(x, y) {
			return -1
		}
		if betterNeighbor(y, x) {
			return 1
		}
		return 0
	})
	h.pairs = slices.Insert(h.pairs, i, p)
	if h.k > 0 && len(h.pairs) > h.k {
		h.pairs = h.pairs[:h.k]
	}
}

// finishPairs orders the kept pairs sim DESC, src ASC, dst ASC and applies
// the limit.
func finishPairs(hoods map[string]*neighborhood, limit int) []NeighborPair {
	var out []NeighborPair
	for _, h := range hoods {
		out = append(out, h.pairs...)
	}
	slices.SortFunc(out, func(a, b NeighborPair) int {
		if a.Sim != b.Sim {
			if a.Sim > b.Sim {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		return strings.Compare(a.Dst, b.Dst)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// TopNeighborPairs selects, over every unordered pair of vectors, each
// source's PerSourceK nearest neighbours at or above Floor. Each pair's
// similarity is computed once and offered to both endpoints'
// neighbourhoods, so the result may hold both (a, b) and (b, a); a consumer
// folding pairs dedups the mirror itself. A vector carrying a NaN or infinite
// component joins no neighbourhood. Similarities equal Cosine bit for bit.
func TopNeighborPairs(vectors []KeyedVector, opts NeighborOptions) []NeighborPair {
	vs := hoist(vectors)
	hoods := make(map[string]*neighborhood, len(vs))
	hood := func(key string) *neighborhood {
		h := hoods[key]
		if h == nil {
			h = &neighborhood{k: opts.PerSourceK}
			hoods[key] = h
		}
		return h
	}
	for i := range vs {
		if !vs[i].ok {
			continue
		}
		for j := i + 1; j < len(vs); j++ {
			if !vs[j].ok {
				continue
			}
			sim := pairCosine(&vs[i], &vs[j])
			if !(sim >= opts.Floor) {
				continue
			}
			hood(vs[i].key).offer(NeighborPair{Src: vs[i].key, Dst: vs[j].key, Sim: sim})
			hood(vs[j].key).offer(NeighborPair{Src: vs[j].key, Dst: vs[i].key, Sim: sim})
		}
	}
	return finishPairs(hoods, opts.Limit)
}

// RankCandidatePairs ranks an enumerated pair set with the same floor,
// per-source top-k, ordering and limit as TopNeighborPairs. The candidate
// predicate has already run, so per-source top-k is over these pairs only. A
// pair naming a key without a usable vector contributes nothing, and a pair
// listed twice counts once.
func RankCandidatePairs(pairs []CandidatePair, vectors []KeyedVector, opts NeighborOptions) []NeighborPair {
	vs := hoist(vectors)
	byKey := make(map[string]*normed, len(vs))
	for i := range vs {
		byKey[vs[i].key] = &vs[i]
	}
	seen := make(map[CandidatePair]bool, len(pairs))
	hoods := make(map[string]*neighborhood)
	for _, p := range pairs {
		if seen[p] {
			continue
		}
		seen[p] = true
		a, b := byKey[p.Src], byKey[p.Dst]
		if a == nil || b == nil || !a.ok || !b.ok {
			continue
		}
		sim := pairCosine(a, b)
		if !(sim >= opts.Floor) {
			continue
		}
		h := hoods[p.Src]
		if h == nil {
			h = &neighborhood{k: opts.PerSourceK}
			hoods[p.Src] = h
		}
		h.offer(NeighborPair{Src: p.Src, Dst: p.Dst, Sim: sim})
	}
	return finishPairs(hoods, opts.Limit)
}
