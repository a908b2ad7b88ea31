package memfs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// BenchmarkSync times `borg sync` (Store.Sync, real git, a bare remote on
// disk) on a team store of BORG_BENCH_LESSONS lessons (10,000) and
// BORG_BENCH_EVENTS log lines (1,000,000, over 10 nodes' files):
//
//   - uptodate: nothing new on either side;
//   - 100-lessons: a teammate pushed 100 new lessons (a fast-forward);
//   - 10-nodes: ten teammates each pushed 1,000 new log lines while this
//     node committed its own (a merge).
//
// Each iteration syncs a fresh clone; the clone and the teammates' pushes
// are set up outside the timer. Run it with scripts/bench-sync.sh.
func BenchmarkSync(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git CLI")
	}
	lessons, events := 10000, 1000000
	if n, err := strconv.Atoi(os.Getenv("BORG_BENCH_LESSONS")); err == nil && n > 0 {
		lessons = n
	}
	if n, err := strconv.Atoi(os.Getenv("BORG_BENCH_EVENTS")); err == nil && n >= 0 {
		events = n
	}
	remote := benchRemote(b, lessons, events)
	clone := func(b *testing.B, name string) *Store {
		dir := filepath.Join(b.TempDir(), name)
		benchGit(b, "", "clone", "-q", "--no-hardlinks", remote, dir)
		// A store is cloned once and synced for months: let the clone's
		// index age past its files' timestamps, as it has by the first
		// real sync (a fresh clone's entries are "racily clean", and git
		// re-reads every file once to be sure).
		time.Sleep(1100 * time.Millisecond)
		benchGit(b, dir, "update-index", "-q", "--refresh")
		s, err := Open(dir, WithEnv(testEnv(map[string]string{"GIT_AUTHOR_EMAIL": name + "@example.com", "GIT_COMMITTER_EMAIL": name + "@example.com"})))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name  string
		setup func(b *testing.B, me *Store)
	}{
		{"uptodate", func(*testing.B, *Store) {}},
		{"100-lessons", func(b *testing.B, _ *Store) {
			mate := clone(b, "mate")
			var paths []string
			for i := range 100 {
				l := domain.Lesson{ID: fmt.Sprintf("new-lesson-%04d", i), Type: "semantic", Confidence: 0.5, Gist: fmt.Sprintf("New lesson number %d about retries", i)}
				if err := mate.WriteLesson(l); err != nil {
					b.Fatal(err)
				}
				paths = append(paths, LessonPath(l.ID))
			}
			if _, err := mate.Commit("100 lessons", paths...); err != nil {
				b.Fatal(err)
			}
			benchGit(b, mate.Dir(), "push", "-q", "origin", "HEAD:main")
		}},
		{"10-nodes", func(b *testing.B, me *Store) {
			for n := range 10 {
				mate := clone(b, fmt.Sprintf("mate%d", n))
				benchLog(b, mate, 1000, int64(n))
				if _, err := mate.Commit("log", mate.LogPath()); err != nil {
					b.Fatal(err)
				}
				benchGit(b, mate.Dir(), "push", "-q", "origin", "HEAD:main")
			}
			benchLog(b, me, 100, 99)
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				// A clean remote each time: reset it to the generated state.
				benchGit(b, remote, "update-ref", "refs/heads/main", benchBase(b, remote))
				me := clone(b, "me")
				tc.setup(b, me)
				b.StartTimer()
				if _, err := me.Sync(context.Background(), SyncOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchRemote builds (once per size, cached in the temp dir) a bare remote
// holding the generated store, and records its commit.
func benchRemote(b *testing.B, lessons, events int) string {
	b.Helper()
	root := filepath.Join(os.TempDir(), fmt.Sprintf("borg-bench-sync-%d-%d", lessons, events))
	remote := filepath.Join(root, "remote.git")
	if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
		return remote
	}
	_ = os.RemoveAll(root)
	s, err := Init(context.Background(), filepath.Join(root, "seed"), "", WithEnv(testEnv(nil)))
	if err != nil {
		b.Fatal(err)
	}
	for i := range lessons {
		l := domain.Lesson{ID: fmt.Sprintf("bench-lesson-%06d", i), Type: "semantic", Confidence: 0.8,
			Gist: fmt.Sprintf("Bench lesson %d: retry the client with backoff", i), Body: "Generated for the sync benchmark."}
		writeStoreFile(b, s, LessonPath(l.ID), Render(l))
	}
	for n := range 10 {
		f := filepath.Join(s.Dir(), LogDir, fmt.Sprintf("n-bench%02d.jsonl", n))
		benchLines(b, f, events/10, int64(n)*1_000_000)
	}
	benchGit(b, s.Dir(), "add", "-A", "lessons", "log")
	benchGit(b, s.Dir(), "commit", "-q", "-m", "generated")
	benchGit(b, "", "clone", "-q", "--bare", s.Dir(), remote)
	if err := os.WriteFile(filepath.Join(root, "base"), []byte(benchBase(b, remote)), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ready"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return remote
}

// benchBase is the generated commit of the remote.
func benchBase(b *testing.B, remote string) string {
	b.Helper()
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(remote), "base")); err == nil {
		return string(data)
	}
	out, err := exec.Command("git", "-C", remote, "rev-parse", "refs/heads/main").Output()
	if err != nil {
		b.Fatal(err)
	}
	return string(out[:40])
}

// benchLog appends n events of one node's sessions to s's log.
func benchLog(b *testing.B, s *Store, n int, seed int64) {
	b.Helper()
	benchLines(b, filepath.Join(s.Dir(), filepath.FromSlash(s.LogPath())), n, seed*10_000_000+5_000_000)
}

func benchLines(b *testing.B, path string, n int, seed int64) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	ms := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli() + seed
	for i := range n {
		e := domain.Event{MS: ms + int64(i), Kind: domain.KindAsked, Session: fmt.Sprintf("s-%016x", seed+int64(i/10)),
			Lesson: fmt.Sprintf("bench-lesson-%06d", i%1000)}
		if i%10 == 0 {
			e.Kind, e.Lesson = domain.KindSession, ""
		}
		line, _ := json.Marshal(e.WithID())
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

func benchGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
