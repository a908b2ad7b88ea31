package sleep

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
)

// exactPairLimit is the largest lesson count whose neighbour pairs are found
// by comparing every pair at full dimension (domain.TopNeighborPairs). Above
// it every pair is no longer affordable (10,000 lessons are 50 million
// cosines of 512 dimensions), so candidates come from a sketch and are
// ranked by domain.RankCandidatePairs, which computes the same cosines bit
// for bit: up to scanPairLimit lessons by comparing every pair's sketches
// (sketchPairs), above it by blocking (blockedPairs, blocking.go), whose cost
// grows with the lessons rather than with the pairs.
const (
	exactPairLimit = 2000
	scanPairLimit  = 20000
)

// pairMode picks how the merge phase enumerates candidate pairs; the zero
// value picks by store size (see exactPairLimit). Tests force the others to
// hold the blocked planner to the all-pairs one.
type pairMode int

const (
	pairsAuto    pairMode = iota
	pairsExact            // every pair at full dimension
	pairsScan             // every pair's sketches
	pairsBlocked          // blocking
)

// The sketch: each vector's signs against sketchBits pseudo-random ±1
// hyperplanes (a fixed seed, so every run and machine draws the same), a
// SimHash. The share of differing bits estimates the angle between two
// vectors; at the 0.85 candidate floor the cosine it implies has a standard
// error of about 0.04, so a pair is kept when its estimate is within
// sketchMargin (six standard errors) of the floor: a true candidate is lost
// with odds far below one in a million.
const (
	sketchBits   = 256
	sketchMargin = 0.25
	sketchSeed   = 0x5eed_b0a6
)

type sketch [sketchBits / 64]uint64

// stageBorgNo refuses a pair in which a person vetoed a lesson (borg no):
// a lesson someone said is wrong is never merged. Kept, it would carry its
// veto into the merged lesson's record (a veto counts as a session result,
// so the vetoed copy would even be the keeper) and archive the copy nobody
// vetoed; dropped, its wrong text would join a good lesson's body.
const stageBorgNo domain.MergeStage = "borg no"

// refusalStages are the merge phase's refusal stages: the merge filter's in
// its own order, then the veto of a person.
var refusalStages = []domain.MergeStage{domain.StageThreshold, domain.StageVetoed, domain.StageSelf, domain.StageRoleGuard, domain.StageCap, stageBorgNo}

// merge is phase 3: near-duplicate pairs of one reach above the strict
// threshold, oriented so the lesson with the record keeps (keepsOver), run
// through domain.MergeOutcomes (cap, threshold, divergence veto over both
// texts, self, in-batch role guard). A pair with a lesson a person vetoed
// (borg no) is refused before that filter, so it takes no role and counts
// toward no cap (stageBorgNo). A committed merge folds the other lesson's
// gist, body, tags, anchors, links and valid-until into the keeper (fold)
// and moves its file to archive/; its session results stay in the log
// under its id. The counts name every refusal stage.
func (p *planner) merge() PhasePlan {
	pairs := p.mergePairs(p.active())
	open := make([]domain.MergePair, 0, len(pairs))
	for _, pr := range pairs {
		if !p.vetoedPair(pr) {
			open = append(open, pr)
		}
	}
	filtered := domain.MergeOutcomes(open, domain.MergeOptions{MaxPairs: p.opts.MergeMaxPairs, Threshold: p.opts.MergeThreshold})
	outcomes := make([]domain.MergeOutcome, 0, len(pairs))
	for _, pr := range pairs { // in the pairs' order, the refused ones among them
		if p.vetoedPair(pr) {
			outcomes = append(outcomes, domain.MergeOutcome{Pair: pr, Stage: stageBorgNo})
			continue
		}
		outcomes = append(outcomes, filtered[0])
		filtered = filtered[1:]
	}
	return p.applyMerges(outcomes)
}

// vetoedPair reports whether a person vetoed (borg no) either lesson of pr.
func (p *planner) vetoedPair(pr domain.MergePair) bool {
	return p.mems[pr.KeepPath].Vetoed > 0 || p.mems[pr.DropPath].Vetoed > 0
}

