package hooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestParseHunks: the files a commit's diff touches and the parent's lines
// it rewrote, whatever the changed lines read like.
func TestParseHunks(t *testing.T) {
	tests := []struct {
		name, diff string
		want       string // each file as path=ranges+added
	}{
		{"two files",
			"diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -3,2 +3,1 @@\n-x\n-y\n+z\n" +
				"diff --git a/b.go b/b.go\nnew file mode 100644\n--- /dev/null\n+++ b/b.go\n@@ -0,0 +1,2 @@\n+p\n+q\n",
			"a.go=[[3 2]]+1 b.go=[]+2"},
		{"a removed SQL comment that reads as a file's name",
			"diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- a/keep\n+++ b/keep\n-select 2;\n+select 1;\n@@ -9 +9 @@\n-old\n+new\n",
			"q.sql=[[1 2] [9 1]]+3"},
		{"a quoted name", "diff --git \"a/na\\303\\257ve.go\" \"b/na\\303\\257ve.go\"\n--- \"a/na\\303\\257ve.go\"\n+++ \"b/na\\303\\257ve.go\"\n@@ -1 +1 @@\n-x\n+y\n",
			"naïve.go=[[1 1]]+1"},
		{"cut short", "--- a/a.go\n+++ b/a.go\n@@ -1,5 +1,5 @@\n-x\n", "a.go=[[1 5]]+5"},
		{"names with a space", "diff --git a/foo bar.go b/foo bar.go\n--- a/foo bar.go\t\n+++ b/foo bar.go\t\n@@ -2 +2 @@\n-x\n+y\n" +
			"diff --git \"a/sp \\303\\257.go\" \"b/sp \\303\\257.go\"\n--- \"a/sp \\303\\257.go\"\t\n+++ \"b/sp \\303\\257.go\"\t\n@@ -1 +1 @@\n-x\n+y\n",
			"foo bar.go=[[2 1]]+1 sp ï.go=[[1 1]]+1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range parseHunks(tt.diff) {
				got = append(got, fmt.Sprintf("%s=%v+%d", f.path, f.ranges, f.added))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("parseHunks = %s, want %s", g, tt.want)
			}
		})
	}
}

// FuzzEachDiffLine: any text reads without a panic, and every added or
// removed line it reports is a line of the text, less its first byte.
func FuzzEachDiffLine(f *testing.F) {
	f.Add("--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n context\n")
	f.Add("--- /dev/null\n+++ b/n.txt\n+line\n")
	f.Add("@@ -1 +1 @@\n\\ No newline at end of file\n")
	f.Fuzz(func(t *testing.T, diff string) {
		lines := map[string]bool{}
		for _, l := range strings.Split(diff, "\n") {
			if l != "" {
				lines[l[1:]] = true
			}
		}
		eachDiffLine(diff, func(kind int, text string) {
			if (kind == diffAdded || kind == diffRemoved) && !lines[text] {
				t.Fatalf("line %q is not in the diff", text)
			}
		})
		_ = parseHunks(diff)
	})
}

// TestSnapshotWhenGitIsStopped: a snapshot whose git the hook's deadline
// stopped names nothing, not the empty tree (which would make the whole
// repository the session's work); a repository with no commit yet is the
// empty tree.
func TestSnapshotWhenGitIsStopped(t *testing.T) {
	repo := newRepo(t)
	if got := Snapshot(context.Background(), repo); got != emptyTree {
		t.Fatalf("a repository with no commit: %q, want the empty tree", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Snapshot(ctx, repo); got != "" {
		t.Fatalf("stopped: %q, want nothing", got)
	}
}

// TestWithoutConflictCopies: an ask holds one version of a lesson: a
// sync's conflict copy (linked to its original) goes when its original is
// asked too, and stays alone; a lesson whose id only looks like a copy's,
// with no such link, stays.
func TestWithoutConflictCopies(t *testing.T) {
	copyOf := func(id, of string) Recalled {
		return Recalled{Lesson: domain.Lesson{ID: id, Links: []domain.LessonLink{{Rel: domain.RelConflictsWith, Target: of}}}}
	}
	plain := func(id string) Recalled { return Recalled{Lesson: domain.Lesson{ID: id}} }
	for _, tt := range []struct {
		name string
		got  []Recalled
		want []string
	}{
		{"a copy beside its original", []Recalled{plain("retry-payments-5be5"), copyOf("retry-payments-5be5-v9b0f", "retry-payments-5be5"), plain("other-1234")}, []string{"retry-payments-5be5", "other-1234"}},
		{"a copy alone", []Recalled{copyOf("retry-payments-5be5-v9b0f", "retry-payments-5be5"), plain("other-1234")}, []string{"retry-payments-5be5-v9b0f", "other-1234"}},
		{"an id like a copy's, no link", []Recalled{plain("deploy-v2-1234"), plain("deploy-v2-1234-v0a1b")}, []string{"deploy-v2-1234", "deploy-v2-1234-v0a1b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ids []string
			for _, r := range withoutConflictCopies(tt.got) {
				ids = append(ids, r.Lesson.ID)
			}
			if strings.Join(ids, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", ids, tt.want)
			}
		})
	}
}
