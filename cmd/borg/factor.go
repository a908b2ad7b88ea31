package main

import (
	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
)

// rankingFactor is what ranking multiplies a lesson's text score by when no
// session draws from its belief (recall, serve): 1 + (mean − ½)·r/(r + h),
// r its session results and h index.EvidenceHalf. A lesson without results
// gets exactly 1 and ranks as its text matches; a proven one gains up to
// half its score and a harmful one loses up to half. It is the factor recall
// reports as a hit's mean_weight, and a test holds the two equal; the
// seed's weight (squash(activation) × (½ + x)), which show also prints,
// does not rank.
func rankingFactor(m domain.Memory) float64 { return index.UsefulnessOf(m).Factor() }

// sessionResults counts the sessions that recorded a result for the lesson:
// the r of rankingFactor.
func sessionResults(m domain.Memory) int { return index.UsefulnessOf(m).Results }
