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
