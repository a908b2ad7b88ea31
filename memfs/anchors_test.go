package memfs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestAnchors: the cache maps each anchored file to its lessons; an update
// replaces what the read lessons and removed ids held and keeps the
// rest; without a cache it reads every lesson; an unreadable cache reads as
// none and is rebuilt by a complete update.
func TestAnchors(t *testing.T) {
	s := newTestStore(t)
	if got := s.Anchors(); got != nil {
		t.Fatalf("no cache yet: %v", got)
	}
	a, b, c := sampleLesson("lesson-a"), sampleLesson("lesson-b"), sampleLesson("lesson-c")
	a.Anchors = []string{"api/db.go@0123abcd", "api/x.go"}
	b.Anchors = []string{"api/db.go@4567ef01"}
	for _, l := range []domain.Lesson{a, b} {
		if err := s.WriteLesson(l); err != nil {
			t.Fatal(err)
		}
	}
	// No cache and an incomplete update: every lesson is read.
	if err := s.UpdateAnchors(nil, nil, false); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"api/db.go": {"lesson-a", "lesson-b"}, "api/x.go": {"lesson-a"}}
	if got := s.Anchors(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// b moves to another file, c is new, a is removed.
	b.Anchors = []string{"web/ui.ts"}
	c.Anchors = []string{"api/db.go"}
	if err := s.UpdateAnchors([]domain.Lesson{b, c}, []string{"lesson-a"}, false); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{"api/db.go": {"lesson-c"}, "web/ui.ts": {"lesson-b"}}
	if got := s.Anchors(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	p := filepath.Join(s.Dir(), filepath.FromSlash(anchorsFile))
	// A new lesson anchored nowhere, and c read again as it was, change
	// nothing: the file is not written again (a rename would give it a new
	// inode).
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateAnchors([]domain.Lesson{sampleLesson("lesson-d"), c}, []string{"lesson-gone"}, false); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(p); err != nil || !os.SameFile(before, after) {
		t.Fatalf("an update that changes nothing rewrote the cache (%v)", err)
	}
	// c anchored on another file alone, the same count: written.
	c.Anchors = []string{"api/other.go"}
	if err := s.UpdateAnchors([]domain.Lesson{c}, nil, false); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{"api/other.go": {"lesson-c"}, "web/ui.ts": {"lesson-b"}}
	if got := s.Anchors(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// b no longer anchored: dropped.
	b.Anchors = nil
	if err := s.UpdateAnchors([]domain.Lesson{b}, nil, false); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{"api/other.go": {"lesson-c"}}
	if got := s.Anchors(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	c.Anchors = []string{"api/db.go"}
	if err := s.UpdateAnchors([]domain.Lesson{c}, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.Anchors(); got != nil {
		t.Fatalf("unreadable cache read as %v", got)
	}
	if err := s.UpdateAnchors([]domain.Lesson{c}, nil, true); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Anchors(), map[string][]string{"api/db.go": {"lesson-c"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a complete update: %v, want %v", got, want)
	}
	if es, _ := os.ReadDir(filepath.Dir(p)); len(es) == 0 {
		t.Fatal("cache dir empty")
	}
	for _, d := range []string{filepath.Dir(p), filepath.Join(s.Dir(), tmpDir)} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if filepath.Ext(e.Name()) != ".json" && filepath.Ext(e.Name()) != ".bin" {
				t.Errorf("left %s in %s", e.Name(), d)
			}
		}
	}
}
