package sleep

import (
	"math"
	"math/bits"
	"slices"

	"github.com/borg-memory/borg/domain"
)

// blocking.go finds the merge phase's candidate pairs without comparing
// every pair, for stores too large for the sketch scan (sketchPairs): by
// locality-sensitive blocking over SimHash bits.
//
// Each vector gets bandTables × 512 sign bits: one randomised Hadamard
// transform (see hasher) per table, each table with its own seeded column
// signs and row order. A table's bits are cut into bands of bandBits bits;
// two vectors share a block when one of their bands is equal. A shared block
// makes a pair a candidate only if it also passes the sketch scan's own test
// (its 256-bit sketch within maxDiff bits), so the blocked candidates are a
// subset of the scanned ones; domain.RankCandidatePairs then computes their
// cosines bit for bit as every planner does.
//
// Blocking is not exact, it is measured: a pair at cosine c agrees on a
// sign bit with probability 1 − acos(c)/π, so at the 0.85 candidate floor a
// band of 16 bits is equal with probability 0.045 and the pair misses all
// bandTables·bandsPerTable = 320 bands with probability 4e-7 (at 0.88, 4e-9;
// at 0.92, the merge threshold, 1e-12). Unrelated lessons (cosine about 0.1)
// share a band with probability 4e-5 per band, and the sketch test drops
// almost all of them for the price of four popcounts.
// TestBlockedPlanMatchesAllPairs checks the blocked plan equals the
// all-pairs one on the shared BEIR sets, the superseded-facts set and
// randomised near-duplicate stores.
const (
	bandBits      = 16
	bandsPerTable = 512 / bandBits
	bandTables    = 10
	bandSeed      = 0xb10c_5eed
)

// blockedPairs returns what sketchPairs returns on the pairs that share a
// block: each pair in both directions, sorted.
func (p *planner) blockedPairs(ids []string) []domain.CandidatePair {
	dim := p.vectorDim(ids)
	sk, ok := p.sketches(ids, dim)
	maxDiff := p.maxSketchDiff()
	workers := max(1, min(runtimeWorkers(), bandTables))
	found := make([][]uint64, workers)
	parallelStripes(workers, bandTables, func(w, t int) {
		found[w] = append(found[w], tablePairs(p, ids, dim, t, ok, func(i, j int) bool {
			return sketchDiff(&sk[i], &sk[j]) <= maxDiff
		})...)
	})
	var pairs []uint64
	for _, f := range found {
		pairs = append(pairs, f...)
	}
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	out := make([]domain.CandidatePair, 0, 2*len(pairs))
	for _, pr := range pairs {
		i, j := int(pr>>32), int(pr&math.MaxUint32)
		out = append(out, domain.CandidatePair{Src: ids[i], Dst: ids[j]}, domain.CandidatePair{Src: ids[j], Dst: ids[i]})
	}
	return out
}

// tablePairs is table t's share of the blocking: every pair (i < j, packed
// as i<<32|j) equal on one of the table's bands and passing keep. A pair
// equal on several bands is listed once per band.
func tablePairs(p *planner, ids []string, dim, t int, ok []bool, keep func(i, j int) bool) []uint64 {
	h := newTableHasher(dim, t)
	words := make([][512 / 64]uint64, len(ids))
	buf := make([]float32, max(dim, 1))
	for i, id := range ids {
		if ok[i] {
			words[i] = h.bits512(p.vec[id], buf)
		}
	}
	var out []uint64
	order := make([]int32, 0, len(ids))
	keys := make([]uint32, len(ids))
	for b := 0; b < bandsPerTable; b++ {
		order = order[:0]
		for i := range ids {
			if ok[i] {
				keys[i] = bandKey(&words[i], b)
				order = append(order, int32(i))
			}
		}
		radixByKey(order, keys)
		for s := 0; s < len(order); {
			e := s + 1
			for e < len(order) && keys[order[e]] == keys[order[s]] {
				e++
			}
			for x := s; x < e; x++ {
				for y := x + 1; y < e; y++ {
					i, j := int(order[x]), int(order[y])
					if i > j {
						i, j = j, i
					}
					if keep(i, j) {
						out = append(out, uint64(i)<<32|uint64(j))
					}
				}
			}
			s = e
		}
	}
	return out
}

