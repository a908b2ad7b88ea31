package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// EventKind names one kind of outcome-log event (docs/formats.md, The outcome log).
type EventKind string

// The event kinds of the outcome log.
const (
	KindSession   EventKind = "session"   // a session started; ticks the clock
	KindCreated   EventKind = "created"   // a lesson was written; counts as a use
	KindAsked     EventKind = "asked"     // the Stop hook asked the lesson
	KindChanged   EventKind = "changed"   // result: the agent changed its work
	KindIgnored   EventKind = "ignored"   // result: the agent did not
	KindCorrected EventKind = "corrected" // result: the engineer corrected the point
	KindVetoed    EventKind = "vetoed"    // result: borg no
	KindTested    EventKind = "tested"    // the session's tests went green after the ask
	KindRegret    EventKind = "regret"    // a later fix of work done after the ask; W = share
	KindCensored  EventKind = "censored"  // asked, no verdict
	KindUnclear   EventKind = "unclear"   // the judge could not tell
	KindPlacebo   EventKind = "placebo"   // a placebo's verdict; never shared
	KindPassing   EventKind = "passing"   // a link event (docs/design.md, Links)
)

// Event is one line of the outcome log. Shared events carry no free text.
type Event struct {
	ID      string    `json:"id"`
	MS      int64     `json:"ms"`
	Kind    EventKind `json:"kind"`
	Session string    `json:"session,omitempty"`
	Lesson  string    `json:"lesson,omitempty"`
	Repo    string    `json:"repo,omitempty"`
	Author  string    `json:"author,omitempty"`
	W       float64   `json:"w,omitempty"`
	Src     string    `json:"src,omitempty"`
	Dst     string    `json:"dst,omitempty"`
	SrcV    string    `json:"srcv,omitempty"`
	DstV    string    `json:"dstv,omitempty"`
}

// ComputeEventID is the 16-hex id of an event: a SHA-256 over every field but
// ID, so the same event always gets the same id. Readers key events by the id
// as written and never recompute it; a line without one gets this.
func ComputeEventID(e Event) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(e.MS, 10))
	for _, s := range []string{string(e.Kind), e.Session, e.Lesson, e.Repo, e.Author,
		strconv.FormatFloat(e.W, 'g', -1, 64), e.Src, e.Dst, e.SrcV, e.DstV} {
		b.WriteByte(0)
		b.WriteString(s)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// WithID returns e with its ID set when it has none.
func (e Event) WithID() Event {
	if e.ID == "" {
		e.ID = ComputeEventID(e)
	}
	return e
}

// IsResult reports whether the kind is a session result for a lesson
// (one per (session, lesson), strongest wins).
func (k EventKind) IsResult() bool {
	switch k {
	case KindChanged, KindIgnored, KindCorrected, KindVetoed:
		return true
	}
	return false
}

// Shared reports whether events of this kind may be written to the shared log.
// A placebo's verdict never leaves the machine.
func (k EventKind) Shared() bool { return k != KindPlacebo }
