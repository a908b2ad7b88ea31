package memfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs/gitobj"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestCommitEncodingMatchesGoGit: borg's commit objects are byte for byte
// what go-git's Commit.Encode writes for the same fields, and parseCommit
// reads back the tree, parents and author go-git's Decode reads.
func TestCommitEncodingMatchesGoGit(t *testing.T) {
	tree := plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	p1 := plumbing.NewHash("3a5e4ad2fde71133b253cae285b70f736ea22a1f")
	p2 := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -8*3600), time.FixedZone("", -30*60)}
	for i, tt := range []struct {
		parents []plumbing.Hash
		name    string
		email   string
		when    time.Time
		msg     string
	}{
		{nil, "borg", "borg@localhost", time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), "learn: one\n"},
		{[]plumbing.Hash{p1}, "Zoë O'Brien", "zoe@example.com", time.Date(2026, 1, 2, 3, 4, 5, 999, zones[1]), "sleep: phase 1\n\nbody\n"},
		{[]plumbing.Hash{p1, p2}, "a", "", time.Date(1969, 12, 31, 23, 0, 0, 0, zones[2]), "no newline"},
		{[]plumbing.Hash{p2}, " spaced ", "e", time.Date(2030, 6, 1, 0, 0, 0, 0, zones[3]), ""},
	} {
		author := signature{Name: tt.name, Email: tt.email, When: tt.when}
		committer := signature{Name: "c", Email: "c@example.com", When: tt.when.Add(time.Hour)}
		ours := (&gitCommit{Tree: tree, Parents: tt.parents, Author: author, Committer: committer, Message: tt.msg}).encode()
		theirs := &object.Commit{TreeHash: tree, ParentHashes: tt.parents, Message: tt.msg,
			Author:    object.Signature{Name: author.Name, Email: author.Email, When: author.When},
			Committer: object.Signature{Name: committer.Name, Email: committer.Email, When: committer.When}}
		obj := &plumbing.MemoryObject{}
		if err := theirs.Encode(obj); err != nil {
			t.Fatal(err)
		}
		rd, _ := obj.Reader()
		want, _ := io.ReadAll(rd)
		if string(ours) != string(want) {
			t.Errorf("%d: encode = %q, go-git writes %q", i, ours, want)
		}
		got, err := parseCommit(ours)
		if err != nil {
			t.Fatalf("%d: parseCommit: %v", i, err)
		}
		var back object.Commit
		if err := back.Decode(obj); err != nil {
			t.Fatal(err)
		}
		_, gotOff := got.Author.When.Zone()
		_, wantOff := back.Author.When.Zone()
		if got.Tree != back.TreeHash || fmt.Sprint(got.Parents) != fmt.Sprint(back.ParentHashes) ||
			got.Author.Name != back.Author.Name || got.Author.Email != back.Author.Email ||
			!got.Author.When.Equal(back.Author.When) || gotOff != wantOff {
			t.Errorf("%d: parseCommit = %+v, go-git decodes tree %s parents %v author %+v", i, got, back.TreeHash, back.ParentHashes, back.Author)
		}
	}
	for _, raw := range []string{"", "\n\nmsg", "parent 3a5e4ad2fde71133b253cae285b70f736ea22a1f\n", "tree 4b82\n", "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent x\n"} {
		if c, err := parseCommit([]byte(raw)); err == nil {
			t.Errorf("parseCommit(%q) = %+v, want an error", raw, c)
		}
	}
	// Headers without the blank line and message still end.
	if c, err := parseCommit([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 3a5e4ad2fde71133b253cae285b70f736ea22a1f")); err != nil || len(c.Parents) != 1 {
		t.Errorf("parseCommit without a message = %+v, %v", c, err)
	}
}

// goGitToplevel and goGitUserEmail are GitToplevel and GitUserEmail as
// go-git's root package answers them, for the comparison below.
func goGitToplevel(dir string) string {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return ""
	}
	wt, err := r.Worktree()
	if err != nil {
		return ""
	}
	return wt.Filesystem.Root()
}

func goGitUserEmail(dir string) string {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		cfg, err := config.LoadConfig(config.GlobalScope)
		if err != nil {
			return ""
		}
		return cfg.User.Email
	}
	cfg, err := r.ConfigScoped(config.GlobalScope)
	if err != nil {
		return ""
	}
	return cfg.User.Email
}

