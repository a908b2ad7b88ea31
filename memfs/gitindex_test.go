package memfs

import (
	"bytes"
	"crypto/sha1"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitKeepsIndexInStep: whatever index git or go-git left, a borg
// commit leaves an index git reads as clean, patched in place or rewritten.
func TestCommitKeepsIndexInStep(t *testing.T) {
	cases := []struct {
		name      string
		patchable bool // the commits patched the index in place
		setup     func(t *testing.T, dir string)
	}{
		{"index written by go-git", true, func(*testing.T, string) {}},
		{"index written by git with a cache tree", true, func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitCLI(t, dir, "add", "notes.txt")
			gitCLI(t, dir, "commit", "-q", "-m", "notes by hand")
		}},
		{"index version 4 (go-git's codec)", false, func(t *testing.T, dir string) {
			gitCLI(t, dir, "update-index", "--index-version", "4")
		}},
		{"index version 3", true, func(t *testing.T, dir string) {
			gitCLI(t, dir, "update-index", "--index-version", "3")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			tc.setup(t, s.Dir())
			for _, id := range []string{"zeta-last", "alpha-first", "mid-lesson"} {
				if err := s.WriteLesson(sampleLesson(id)); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Commit("learn "+id, LessonPath(id)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.archive("mid-lesson"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Commit("archive", LessonPath("mid-lesson"), ArchivePath("mid-lesson")); err != nil {
				t.Fatal(err)
			}
			if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
				t.Fatalf("git status = %q", st)
			}
			// The index names exactly the committed files, with their blobs.
			staged := gitCLI(t, s.Dir(), "ls-files", "-s")
			tree := gitCLI(t, s.Dir(), "ls-tree", "-r", "HEAD")
			if got, want := normalizeLsFiles(staged), normalizeLsTree(tree); got != want {
				t.Fatalf("index:\n%s\nHEAD:\n%s", got, want)
			}
			gitCLI(t, s.Dir(), "fsck", "--strict")
			data, err := os.ReadFile(filepath.Join(s.Dir(), ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			if same, ok := patchIndex(data, nil, nil); ok != tc.patchable || (ok && !bytes.Equal(same, data)) {
				t.Fatalf("patchIndex of the result: ok %v (want %v), unchanged %v", ok, tc.patchable, bytes.Equal(same, data))
			}
			// git itself can still commit on top.
			if err := os.WriteFile(filepath.Join(s.Dir(), "more.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitCLI(t, s.Dir(), "add", "more.txt")
			gitCLI(t, s.Dir(), "commit", "-q", "-m", "more")
			if st := gitCLI(t, s.Dir(), "status", "--porcelain"); st != "" {
				t.Fatalf("git status after a git commit = %q", st)
			}
		})
	}
}

// normalizeLsFiles turns `git ls-files -s` lines (mode hash stage\tpath)
// into "mode hash path" lines.
func normalizeLsFiles(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		out = append(out, f[0]+" "+f[1]+" "+f[3])
	}
	return strings.Join(out, "\n")
}

// normalizeLsTree turns `git ls-tree -r` lines (mode type hash\tpath) into
// the same form.
func normalizeLsTree(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		out = append(out, f[0]+" "+f[2]+" "+f[3])
	}
	return strings.Join(out, "\n")
}

func TestPatchIndexRefuses(t *testing.T) {
	cases := map[string][]byte{
		"empty":        nil,
		"not an index": []byte("hello world, this is not an index file at all"),
		"bad checksum": append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, 20)...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if _, ok := patchIndex(data, nil, nil); ok {
				t.Fatal("patchIndex accepted it")
			}
		})
	}
}

// FuzzPatchIndex: any bytes with a valid checksum either patch into an index
// the patcher reads back, or are refused; never a panic.
func FuzzPatchIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01" + strings.Repeat("\x00", 60) + "\x00\x03abc\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha1.Sum(body)
		data := append(append([]byte{}, body...), sum[:]...)
		out, ok := patchIndex(data, []indexEntry{{name: "lessons/new.html", mode: 0o100644, size: 1}}, []string{"lessons/old.html"})
		if !ok {
			return
		}
		if _, ok := patchIndex(out, nil, nil); !ok {
			t.Fatalf("patched index unreadable: %q", out)
		}
	})
}

// FuzzParseRawTree: a tree parses into entries whose bytes are the tree's,
// or is refused; and merging no change into it gives it back.
func FuzzParseRawTree(f *testing.F) {
	f.Add([]byte("100644 a.html\x00" + strings.Repeat("\x01", 20) + "40000 dir\x00" + strings.Repeat("\x02", 20)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var back []byte
		for i := 0; i < len(b); {
			e, err := nextTreeEntry(b, i)
			if err != nil {
				return
			}
			back = append(back, b[e.start:e.end]...)
			i = e.end
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("entries do not cover the tree")
		}
		starts, err := scanTree(b, map[string]*treeChange{})
		if err != nil {
			t.Fatalf("scanTree refused what nextTreeEntry read: %v", err)
		}
		if out, n := mergeTree(b, starts, map[string]*treeChange{}); !bytes.Equal(out, b) || n != len(starts) {
			t.Fatalf("merging nothing changed the tree")
		}
	})
}
