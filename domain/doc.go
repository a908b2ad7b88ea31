// Package domain holds borg's pure, deterministic core: the lesson and event
// types, and the math every other package builds on.
//
// Nothing here does I/O, reads the clock or uses global randomness; callers
// pass time and seeds in, so a rebuild or a sleep re-run reproduces the same
// numbers. The package imports only the standard library (a test enforces it).
//
// # Contents
//
//   - Similarity and fusion: Cosine, CompensatedSum, TopNeighborPairs,
//     RankCandidatePairs, RRFScore, FuseArms, RankFused, FuseLateral, ApplyMMR.
//   - Graph: Pagerank, LabelPropagation, BridgeCounts, ConnectedComponents.
//   - Sleep math: FrameKeyOf, the retention scorer and reprieve gate, the
//     fixed-point confidence decay and outcome EWMA, the merge guards.
//   - Usefulness (borg-memory-module): Activation, Squash, the Beta belief and
//     its Thompson draw, the activity clock, Derive, the word rule.
//   - Links (DESIGN.md §5): reinforcement with decay, the ager.
package domain
