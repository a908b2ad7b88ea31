package domain

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Merge constants.
const (
	// NearDuplicateThreshold: two bodies whose cosine is strictly above it are
	// the same content.
	NearDuplicateThreshold = 0.92
	// MaxMergePairs caps the merge decisions one sleep cycle applies, so a
	// flood cannot fan the phase out unboundedly.
	MaxMergePairs = 100
)

// MergeText is what the merge veto reads of one memory: Gist (the one-line
// <mark> claim) and Body (the article). The numeric guard reads the gist
// alone, because a body cites evidence (dates, ticket ids, exit codes) that
// differs between two honest tellings of one fact; the negation and variant
// guards read both, because a polarity flip stated only in the body still
// contradicts.
type MergeText struct {
	Gist, Body string
	// Tags are the lesson's tags: they name its subject to the value
	// guard as they do to the frame phase (Claim.Holding).
	Tags []string
}

// JoinMergeText is the claim, a newline, and the article.
func JoinMergeText(t MergeText) string { return t.Gist + "\n" + t.Body }

// The guards' marker lists (the seed names them without giving them; these
// are borg's choices). Markers are rare, load-bearing words a text does not
// carry by accident.
var (
	// negationMarkers flip a claim's polarity. Tokens ending in n't count
	// too (don't, isn't, won't).
	negationMarkers = map[string]bool{
		"not": true, "no": true, "never": true, "cannot": true, "none": true,
		"nothing": true, "neither": true, "nor": true, "without": true, "nobody": true,
	}
	// variantMarkers qualify a product or release: "M1" is not "M1 Pro".
	variantMarkers = map[string]bool{
		"pro": true, "max": true, "mini": true, "ultra": true, "lite": true, "plus": true,
		"beta": true, "alpha": true, "preview": true, "nightly": true, "canary": true,
		"lts": true, "deprecated": true, "legacy": true, "experimental": true, "enterprise": true,
	}
	numericToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+(?:\.[0-9]+)*`) })
)

// guardTokens splits text into lowercase word tokens, keeping apostrophes
// inside words so "don't" stays one token.
func guardTokens(text string) []string {
	text = strings.ReplaceAll(strings.ToLower(text), "’", "'")
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	})
}

func hasNegation(text string) bool {
	for _, t := range guardTokens(text) {
		t = strings.Trim(t, "'")
		if negationMarkers[t] || strings.HasSuffix(t, "n't") {
			return true
		}
	}
	return false
}

// NegationDivergent is true when exactly one text carries a negation marker:
// "X is safe" against "X is NOT safe". Symmetric.
func NegationDivergent(a, b string) bool { return hasNegation(a) != hasNegation(b) }

func tokenSet(tokens []string) map[string]bool {
	s := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		s[t] = true
	}
	return s
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// NumericTokenDivergent is true when the two texts carry different sets of
// numbers: "retry 3 times" against "retry 13 times", or a number against
// none. Two texts without numbers, or with the same ones, do not trip it.
// Symmetric.
func NumericTokenDivergent(a, b string) bool {
	return !sameSet(tokenSet(numericToken().FindAllString(a, -1)), tokenSet(numericToken().FindAllString(b, -1)))
}

func variantSet(text string) map[string]bool {
	s := map[string]bool{}
	for _, t := range guardTokens(text) {
		if variantMarkers[t] {
			s[t] = true
		}
	}
	return s
}

// VariantQualifierDivergent is true when the two texts carry different
// variant qualifiers: "M1" against "M1 Pro". Symmetric.
func VariantQualifierDivergent(a, b string) bool { return !sameSet(variantSet(a), variantSet(b)) }

// MergeVetoReason names a divergence family.
type MergeVetoReason string

// The veto reasons, in the veto's own order.
const (
	VetoNegation MergeVetoReason = "negation"
	VetoNumeric  MergeVetoReason = "numeric"
	VetoVariant  MergeVetoReason = "variant"
	// VetoValue: the gists write two values into one slot (Rewrites, in
	// either order): a rewrite, which the frame phase resolves, not a
	// duplicate.
	VetoValue MergeVetoReason = "value"
)

// MergeVetoReasons lists which guards fire on a pair, each over its own text:
// negation and variant over the joined text, numeric and value over the
// gist alone.
// Empty exactly when MergeVetoed is false. Symmetric.
func MergeVetoReasons(a, b MergeText) []MergeVetoReason {
	var out []MergeVetoReason
	ja, jb := JoinMergeText(a), JoinMergeText(b)
	if NegationDivergent(ja, jb) {
		out = append(out, VetoNegation)
	}
	if NumericTokenDivergent(a.Gist, b.Gist) {
		out = append(out, VetoNumeric)
	}
	if VariantQualifierDivergent(ja, jb) {
		out = append(out, VetoVariant)
	}
	ca, cb := ReadClaim(a.Gist).Holding(TagHolds(a.Tags)), ReadClaim(b.Gist).Holding(TagHolds(b.Tags))
	_, ab := Rewrites(ca, cb)
	_, ba := Rewrites(cb, ca)
	if ab || ba {
		out = append(out, VetoValue)
	}
	return out
}

// MergeVetoed is true when any guard fires: a vetoed pair is never a
// duplicate, whatever its cosine.
func MergeVetoed(a, b MergeText) bool { return len(MergeVetoReasons(a, b)) > 0 }

// MergePair is one oriented candidate: KeepPath is already the canonical (the
// older file; the orientation is the caller's). The texts are optional; when
// either is nil the guards are skipped.
type MergePair struct {
	KeepPath, DropPath string
	Similarity         float64
	KeepText, DropText *MergeText
}

// MergeStage is where a candidate stopped, in the filter's own order.
type MergeStage string

// The merge stages.
const (
	StageCap       MergeStage = "cap"
	StageThreshold MergeStage = "threshold"
	StageVetoed    MergeStage = "vetoed"
	StageSelf      MergeStage = "self"
	StageRoleGuard MergeStage = "role-guard"
	StageCommitted MergeStage = "committed"
)

// MergeOutcome is one candidate's fate; only StageCommitted makes a decision.
type MergeOutcome struct {
	Pair  MergePair
	Stage MergeStage
}

// MergeOptions are the merge filter's knobs; a zero field takes its default.
type MergeOptions struct {
	MaxPairs  int     // 0: MaxMergePairs
	Threshold float64 // 0: NearDuplicateThreshold
}

// MergeOutcomes classifies every candidate in input order, applying in turn:
// the per-cycle cap (once MaxPairs pairs have committed, every later pair
// stops at the cap), the strict similarity threshold,
// the divergence veto (only when both texts are present), the self-merge
// check, and the in-batch role guard. The role guard fixes each committed
// pair's drop path as dropped and its keep path as kept for the rest of the
// batch: a dropped path is never dropped again nor kept, and a keeper is
// never dropped (given [(gf → a), (b → gf)] the second would archive gf just
// after a was folded into it). A keeper may keep again, so one page absorbs
// several duplicates in one batch. The first pair claiming a role wins, so
// the result is a function of input order alone.
func MergeOutcomes(pairs []MergePair, opts MergeOptions) []MergeOutcome {
	maxPairs := opts.MaxPairs
	if maxPairs <= 0 {
		maxPairs = MaxMergePairs
	}
	threshold := opts.Threshold
	if threshold == 0 {
		threshold = NearDuplicateThreshold
	}
	dropped, kept := map[string]bool{}, map[string]bool{}
	out := make([]MergeOutcome, 0, len(pairs))
	committed := 0
	for _, p := range pairs {
		stage := StageCommitted
		switch {
		case committed >= maxPairs:
			stage = StageCap
		case !(p.Similarity > threshold):
			stage = StageThreshold
		case p.KeepText != nil && p.DropText != nil && MergeVetoed(*p.KeepText, *p.DropText):
			stage = StageVetoed
		case p.KeepPath == p.DropPath:
			stage = StageSelf
		case dropped[p.DropPath] || kept[p.DropPath] || dropped[p.KeepPath]:
			stage = StageRoleGuard
		default:
			dropped[p.DropPath] = true
			kept[p.KeepPath] = true
			committed++
		}
		out = append(out, MergeOutcome{Pair: p, Stage: stage})
	}
	return out
}