// applyMerges folds the committed outcomes and reports every one.
func (p *planner) applyMerges(outcomes []domain.MergeOutcome) PhasePlan {
	var ph PhasePlan
	tally := map[domain.MergeStage]int{}
	for _, o := range outcomes {
		tally[o.Stage]++
		keep, drop := o.Pair.KeepPath, o.Pair.DropPath
		sim := fp4(o.Pair.Similarity)
		switch o.Stage {
		case domain.StageCommitted:
			p.fold(keep, drop, o.Pair.Similarity)
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "merged into", Other: keep,
				Why: "cosine " + sim + ", " + p.keepWhy(keep, drop)})
		case domain.StageVetoed:
			reasons := domain.MergeVetoReasons(*o.Pair.KeepText, *o.Pair.DropText)
			rs := make([]string, len(reasons))
			for i, r := range reasons {
				rs[i] = string(r)
			}
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: "cosine " + sim + ", vetoed: " + strings.Join(rs, ", ") + " divergence", NoChange: true})
		case domain.StageThreshold:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: fmt.Sprintf("cosine %s is not above %.2f", sim, p.opts.MergeThreshold), NoChange: true})
		case domain.StageRoleGuard:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: "cosine " + sim + ", role guard: one of them was already merged tonight", NoChange: true})
		case domain.StageCap:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: fmt.Sprintf("cosine %s, over tonight's cap of %d merges", sim, p.opts.MergeMaxPairs), NoChange: true})
		case domain.StageSelf:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged", Why: "a lesson is not its own duplicate", NoChange: true})
		case stageBorgNo:
			var who []string
			for _, id := range []string{keep, drop} {
				if n := p.mems[id].Vetoed; n > 0 {
					who = append(who, fmt.Sprintf("%s was vetoed (borg no, %d session(s))", id, n))
				}
			}
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: "cosine " + sim + ", " + strings.Join(who, " and ") + ": a lesson someone said is wrong is not merged", NoChange: true})
		}
	}
	ph.Counts = []Count{{"merged", tally[domain.StageCommitted]}}
	for _, s := range refusalStages {
		ph.Counts = append(ph.Counts, Count{"refused (" + string(s) + ")", tally[s]})
	}
	return ph
}

