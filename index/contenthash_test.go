package index

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// refContentHash is ContentHash as it was, a write per field, kept as its
// specification: the hash is stored in every index, so it must not move.
func refContentHash(l domain.Lesson) string {
	h := sha256.New()
	put := func(s string) {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	put(l.ID)
	put(l.Title)
	put(l.Type)
	put(l.Reach)
	put(l.Gist)
	put(l.Body)
	put(strconv.Itoa(len(l.Tags)))
	for _, t := range l.Tags {
		put(t)
	}
	put(strconv.Itoa(len(l.Links)))
	for _, k := range l.Links {
		put(k.Rel)
		put(k.Target)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// TestContentHashUnchanged: the one-buffer hash is the field-by-field one,
// for generated lessons, an empty one, and lessons with many tags and links.
func TestContentHashUnchanged(t *testing.T) {
	ls := newLessonGen(41, 500).lessons(300)
	many := domain.Lesson{ID: "many", Body: strings.Repeat("body ", 1000)}
	for i := range 150 {
		many.Tags = append(many.Tags, "tag"+strconv.Itoa(i))
		many.Links = append(many.Links, domain.LessonLink{Rel: domain.RelSupports, Target: "t-" + strconv.Itoa(i)})
	}
	ls = append(ls, domain.Lesson{}, many, domain.Lesson{ID: "x", Tags: []string{""}, Links: []domain.LessonLink{{}}})
	for i, l := range ls {
		if got, want := ContentHash(l), refContentHash(l); got != want {
			t.Fatalf("lesson %d: ContentHash %s, want %s", i, got, want)
		}
	}
	if got := ContentHash(ls[0]); len(got) != 16 {
		t.Fatalf("ContentHash %q: want 16 hex digits", got)
	}
}
