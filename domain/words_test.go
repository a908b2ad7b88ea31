package domain

import (
	"slices"
	"testing"
)

func TestDistinctiveWords(t *testing.T) {
	got := DistinctiveWords("Run `make migrate` before the integration tests; the schema is not auto-applied. 2024")
	want := []string{"applied", "auto", "integration", "migrate", "schema", "tests"}
	if !slices.Equal(got, want) {
		t.Fatalf("DistinctiveWords = %v, want %v", got, want)
	}
}

func TestResolve(t *testing.T) {
	lesson := AskedLesson{ID: "migrate-first", Text: "Run migrations with goose before the integration tests; schema drift breaks fixtures."}
	tests := []struct {
		name          string
		message       string
		before, after string
		changed       bool
	}{
		{"declared applies wins over no words", "migrate-first: applies", "", "", true},
		{"declared skip wins over words", "migrate-first: skip", "", "goose migrations schema fixtures", false},
		{"three novel words", "", "x", "added goose migrations for schema", true},
		{"two novel words are chance", "", "", "goose migrations", false},
		{"words already there are not novel", "", "goose migrations schema", "goose migrations schema", false},
		{"case-insensitive", "", "", "GOOSE Migrations SCHEMA", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, ignored := Resolve([]AskedLesson{lesson}, tt.message, tt.before, tt.after, DefaultWeights.NovelWords)
			if got := len(changed) == 1; got != tt.changed || len(changed)+len(ignored) != 1 {
				t.Fatalf("Resolve = changed %v ignored %v, want changed=%v", changed, ignored, tt.changed)
			}
		})
	}
	changed, ignored := Resolve([]AskedLesson{{ID: "a-1", Text: "x"}, {ID: "b-1", Text: "y"}, {ID: "c-1", Text: "z"}},
		"a-1: applies\nc-1: applies", "", "", 3)
	if !slices.Equal(changed, []string{"a-1", "c-1"}) || !slices.Equal(ignored, []string{"b-1"}) {
		t.Fatalf("Resolve order: changed %v ignored %v", changed, ignored)
	}
}