// mergePairs finds the candidate pairs among ids at or above the candidate
// floor, each unordered pair once, oriented (keepsOver) and ordered by
// similarity descending, then keep and drop ids.
func (p *planner) mergePairs(ids []string) []domain.MergePair {
	// Lessons of different reach are never paired: a repo:beta lesson is
	// not folded into a repo:alpha one (nor into the team's), so each
	// reach's lessons find their neighbours among themselves.
	byReach := map[string][]string{}
	for _, id := range ids {
		r := reachOf(p.cur[id].l)
		byReach[r] = append(byReach[r], id)
	}
	reaches := make([]string, 0, len(byReach))
	for r := range byReach {
		reaches = append(reaches, r)
	}
	slices.Sort(reaches)
	var ns []domain.NeighborPair
	for _, r := range reaches {
		ns = append(ns, p.neighbourPairs(byReach[r])...)
	}
	seen := map[[2]string]bool{}
	var out []domain.MergePair
	for _, n := range ns {
		keep, drop := n.Src, n.Dst
		if !p.keepsOver(keep, drop) {
			keep, drop = drop, keep
		}
		k := [2]string{keep, drop}
		if seen[k] {
			continue
		}
		seen[k] = true
		kt, dt := p.mergeText(keep), p.mergeText(drop)
		out = append(out, domain.MergePair{KeepPath: keep, DropPath: drop, Similarity: n.Sim, KeepText: &kt, DropText: &dt})
	}
	slices.SortStableFunc(out, func(a, b domain.MergePair) int {
		if a.Similarity != b.Similarity {
			if a.Similarity > b.Similarity {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.KeepPath, b.KeepPath); c != 0 {
			return c
		}
		return strings.Compare(a.DropPath, b.DropPath)
	})
	return out
}

// neighbourPairs finds the neighbour pairs among ids at or above the
// candidate floor, by the enumeration the store's size affords (see
// exactPairLimit).
func (p *planner) neighbourPairs(ids []string) []domain.NeighborPair {
	opts := domain.NeighborOptions{Floor: p.opts.MergeCandidateFloor, PerSourceK: p.opts.MergePerSource}
	mode := p.opts.pairs
	if mode == pairsAuto {
		switch {
		case len(ids) <= exactPairLimit:
			mode = pairsExact
		case len(ids) <= scanPairLimit:
			mode = pairsScan
		default:
			mode = pairsBlocked
		}
	}
	switch mode {
	case pairsExact:
		return domain.TopNeighborPairs(p.vectors(ids), opts)
	case pairsScan:
		return domain.RankCandidatePairs(p.sketchPairs(ids), p.vectors(ids), opts)
	default:
		return domain.RankCandidatePairs(p.blockedPairs(ids), p.vectors(ids), opts)
	}
}

// keepsOver reports whether a keeps over b in a merge: the lesson with the
// record keeps, because the log's session results are keyed by lesson id and
// stay with the archived one. More changed results first, then more results
// of any kind, then the older lesson (olderFirst).
func (p *planner) keepsOver(a, b string) bool {
	ma, mb := p.mems[a], p.mems[b]
	if ma.Changed != mb.Changed {
		return ma.Changed > mb.Changed
	}
	if ra, rb := sessionResults(ma), sessionResults(mb); ra != rb {
		return ra > rb
	}
	return p.olderFirst(a, b)
}

// sessionResults counts a memory's session results of every kind.
func sessionResults(m domain.Memory) int { return m.Changed + m.Ignored + m.Corrected + m.Vetoed }

// keepWhy says why keep keeps over drop, for a merge's item.
func (p *planner) keepWhy(keep, drop string) string {
	mk, md := p.mems[keep], p.mems[drop]
	switch {
	case mk.Changed != md.Changed:
		return fmt.Sprintf("%s has more changed results (%d to %d)", keep, mk.Changed, md.Changed)
	case sessionResults(mk) != sessionResults(md):
		return fmt.Sprintf("%s has more session results (%d to %d)", keep, sessionResults(mk), sessionResults(md))
	case !p.born[keep].Equal(p.born[drop]):
		return keep + " is older"
	}
	return keep + " comes first by id"
}

// reachOf is a lesson's reach with the default spelled out: "" and "team"
// are one reach.
func reachOf(l domain.Lesson) string {
	if l.Reach == "" {
		return domain.ReachTeam
	}
	return l.Reach
}

func (p *planner) mergeText(id string) domain.MergeText {
	l := p.cur[id].l
	return domain.MergeText{Gist: l.Gist, Body: l.Body, Tags: l.Tags}
}

// vectors returns the snapshot vectors of ids, in ids' order.
func (p *planner) vectors(ids []string) []domain.KeyedVector {
	out := make([]domain.KeyedVector, 0, len(ids))
	for _, id := range ids {
		if v, ok := p.vec[id]; ok {
			out = append(out, domain.KeyedVector{Key: id, Vec: v})
		}
	}
	return out
}

// sketchPairs returns the pairs among ids whose sketch puts their cosine at
// least the candidate floor less sketchMargin, each in both directions (as
// TopNeighborPairs offers them), sorted. The sketches and the all-pairs scan
// over them are split over the available CPUs; the result does not depend on
// the split.
func (p *planner) sketchPairs(ids []string) []domain.CandidatePair {
	sk, ok := p.sketches(ids, p.vectorDim(ids))
	maxDiff := p.maxSketchDiff()
	workers := runtimeWorkers()
	found := make([][][2]int, workers)
	parallelStripes(workers, len(ids), func(w, i int) {
		if !ok[i] {
			return
		}
		a := &sk[i]
		for j := i + 1; j < len(sk); j++ {
			if ok[j] && sketchDiff(a, &sk[j]) <= maxDiff {
				found[w] = append(found[w], [2]int{i, j})
			}
		}
	})
	var pairs [][2]int
	for _, f := range found {
		pairs = append(pairs, f...)
	}
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	out := make([]domain.CandidatePair, 0, 2*len(pairs))
	for _, pr := range pairs {
		out = append(out, domain.CandidatePair{Src: ids[pr[0]], Dst: ids[pr[1]]}, domain.CandidatePair{Src: ids[pr[1]], Dst: ids[pr[0]]})
	}
	return out
}

// runtimeWorkers is how many goroutines a parallel step uses: the available
// CPUs, at most 8.
func runtimeWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 8)) }

// vectorDim is the length of the first of ids' vectors that has one.
func (p *planner) vectorDim(ids []string) int {
	for _, id := range ids {
		if v := p.vec[id]; len(v) > 0 {
			return len(v)
		}
	}
	return 0
}

