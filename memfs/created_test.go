package memfs

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestCreatedDefaultsToFirstCommit holds the format's default for a lesson
// written without memhtml-created: the author time of the commit that
// first added its file, through a later edit's commit; none while the file
// is not committed; and a date the file states always wins.
func TestCreatedDefaultsToFirstCommit(t *testing.T) {
	s := newTestStore(t)
	commit := func(unix int64, msg string, paths ...string) {
		t.Helper()
		gitCLI(t, s.Dir(), append([]string{"add", "--"}, paths...)...)
		cmd := exec.Command("git", "-C", s.Dir(), "commit", "-qm", msg)
		date := time.Unix(unix, 0).UTC().Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=ada", "GIT_COMMITTER_EMAIL=ada@example.com",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v\n%s", err, out)
		}
	}
	undated := sampleLesson("hand-written-one")
	undated.Created = time.Time{}
	dated := sampleLesson("hand-written-dated")
	writeStoreFile(t, s, LessonPath(undated.ID), Render(undated))
	writeStoreFile(t, s, LessonPath(dated.ID), Render(dated))

	if l, err := s.Lesson(undated.ID); err != nil || !l.Created.IsZero() {
		t.Fatalf("not committed yet: created %v, %v; want none", l.Created, err)
	}
	const added, edited = 1_780_000_000, 1_790_000_000
	commit(added, "two lessons by hand", LessonPath(undated.ID), LessonPath(dated.ID))
	undated.Body = "Edited later."
	writeStoreFile(t, s, LessonPath(undated.ID), Render(undated))
	commit(edited, "an edit", LessonPath(undated.ID))

	want := time.Unix(added, 0).UTC()
	l, err := s.Lesson(undated.ID)
	if err != nil || !l.Created.Equal(want) {
		t.Fatalf("Lesson: created %v, %v; want %v (the first commit's author time)", l.Created, err, want)
	}
	all, errs := s.Lessons()
	if len(errs) > 0 || len(all) != 2 {
		t.Fatalf("Lessons: %d lessons, errors %v", len(all), errs)
	}
	for _, l := range all {
		switch l.ID {
		case undated.ID:
			if !l.Created.Equal(want) {
				t.Errorf("Lessons: %s created %v, want %v", l.ID, l.Created, want)
			}
		case dated.ID:
			if !l.Created.Equal(dated.Created) {
				t.Errorf("Lessons: %s created %v, want its own %v", l.ID, l.Created, dated.Created)
			}
		}
	}
	// The index's read (a hook's path) walks no history: no date.
	if read, errs := s.ReadLessons([]string{undated.ID}); len(errs) > 0 || len(read) != 1 || !read[0].Created.IsZero() {
		t.Errorf("ReadLessons: %v %v, want the lesson as written, without a date", read, errs)
	}
	got := s.FirstAdded(context.Background(), "HEAD", []string{LessonPath(undated.ID), "lessons/zz/not-there.html"})
	if len(got) != 1 || !got[LessonPath(undated.ID)].Equal(want) {
		t.Errorf("FirstAdded = %v, want only %s at %v", got, LessonPath(undated.ID), want)
	}
	defer func(n int) { maxAddedPaths = n }(maxAddedPaths)
	maxAddedPaths = 1 // past it, the history of all of lessons/ is read
	got = s.FirstAdded(context.Background(), "HEAD", []string{LessonPath(undated.ID), LessonPath(dated.ID)})
	if len(got) != 2 || !got[LessonPath(undated.ID)].Equal(want) || !got[LessonPath(dated.ID)].Equal(want) {
		t.Errorf("FirstAdded of more paths than it names = %v, want both at %v", got, want)
	}
	if got := s.FirstAdded(context.Background(), "--all", []string{LessonPath(undated.ID)}); got != nil {
		t.Errorf("FirstAdded took an option for a revision: %v", got)
	}
}