// TestRepoDiscoveryMatchesGoGit: GitToplevel and GitUserEmail answer what
// go-git's PlainOpenWithOptions and ConfigScoped answer, from a worktree's
// root, a folder and a file in it, a linked worktree, a .git file that
// points nowhere, repositories whose format go-git refuses, and outside
// any repository.
func TestRepoDiscoveryMatchesGoGit(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\temail = global@example.com\n\tname = Global\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	gitCLI(t, base, "init", "-q", repo)
	gitCLI(t, repo, "config", "user.email", "local@example.com")
	writeFile := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(repo, "sub", "deeper", "f.txt"), "x\n")
	gitCLI(t, repo, "add", "-A")
	gitCLI(t, repo, "commit", "-q", "-m", "one")
	linked := filepath.Join(base, "linked")
	gitCLI(t, repo, "worktree", "add", "-q", linked)

	bare := filepath.Join(base, "noemail")
	gitCLI(t, base, "init", "-q", bare)
	dangling := filepath.Join(base, "dangling")
	writeFile(filepath.Join(dangling, ".git"), "gitdir: "+filepath.Join(base, "gone")+"\n")
	writeFile(filepath.Join(dangling, "sub", "x"), "")
	notGitdir := filepath.Join(base, "notgitdir")
	writeFile(filepath.Join(notGitdir, ".git"), "nothing here\n")
	relLinked := filepath.Join(base, "rel")
	gitCLI(t, repo, "worktree", "add", "-q", relLinked)
	writeFile(filepath.Join(relLinked, ".git"), "gitdir: ../repo/.git/worktrees/rel\n")

	ext := func(name string, kv ...string) string {
		dir := filepath.Join(base, name)
		gitCLI(t, base, "init", "-q", dir)
		gitCLI(t, dir, "config", "user.email", name+"@example.com")
		for i := 0; i+1 < len(kv); i += 2 {
			gitCLI(t, dir, "config", kv[i], kv[i+1])
		}
		return dir
	}
	dirs := []string{
		repo, filepath.Join(repo, "sub"), filepath.Join(repo, "sub", "deeper"), filepath.Join(repo, "sub", "deeper", "f.txt"),
		filepath.Join(repo, "sub", "missing"), filepath.Join(repo, ".git"),
		linked, filepath.Join(linked, "sub", "deeper"), relLinked, bare, dangling, filepath.Join(dangling, "sub"), notGitdir,
		ext("worktreeconfig", "extensions.worktreeConfig", "true"),
		ext("v1noop", "core.repositoryFormatVersion", "1", "extensions.noop-v1", "true"),
		ext("v0noop", "extensions.noop", "true"),
		ext("v1partial", "core.repositoryFormatVersion", "1", "extensions.partialClone", "origin"),
		home, base, "/",
	}
	for _, d := range dirs {
		if got, want := GitToplevel(d), goGitToplevel(d); got != want {
			t.Errorf("GitToplevel(%s) = %q, go-git finds %q", d, got, want)
		}
		if got, want := GitUserEmail(d), goGitUserEmail(d); got != want {
			t.Errorf("GitUserEmail(%s) = %q, go-git reads %q", d, got, want)
		}
	}
	// A format version git does not know (go-git opens it): refused, as
	// git refuses it.
	v2 := ext("v2", "core.repositoryFormatVersion", "2")
	if got := GitToplevel(v2); got != "" {
		t.Errorf("GitToplevel of a repository of format version 2 = %q, want none", got)
	}
	if got := GitUserEmail(v2); got != "global@example.com" {
		t.Errorf("GitUserEmail in a repository of format version 2 = %q, want the global one", got)
	}
	if out, err := exec.Command("git", "-C", v2, "rev-parse", "--show-toplevel").CombinedOutput(); err == nil {
		t.Errorf("git opens a repository of format version 2: %s", out)
	}
	if got := GitUserEmail(linked); got != "local@example.com" {
		t.Errorf("GitUserEmail in a linked worktree = %q, want the repository's own", got)
	}
	// A global config go-git cannot parse: nothing, as before.
	writeFile(filepath.Join(home, ".gitconfig"), "[user\n")
	for _, d := range []string{repo, base} {
		if got, want := GitUserEmail(d), goGitUserEmail(d); got != want {
			t.Errorf("with a broken global config, GitUserEmail(%s) = %q, go-git reads %q", d, got, want)
		}
	}
}

