package memfs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestReadLessonsParallelSameAsSerial holds ReadLessons, which parses on
// every processor, to reading the files one by one: the same lessons in the
// order asked, and the same errors, in that order, for the bad files among
// them (markup refused, a name that is not an id, an id that does not match,
// a symlink, a missing file).
func TestReadLessonsParallelSameAsSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := newTestStore(t)
	dir := filepath.Join(s.Dir(), LessonsDir)
	var ids []string
	for i := range 300 {
		id := fmt.Sprintf("lesson-%03d", i)
		data := Render(sampleLesson(id))
		switch i % 37 {
		case 5:
			data = []byte(strings.Replace(string(data), "</article>", "<script>x()</script></article>", 1))
		case 11:
			data = Render(sampleLesson(id + "-other"))
		case 17:
			data = []byte(strings.Replace(string(data), "</article>", "<p>a\u200bb</p></article>", 1))
		}
		if i%37 == 23 {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, id+".html")); err != nil {
				t.Fatal(err)
			}
		} else if i%37 != 29 { // 29: missing
			if err := os.WriteFile(filepath.Join(dir, id+".html"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
		if i%50 == 7 {
			ids = append(ids, "Bad_Name")
		}
	}
	// Asked out of order: the results follow the request.
	for i, j := 0, len(ids)-1; i < j; i, j = i+2, j-2 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	var want []domain.Lesson
	var wantErrs []string
	for _, id := range ids {
		l, err := s.readLesson(LessonsDir, id)
		if err != nil {
			wantErrs = append(wantErrs, err.Error())
			continue
		}
		want = append(want, l)
	}
	if len(wantErrs) < 30 || len(want) < 250 {
		t.Fatalf("the test's store has %d good lessons and %d bad files; want both kinds", len(want), len(wantErrs))
	}
	for range 3 {
		got, errs := s.ReadLessons(ids)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadLessons read %d lessons, not those a serial read gives (%d), in that order", len(got), len(want))
		}
		var gotErrs []string
		for _, err := range errs {
			gotErrs = append(gotErrs, err.Error())
		}
		if !reflect.DeepEqual(gotErrs, wantErrs) {
			t.Fatalf("ReadLessons errors =\n%q\nwant\n%q", gotErrs, wantErrs)
		}
	}
}

// TestHiddenRuneTable holds hiddenRune's ASCII table to the rune-by-rune
// rule it stands for, over every code point.
func TestHiddenRuneTable(t *testing.T) {
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // not encodable in UTF-8
		}
		want := !(r == '\n' || r == '\t' || r == 0xFE0E || r == 0xFE0F) && domain.Invisible(r)
		s := "ab" + string(r) + "c"
		got, ok := hiddenRune(s)
		if ok != want || (ok && got != r) {
			t.Fatalf("hiddenRune(%q) = %U, %v; want %v", s, got, ok, want)
		}
	}
}
