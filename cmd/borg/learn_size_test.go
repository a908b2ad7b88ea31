package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestLearnBodyOverLimitRefused: a body on stdin longer than a lesson may
// hold is refused as a lesson file over the limit is (exit 3, docs/lessons.md
// "What learn refuses"), names the limit and the fix, and writes nothing.
func TestLearnBodyOverLimitRefused(t *testing.T) {
	a := newAdvStore(t)
	body := strings.Repeat("lorem ipsum ", memfs.MaxLessonBytes/12+1)
	code, out, errs := a.borg(body, "learn", "The export job keeps a long log", "--body", "-")
	if code != exitRefused {
		t.Fatalf("exit %d, want %d (refused); stdout %q stderr %q", code, exitRefused, out, errs)
	}
	if !strings.Contains(errs, "more than a lesson may hold") || !strings.Contains(errs, "--anchor") {
		t.Fatalf("stderr %q does not name the limit and the fix", errs)
	}
	if files, _ := a.s.LessonFiles(); len(files) != 0 {
		t.Fatalf("%d lesson files written by a refused learn", len(files))
	}
}

// TestLearnHiddenCharacterNamesFix: a gist or tag holding a character that
// renders as nothing is refused (exit 3), naming the character, the field
// and what to do about it, and nothing is written.
func TestLearnHiddenCharacterNamesFix(t *testing.T) {
	a := newAdvStore(t)
	for _, args := range [][]string{
		{"learn", "The export job\u200b runs nightly"},
		{"learn", "The export job runs nightly", "--tag", "ex\u200bport"},
	} {
		code, out, errs := a.borg("", args...)
		if code != exitRefused {
			t.Fatalf("%q: exit %d, want %d (refused); stdout %q stderr %q", args, code, exitRefused, out, errs)
		}
		for _, want := range []string{"refusing to learn", "U+200B", "retype", "run borg learn again"} {
			if !strings.Contains(errs, want) {
				t.Fatalf("%q: stderr %q lacks %q", args, errs, want)
			}
		}
	}
	if files, _ := a.s.LessonFiles(); len(files) != 0 {
		t.Fatalf("%d lesson files written by refused learns", len(files))
	}
}

// TestLearnRefusedWhileStoreBusy: a lesson borg refuses (a secret in it, a
// claim a lesson already makes) is refused while another writer holds the
// store (that the learn does not wait for it first, TestPending holds of
// memfs.Store.Begin); and with the store free, a refused learn leaves no
// lock, journal or index change behind.
func TestLearnRefusedWhileStoreBusy(t *testing.T) {
	a := newAdvStore(t)
	if code, out, errs := a.borg("", "learn", "The export job runs nightly at 02:00 UTC"); code != 0 {
		t.Fatalf("learn: exit %d; stdout %q stderr %q", code, out, errs)
	}
	refused := [][]string{
		{"learn", "The deploy token is ghp_Ab3dEfGh1jKlMn0pQrStUvWxYz0123456789"},
		{"learn", "The export job runs nightly at 02:00 UTC"},
	}
	unlock, err := a.s.LockWrites()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range refused {
		code, out, errs := a.borg("", args...)
		if code != exitRefused {
			t.Fatalf("%q with the store held: exit %d, want %d (refused); stdout %q stderr %q", args, code, exitRefused, out, errs)
		}
	}
	unlock()
	for _, args := range refused {
		if code, out, errs := a.borg("", args...); code != exitRefused {
			t.Fatalf("%q: exit %d, want %d (refused); stdout %q stderr %q", args, code, exitRefused, out, errs)
		}
	}
	for _, p := range []string{".git/index.lock", ".borg/journal.json"} {
		if _, err := os.Stat(filepath.Join(a.s.Dir(), p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after refused learns: %v", p, err)
		}
	}
	if files, _ := a.s.LessonFiles(); len(files) != 1 {
		t.Errorf("%d lesson files after one learn and refused ones, want 1", len(files))
	}
}
