package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"

	"github.com/borg-memory/borg/sleep"
)

// TestCIWorkflowLints: the GitHub workflow borg init --ci github writes
// passes actionlint (used as a library; with shellcheck on PATH its run
// scripts are checked too), and pins this borg's version.
func TestCIWorkflowLints(t *testing.T) {
	path, content, err := ciWorkflow("github")
	if err != nil {
		t.Fatal(err)
	}
	if path != ".github/workflows/borg-sleep.yml" || strings.Contains(string(content), "BORG_VERSION") {
		t.Fatalf("workflow %s:\n%s", path, content)
	}
	opts := &actionlint.LinterOptions{LogWriter: io.Discard}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	} else {
		t.Log("no shellcheck on PATH: the run scripts are not checked")
	}
	linter, err := actionlint.NewLinter(io.Discard, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := linter.Lint("<stdin>", content, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestGitLabCIParses: the GitLab pipeline is valid YAML with one scheduled
// job that sleeps, pushes and asks for a merge request.
func TestGitLabCIParses(t *testing.T) {
	path, content, err := ciWorkflow("gitlab")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]struct {
		Image  string              `yaml:"image"`
		Rules  []map[string]string `yaml:"rules"`
		Script []string            `yaml:"script"`
	}
	if err := yaml.Unmarshal(content, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	job, ok := doc["borg-sleep"]
	if !ok || job.Image == "" || len(job.Rules) == 0 || !strings.Contains(job.Rules[0]["if"], "schedule") {
		t.Fatalf("%s: %+v", path, doc)
	}
	script := strings.Join(job.Script, "\n")
	for _, want := range []string{"borg sleep", "--push", "--summary sleep.md", "merge_requests"} {
		if !strings.Contains(script, want) {
			t.Errorf("%s's script lacks %q", path, want)
		}
	}
	if _, _, err := ciWorkflow("jenkins"); err == nil {
		t.Error("an unknown CI system was accepted")
	}
}

// TestSleepMarkdown: the pull request's description has a section per
// phase with its counts and decisions, and the commits.
func TestSleepMarkdown(t *testing.T) {
	res := sleep.Result{Branch: "borg/sleep/2026-12-01", Commits: []sleep.PhaseCommit{{Commit: "0123456789abcdef0123", Subject: "sleep: merge near-duplicates"}},
		Plan: sleep.Plan{Date: "2026-12-01", Base: "fedcba9876543210", Lessons: 12, Events: 340, Embedder: "ngram",
			Phases: []sleep.PhasePlan{
				{Phase: sleep.PhaseLinks, Number: 7, Counts: []sleep.Count{{Name: "links", N: 4}}},
				{Number: 3, Phase: "merge", Files: 2, Counts: []sleep.Count{{Name: "merged", N: 1}},
					Items: []sleep.Item{{Lesson: "a-lesson-0001", Action: "merged into", Other: "b-lesson-0002", Why: "cosine 0.97"}}},
			}}}
	md := sleepMarkdown(res)
	for _, want := range []string{"## borg sleep 2026-12-01", "### 7. link-ager", "links: 4 (no change)", "### 3. merge",
		"merged: 1 (2 files)", "- `a-lesson-0001` merged into `b-lesson-0002`: cosine 0.97", "- `0123456789ab` sleep: merge near-duplicates"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestSleepMarkdownLongPhase: a phase with more decisions than the
// description lists says what the rest are and where to read them: the
// commit's diff only for a phase that made a commit, and a phase's changes
// are listed before its decisions that change nothing.
func TestSleepMarkdownLongPhase(t *testing.T) {
	items := func(n int, noChange bool) []sleep.Item {
		out := make([]sleep.Item, n)
		for i := range out {
			out[i] = sleep.Item{Lesson: fmt.Sprintf("lesson-%03d", i), Action: "compress", NoChange: noChange}
			if !noChange {
				out[i].Action = "evict"
			}
		}
		return out
	}
	tests := []struct {
		name    string
		files   int
		items   []sleep.Item
		want    []string
		wantNot []string
	}{
		{"no commit", 0, items(60, true), []string{"- … and 10 more that change no file (`borg sleep`'s output lists every decision)"}, []string{"the commit's diff", "see the commit"}},
		{"a commit", 12, items(60, false), []string{"- … and 10 more (10 of them changes: the commit's diff shows them"}, nil},
		{"changes first", 3, append(items(55, true), items(3, false)...), []string{"- `lesson-002` evict", "- … and 8 more that change no file"}, []string{"changes: the commit"}},
		{"all listed", 0, items(50, true), nil, []string{"… and"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := sleepMarkdown(sleep.Result{Plan: sleep.Plan{Date: "2026-12-01", Phases: []sleep.PhasePlan{
				{Phase: sleep.PhaseRetention, Number: 6, Files: tt.files, Items: tt.items}}}})
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("markdown lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(md, w) {
					t.Errorf("markdown holds %q:\n%s", w, md)
				}
			}
		})
	}
}

// TestSleepMarkdownEscapesHTML: a reason quoting lesson text that looks like
// HTML ("<tenant-id>", "<!--") reaches the pull request's description as
// text: a forge would strip the tag or hide everything after the comment.
func TestSleepMarkdownEscapesHTML(t *testing.T) {
	md := sleepMarkdown(sleep.Result{Plan: sleep.Plan{Date: "2026-12-01", Note: "a <b>note</b>", Phases: []sleep.PhasePlan{
		{Phase: sleep.PhaseFrame, Number: 4, Files: 2, Notes: []string{"pairs & <i>subjects</i>"}, Items: []sleep.Item{
			{Lesson: "tenant-new", Action: "supersedes", Other: "tenant-old", Why: `frame "placeholder is": "<tenant-id>" is newer than "<!-- x"`},
		}}}}})
	for _, w := range []string{`"&lt;tenant-id&gt;" is newer than "&lt;!-- x"`, "a &lt;b&gt;note&lt;/b&gt;", "pairs &amp; &lt;i&gt;subjects&lt;/i&gt;"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	for _, w := range []string{"<tenant-id>", "<!--", "<b>", "<i>"} {
		if strings.Contains(md, w) {
			t.Errorf("markdown holds the raw %q:\n%s", w, md)
		}
	}
}
