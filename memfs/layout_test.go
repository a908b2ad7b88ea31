package memfs

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestBucket(t *testing.T) {
	for _, id := range []string{"abc", "migrations-first-7f3a", "bench-lesson-000000"} {
		sum := sha1.Sum([]byte(id))
		if got, want := Bucket(id), hex.EncodeToString(sum[:])[:2]; got != want {
			t.Errorf("Bucket(%q) = %s, want %s (sha1sum's first two digits)", id, got, want)
		}
		if got, want := LessonPath(id), "lessons/"+Bucket(id)+"/"+id+".html"; got != want {
			t.Errorf("LessonPath(%q) = %s, want %s", id, got, want)
		}
		if got, want := ArchivePath(id), "archive/"+Bucket(id)+"/"+id+".html"; got != want {
			t.Errorf("ArchivePath(%q) = %s, want %s", id, got, want)
		}
	}
	// 10,000 generated ids spread over the 256 buckets within a factor of
	// two of the mean (39): ids that share a long prefix do not cluster.
	count := map[string]int{}
	for i := range 10000 {
		count[Bucket(fmt.Sprintf("bench-lesson-%06d", i))]++
	}
	if len(count) != 256 {
		t.Fatalf("%d buckets used, want 256", len(count))
	}
	for b, n := range count {
		if n < 39/2 || n > 39*2 {
			t.Errorf("bucket %s holds %d of 10,000", b, n)
		}
	}
}

func TestParseLessonPath(t *testing.T) {
	id := "migrations-first-7f3a"
	b := Bucket(id)
	other := "00"
	if b == other {
		other = "01"
	}
	for _, tc := range []struct {
		path       string
		dir, id    string
		flat, isOK bool
	}{
		{path: LessonPath(id), dir: LessonsDir, id: id, isOK: true},
		{path: ArchivePath(id), dir: ArchiveDir, id: id, isOK: true},
		{path: "lessons/" + id + ".html", dir: LessonsDir, id: id, flat: true, isOK: true},
		{path: "archive/" + id + ".html", dir: ArchiveDir, id: id, flat: true, isOK: true},
		{path: "lessons/" + other + "/" + id + ".html"}, // another lesson's bucket
		{path: "lessons/" + b + "/x/" + id + ".html"},
		{path: "lessons/" + b + "/" + id + ".htm"},
		{path: "lessons/Bad_Name.html"},
		{path: "lessons/.keep"},
		{path: "log/" + b + "/" + id + ".html"},
		{path: id + ".html"},
		{path: "lessons/" + b + "/../" + id + ".html"},
		{path: ""},
	} {
		dir, gotID, flat, ok := ParseLessonPath(tc.path)
		if dir != tc.dir || gotID != tc.id || flat != tc.flat || ok != tc.isOK {
			t.Errorf("ParseLessonPath(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tc.path, dir, gotID, flat, ok, tc.dir, tc.id, tc.flat, tc.isOK)
		}
	}
}

// FuzzParseLessonPath: a path it accepts is exactly where the layout puts
// the lesson it names, bucketed or flat.
func FuzzParseLessonPath(f *testing.F) {
	for _, p := range []string{LessonPath("abc"), "lessons/abc.html", ArchivePath("x-y-z"), "lessons/00/abc.html", "lessons//abc.html", "a/b/c"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		dir, id, flat, ok := ParseLessonPath(p)
		if !ok {
			return
		}
		if !domain.ValidID(id) {
			t.Fatalf("%q: bad id %q accepted", p, id)
		}
		want := dir + "/" + Bucket(id) + "/" + id + ".html"
		if flat {
			want = flatPath(dir, id)
		}
		if p != want || dir != LessonsDir && dir != ArchiveDir {
			t.Fatalf("%q parsed to %s %s flat=%v", p, dir, id, flat)
		}
	})
}

// TestMixedLayoutReads: lessons in their buckets and in the flat layout
// are all read; a flat copy of a bucketed lesson is not read twice, and a
// lesson in another's bucket is reported, not read.
func TestMixedLayoutReads(t *testing.T) {
	s := newTestStore(t)
	if err := s.WriteLesson(sampleLesson("bucketed-one")); err != nil {
		t.Fatal(err)
	}
	writeStoreFile(t, s, "lessons/flat-two.html", Render(sampleLesson("flat-two")))
	dupe := sampleLesson("bucketed-one")
	dupe.Gist = "An older copy."
	writeStoreFile(t, s, "lessons/bucketed-one.html", Render(dupe))
	wrong := "00"
	if Bucket("misplaced-three") == wrong {
		wrong = "01"
	}
	writeStoreFile(t, s, "lessons/"+wrong+"/misplaced-three.html", Render(sampleLesson("misplaced-three")))

	files, err := s.LessonFiles()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.ID+"@"+f.Path)
	}
	if want := []string{"bucketed-one@" + LessonPath("bucketed-one"), "flat-two@lessons/flat-two.html"}; !slices.Equal(got, want) {
		t.Errorf("LessonFiles = %v, want %v", got, want)
	}
	ls, errs := s.Lessons()
	if len(ls) != 2 || ls[0].Gist != sampleLesson("x").Gist {
		t.Errorf("Lessons = %+v", ls)
	}
	var im *domain.InvalidMemory
	if len(errs) != 1 || !errors.As(errs[0], &im) || im.Path != "lessons/"+wrong+"/misplaced-three.html" || !strings.Contains(im.Reason, "belongs at "+LessonPath("misplaced-three")) {
		t.Errorf("Lessons errors = %v", errs)
	}
	if l, err := s.Lesson("flat-two"); err != nil || l.ID != "flat-two" {
		t.Errorf("Lesson(flat-two) = %v, %v", l.ID, err)
	}
	if _, err := s.Lesson("misplaced-three"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lesson(misplaced-three) = %v, want not found", err)
	}
	// Archived from the flat layout: it lands in archive/'s bucket.
	if err := s.archive("flat-two"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), filepath.FromSlash(ArchivePath("flat-two")))); err != nil {
		t.Errorf("archive: %v", err)
	}
}

