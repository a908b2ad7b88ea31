package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// TestAdversarialRepairKeepsBoth: a lesson's flat file and a teammate's
// copy of it in another lesson's bucket hold other text. borg doctor --fix
// moves neither onto the other: it names the conflict, keeps both files
// byte for byte, and moves the lessons that have no conflict.
func TestAdversarialRepairKeepsBoth(t *testing.T) {
	a := newAdvStore(t)
	id := "rotate-staging-certs-4d5e"
	mine := memfs.Render(domain.Lesson{ID: id, Type: "semantic", Confidence: 0.8, Gist: "Rotate the staging certificates every quarter."})
	theirs := memfs.Render(domain.Lesson{ID: id, Type: "semantic", Confidence: 0.6, Gist: "Rotate the staging certificates every month, not every quarter."})
	wrong := "00"
	if memfs.Bucket(id) == wrong {
		wrong = "01"
	}
	other := "pin-the-toolchain-7a8b"
	files := map[string][]byte{
		memfs.LessonsDir + "/" + id + ".html":               mine,
		memfs.LessonsDir + "/" + wrong + "/" + id + ".html": theirs,
		memfs.LessonsDir + "/" + other + ".html":            memfs.Render(domain.Lesson{ID: other, Type: "semantic", Confidence: 0.8, Gist: "Pin the Go toolchain in go.mod."}),
	}
	var paths []string
	for rel, data := range files {
		p := filepath.Join(a.dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, rel)
	}
	if _, err := a.s.Commit("a flat lesson and a teammate's misplaced copy", paths...); err != nil {
		t.Fatal(err)
	}
	_, out, errs := a.borg("", "doctor", "--fix")
	for rel, data := range files {
		if rel == memfs.LessonsDir+"/"+other+".html" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(a.dir, filepath.FromSlash(rel)))
		if err != nil || string(got) != string(data) {
			t.Errorf("doctor --fix changed or dropped %s (err %v)", rel, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(a.dir, filepath.FromSlash(memfs.LessonPath(id)))); err == nil {
		t.Errorf("doctor --fix wrote one copy at %s:\n%s", memfs.LessonPath(id), got)
	}
	if !strings.Contains(out+errs, "with other content") || !strings.Contains(out+errs, memfs.LessonsDir+"/"+wrong+"/"+id+".html") {
		t.Errorf("doctor --fix does not name the conflict:\n%s%s", out, errs)
	}
	if _, err := os.Stat(filepath.Join(a.dir, filepath.FromSlash(memfs.LessonPath(other)))); err != nil {
		t.Errorf("the lesson without a conflict was not moved: %v", err)
	}
}
