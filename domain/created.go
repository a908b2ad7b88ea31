package domain

import "time"

// BelievedCreated is the creation time borg believes of a lesson dated
// created, as of the instant at: created, or the zero time (unknown) when
// the lesson has no date or one more than FutureSlack after at. Everything
// that ages or orders lessons by creation reads this one rule (the ledger's
// LessonInfos, sleep's phases, retrieval's newer-fact rule, doctor).
func BelievedCreated(created, at time.Time) time.Time {
	if created.IsZero() || created.UnixMilli() > at.Add(FutureSlack).UnixMilli() {
		return time.Time{}
	}
	return created
}

// FutureSlack is how far past the reader's clock a date may lie and still
// be believed (clocks of a team's machines disagree by minutes, not days;
// a lesson dated in the far future would otherwise be the newest forever).
const FutureSlack = 24 * time.Hour
