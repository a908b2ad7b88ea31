package sleep

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/borg-memory/borg/domain"
)

// exactPairLimit is the largest lesson count whose neighbour pairs are found
// by comparing every pair (domain.TopNeighborPairs). Above it, candidates
// come from a word-prefix filter and are ranked by
// domain.RankCandidatePairs: every pair is no longer affordable (10,000
// lessons are 50 million cosines).
const exactPairLimit = 2000

// blockOverlap is the word-overlap share the prefix filter guarantees to
// find: any two lessons sharing at least this share of the larger one's
// distinct words are compared. Two texts above the near-duplicate threshold
// on character n-grams share far more than half their words, so the filter
// loses none of them (a test checks it against the exact pairs).
const blockOverlap = 0.5

// refusalStages are the merge filter's refusal stages in its own order.
var refusalStages = []domain.MergeStage{domain.StageThreshold, domain.StageVetoed, domain.StageSelf, domain.StageRoleGuard, domain.StageCap}

// merge is phase 3: near-duplicate pairs above the strict threshold, oriented
// so the older lesson keeps, run through domain.MergeOutcomes (cap,
// threshold, divergence veto over both texts, self, in-batch role guard). A
// committed merge folds the newer lesson into the keeper and moves the newer
// file to archive/. The counts name every refusal stage.
func (p *planner) merge() PhasePlan {
	pairs := p.mergePairs(p.active())
	return p.applyMerges(domain.MergeOutcomes(pairs, domain.MergeOptions{MaxPairs: p.opts.MergeMaxPairs, Threshold: p.opts.MergeThreshold}))
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
				Why: "cosine " + sim + ", " + keep + " is older"})
		case domain.StageVetoed:
			reasons := domain.MergeVetoReasons(*o.Pair.KeepText, *o.Pair.DropText)
			rs := make([]string, len(reasons))
			for i, r := range reasons {
				rs[i] = string(r)
			}
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: "cosine " + sim + ", vetoed: " + strings.Join(rs, ", ") + " divergence"})
		case domain.StageThreshold:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: fmt.Sprintf("cosine %s is not above %.2f", sim, p.opts.MergeThreshold)})
		case domain.StageRoleGuard:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: "cosine " + sim + ", role guard: one of them was already merged tonight"})
		case domain.StageCap:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged into", Other: keep,
				Why: fmt.Sprintf("cosine %s, over tonight's cap of %d merges", sim, p.opts.MergeMaxPairs)})
		case domain.StageSelf:
			ph.Items = append(ph.Items, Item{Lesson: drop, Action: "not merged", Why: "a lesson is not its own duplicate"})
		}
	}
	ph.Counts = []Count{{"merged", tally[domain.StageCommitted]}}
	for _, s := range refusalStages {
		ph.Counts = append(ph.Counts, Count{"refused (" + string(s) + ")", tally[s]})
	}
	return ph
}

// mergePairs finds the candidate pairs among ids at or above the candidate
// floor, each unordered pair once, oriented (older keeps) and ordered by
// similarity descending, then keep and drop ids.
func (p *planner) mergePairs(ids []string) []domain.MergePair {
	var ns []domain.NeighborPair
	opts := domain.NeighborOptions{Floor: p.opts.MergeCandidateFloor, PerSourceK: p.opts.MergePerSource}
	if len(ids) <= exactPairLimit {
		ns = domain.TopNeighborPairs(p.vectors(ids), opts)
	} else {
		ns = domain.RankCandidatePairs(p.blockedPairs(ids), p.vectors(ids), opts)
	}
	seen := map[[2]string]bool{}
	var out []domain.MergePair
	for _, n := range ns {
		keep, drop := n.Src, n.Dst
		if !p.olderFirst(keep, drop) {
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

func (p *planner) mergeText(id string) domain.MergeText {
	l := p.cur[id].l
	return domain.MergeText{Gist: l.Gist, Body: l.Body}
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

// blockedPairs is the prefix filter: each lesson's distinct words sorted
// rarest first (document frequency, then the word), of which the first
// |x| − ⌈blockOverlap·|x|⌉ + 1 are indexed; two lessons sharing at least
// blockOverlap of the larger's words must share an indexed word, so they
// become a candidate (in both directions, as TopNeighborPairs offers them).
func (p *planner) blockedPairs(ids []string) []domain.CandidatePair {
	words := make([][]string, len(ids))
	df := map[string]int{}
	for i, id := range ids {
		words[i] = wordSet(embedText(p.cur[id].l))
		for _, w := range words[i] {
			df[w]++
		}
	}
	postings := map[string][]int{}
	var out []domain.CandidatePair
	seen := map[[2]int]bool{}
	for i := range ids {
		ws := words[i]
		slices.SortFunc(ws, func(a, b string) int {
			if df[a] != df[b] {
				return df[a] - df[b]
			}
			return strings.Compare(a, b)
		})
		prefix := len(ws) - int(math.Ceil(blockOverlap*float64(len(ws)))) + 1
		for _, w := range ws[:min(prefix, len(ws))] {
			for _, j := range postings[w] {
				if seen[[2]int{j, i}] {
					continue
				}
				seen[[2]int{j, i}] = true
				out = append(out, domain.CandidatePair{Src: ids[j], Dst: ids[i]}, domain.CandidatePair{Src: ids[i], Dst: ids[j]})
			}
			postings[w] = append(postings[w], i)
		}
	}
	return out
}

// wordSet is the distinct lowercase words (letters and digits) of text.
func wordSet(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// fold merges drop into keep: tags, anchors and links are unioned (links to
// either lesson itself dropped), a body note names the merged lesson,
// confidence and importance take the higher of the two, keep gains a derived
// supersedes link to drop, and drop's file moves to archive/.
func (p *planner) fold(keep, drop string, sim float64) {
	k, d := p.cur[keep].l, p.cur[drop].l
	k.Tags = unionStrings(k.Tags, d.Tags)
	k.Anchors = unionStrings(k.Anchors, d.Anchors)
	links := slices.Clone(k.Links)
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
	note := fmt.Sprintf("Merged %s into this lesson on %s (cosine %s): %s", drop, p.at.Format(time.DateOnly), fp4(sim), d.Gist)
	if k.Body == "" {
		k.Body = note
	} else {
		k.Body += "\n\n" + note
	}
	p.update(k)
	p.archive(drop)
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
