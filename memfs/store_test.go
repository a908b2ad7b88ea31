package memfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// testEnv is a fixed environment for commits.
func testEnv(extra map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		switch k {
		case "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME":
			return "borg test"
		case "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL":
			return "test@example.com"
		}
		return ""
	}
}

func newTestStore(tb testing.TB) *Store {
	tb.Helper()
	s, err := Init(context.Background(), filepath.Join(tb.TempDir(), "store"), "", WithEnv(testEnv(nil)))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// writeStoreFile writes a file of the store by hand (a slash path from its
// root), making its directory: a lesson's bucket, say.
func writeStoreFile(tb testing.TB, s *Store, rel string, data []byte) {
	tb.Helper()
	p := filepath.Join(s.Dir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// gitCLI runs the git CLI in dir, to check borg's commits the way a user
// would see them.
func gitCLI(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func sampleLesson(id string) domain.Lesson {
	return domain.Lesson{
		ID: id, Type: domain.TypeProcedural, Confidence: 0.8, Title: "A title",
		Created: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		Gist:    "Run the migrations before the integration tests.", Body: "Why: the schema is not auto-applied.",
	}
}

func TestInitLayout(t *testing.T) {
	s := newTestStore(t)
	for _, p := range []string{"lessons", "archive", "log", ".borg/node", ".gitattributes", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(s.Dir(), p)); err != nil {
			t.Errorf("missing %s: %v", p, err)
		}
	}
	attrs, _ := os.ReadFile(filepath.Join(s.Dir(), ".gitattributes"))
	if !strings.Contains(string(attrs), "log/*.jsonl merge=union") {
		t.Errorf(".gitattributes = %q", attrs)
	}
	ignore, _ := os.ReadFile(filepath.Join(s.Dir(), ".gitignore"))
	if !strings.Contains(string(ignore), ".borg/") {
		t.Errorf(".gitignore = %q", ignore)
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status after init:\n%s", st)
	}
	if log := gitCLI(t, s.Dir(), "log", "--format=%an <%ae> %s"); log != "borg test <test@example.com> borg: init store\n" {
		t.Errorf("git log = %q", log)
	}
	gitCLI(t, s.Dir(), "fsck", "--strict")
	node, err := s.Node()
	if err != nil || !strings.HasPrefix(node, "n-") {
		t.Errorf("Node = %q, %v", node, err)
	}
	if _, err := Init(context.Background(), s.Dir(), ""); !errors.Is(err, ErrStoreExists) {
		t.Errorf("second Init = %v; want ErrStoreExists", err)
	}
}

func TestOpenNotStore(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if !errors.Is(err, ErrNotStore) {
		t.Fatalf("Open = %v; want ErrNotStore", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "borg init") {
		t.Fatalf("error %q should name the dir and the fix", err)
	}
}

// TestOpenLessonsGone holds Open on a store whose lessons/ was deleted or
// replaced by a file to an error that says how to restore it from git,
// not to make a store (borg init refuses the directory).
func TestOpenLessonsGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(dir string) error
	}{
		{"deleted", func(dir string) error { return os.RemoveAll(filepath.Join(dir, LessonsDir)) }},
		{"a file", func(dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, LessonsDir)); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, LessonsDir), nil, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			if err := tc.damage(s.Dir()); err != nil {
				t.Fatal(err)
			}
			_, err := Open(s.Dir())
			if !errors.Is(err, ErrNotStore) {
				t.Fatalf("Open = %v; want ErrNotStore", err)
			}
			if want := "git -C " + s.Dir() + " checkout HEAD -- lessons"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "borg init") {
				t.Fatalf("error %q should give the fix %q, not borg init", err, want)
			}
		})
	}
}

