package domain

import "time"

// ReinforceCooldown is ReinforceCooldownS as a duration.
const ReinforceCooldown = ReinforceCooldownS * time.Second

// ShouldBumpAccess is the reinforcement cooldown: true when there is no
// stamp or the stamp is at least cooldown old (>=, so a stamp exactly 900 s
// old is bumpable). Without it, replaying one query ten times would inflate
// a memory's salience tenfold. A stamp in the future is not yet cool.
func ShouldBumpAccess(lastAccessed *time.Time, now time.Time, cooldown time.Duration) bool {
	if lastAccessed == nil {
		return true
	}
	return now.Sub(*lastAccessed) >= cooldown
}

// AccessEntry is one path with its last access stamp (nil: never).
type AccessEntry struct {
	Path         string
	LastAccessed *time.Time
}

// PartitionByCooldown splits entries into the paths whose access may be
// bumped now and those still cooling down, in one order-preserving pass.
func PartitionByCooldown(entries []AccessEntry, now time.Time, cooldown time.Duration) (bumped, cooledDown []string) {
	for _, e := range entries {
		if ShouldBumpAccess(e.LastAccessed, now, cooldown) {
			bumped = append(bumped, e.Path)
		} else {
			cooledDown = append(cooledDown, e.Path)
		}
	}
	return bumped, cooledDown
}

// ReinforceSignal is the signal a reinforcement carries.
type ReinforceSignal string

// The reinforcement signals.
const (
	ReinforcePositive ReinforceSignal = "positive"
	ReinforceNegative ReinforceSignal = "negative"
	ReinforceNeutral  ReinforceSignal = "neutral"
)

// ReinforceSignals lists the signals.
var ReinforceSignals = [3]ReinforceSignal{ReinforcePositive, ReinforceNegative, ReinforceNeutral}

// SignalValue is a reinforcement's outcome-EWMA signal: positive 1,
// negative −1, neutral (and anything unknown) 0, because being read is
// evidence of relevance, not of correctness.
func SignalValue(s ReinforceSignal) float64 {
	switch s {
	case ReinforcePositive:
		return 1
	case ReinforceNegative:
		return -1
	}
	return 0
}