// sketches computes ids' sketches over the available CPUs; ok[i] is false
// for a vector of another length, with a non-finite component or without a
// direction (it joins no pair).
func (p *planner) sketches(ids []string, dim int) (sk []sketch, ok []bool) {
	h := newHasher(dim)
	sk = make([]sketch, len(ids))
	ok = make([]bool, len(ids))
	workers := runtimeWorkers()
	bufs := make([][]float32, workers)
	parallelStripes(workers, len(ids), func(w, i int) {
		v := p.vec[ids[i]]
		if len(v) != dim || !finite(v) {
			return
		}
		if bufs[w] == nil {
			bufs[w] = make([]float32, dim)
		}
		sk[i], ok[i] = h.sketch(v, bufs[w])
	})
	return sk, ok
}

// maxSketchDiff is the most sketch bits a candidate pair may differ in:
// cos(π·h/bits) ≥ floor − margin  ⇔  h ≤ bits·acos(floor − margin)/π.
func (p *planner) maxSketchDiff() int {
	return int(float64(sketchBits) * math.Acos(max(-1, p.opts.MergeCandidateFloor-sketchMargin)) / math.Pi)
}

// hasher draws the sketch's hyperplanes. When the dimension is a power of
// two of at least sketchBits, the hyperplanes are sketchBits rows of a
// Hadamard matrix with their columns' signs flipped at random (a randomised
// Hadamard transform): each is a uniformly random ±1 vector like a dense
// draw, they are mutually orthogonal, and one vector's sketch costs a fast
// Walsh–Hadamard transform (dim·log dim additions) instead of sketchBits·dim
// multiplications. Otherwise the hyperplanes are drawn densely.
type hasher struct {
	dim   int
	signs []float32 // per column ±1
	rows  []int     // the Hadamard rows used
	dense []float32 // sketchBits × dim, when dim is not a power of two
}

func newHasher(dim int) *hasher {
	h := &hasher{dim: dim}
	r := uint64(sketchSeed)
	next := func() uint64 { r = r*6364136223846793005 + 1442695040888963407; return r }
	if dim >= sketchBits && dim&(dim-1) == 0 {
		h.signs = make([]float32, dim)
		for i := range h.signs {
			h.signs[i] = float32(int64(next()>>63)*2 - 1)
		}
		perm := make([]int, dim)
		for i := range perm {
			perm[i] = i
		}
		for i := dim - 1; i > 0; i-- { // Fisher–Yates
			j := int((next() >> 33) % uint64(i+1))
			perm[i], perm[j] = perm[j], perm[i]
		}
		h.rows = perm[:sketchBits]
		return h
	}
	h.dense = make([]float32, sketchBits*dim)
	for i := range h.dense {
		h.dense[i] = float32(int64(next()>>63)*2 - 1)
	}
	return h
}

// sketch returns v's sign bits and whether v has a direction at all; buf is
// scratch of length dim.
func (h *hasher) sketch(v, buf []float32) (sketch, bool) {
	var s sketch
	nonzero := false
	set := func(k int, acc float32) {
		if acc != 0 {
			nonzero = true
		}
		if acc > 0 {
			s[k/64] |= 1 << (k % 64)
		}
	}
	if h.dense != nil {
		for k := 0; k < sketchBits; k++ {
			row := h.dense[k*h.dim : (k+1)*h.dim]
			var acc float32
			for j, x := range v {
				acc += row[j] * x
			}
			set(k, acc)
		}
		return s, nonzero
	}
	for i, x := range v {
		buf[i] = x * h.signs[i]
	}
	fwht(buf)
	for k, row := range h.rows {
		set(k, buf[row])
	}
	return s, nonzero
}

// fwht is the in-place fast Walsh–Hadamard transform of a power-of-two
// length vector (unnormalised). The first two stages are fused and the rest
// run over half-blocks the compiler can check once; every butterfly adds
// the same two values as the textbook loop, so the result is the same bits.
func fwht(a []float32) {
	if len(a) >= 4 {
		for i := 0; i+3 < len(a); i += 4 {
			q := a[i : i+4 : i+4]
			x0, x1, x2, x3 := q[0]+q[1], q[0]-q[1], q[2]+q[3], q[2]-q[3]
			q[0], q[1], q[2], q[3] = x0+x2, x1+x3, x0-x2, x1-x3
		}
	} else if len(a) == 2 {
		a[0], a[1] = a[0]+a[1], a[0]-a[1]
		return
	}
	for span := 4; span < len(a); span *= 2 {
		for i := 0; i < len(a); i += 2 * span {
			lo, hi := a[i:i+span:i+span], a[i+span:i+2*span:i+2*span]
			for j := range lo {
				x, y := lo[j], hi[j]
				lo[j], hi[j] = x+y, x-y
			}
		}
	}
}

