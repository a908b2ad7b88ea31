package memfs

import (
	"testing"
	"unicode/utf8"

	"github.com/mtibben/confusables"
)

// TestLookAlikeMatchesConfusables: over every rune, lookAlike (the
// generated table) answers what the confusables library's skeleton says,
// kept only when it is ASCII other than the rune; go generate ./memfs
// rewrites the table when the library or golang.org/x/text changes.
func TestLookAlikeMatchesConfusables(t *testing.T) {
	for i := 1; i < len(lookAlikeTable); i++ {
		if lookAlikeTable[i-1].r >= lookAlikeTable[i].r {
			t.Fatalf("lookAlikeTable is not sorted at %#x", lookAlikeTable[i].r)
		}
	}
	bad := 0
	for r := rune(0); r <= utf8.MaxRune && bad < 10; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		want := s
		if sk := confusables.Skeleton(s); sk != s && isASCII(sk) {
			want = sk
		}
		if got := lookAlike(r); got != want {
			t.Errorf("lookAlike(%#x) = %q, the library's skeleton gives %q: run go generate ./memfs", r, got, want)
			bad++
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return s != ""
}
