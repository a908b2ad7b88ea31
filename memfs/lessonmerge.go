package memfs

import (
	"time"

	"github.com/borg-memory/borg/domain"
)

// mergeFields is the lesson holding both sides' edits of base, field by
// field, when git's line merge could not hold them: a lesson's meta lines
// sit next to each other, so a sleep's new confidence on one side and a
// teammate's new type or reach on the other touch adjacent lines, which a
// line merge calls a conflict although they are different fields.
//
// A field one side changed takes that side's value; a field both sides set
// to the same value takes it; a field both changed differently is a
// conflict (ok false: the caller keeps the lesson twice, as for any edit it
// cannot merge). Tags, anchors and links are sets: each side's additions
// and removals all hold, so a sleep's derived link and a teammate's new tag
// or link are both kept.
func mergeFields(base, ours, theirs domain.Lesson) (merged domain.Lesson, ok bool) {
	ok = true
	m := ours
	m.Format = pick(base.Format, ours.Format, theirs.Format, &ok)
	m.ID = pick(base.ID, ours.ID, theirs.ID, &ok)
	m.Title = pick(base.Title, ours.Title, theirs.Title, &ok)
	m.Type = pick(base.Type, ours.Type, theirs.Type, &ok)
	m.Confidence = pick(base.Confidence, ours.Confidence, theirs.Confidence, &ok)
	m.Importance = pick(base.Importance, ours.Importance, theirs.Importance, &ok)
	m.Reach = pick(base.Reach, ours.Reach, theirs.Reach, &ok)
	m.Author = pick(base.Author, ours.Author, theirs.Author, &ok)
	m.Created = pickTime(base.Created, ours.Created, theirs.Created, &ok)
	m.ValidUntil = pickTime(base.ValidUntil, ours.ValidUntil, theirs.ValidUntil, &ok)
	m.Reprieves = pick(base.Reprieves, ours.Reprieves, theirs.Reprieves, &ok)
	m.Gist = pick(base.Gist, ours.Gist, theirs.Gist, &ok)
	m.Body = pick(base.Body, ours.Body, theirs.Body, &ok)
	m.Tags = mergeSet(base.Tags, ours.Tags, theirs.Tags)
	m.Anchors = mergeSet(base.Anchors, ours.Anchors, theirs.Anchors)
	m.Links = mergeSet(base.Links, ours.Links, theirs.Links)
	return m, ok
}

// pick is a field's merged value: the side that changed it from base, or
// the value both hold; a field both sides changed differently clears ok.
func pick[T comparable](base, ours, theirs T, ok *bool) T {
	return pickBy(base, ours, theirs, func(a, b T) bool { return a == b }, ok)
}

// pickTime is pick for instants (time.Time's == also compares locations).
func pickTime(base, ours, theirs time.Time, ok *bool) time.Time {
	return pickBy(base, ours, theirs, time.Time.Equal, ok)
}

// pickBy is pick with same as the equality of T.
func pickBy[T any](base, ours, theirs T, same func(a, b T) bool, ok *bool) T {
	switch {
	case same(ours, theirs) || same(theirs, base):
		return ours
	case same(ours, base):
		return theirs
	}
	*ok = false
	return ours
}

// mergeSet is ours' elements that theirs keeps or that ours added, then
// theirs' additions, each once: what either side added is there, and what
// either side took out of base is not.
func mergeSet[T comparable](base, ours, theirs []T) []T {
	set := func(xs []T) map[T]bool {
		m := make(map[T]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	inBase, inOurs, inTheirs := set(base), set(ours), set(theirs)
	var out []T
	seen := map[T]bool{}
	add := func(x T) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for _, x := range ours {
		if inTheirs[x] || !inBase[x] {
			add(x)
		}
	}
	for _, x := range theirs {
		if !inOurs[x] && !inBase[x] {
			add(x)
		}
	}
	return out
}
