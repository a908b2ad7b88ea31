package domain

import (
	"strings"
	"testing"
)

func TestDeclared(t *testing.T) {
	tests := []struct {
		name    string
		message string
		id      string
		applies bool
		ok      bool
	}{
		{"colon applies", "lesson-a: applies", "lesson-a", true, true},
		{"colon skip", "lesson-a: skip", "lesson-a", false, true},
		{"case-insensitive", "Lesson-A: APPLIES", "lesson-a", true, true},
		{"upper-case id argument", "lesson-a: skip", "LESSON-A", false, true},
		{"backticks", "`lesson-a`: `applies`", "lesson-a", true, true},
		{"brackets", "[lesson-a] skip", "lesson-a", false, true},
		{"dash", "- lesson-a - applies", "lesson-a", true, true},
		{"bold", "**lesson-a**: skip.", "lesson-a", false, true},
		{"no separator is no declaration", "lesson-a applies", "lesson-a", false, false},
		{"absent", "nothing to declare", "lesson-a", false, false},
		{"longer id is another lesson", "lesson-a-2: skip", "lesson-a", false, false},
		{"prefixed id is another lesson", "my-lesson-a: skip", "lesson-a", false, false},
		{"word must end", "lesson-a: skipping", "lesson-a", false, false},
		{"last line wins", "lesson-a: applies\nmore text\nlesson-a: skip", "lesson-a", false, true},
		{"last wins on one line", "lesson-a: skip, then lesson-a: applies", "lesson-a", true, true},
		{"other lesson ignored", "lesson-b: applies", "lesson-a", false, false},
		{"not across lines", "lesson-a:\napplies", "lesson-a", false, false},
		{"empty id", ": applies", "", false, false},
		{"em dash", "lesson-a — skip", "lesson-a", false, true},
		{"en dash", "lesson-a – applies", "lesson-a", true, true},
		{"arrow", "lesson-a => applies", "lesson-a", true, true},
		{"trailing dash separator", "lesson-a- skip", "lesson-a", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applies, ok := Declared(tt.message, tt.id)
			if applies != tt.applies || ok != tt.ok {
				t.Fatalf("Declared(%q, %q) = (%v, %v), want (%v, %v)", tt.message, tt.id, applies, ok, tt.applies, tt.ok)
			}
		})
	}
}

func TestStripDeclaration(t *testing.T) {
	tests := []struct {
		name string
		text string
		id   string
		want string
	}{
		{"plain", "done.\nlesson-a: applies\nbye", "lesson-a", "done.\n\nbye"},
		{"brackets go too", "see [lesson-a]: skip here", "lesson-a", "see  here"},
		{"backticks go too", "`lesson-a`: `applies`!", "lesson-a", "!"},
		{"others stay", "lesson-a: skip lesson-b: applies", "lesson-a", " lesson-b: applies"},
		{"every one", "lesson-a: skip and lesson-a: applies", "lesson-a", " and "},
		{"none", "lesson-a is fine", "lesson-a", "lesson-a is fine"},
		{"case kept elsewhere", "Fixed IT. LESSON-A: Skip", "lesson-a", "Fixed IT. "},
		{"a declaration the strip uncovers", "lesson-a: lesson-a: applies skip", "lesson-a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StripDeclaration(tt.text, tt.id)
			if got != tt.want {
				t.Fatalf("StripDeclaration(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if _, ok := Declared(got, tt.id); ok {
				t.Fatalf("Declared still finds a declaration in %q", got)
			}
		})
	}
}

func FuzzDeclared(f *testing.F) {
	for _, s := range []string{"lesson-a: applies", "`lesson-a`: skip", "[lesson-a] - applies\nlesson-a: skip",
		"lesson-a-2: skip", "lesson-a: lesson-a: applies skip", "İlesson-a: skip", ""} {
		f.Add(s, "lesson-a")
	}
	f.Fuzz(func(t *testing.T, text, id string) {
		applies, ok := Declared(text, id)
		if !ok && applies {
			t.Fatal("applies without a declaration")
		}
		stripped := StripDeclaration(text, id)
		if _, again := Declared(stripped, id); again {
			t.Fatalf("declaration left in %q", stripped)
		}
		if !ok && stripped != text {
			t.Fatalf("nothing declared but text changed: %q → %q", text, stripped)
		}
		if len(stripped) > len(text) {
			t.Fatal("strip grew the text")
		}
		if StripDeclaration(stripped, id) != stripped {
			t.Fatal("strip is not idempotent")
		}
		if ok && !strings.Contains(strings.ToLower(text), strings.ToLower(strings.TrimSpace(id))) {
			t.Fatalf("declared an id the text does not contain")
		}
	})
}
