package domain

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestValidIDAndType: the hand-written checks accept exactly what the
// documented patterns accept.
func TestValidIDAndType(t *testing.T) {
	idRe := regexp.MustCompile(`^[a-z][a-z0-9-]{2,63}$`)
	typeRe := regexp.MustCompile(`^[a-z][a-z0-9_]{1,31}$`)
	cases := []string{"", "a", "ab", "abc", "a-b", "a_b", "1ab", "-ab", "Abc", "ab c", "abc\x00",
		"migrations-before-tests-7f3a", "error_pattern", "procedural", "é-ab",
		"a" + string(make([]byte, 63)), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "az09-_A\x00é."
	for range 20_000 {
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := ValidID(c), idRe.MatchString(c); got != want {
			t.Fatalf("ValidID(%q) = %v, want %v", c, got, want)
		}
		if got, want := ValidType(c), typeRe.MatchString(c); got != want {
			t.Fatalf("ValidType(%q) = %v, want %v", c, got, want)
		}
	}
}

func TestValidRepoTag(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		want bool
	}{
		{"payments", true},
		{"web-app.v2", true},
		{"Bäckerei", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"two words", false},
		{"a,b", false},
		{"tab\there", false},
		{"nul\x00", false},
	} {
		if got := ValidRepoTag(tc.tag); got != tc.want {
			t.Errorf("ValidRepoTag(%q) = %v, want %v", tc.tag, got, tc.want)
		}
	}
}