// parallelStripes calls fn(w, i) for i in [0, n), worker w taking every
// workers-th i from w, so early (longer) rows of a triangle spread evenly.
func parallelStripes(workers, n int, fn func(w, i int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(w, i)
			}
		}(w)
	}
	wg.Wait()
}

func finite(v []float32) bool {
	for _, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// fold merges drop into keep: tags, anchors and links are unioned (links to
// either lesson itself dropped), a body note names the merged lesson and its
// gist and is followed by drop's body paragraphs keep lacks (appended only, so
// a hand-written keeper is edited in place: memfs.Rewrite), confidence and
// importance take the higher of the two, valid-until the later (none when
// either has none: the knowledge lives as long as its longer-lived copy),
// keep gains a derived supersedes link to drop, and drop's file moves to
// archive/.
func (p *planner) fold(keep, drop string, sim float64) {
	k, d := p.cur[keep].l, p.cur[drop].l
	k.Tags = unionStrings(k.Tags, d.Tags)
	k.Anchors = unionStrings(k.Anchors, d.Anchors)
	// The keeper's links to the dropped lesson go: it now says what drop
	// said, and the one link to drop it keeps is the supersedes added below.
	links := slices.DeleteFunc(slices.Clone(k.Links), func(l domain.LessonLink) bool { return l.Target == drop })
	have := map[[2]string]bool{}
	for _, l := range links {
		have[[2]string{l.Rel, l.Target}] = true
	}
	add := func(l domain.LessonLink) {
		if l.Target == keep || have[[2]string{l.Rel, l.Target}] {
			return
		}
		have[[2]string{l.Rel, l.Target}] = true
		links = append(links, l)
	}
	for _, l := range d.Links {
		if l.Target != drop {
			add(l)
		}
	}
	add(domain.LessonLink{Rel: domain.RelSupersedes, Target: drop, Derived: true})
	k.Links = links
	k.Confidence = max(k.Confidence, d.Confidence)
	if d.Importance > k.EffectiveImportance() {
		k.Importance = d.Importance
	}
	if k.ValidUntil.IsZero() || d.ValidUntil.IsZero() {
		k.ValidUntil = time.Time{}
	} else if d.ValidUntil.After(k.ValidUntil) {
		k.ValidUntil = d.ValidUntil
	}
	paras := []string{fmt.Sprintf("Merged %s into this lesson on %s (cosine %s): %s", drop, p.at.Format(time.DateOnly), fp4(sim), d.Gist)}
	var kept []string
	if k.Body != "" {
		kept = strings.Split(k.Body, "\n\n")
	}
	if d.Body != "" {
		for _, para := range strings.Split(d.Body, "\n\n") {
			if !slices.Contains(kept, para) && !slices.Contains(paras, para) {
				paras = append(paras, para)
			}
		}
	}
	k.Body = strings.Join(append(kept, paras...), "\n\n")
	p.update(k)
	p.archive(drop)
	p.retarget(drop, keep)
}

// retarget points the links other live lessons hold to drop (archived)
// at keep, which now holds what drop said (keep's own, its supersedes link
// among them, stay); a link a lesson would then hold twice goes. A
// retargeted link moves to the end of its
// lesson's links, so a file written by hand is edited in place
// (memfs.Rewrite: links it keeps stay in order, new ones follow).
func (p *planner) retarget(drop, keep string) {
	for _, id := range p.ids {
		e := p.cur[id]
		if e.archived || id == drop || id == keep || !slices.ContainsFunc(e.l.Links, func(k domain.LessonLink) bool { return k.Target == drop }) {
			continue
		}
		l := e.l
		var links, moved []domain.LessonLink
		for _, k := range l.Links {
			if k.Target == drop {
				k.Target = keep
				moved = append(moved, k)
				continue
			}
			links = append(links, k)
		}
		for _, k := range moved {
			if !slices.ContainsFunc(links, func(h domain.LessonLink) bool { return h.Rel == k.Rel && h.Target == keep }) {
				links = append(links, k)
			}
		}
		l.Links = links
		p.update(l)
	}
}

// unionStrings is a followed by b's items a lacks, in order.
func unionStrings(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
