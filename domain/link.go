package domain

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// LinkState is a link's lifecycle state (docs/design.md, Links).
type LinkState string

// The link states.
const (
	// LinkActive is a real link: consulted and reinforced.
	LinkActive LinkState = "active"
	// LinkProto links to a destination that does not exist yet (its version
	// is ProtoVersion).
	LinkProto LinkState = "proto"
	// LinkDecaying is an active link the ager found below AgerDecayingBelow.
	LinkDecaying LinkState = "decaying"
	// LinkSuperseded is a link an explicit caller marked as replaced.
	LinkSuperseded LinkState = "superseded"
)

// Link dynamics (mnestoma).
const (
	// LinkNewWeight is a new link's weight.
	LinkNewWeight = 0.30
	// LinkReinforceStep is what one more passing adds, after decay.
	LinkReinforceStep = 0.15
	// LinkLambdaPerDay is the exponential decay rate of a link's weight.
	LinkLambdaPerDay = 0.018
	// AgerDecayingBelow: an active link under it becomes decaying.
	AgerDecayingBelow = 0.20
	// AgerProtoRemoveBelow: a proto under it is removed.
	AgerProtoRemoveBelow = 0.05
	// AgerArchiveBelow and AgerArchiveIdleDays: a decaying link under the
	// weight and idle at least that long is counted as an archive candidate
	// (never deleted by the ager).
	AgerArchiveBelow    = 0.05
	AgerArchiveIdleDays = 90
	// RecurringMinUses and RecurringMinWeight select recurring protos: a
	// wanted destination asked for often enough to be worth building.
	RecurringMinUses   = 3
	RecurringMinWeight = 0.30
	// ProtoVersion is the destination version a passing event writes for a
	// destination that does not exist yet; such a passing makes a proto.
	ProtoVersion = "?"
)

const msPerDay = 86_400_000

// Link records that Src's output was passed to Dst: directed and versioned
// (a new destination version is a distinct link). Weight holds as of LastMS;
// WeightAt reads it later.
type Link struct {
	Src     string    `json:"src"`
	SrcV    string    `json:"srcv,omitempty"`
	Dst     string    `json:"dst"`
	DstV    string    `json:"dstv,omitempty"`
	Weight  float64   `json:"weight"` // [0, 1]
	Uses    int       `json:"uses"`   // at least 1
	FirstMS int64     `json:"first_ms"`
	LastMS  int64     `json:"last_ms"` // never before FirstMS
	State   LinkState `json:"state"`
}

// LinkKey identifies a link: endpoints and versions.
type LinkKey struct {
	Src, SrcV, Dst, DstV string
}

// Key returns the link's key.
func (l Link) Key() LinkKey { return LinkKey{l.Src, l.SrcV, l.Dst, l.DstV} }

// DecayLinkWeight is w·e^(−λ·days), clamped to [0, 1]; a negative gap (clock
// skew) decays nothing.
func DecayLinkWeight(w, days, lambda float64) float64 {
	if !(days > 0) {
		return clamp(w, 0, 1)
	}
	return clamp(w*math.Exp(-lambda*days), 0, 1)
}

// WeightAt is the link's weight at ms, decayed since LastMS at
// LinkLambdaPerDay.
func (l Link) WeightAt(ms int64) float64 {
	return DecayLinkWeight(l.Weight, float64(ms-l.LastMS)/msPerDay, LinkLambdaPerDay)
}

// NewLink is the link a first passing at ms creates: weight LinkNewWeight,
// one use, active, or proto when dstV is ProtoVersion.
func NewLink(src, srcV, dst, dstV string, ms int64) Link {
	state := LinkActive
	if dstV == ProtoVersion {
		state = LinkProto
	}
	return Link{Src: src, SrcV: srcV, Dst: dst, DstV: dstV, Weight: LinkNewWeight, Uses: 1, FirstMS: ms, LastMS: ms, State: state}
}

// Reinforce is one more passing at ms: w ← clamp(w·e^(−λ·days) + 0.15) with
// days since LastMS, one more use, LastMS moved to ms (never backwards).
func Reinforce(l Link, ms int64) Link {
	l.Weight = clamp(l.WeightAt(ms)+LinkReinforceStep, 0, 1)
	l.Uses++
	l.LastMS = max(l.LastMS, ms)
	return l
}

// restartBelow is the weight under which the nightly ager would already have
// retired a link of this state before the next passing: an active link would
// be decaying (and a later passing looks for an active one), a proto removed.
func restartBelow(s LinkState) float64 {
	if s == LinkProto {
		return AgerProtoRemoveBelow
	}
	return AgerDecayingBelow
}

