package index

import (
	"slices"
	"testing"
)

func TestIdentParts(t *testing.T) {
	tests := []struct {
		name, word string
		want       []string
	}{
		{"one word", "retry", nil},
		{"letters and digits", "utf8", nil},
		{"camel case", "retryPolicy", nil},
		{"snake case", "pay_db_stage", []string{"pay", "db", "stage"}},
		{"screaming snake", "STAGE_DB_HOST", []string{"STAGE", "DB", "HOST"}},
		{"dunder", "__init__", []string{"init"}},
		{"dotted", "flags.yaml", []string{"flags", "yaml"}},
		{"dotted version", "api.v2", []string{"api", "v2"}},
		{"dotted camel case", "kgo.ConsumeResetOffset", []string{"kgo", "ConsumeResetOffset"}},
		{"colon", "cs:go", nil},
		{"initials", "J.K", nil},
		{"abbreviation", "e.g", nil},
		{"one-letter pieces", "us_west_2", []string{"us", "west", "2"}},
		{"dotted number", "3.14", nil},
		{"version", "v1.15", nil},
		{"digit dot letter", "v1.x", []string{"v1", "x"}},
		{"apostrophe", "don't", nil},
		{"non-ASCII", "été_long", []string{"été", "long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range identParts(nil, tt.word) {
				got = append(got, tt.word[p[0]:p[1]])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("identParts(%q) = %q, want %q", tt.word, got, tt.want)
			}
		})
	}
}

// TestAnalyzeIdentifiers: a name written in code and the words prose
// spells it with share terms, and the name keeps its own.
func TestAnalyzeIdentifiers(t *testing.T) {
	tests := []struct{ code, prose string }{
		{"cfg.retry_policy = p", "the retry policy"},
		{"STAGE_DB_HOST=x", "the stage db host"},
		{"x-request-id", "request id"},
		{"api.v2.users", "api users"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			code := analyze(tt.code)
			for _, w := range analyze(tt.prose) {
				if !slices.Contains(code, w) {
					t.Errorf("analyze(%q) = %q: no %q of %q", tt.code, code, w, tt.prose)
				}
			}
		})
	}
	if got := analyze("retry_policy"); !slices.Equal(got, []string{"retry_polici", "retri", "polici"}) {
		t.Errorf("analyze(retry_policy) = %q, want the name, then its words", got)
	}
}
