// Package domain holds borg's pure, deterministic core: the lesson and event
// types, and the math every other package builds on.
//
// Nothing here does I/O, reads the clock or uses global randomness; callers
// pass time and seeds in, so a rebuild or a sleep re-run reproduces the same
// numbers. The package imports only the standard library (cmd/borg's
// TestImportBoundaries enforces it).
//
// # Contents
//
//   - Similarity and fusion: Cosine, CompensatedSum,
//     TopNeighborPairs, RankCandidatePairs, RRFScore,
//     RRFContribution, FuseArms, RankFused, FuseLateral, ApplyMMR.
//   - Graph: Pagerank, LabelPropagation, BridgeCounts.
//   - Sleep math: ReadClaim, SameSlot (one slot, a newer value), ReadFact and
//     Restates (the fact rewritten in other words), Rewrites and
//     SlotCandidates (either rule, over a set of claims); the retention scorer (ComputeSignals,
//     CompositeScore, BandFor, ScoreRetention) and the reprieve gate
//     (ReprieveScore, ShouldReprieve); the fixed-point confidence decay
//     (ToFp, EWMAStepFp, DecayConfidence, …); the reinforcement
//     cooldown (ShouldBumpAccess); the merge guards (MergeVetoed,
//     MergeOutcomes).
//   - Usefulness (borg-memory-module): Activation, Squash, the Beta belief
//     (BeliefOf) and its Thompson draw (Draw, SampleBeta, RoundSeeded, Seed,
//     Rng), Shuffle, Declared and StripDeclaration, the word rule (WordRule) and the default judge (DefaultVerdict),
//     RegretCap, Weights. Derive, or a Ledger folding events incrementally,
//     turns the outcome log into each lesson's Memory at a tick of the
//     activity clock.
//   - Links (docs/design.md, Links): Link, NewLink, Reinforce, AgeLinks,
//     RecurringProtos, FoldLinks, LinkEdges.
//
// # Constants chosen here
//
// The seeds name some values without giving them. borg's choices sit in one
// place each, with the reasons: the retention weight profiles and
// normalisation curves in retention.go, the merge guards' marker lists in
// merge.go, the word rule's stop list in words.go, and the usefulness weights
// in DefaultWeights (usefulness.go).
package domain