// FoldLinks derives the links from passing events (other kinds are
// ignored): per key, the events in (ms, id) order, each id once; the first
// creates the link, each later one reinforces it, except that a passing
// arriving after the weight had decayed below what the ager retires (0.20
// active, 0.05 proto) starts the link afresh, as the store would have. The
// result, sorted by key, does not depend on event order or duplicates.
func FoldLinks(events []Event) []Link {
	byKey := map[LinkKey][]Event{}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Kind != KindPassing || e.Src == "" || e.Dst == "" {
			continue
		}
		e = e.WithID()
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		k := LinkKey{e.Src, e.SrcV, e.Dst, e.DstV}
		byKey[k] = append(byKey[k], e)
	}
	out := make([]Link, 0, len(byKey))
	for k, es := range byKey {
		slices.SortFunc(es, func(a, b Event) int {
			if c := cmp.Compare(a.MS, b.MS); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		l := NewLink(k.Src, k.SrcV, k.Dst, k.DstV, es[0].MS)
		for _, e := range es[1:] {
			if l.WeightAt(e.MS) < restartBelow(l.State) {
				l = NewLink(k.Src, k.SrcV, k.Dst, k.DstV, e.MS)
				continue
			}
			l = Reinforce(l, e.MS)
		}
		out = append(out, l)
	}
	SortLinks(out)
	return out
}

// SortLinks orders links by key.
func SortLinks(links []Link) {
	slices.SortFunc(links, func(a, b Link) int {
		for _, c := range [4]int{strings.Compare(a.Src, b.Src), strings.Compare(a.SrcV, b.SrcV),
			strings.Compare(a.Dst, b.Dst), strings.Compare(a.DstV, b.DstV)} {
			if c != 0 {
				return c
			}
		}
		return strings.Compare(string(a.State), string(b.State))
	})
}

// AgerReport is what one ager pass did.
type AgerReport struct {
	// Links are the links that remain, with their states updated.
	Links []Link
	// Decaying counts active links moved to decaying; Removed the protos
	// dropped; ArchiveCandidates the decaying links weak and idle enough to
	// archive (counted, not deleted).
	Decaying, Removed, ArchiveCandidates int
}

// AgeLinks is the nightly ager at nowMS, reading each weight at nowMS: an
// active link under AgerDecayingBelow becomes decaying; a proto under
// AgerProtoRemoveBelow is removed; a decaying link under AgerArchiveBelow and
// idle at least AgerArchiveIdleDays is counted as an archive candidate.
// Weights themselves are not rewritten (they hold as of LastMS), so running
// the ager twice at the same time changes nothing more.
func AgeLinks(links []Link, nowMS int64) AgerReport {
	var r AgerReport
	for _, l := range links {
		w := l.WeightAt(nowMS)
		switch l.State {
		case LinkActive:
			if w < AgerDecayingBelow {
				l.State = LinkDecaying
				r.Decaying++
			}
		case LinkProto:
			if w < AgerProtoRemoveBelow {
				r.Removed++
				continue
			}
		}
		if l.State == LinkDecaying && w < AgerArchiveBelow && nowMS-l.LastMS >= AgerArchiveIdleDays*msPerDay {
			r.ArchiveCandidates++
		}
		r.Links = append(r.Links, l)
	}
	return r
}

// RecurringProtos are the protos used at least RecurringMinUses times whose
// weight at nowMS is at least RecurringMinWeight, in input order.
func RecurringProtos(links []Link, nowMS int64) []Link {
	var out []Link
	for _, l := range links {
		if l.State == LinkProto && l.Uses >= RecurringMinUses && l.WeightAt(nowMS) >= RecurringMinWeight {
			out = append(out, l)
		}
	}
	return out
}

// LinkEdges turns links into graph edges for Pagerank and the lateral arm:
// one edge per (src, dst) across versions, at the strongest weight at nowMS,
// skipping superseded links and protos (their destination does not exist).
func LinkEdges(links []Link, nowMS int64) []GraphEdge {
	best := map[[2]string]float64{}
	for _, l := range links {
		if l.State == LinkSuperseded || l.State == LinkProto {
			continue
		}
		k := [2]string{l.Src, l.Dst}
		if w := l.WeightAt(nowMS); w > best[k] {
			best[k] = w
		} else if _, ok := best[k]; !ok {
			best[k] = w
		}
	}
	out := make([]GraphEdge, 0, len(best))
	for k, w := range best {
		out = append(out, GraphEdge{Src: k[0], Dst: k[1], Strength: w})
	}
	slices.SortFunc(out, func(a, b GraphEdge) int {
		if c := strings.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		return strings.Compare(a.Dst, b.Dst)
	})
	return out
}
