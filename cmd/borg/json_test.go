package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func TestMemoryJSONInfinity(t *testing.T) {
	cases := []struct {
		name       string
		activation float64
		want       string
	}{
		{"no use is null", math.Inf(-1), `"activation":null`},
		{"finite is a number", -0.5, `"activation":-0.5`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(toJSONMemory(domain.Memory{ID: "abc", Activation: tc.activation}))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.want) {
				t.Fatalf("JSON %s lacks %s", data, tc.want)
			}
		})
	}
}

func TestLessonID(t *testing.T) {
	cases := []struct{ gist, want string }{
		{"Run migrations before the integration tests", "run-migrations-before-integration-tests-239a"},
		{"  Run   migrations before THE integration tests ", "run-migrations-before-integration-tests-239a"},
		{"42 is the answer", "lesson-42-answer-"},
		{"¿…?", "lesson-"},
		{"Über café", "uber-cafe-"},
		{"Use the café résumé parser for naïve dates", "use-cafe-resume-parser-naive-"},
		{"数据库迁移必须在测试前运行", "lesson-"},
		{"Use key 9f8e7d6c5b4a for the bucket", "use-key-bucket-"},
		{"Ask abcdefghijklmnopqrstuvwxyz first", "ask-first-"},
	}
	for _, tc := range cases {
		t.Run(tc.gist, func(t *testing.T) {
			got := lessonID(tc.gist)
			if !strings.HasPrefix(got, tc.want) || !domain.ValidID(got) {
				t.Fatalf("lessonID(%q) = %q; want prefix %q and a valid id", tc.gist, got, tc.want)
			}
		})
	}
}

// TestLessonIDLegacy: a lesson learned before ids folded accents keeps its
// id, and learning its gist again finds it there.
func TestLessonIDLegacy(t *testing.T) {
	const gist = "Use the café résumé parser for naïve dates"
	if legacy := legacyLessonIDs(gist)[0]; !strings.HasPrefix(legacy, "use-caf-r-sum-parser-") {
		t.Fatalf("legacy id %q", legacy)
	}
	dir := filepath.Join(t.TempDir(), "store")
	s, err := memfs.Init(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	old := domain.Lesson{ID: legacyLessonIDs(gist)[0], Type: domain.TypeSemantic, Confidence: 0.8, Gist: gist}
	if err := s.WriteLesson(old); err != nil {
		t.Fatal(err)
	}
	found, free, err := gistLesson(s, gist)
	if err != nil || found != old.ID || free != "" {
		t.Errorf("gistLesson = %q, %q, %v; want the legacy lesson %s", found, free, err, old.ID)
	}
	found, free, err = gistLesson(s, "Use the cafe resume parser for naive dates")
	if err != nil || found != "" || !strings.HasPrefix(free, "use-cafe-resume-parser-naive-") {
		t.Errorf("another gist: gistLesson = %q, %q, %v", found, free, err)
	}
}

func TestParseWeights(t *testing.T) {
	w, err := parseWeights("vetoed_w=1, consolidate_sessions=5,d=0.4", domain.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	if w.VetoedW != 1 || w.ConsolidateSessions != 5 || w.D != 0.4 || w.CorrectedW != domain.DefaultWeights.CorrectedW {
		t.Fatalf("weights = %+v", w)
	}
	for _, bad := range []string{"x=1", "d", "d=abc", "novel_words=1.5", "vetoed_w=-100", "d=NaN", "d=+Inf", "consolidate_sessions=-1"} {
		if _, err := parseWeights(bad, domain.DefaultWeights); err == nil {
			t.Errorf("parseWeights(%q) accepted", bad)
		}
	}
}

func TestInterspersed(t *testing.T) {
	app := newApp(newOSEnv())
	cases := []struct{ in, want string }{
		{"borg learn gist --tag a --json", "borg learn --tag a --json -- gist"},
		{"borg --store d learn gist --body -", "borg --store d learn --body - -- gist"},
		{"borg debug ope --weights d=1", "borg debug ope --weights d=1"},
		{"borg no abc --why=x", "borg no --why=x -- abc"},
		{"borg learn -- --not-a-flag", "borg learn -- --not-a-flag"},
		{"borg unknown a --b", "borg unknown a --b"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			argv, err := interspersed(app, strings.Fields(tc.in))
			if got := strings.Join(argv, " "); err != nil || got != tc.want {
				t.Fatalf("interspersed = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// A query that starts with "-" and has a space is an argument.
	argv, err := interspersed(app, []string{"borg", "recall", "-v flag is broken", "--k", "2"})
	if got := strings.Join(argv, "|"); err != nil || got != "borg|recall|--k|2|--|-v flag is broken" {
		t.Errorf("interspersed = %q, %v", got, err)
	}
	// A flag that takes a value cannot end the line: it would read the
	// "--" before the arguments as its value.
	for _, in := range []string{"borg learn gist --tag", "borg recall q --repo", "borg show id --store", "borg --store"} {
		if argv, err := interspersed(app, strings.Fields(in)); err == nil || !strings.Contains(err.Error(), "needs a value") {
			t.Errorf("interspersed(%q) = %q, %v; want a missing value", in, argv, err)
		}
	}
}
