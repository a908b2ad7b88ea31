package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// TestAdversarialTeammatePushRunsNothing: a teammate commits hook scripts,
// a file-system monitor and a .gitattributes that re-encodes lessons and
// runs a filter into the store, and the user's own git config makes all
// of them live (a relative core.hooksPath, a filter and a textconv driver
// of that name, core.fsmonitor, an external diff program). borg sync, learn and sleep --apply run
// none of them; the teammate's lesson is read as git stores it; doctor
// names the committed files as the cause.
func TestAdversarialTeammatePushRunsNothing(t *testing.T) {
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	root := filepath.Dir(store)
	marks := filepath.Join(root, "ran")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's global config, as git reads it from HOME: every setting
	// names something the teammate's push provides.
	global := "[core]\n\thooksPath = .githooks\n\tfsmonitor = .githooks/fsmonitor\n" +
		"[filter \"evil\"]\n\tclean = sh -c 'touch " + marks + "/clean; cat'\n\tsmudge = sh -c 'touch " + marks + "/smudge; cat'\n" +
		"[diff \"evil\"]\n\ttextconv = sh -c 'touch " + marks + "/textconv; cat \"$0\"'\n" +
		"[merge \"evil\"]\n\tdriver = sh -c 'touch " + marks + "/merge; true'\n" +
		// An external diff program would print its own output where borg
		// reads git's, and run on every log walk.
		"[diff]\n\texternal = sh -c 'touch " + marks + "/external'\n"
	if err := os.WriteFile(filepath.Join(vars["HOME"], ".gitconfig"), []byte(global), 0o644); err != nil {
		t.Fatal(err)
	}
	// The teammate's git runs nothing of theirs either.
	safe := []string{"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_AUTHOR_NAME=mate", "GIT_AUTHOR_EMAIL=mate@example.com", "GIT_COMMITTER_NAME=mate", "GIT_COMMITTER_EMAIL=mate@example.com"}
	remote := filepath.Join(root, "remote.git")
	testGit(t, root, safe, "init", "-q", "--bare", "-b", "main", remote)
	testGit(t, store, nil, "-c", "core.hooksPath="+os.DevNull, "remote", "add", "origin", remote)
	if code, _, errs := inProcess(t, vars, "", "sync"); code != 0 {
		t.Fatalf("first sync: exit %d: %s", code, errs)
	}
	mate := filepath.Join(root, "mate")
	testGit(t, root, safe, "clone", "-q", remote, mate)
	write := func(rel, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(mate, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"post-merge", "post-checkout", "pre-commit", "post-commit", "commit-msg", "prepare-commit-msg", "pre-push", "reference-transaction", "pre-auto-gc", "post-rewrite", "post-index-change", "fsmonitor"} {
		write(".githooks/"+h, "#!/bin/sh\ntouch "+marks+"/"+h+"\n", 0o755)
	}
	mateLesson := domain.Lesson{ID: "teammate-encoding-lesson-9a8b", Type: "semantic", Confidence: 0.7, Gist: "Teammate says the billing deploy needs the vault token."}
	write(memfs.LessonPath(mateLesson.ID), string(memfs.Render(mateLesson)), 0o644)
	testGit(t, mate, safe, "add", "-A")
	testGit(t, mate, safe, "commit", "-q", "-m", "teammate: hooks and a lesson")
	write(".gitattributes", "log/*.jsonl merge=union\n* filter=evil diff=evil merge=evil\nlessons/** working-tree-encoding=UTF-16LE\n", 0o644)
	testGit(t, mate, safe, "add", ".gitattributes")
	testGit(t, mate, safe, "commit", "-q", "-m", "teammate: attributes")
	testGit(t, mate, safe, "push", "-q", "origin", "HEAD:main")

	steps := [][]string{
		{"sync"},
		{"learn", "Rotate the staging certificates every quarter"},
		{"sync"},
		{"show", mateLesson.ID},
		{"sleep", "--apply", "--date", "2099-01-01"},
		{"recall", "--sync", "billing deploy vault token"},
	}
	for _, args := range steps {
		code, out, errs := inProcess(t, vars, "", args...)
		if code != 0 {
			t.Errorf("borg %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		if args[0] == "show" && !strings.Contains(out, mateLesson.Gist) {
			t.Errorf("the teammate's lesson does not read: %s", out)
		}
		if args[0] == "recall" && !strings.Contains(out, mateLesson.ID) {
			t.Errorf("recall lacks the teammate's lesson: %s", out)
		}
	}
	if ran, _ := os.ReadDir(marks); len(ran) > 0 {
		var names []string
		for _, d := range ran {
			names = append(names, d.Name())
		}
		t.Errorf("borg ran what the teammate's push provided: %s", strings.Join(names, ", "))
	}
	data, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(memfs.LessonPath(mateLesson.ID))))
	if err != nil || !strings.HasPrefix(string(data), "<!doctype html>") {
		t.Errorf("the lesson is not checked out as git stores it: %q %v", data[:min(len(data), 40)], err)
	}
	_, out, _ := inProcess(t, vars, "", "doctor")
	for _, want := range []string{".githooks is committed", ".gitattributes line 2", ".gitattributes line 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
}