// TestResolveRefRevisions: the revisions borg resolves from git's files,
// and those it leaves to git rev-parse, name the commit git names; what
// names nothing is ErrNotFound.
func TestResolveRefRevisions(t *testing.T) {
	s := newTestStore(t)
	for i := range 3 {
		writeStoreFile(t, s, fmt.Sprintf("lessons/aa/l%d.html", i), Render(sampleLesson(fmt.Sprintf("lesson-%d", i))))
		if _, err := s.Commit("add", fmt.Sprintf("lessons/aa/l%d.html", i)); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.Dir()
	gitCLI(t, dir, "branch", "side", "HEAD~2")
	gitCLI(t, dir, "tag", "light", "HEAD~1")
	gitCLI(t, dir, "tag", "-a", "-m", "annotated", "annot", "HEAD~1")
	gitCLI(t, dir, "checkout", "-q", "side")
	writeStoreFile(t, s, "lessons/bb/x.html", Render(sampleLesson("side-x")))
	gitCLI(t, dir, "add", "lessons/bb/x.html")
	gitCLI(t, dir, "commit", "-q", "-m", "side")
	gitCLI(t, dir, "checkout", "-q", "main")
	gitCLI(t, dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	head := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
	revs := []string{"HEAD", "main", "side", "light", "annot", "tags/annot", "heads/side", "annot~1",
		"HEAD^", "HEAD^1", "HEAD^2", "HEAD^0", "HEAD~", "HEAD~~", "HEAD^^", "HEAD^2^", "HEAD^2~1", "main~3", "main^1~2",
		head, head + "~1", head[:10], head[:10] + "^2", "HEAD^{commit}", "main@{0}", "HEAD^{/add}"}
	for _, rev := range revs {
		want := strings.TrimSpace(gitCLI(t, dir, "rev-parse", rev+"^{commit}"))
		if got, err := s.ResolveRef(rev); err != nil || got != want {
			t.Errorf("ResolveRef(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}
	// A full id one digit off HEAD's (its last digit changed, never kept:
	// the commit's id depends on the clock, and ends in any digit).
	other := head[:39] + map[bool]string{true: "1", false: "0"}[head[39] == '0']
	for _, rev := range []string{"nope", "HEAD~9", "HEAD^3", "main^2^2", "refs/heads/nope", "nope~1", "-x", "deadbeef", other, "HEAD:lessons"} {
		if got, err := s.ResolveRef(rev); !errors.Is(err, ErrNotFound) {
			t.Errorf("ResolveRef(%q) = %q, %v; want ErrNotFound", rev, got, err)
		}
	}
}

// TestReadFileAtPaths: a file reads as its blob at any revision; a
// directory, a path through a file, and a path with an empty or a dot
// segment name no file.
func TestReadFileAtPaths(t *testing.T) {
	s := newTestStore(t)
	lesson := Render(sampleLesson("lesson-a"))
	writeStoreFile(t, s, "lessons/aa/a.html", lesson)
	first, err := s.Commit("add", "lessons/aa/a.html")
	if err != nil {
		t.Fatal(err)
	}
	writeStoreFile(t, s, "lessons/aa/a.html", []byte("changed\n"))
	if _, err := s.Commit("change", "lessons/aa/a.html"); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{first, "HEAD~1", "main^"} {
		if got, err := s.ReadFileAt(rev, "lessons/aa/a.html"); err != nil || string(got) != string(lesson) {
			t.Errorf("ReadFileAt(%s) = %q, %v", rev, got, err)
		}
	}
	for _, p := range []string{"", "lessons", "lessons/aa", "lessons/aa/", "lessons//aa/a.html", "/lessons/aa/a.html",
		"lessons/aa/a.html/x", "./lessons/aa/a.html", "lessons/./aa/a.html", "lessons/aa/b.html", "nope/a.html"} {
		if got, err := s.ReadFileAt("HEAD", p); !errors.Is(err, ErrNotFound) {
			t.Errorf("ReadFileAt(HEAD, %q) = %q, %v; want ErrNotFound", p, got, err)
		}
	}
	for name, native := range map[string]bool{"main": true, "refs/heads/main": true, "HEAD": true, first: true, first[:12]: false, "nope": false} {
		if _, ok := s.resolveName(name); ok != native {
			t.Errorf("resolveName(%q) resolved from the files: %v, want %v", name, ok, native)
		}
	}
}

// TestReadStoredFromAlternates: an object gitobj does not find (here, in
// an alternate object directory) is read through git; a missing one, or
// one of another type, is ErrObjectNotFound; ReadFileAt reads through it.
func TestReadStoredFromAlternates(t *testing.T) {
	s := newTestStore(t)
	other := filepath.Join(t.TempDir(), "other")
	gitCLI(t, filepath.Dir(other), "init", "-q", other)
	if err := os.WriteFile(filepath.Join(other, "f.txt"), []byte("from the alternate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, other, "add", "f.txt")
	gitCLI(t, other, "commit", "-q", "-m", "alt")
	gitCLI(t, other, "gc", "-q")
	alt := filepath.Join(s.Dir(), ".git", "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(filepath.Join(other, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := plumbing.NewHash(strings.TrimSpace(gitCLI(t, other, "rev-parse", "HEAD:f.txt")))
	commit := strings.TrimSpace(gitCLI(t, other, "rev-parse", "HEAD"))
	if _, found, _ := s.git.objs.Read(gitobj.Blob, blob); found {
		t.Fatal("gitobj found the alternate's object: the test proves nothing")
	}
	if data, err := s.git.readObject(gitobj.Blob, blob); err != nil || string(data) != "from the alternate\n" {
		t.Errorf("readObject = %q, %v", data, err)
	}
	if _, err := s.git.readObject(gitobj.Tree, blob); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Errorf("a blob read as a tree: %v, want ErrObjectNotFound", err)
	}
	if _, err := s.git.readObject(gitobj.Blob, plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Errorf("a missing object: %v, want ErrObjectNotFound", err)
	}
	if data, err := s.ReadFileAt(commit, "f.txt"); err != nil || string(data) != "from the alternate\n" {
		t.Errorf("ReadFileAt through the alternate = %q, %v", data, err)
	}
	if files, err := s.ReadDirAt(commit, ""); err != nil || len(files) != 1 {
		t.Errorf("ReadDirAt through the alternate = %v, %v", files, err)
	}
}

// TestFindRepoRelativeGitFileFromAFile: a .git file's relative gitdir is
// read from the directory that holds the .git file, also when the search
// starts at a file inside it.
func TestFindRepoRelativeGitFileFromAFile(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real.git")
	work := filepath.Join(base, "work")
	for _, d := range []string{real, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, ".git"), []byte("gitdir: ../real.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{work, file} {
		r, err := findRepo(start, true, true)
		if err != nil {
			t.Fatalf("findRepo(%s): %v", start, err)
		}
		if r.Git != real || r.root != work {
			t.Errorf("findRepo(%s) = git %s, root %s; want %s, %s", start, r.Git, r.root, real, work)
		}
	}
}

// TestValidBranchName: the branch names git check-ref-format --branch
// refuses are refused, and so is HEAD; where git is on PATH it agrees on
// each case.
func TestValidBranchName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"borg/sleep/2026-12-08", true},
		{"review/sleep", true},
		{"ü-branch", true},
		{"HEAD", false},
		{"-x", false},
		{"a..b", false},
		{"a b", false},
		{"a.lock", false},
		{"a/b.lock/c", false},
		{"x@{y", false},
		{"a/.b", false},
		{"a//b", false},
		{"/a", false},
		{"a/", false},
		{"a.", false},
		{"a~b", false},
		{"a:b", false},
		{"a*b", false},
		{"a\\b", false},
		{"", false},
	}
	git, _ := exec.LookPath("git")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidBranchName(tt.name); got != tt.ok {
				t.Errorf("ValidBranchName(%q) = %v, want %v", tt.name, got, tt.ok)
			}
			if git != "" && tt.name != "" {
				err := exec.Command(git, "check-ref-format", "--branch", tt.name).Run()
				if (err == nil) != tt.ok {
					t.Errorf("git check-ref-format --branch %q: %v; the table says %v", tt.name, err, tt.ok)
				}
			}
		})
	}
}
