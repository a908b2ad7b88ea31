package domain

import "strings"

// Frame-key limits, fixed by the measurement the rule was ported from.
const (
	// FrameMinTokens is the shortest frame (subject plus relation) trusted.
	FrameMinTokens = 3
	// FrameMaxValueTokens is the longest value trusted; FrameMinValueTokens
	// the shortest.
	FrameMinValueTokens = 1
	FrameMaxValueTokens = 6
)

// frameLinks are the linking tokens a frame ends on.
var frameLinks = map[string]bool{"of": true, "is": true, "in": true, "to": true, "by": true, "as": true}

// FrameKeyOf reads a claim as a frame and a value and returns the frame: the
// lowercased tokens up to and including the last linking token (of, is, in,
// to, by, as), so "The capital of India is New Delhi" keys on "the capital of
// india is" and a later claim writing another city into the same slot gets
// the same key. It is case- and whitespace-insensitive and fails closed (ok
// false) unless the frame has at least FrameMinTokens tokens and the value
// one to FrameMaxValueTokens tokens.
func FrameKeyOf(claim string) (key string, ok bool) {
	tokens := strings.Fields(strings.ToLower(claim))
	last := -1
	for i, tok := range tokens {
		if frameLinks[tok] {
			last = i
		}
	}
	if last < 0 {
		return "", false
	}
	frame, value := last+1, len(tokens)-last-1
	if frame < FrameMinTokens || value < FrameMinValueTokens || value > FrameMaxValueTokens {
		return "", false
	}
	return strings.Join(tokens[:last+1], " "), true
}
