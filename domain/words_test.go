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

func TestWordRule(t *testing.T) {
	lesson := "Run migrations with goose before the integration tests; schema drift breaks fixtures."
	tests := []struct {
		name          string
		before, after string
		novel         int
		want          bool
	}{
		{"three novel words", "x", "added goose migrations for schema", 3, true},
		{"two novel words are chance", "", "goose migrations", 3, false},
		{"words already there are not novel", "goose migrations schema", "goose migrations schema", 3, false},
		{"case-insensitive", "", "GOOSE Migrations SCHEMA", 3, true},
		{"nothing in the work", "", "", 3, false},
		{"a threshold under one reads as one", "", "goose", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WordRule(lesson, tt.before, tt.after, tt.novel); got != tt.want {
				t.Fatalf("WordRule = %v, want %v", got, tt.want)
			}
		})
	}
}
