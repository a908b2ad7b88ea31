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

// useStamp is when, and by whom, a use at a clock position happened: the
// session at that position's first ms and its author. ok is false for a
// position the clock has no session at (before its first).
type useStamp[A comparable] func(p int) (ms int64, by A, ok bool)

// coolUses is the reinforcement cooldown applied to a lesson's result uses:
// it returns, in order, the uses (clock positions, ascending) that count,
// appending them to out. A use counts unless the same engineer's last
// counted use of the lesson is less than ReinforceCooldown older
// (ShouldBumpAccess): an agent that runs one short session after another
// reinforces a lesson once per cooldown, not once per session, while two
// engineers' uses minutes apart are two uses. A use the clock cannot stamp
// always counts. The belief still counts every result; only the use count
// and the activation are cooled.
//
// The ledger and the summary both call it over the same clock, so they
// agree: a use's time and engineer are those of the session at its clock
// position (a result without a session event is placed, and stamped, by
// the session that started last before it).
func coolUses[P ~int | ~int32, A comparable](uses []P, out []P, stamp useStamp[A]) []P {
	type counted struct {
		by A
		at time.Time
	}
	var last []counted // the engineers of one lesson's uses are few
	for _, p := range uses {
		ms, by, ok := stamp(int(p))
		if !ok {
			out = append(out, p)
			continue
		}
		at := time.UnixMilli(ms)
		i := 0
		for i < len(last) && last[i].by != by {
			i++
		}
		switch {
		case i == len(last):
			last = append(last, counted{by, at})
		case ShouldBumpAccess(&last[i].at, at, ReinforceCooldown):
			last[i].at = at
		default:
			continue // cooling down: not a use
		}
		out = append(out, p)
	}
	return out
}
