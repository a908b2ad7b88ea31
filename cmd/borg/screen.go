package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// indexOptions are the index options every borg process opens the store's
// index with: the screen (memfs.Screen) gives each new or changed lesson a
// verdict when the index reads it, so searches (recall, the hooks) leave
// out lessons carrying a secret or instruction-like text without scanning.
func indexOptions(lockWait time.Duration) index.Options {
	return index.Options{LockWait: lockWait, Screen: memfs.Screen, ScreenID: memfs.ScreenID}
}

// safeID is a lesson id fit to print: the id, unless it carries a secret
// itself (a hand-committed lesson's id is whatever its author wrote), then
// its first letters and a hash that tells it apart.
func safeID(id string) string {
	if _, found := memfs.FindSecret(id); !found {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return fmt.Sprintf("%s…[id redacted: it carries a secret; sha256 %s]", id[:min(3, len(id))], hex.EncodeToString(sum[:4]))
}

// redacted replaces each field of l that carries a secret with a note
// naming the kind, and returns the lesson's screen verdict: what borg show
// and borg list print instead of the secret.
func redacted(l domain.Lesson) (domain.Lesson, string) {
	verdict := memfs.Screen(l)
	if !memfs.IsSecretVerdict(verdict) {
		return l, verdict
	}
	red := func(s string) string {
		if kind, found := memfs.FindSecret(s); found {
			return fmt.Sprintf("[redacted: a secret (%s)]", kind)
		}
		return s
	}
	l.ID = safeID(l.ID)
	l.Title, l.Gist, l.Body = red(l.Title), red(l.Gist), red(l.Body)
	for _, list := range [][]string{l.Tags, l.Anchors} {
		for i := range list {
			list[i] = red(list[i])
		}
	}
	for i := range l.Links {
		l.Links[i].Target = safeID(l.Links[i].Target)
	}
	return l, verdict
}

// refusedAdvice is what doctor tells a user to do about a lesson the
// screen refused.
func refusedAdvice(verdict string) string {
	if strings.HasPrefix(verdict, "secret ") {
		return verdict + "; it is never quoted to an agent: remove the secret from the file and rotate it (git history keeps it)"
	}
	return verdict + "; it is never quoted to an agent: say the lesson as a fact or a practice, not as an order to the agent"
}