// bandKey is band b's bandBits bits of a 512-bit word set.
func bandKey(w *[8]uint64, b int) uint32 {
	lo := b * bandBits
	return uint32(w[lo/64]>>(lo%64)) & (1<<bandBits - 1)
}

// radixByKey sorts order by keys[order[i]] (bandBits-bit keys), stably, in
// two counting passes of 8 bits.
func radixByKey(order []int32, keys []uint32) {
	const pass = 8
	tmp := make([]int32, len(order))
	src, dst := order, tmp
	for shift := 0; shift < bandBits; shift += pass {
		var count [1<<pass + 1]int
		for _, i := range src {
			count[(keys[i]>>shift)&(1<<pass-1)+1]++
		}
		for k := 1; k < len(count); k++ {
			count[k] += count[k-1]
		}
		for _, i := range src {
			d := (keys[i] >> shift) & (1<<pass - 1)
			dst[count[d]] = i
			count[d]++
		}
		src, dst = dst, src
	}
	if len(order) > 0 && &src[0] != &order[0] {
		copy(order, src)
	}
}

// tableHasher is one table's randomised Hadamard transform: its column signs
// and the 512 rows it reads, in order. Vectors whose dimension is not a
// power of two of at least 512 are hashed densely.
type tableHasher struct {
	dim   int
	signs []float32
	rows  []int
	dense []float32 // 512 × dim, when dim is not a power of two ≥ 512
}

func newTableHasher(dim, t int) *tableHasher {
	r := uint64(bandSeed) + uint64(t)*0x9e37_79b9_7f4a_7c15
	next := func() uint64 { r = r*6364136223846793005 + 1442695040888963407; return r }
	h := &tableHasher{dim: dim}
	if dim >= 512 && dim&(dim-1) == 0 {
		h.signs = make([]float32, dim)
		for i := range h.signs {
			h.signs[i] = float32(int64(next()>>63)*2 - 1)
		}
		h.rows = make([]int, dim)
		for i := range h.rows {
			h.rows[i] = i
		}
		for i := dim - 1; i > 0; i-- { // Fisher–Yates
			j := int((next() >> 33) % uint64(i+1))
			h.rows[i], h.rows[j] = h.rows[j], h.rows[i]
		}
		h.rows = h.rows[:512]
		return h
	}
	h.dense = make([]float32, 512*dim)
	for i := range h.dense {
		h.dense[i] = float32(int64(next()>>63)*2 - 1)
	}
	return h
}

// bits512 is v's 512 sign bits under the table; buf is scratch of length
// dim.
func (h *tableHasher) bits512(v, buf []float32) [8]uint64 {
	var w [8]uint64
	if h.dense != nil {
		for k := 0; k < 512; k++ {
			row := h.dense[k*h.dim : (k+1)*h.dim]
			var acc float32
			for j, x := range v {
				acc += row[j] * x
			}
			w[k/64] |= uint64(math.Float32bits(acc)>>31) << (k % 64)
		}
		return w
	}
	for i, x := range v {
		buf[i] = x * h.signs[i]
	}
	fwht(buf)
	for k, row := range h.rows { // the sign bit, without a branch
		w[k/64] |= uint64(math.Float32bits(buf[row])>>31) << (k % 64)
	}
	return w
}

// sketchDiff is the number of bits two sketches differ in.
func sketchDiff(a, b *sketch) int {
	return bits.OnesCount64(a[0]^b[0]) + bits.OnesCount64(a[1]^b[1]) + bits.OnesCount64(a[2]^b[2]) + bits.OnesCount64(a[3]^b[3])
}