// TestMigrateLayout: doctor --fix's move of a flat store into its buckets
// is one commit git reads as renames; the lessons read the same before and
// after, a same-bytes flat copy is dropped, and a conflicting copy stays.
func TestMigrateLayout(t *testing.T) {
	s := newTestStore(t)
	ids := []string{"alpha-lesson", "beta-lesson", "gamma-lesson"}
	var paths []string
	for _, id := range ids {
		writeStoreFile(t, s, "lessons/"+id+".html", Render(sampleLesson(id)))
		paths = append(paths, "lessons/"+id+".html")
	}
	writeStoreFile(t, s, "archive/old-lesson.html", Render(sampleLesson("old-lesson")))
	paths = append(paths, "archive/old-lesson.html")
	// beta also in its bucket, same bytes; gamma in its bucket, other bytes.
	writeStoreFile(t, s, LessonPath("beta-lesson"), Render(sampleLesson("beta-lesson")))
	g := sampleLesson("gamma-lesson")
	g.Gist = "A newer gist."
	writeStoreFile(t, s, LessonPath("gamma-lesson"), Render(g))
	paths = append(paths, LessonPath("beta-lesson"), LessonPath("gamma-lesson"))
	if _, err := s.Commit("flat", paths...); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Lessons()

	moves, err := s.LayoutMoves()
	if err != nil {
		t.Fatal(err)
	}
	var conflicts []string
	for _, m := range moves {
		if m.Conflict != "" {
			conflicts = append(conflicts, m.From)
		}
	}
	if len(moves) != 4 || !slices.Equal(conflicts, []string{"lessons/gamma-lesson.html"}) {
		t.Fatalf("LayoutMoves = %+v", moves)
	}
	done, left, h, err := s.MigrateLayout()
	if err != nil || len(done) != 3 || h == "" || len(left) != 1 || left[0].From != "lessons/gamma-lesson.html" {
		t.Fatalf("MigrateLayout = %+v, left %+v, %s, %v", done, left, h, err)
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status after the move = %q", st)
	}
	renames := gitCLI(t, s.Dir(), "show", "-M", "--name-status", "--format=", "HEAD")
	for _, want := range []string{"R100\tlessons/alpha-lesson.html\t" + LessonPath("alpha-lesson"), "R100\tarchive/old-lesson.html\t" + ArchivePath("old-lesson"), "D\tlessons/beta-lesson.html"} {
		if !strings.Contains(renames, want) {
			t.Errorf("the move's commit lacks %q:\n%s", want, renames)
		}
	}
	gitCLI(t, s.Dir(), "fsck", "--strict", "--no-dangling")
	after, _ := s.Lessons()
	if len(before) != len(after) {
		t.Fatalf("%d lessons before, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Gist != after[i].Gist {
			t.Errorf("lesson %d: %s %q, then %s %q", i, before[i].ID, before[i].Gist, after[i].ID, after[i].Gist)
		}
	}
	if moves, _ := s.LayoutMoves(); len(moves) != 1 || moves[0].Conflict == "" {
		t.Errorf("left after the move: %+v, want the conflict only", moves)
	}
	if done, left, h, err := s.MigrateLayout(); err != nil || len(done) != 0 || h != "" || len(left) != 1 {
		t.Errorf("second MigrateLayout = %+v, left %+v, %s, %v; want the conflict only", done, left, h, err)
	}
}

// TestMigrateLayoutRenamedFile holds a lesson file renamed by hand (its
// name no longer its memhtml-id) to a move to its id's place, where it is
// read again; a move by its name would leave it unread.
func TestMigrateLayoutRenamedFile(t *testing.T) {
	for _, tc := range []struct{ name, from string }{
		{"other bucket", "lessons/" + Bucket("alpha-lesson") + "/renamed-by-hand.html"},
		{"flat", "lessons/renamed-by-hand.html"},
		{"user folder", "lessons/notes/renamed-by-hand.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			if Bucket("alpha-lesson") == Bucket("renamed-by-hand") {
				t.Fatal("the test needs two buckets")
			}
			writeStoreFile(t, s, tc.from, Render(sampleLesson("alpha-lesson")))
			if _, err := s.Commit("renamed by hand", tc.from); err != nil {
				t.Fatal(err)
			}
			if ls, _ := s.Lessons(); len(ls) != 0 {
				t.Fatalf("the renamed file is read as %+v", ls)
			}
			moves, err := s.LayoutMoves()
			if err != nil {
				t.Fatal(err)
			}
			if len(moves) != 1 || moves[0].To != LessonPath("alpha-lesson") || moves[0].Conflict != "" {
				t.Fatalf("LayoutMoves = %+v, want %s to %s", moves, tc.from, LessonPath("alpha-lesson"))
			}
			if _, left, _, err := s.MigrateLayout(); err != nil || len(left) != 0 {
				t.Fatalf("MigrateLayout: left %+v, %v", left, err)
			}
			ls, errs := s.Lessons()
			if len(errs) != 0 || len(ls) != 1 || ls[0].ID != "alpha-lesson" {
				t.Fatalf("after the move: %+v, %v", ls, errs)
			}
		})
	}
}