// TestOpenStoreDirNotDir holds Open's refusal of a store directory that is
// a file to a fix that applies: .borg/ is never committed, so a removal
// there has nothing to commit, and its derived folders are rebuilt.
func TestOpenStoreDirNotDir(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"log", "commit the removal"},
		{"archive", "commit the removal"},
		{".borg/cache", "remove it (derived state: the next command rebuilds it)"},
		{".borg/index", "remove it (derived state: the next command rebuilds it)"},
		{".borg/sessions", "remove it (the agents' session state"},
		{".borg/local", "move it away and restore the directory (this machine's local log)"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s := newTestStore(t)
			p := filepath.Join(s.Dir(), filepath.FromSlash(tc.dir))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(s.Dir())
			if err == nil || !strings.Contains(err.Error(), tc.dir+" is not a directory") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v; want %s named with %q", err, tc.dir, tc.want)
			}
			if strings.HasPrefix(tc.dir, ".borg") && strings.Contains(err.Error(), "commit") {
				t.Errorf("Open = %v; .borg/ is never committed", err)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	cases := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/flag", map[string]string{"BORG_STORE": "/env", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/flag"},
		{"env", "", map[string]string{"BORG_STORE": "/env", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/env"},
		{"xdg", "", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/borg/store"},
		{"home", "", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/borg/store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Discover(tc.flag, func(k string) string { return tc.env[k] })
			if got != filepath.FromSlash(tc.want) {
				t.Fatalf("Discover = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestWriteLessonAndCommit(t *testing.T) {
	s := newTestStore(t)
	l := sampleLesson("migrations-first-7f3a")
	if err := s.WriteLesson(l); err != nil {
		t.Fatal(err)
	}
	// A file borg did not write stays out of the commit.
	if err := os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := s.Commit("learn migrations-first-7f3a", LessonPath(l.ID))
	if err != nil {
		t.Fatal(err)
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "?? notes.txt\n" {
		t.Errorf("git status = %q; want only the untracked notes.txt", st)
	}
	if got := strings.TrimSpace(gitCLI(t, s.Dir(), "rev-parse", "HEAD")); got != h {
		t.Errorf("HEAD = %s; Commit returned %s", got, h)
	}
	gitCLI(t, s.Dir(), "fsck", "--strict")
	got, err := s.Lesson(l.ID)
	if err != nil || !equalLesson(got, canonical(l)) {
		t.Fatalf("Lesson = %#v, %v", got, err)
	}
	data, err := s.ReadFileAt("HEAD", LessonPath(l.ID))
	if err != nil || string(data) != string(Render(l)) {
		t.Fatalf("ReadFileAt = %q, %v", data, err)
	}
	// Committing again with nothing changed writes no commit.
	again, err := s.Commit("again", LessonPath(l.ID))
	if err != nil || again != h {
		t.Fatalf("Commit unchanged = %s, %v; want %s", again, err, h)
	}
	// Archive moves the file; the commit records the move.
	if err := s.archive(l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit("archive", LessonPath(l.ID), ArchivePath(l.ID)); err != nil {
		t.Fatal(err)
	}
	if files := gitCLI(t, s.Dir(), "ls-files", "lessons", "archive"); files != "archive/.keep\n"+ArchivePath("migrations-first-7f3a")+"\nlessons/.keep\n" {
		t.Errorf("ls-files = %q", files)
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "?? notes.txt\n" {
		t.Errorf("git status after archive = %q", st)
	}
	if _, err := s.Lesson(l.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lesson after archive = %v; want ErrNotFound", err)
	}
}

func TestLessonsReportsBadFiles(t *testing.T) {
	s := newTestStore(t)
	for _, id := range []string{"good-one", "good-two"} {
		if err := s.WriteLesson(sampleLesson(id)); err != nil {
			t.Fatal(err)
		}
	}
	bad := map[string]string{
		"scripted.html":  strings.Replace(string(Render(sampleLesson("scripted"))), "</article>", "<script>x()</script></article>", 1),
		"mismatch.html":  string(Render(sampleLesson("other-id"))),
		"Bad_Name.html":  string(Render(sampleLesson("bad-name"))),
		"not-html.txt":   "ignored",
		"link-away.html": "",
	}
	for name, content := range bad {
		if err := os.WriteFile(filepath.Join(s.Dir(), "lessons", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(s.Dir(), "lessons", "link-away.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(s.Dir(), "lessons", "link-away.html")); err != nil {
		t.Fatal(err)
	}
	ls, errs := s.Lessons()
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.ID)
	}
	if !reflect.DeepEqual(ids, []string{"good-one", "good-two"}) {
		t.Errorf("ids = %v", ids)
	}
	var reasons []string
	for _, err := range errs {
		var im *domain.InvalidMemory
		if !errors.As(err, &im) {
			t.Fatalf("error %v is not an InvalidMemory", err)
		}
		reasons = append(reasons, im.Path+": "+im.Reason)
	}
	want := []string{
		"lessons/Bad_Name.html: file name is not a lesson id",
		"lessons/link-away.html: not a regular file",
		"lessons/mismatch.html: memhtml-id \"other-id\" does not match",
		"lessons/scripted.html: forbidden markup <script>",
	}
	if len(reasons) != len(want) {
		t.Fatalf("errors = %q", reasons)
	}
	for i := range want {
		if !strings.HasPrefix(reasons[i], want[i]) {
			t.Errorf("error %d = %q; want prefix %q", i, reasons[i], want[i])
		}
	}
}

func TestWriteLessonRefuses(t *testing.T) {
	s := newTestStore(t)
	bad := sampleLesson("Bad-ID")
	var im *domain.InvalidMemory
	if err := s.WriteLesson(bad); !errors.As(err, &im) {
		t.Errorf("WriteLesson(bad id) = %v", err)
	}
	traversal := sampleLesson("../../etc/x")
	if err := s.WriteLesson(traversal); !errors.As(err, &im) {
		t.Errorf("WriteLesson(traversal) = %v", err)
	}
	// A symlink in the lesson's place, and one in its bucket's.
	elsewhere := t.TempDir()
	target := filepath.Join(elsewhere, "elsewhere.html")
	linked := filepath.Join(s.Dir(), filepath.FromSlash(LessonPath("linked")))
	if err := os.MkdirAll(filepath.Dir(linked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, linked); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteLesson(sampleLesson("linked")); err == nil || !strings.Contains(err.Error(), "symlinks are refused") {
		t.Errorf("WriteLesson over a symlink = %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink's target was written")
	}
	bucket := filepath.Join(s.Dir(), LessonsDir, Bucket("bucket-linked"))
	if err := os.Symlink(elsewhere, bucket); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteLesson(sampleLesson("bucket-linked")); err == nil || !strings.Contains(err.Error(), "symlinks are refused") {
		t.Errorf("WriteLesson into a symlinked bucket = %v", err)
	}
	if _, err := s.Lesson("bucket-linked"); err == nil || !strings.Contains(err.Error(), "symlinks are refused") {
		t.Errorf("Lesson through a symlinked bucket = %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote through the symlinked bucket: %v", entries)
	}
	if _, errs := s.Lessons(); !slices.ContainsFunc(errs, func(err error) bool {
		return strings.Contains(err.Error(), Bucket("bucket-linked")+": the bucket is not a directory")
	}) {
		t.Errorf("Lessons does not report the symlinked bucket: %v", errs)
	}
}

func TestCommitOnRef(t *testing.T) {
	s := newTestStore(t)
	head, err := s.ResolveRef("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	ref := "refs/heads/borg/sleep/2026-11-30"
	changes := []FileChange{
		{Path: "lessons/a-lesson.html", Data: Render(sampleLesson("a-lesson"))},
		{Path: "lessons/deep/x/y.txt", Data: []byte("nested\n")},
		{Path: "lessons/.keep", Delete: true},
	}
	c1, err := s.CommitOnRef(ref, "", head, changes, "sleep: decay", when)
	if err != nil {
		t.Fatal(err)
	}
	// The worktree and the index are untouched.
	if _, err := os.Stat(filepath.Join(s.Dir(), "lessons", "a-lesson.html")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CommitOnRef wrote the worktree")
	}
	if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status = %q", st)
	}
	gitCLI(t, s.Dir(), "fsck", "--strict")
	if got := gitCLI(t, s.Dir(), "ls-tree", "-r", "--name-only", ref); got != ".gitattributes\n.gitignore\narchive/.keep\nlessons/a-lesson.html\nlessons/deep/x/y.txt\nlog/.keep\n" {
		t.Errorf("ls-tree = %q", got)
	}
	// Both list the subdirectories too (the buckets).
	list, err := s.listAt(ref, "lessons")
	if err != nil || !reflect.DeepEqual(list, []string{"lessons/a-lesson.html", "lessons/deep/x/y.txt"}) {
		t.Errorf("ListAt = %v, %v", list, err)
	}
	files, err := s.ReadDirAt(ref, "lessons/")
	if err != nil || len(files) != 2 || files[0].Path != "lessons/a-lesson.html" || string(files[0].Data) != string(changes[0].Data) ||
		files[1].Path != "lessons/deep/x/y.txt" || string(files[1].Data) != "nested\n" {
		t.Errorf("ReadDirAt = %q, %v", files, err)
	}
	if files, err := s.ReadDirAt(ref, "nowhere"); err != nil || len(files) != 0 {
		t.Errorf("ReadDirAt(missing) = %v, %v", files, err)
	}
	if list, err := s.listAt(ref, "nowhere"); err != nil || len(list) != 0 {
		t.Errorf("ListAt(missing) = %v, %v", list, err)
	}
	if _, err := s.ReadFileAt(ref, "lessons/missing.html"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadFileAt(missing) = %v", err)
	}
	if _, err := s.ResolveRef("refs/heads/nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResolveRef(missing) = %v", err)
	}
	// Compare-and-swap: a stale expectation fails and leaves the ref.
	more := []FileChange{{Path: "lessons/b-lesson.html", Data: Render(sampleLesson("b-lesson"))}}
	if _, err := s.CommitOnRef(ref, head, c1, more, "stale", when); !errors.Is(err, ErrRefMoved) {
		t.Errorf("stale CommitOnRef = %v; want ErrRefMoved", err)
	}
	if _, err := s.CommitOnRef(ref, "", c1, more, "exists", when); !errors.Is(err, ErrRefMoved) {
		t.Errorf("CommitOnRef on an existing ref expecting none = %v; want ErrRefMoved", err)
	}
	if got, _ := s.ResolveRef(ref); got != c1 {
		t.Errorf("ref moved to %s after failed CAS", got)
	}
	c2, err := s.CommitOnRef(ref, c1, c1, more, "sleep: merge", when)
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, s.Dir(), "log", "--format=%s %ad", "--date=iso-strict", ref); got != "sleep: merge 2026-11-30T03:00:00+00:00\nsleep: decay 2026-11-30T03:00:00+00:00\nborg: init store "+gitCLI(t, s.Dir(), "log", "-1", "--format=%ad", "--date=iso-strict", head) {
		t.Errorf("log = %q", got)
	}
	if _, err := s.CommitOnRef(ref, c2, c2, more, "nothing", when); !errors.Is(err, ErrNoChanges) {
		t.Errorf("CommitOnRef without a change = %v; want ErrNoChanges", err)
	}
	for _, p := range []string{"../x", "/abs", ".git/config", ".borg/node", "a//b", ""} {
		if _, err := s.CommitOnRef(ref, c2, c2, []FileChange{{Path: p, Data: []byte("x")}}, "bad", when); err == nil {
			t.Errorf("CommitOnRef accepted path %q", p)
		}
	}
}

func TestInitClone(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitCLI(t, t.TempDir(), "init", "--bare", "--initial-branch=main", remote)
	// An empty remote: a fresh store with origin set.
	a, err := Init(context.Background(), filepath.Join(t.TempDir(), "a"), remote, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gitCLI(t, a.Dir(), "remote", "get-url", "origin")); got != remote {
		t.Errorf("origin = %q", got)
	}
	if err := a.WriteLesson(sampleLesson("shared-one")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit("learn", LessonPath("shared-one")); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, a.Dir(), "push", "origin", "main")
	// A remote with a store: the clone has the lesson and its own node.
	b, err := Init(context.Background(), filepath.Join(t.TempDir(), "b"), remote, WithEnv(testEnv(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lesson("shared-one"); err != nil {
		t.Errorf("cloned store lacks the lesson: %v", err)
	}
	na, _ := a.Node()
	nb, _ := b.Node()
	if na == nb {
		t.Errorf("two machines share node id %s", na)
	}
	if st := gitCLI(t, b.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status after clone = %q", st)
	}
}

// TestAdversarialCommittedSymlinks: a store whose own directories, or whose log
// file, are symbolic links (a teammate's commit) is refused, naming the path
// and the fix; nothing is read from or written to where they point.
func TestAdversarialCommittedSymlinks(t *testing.T) {
	for _, d := range []string{LessonsDir, LogDir, PrivateDir} {
		t.Run(d, func(t *testing.T) {
			s := newTestStore(t)
			outside := t.TempDir()
			p := filepath.Join(s.Dir(), d)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				t.Skipf("no symlinks here: %v", err)
			}
			_, err := Open(s.Dir())
			if err == nil || !strings.Contains(err.Error(), d+" is not a directory") {
				t.Fatalf("Open = %v, want a refusal naming %s", err, d)
			}
		})
	}
	t.Run("log file", func(t *testing.T) {
		s := newTestStore(t)
		target := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(target, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(s.Dir(), filepath.FromSlash(s.LogPath()))); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
		if err := s.Append(domain.Event{MS: 1, Kind: domain.KindSession, Session: "s1"}); err == nil {
			t.Fatal("appended through a symlinked log file")
		}
		if data, _ := os.ReadFile(target); len(data) != 0 {
			t.Fatalf("the link's target got %q", data)
		}
	})
	t.Run("at clone", func(t *testing.T) {
		// A teammate commits log/ as a link and pushes; a new teammate
		// clones: nothing may be written where the link points.
		s := newTestStore(t)
		outside := t.TempDir()
		if err := os.RemoveAll(filepath.Join(s.Dir(), LogDir)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(s.Dir(), LogDir)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
		gitCLI(t, s.Dir(), "add", "-A")
		gitCLI(t, s.Dir(), "commit", "-q", "-m", "log elsewhere")
		dir := filepath.Join(t.TempDir(), "clone")
		_, err := Init(context.Background(), dir, s.Dir(), WithEnv(testEnv(nil)))
		if err == nil || !strings.Contains(err.Error(), LogDir+" is not a directory") {
			t.Fatalf("Init from a remote with log/ as a link = %v, want a refusal naming it", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("the clone wrote through the link: %v", entries)
		}
	})
}

// TestResolveRefMatchesGit: full ref names, branch names and revision
// expressions resolve as git rev-parse resolves them.
func TestResolveRefMatchesGit(t *testing.T) {
	s := newTestStore(t)
	for i := range 3 {
		writeStoreFile(t, s, fmt.Sprintf("lessons/aa/l%d.html", i), Render(sampleLesson(fmt.Sprintf("lesson-%d", i))))
		if _, err := s.Commit("add", fmt.Sprintf("lessons/aa/l%d.html", i)); err != nil {
			t.Fatal(err)
		}
	}
	gitCLI(t, s.Dir(), "branch", "side", "HEAD~1")
	gitCLI(t, s.Dir(), "pack-refs", "--all")
	for _, rev := range []string{"HEAD", "main", "refs/heads/main", "refs/heads/main~1", "refs/heads/side", "side~1", "HEAD^", "HEAD~2"} {
		want := strings.TrimSpace(gitCLI(t, s.Dir(), "rev-parse", rev))
		if got, err := s.ResolveRef(rev); err != nil || got != want {
			t.Errorf("ResolveRef(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}
	if _, err := s.ResolveRef("refs/heads/nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing ref: %v", err)
	}
}
