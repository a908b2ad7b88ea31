package memfs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil/tmpfstest"
)

// The tests below re-execute the test binary as a child writer: TestMain
// runs the child's job instead of the tests when BORG_MEMFS_CHILD is set.
const childEnv = "BORG_MEMFS_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		// The tests' stores in memory where it can be (tmpfstest.Use);
		// the children inherit TMPDIR.
		tmp := tmpfstest.Use()
		code := m.Run()
		tmp()
		os.Exit(code)
	case "append":
		os.Exit(childAppend(os.Getenv("BORG_MEMFS_STORE"), os.Getenv("BORG_MEMFS_WORKER")))
	case "crash":
		os.Exit(childCrash(os.Getenv("BORG_MEMFS_STORE")))
	case "commit":
		os.Exit(childCommit(os.Getenv("BORG_MEMFS_STORE"), os.Getenv("BORG_MEMFS_WORKER")))
	default:
		fmt.Fprintln(os.Stderr, "unknown child job")
		os.Exit(2)
	}
}

const appendsPerChild = 200

// childAppend appends appendsPerChild events, one Append call each.
func childAppend(dir, worker string) int {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; i < appendsPerChild; i++ {
		e := domain.Event{MS: int64(i), Kind: domain.KindAsked, Session: "worker-" + worker, Lesson: fmt.Sprintf("lesson-%s-%d", worker, i)}
		if err := s.Append(e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// childCrash writes lessons and appends events until it is killed.
func childCrash(dir string) int {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	body := strings.Repeat("A long body line that makes the file span several pages. ", 400)
	for i := 0; ; i++ {
		l := sampleLesson(fmt.Sprintf("crash-lesson-%d", i%5))
		l.Body = fmt.Sprintf("version %d\n\n%s", i, body)
		if err := s.WriteLesson(l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := s.Append(domain.Event{MS: int64(i), Kind: domain.KindCreated, Lesson: l.ID}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println(wroteLine)
		}
	}
}

// wroteLine is what a child prints once its first write is done: the
// parent kills it only after that, at a random moment, so every round
// kills a writer at work however slowly the machine starts processes.
const wroteLine = "wrote"

// startWriting starts cmd and returns once it has printed wroteLine.
func startWriting(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if sc.Text() == wroteLine && !ok {
				ok = true
				wrote <- true
			}
		}
		if !ok {
			wrote <- false
		}
	}()
	select {
	case ok := <-wrote:
		if !ok {
			_ = cmd.Wait()
			t.Fatal("the child ended before its first write")
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the child did not write within two minutes")
	}
}

func child(tb testing.TB, job, dir string, extra ...string) *exec.Cmd {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+job, "BORG_MEMFS_STORE="+dir)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestConcurrentAppendProcesses: 8 processes × 200 appends to one log, in
// parallel; every line is intact and counted once.
func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newTestStore(t)
	const workers = 8
	var cmds []*exec.Cmd
	for w := 0; w < workers; w++ {
		cmd := child(t, "append", s.Dir(), "BORG_MEMFS_WORKER="+strconv.Itoa(w))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	lines := readLines(t, filepath.Join(s.Dir(), s.LogPath()))
	if len(lines) != workers*appendsPerChild {
		t.Fatalf("%d lines; want %d", len(lines), workers*appendsPerChild)
	}
	for i, l := range lines {
		var e domain.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d torn: %q", i+1, l)
		}
	}
	events, rep, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != workers*appendsPerChild || len(rep.Skipped) != 0 || rep.Duplicates != 0 {
		t.Fatalf("%d events, report %+v", len(events), rep)
	}
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Lesson] = true
	}
	for w := 0; w < workers; w++ {
		for i := 0; i < appendsPerChild; i++ {
			if id := fmt.Sprintf("lesson-%d-%d", w, i); !seen[id] {
				t.Fatalf("event %s lost", id)
			}
		}
	}
}

// TestCrashNeverTears: a writer killed with SIGKILL at random points never
// leaves a torn lesson file, and at most its last log line torn.
func TestCrashNeverTears(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newTestStore(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	skippedBefore := 0
	for round := 0; round < 12; round++ {
		cmd := child(t, "crash", s.Dir())
		startWriting(t, cmd)
		time.Sleep(time.Duration(r.IntN(270)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()

		ls, errs := s.Lessons()
		if len(errs) != 0 {
			t.Fatalf("round %d: torn or bad lesson files: %v", round, errs)
		}
		for _, l := range ls {
			if !strings.HasPrefix(l.Body, "version ") {
				t.Fatalf("round %d: lesson %s has a partial body", round, l.ID)
			}
		}
		_, rep, err := s.ReadEvents()
		if err != nil {
			t.Fatal(err)
		}
		fresh := rep.Skipped[skippedBefore:]
		if len(fresh) > 1 {
			t.Fatalf("round %d: %d new bad log lines: %+v", round, len(fresh), fresh)
		}
		if len(fresh) == 1 && !strings.HasPrefix(fresh[0].Reason, "torn last line") {
			t.Fatalf("round %d: a bad line that is not the torn last one: %+v", round, fresh[0])
		}
		skippedBefore = len(rep.Skipped)
	}
	events, _, err := s.ReadEvents()
	if err != nil || len(events) == 0 {
		t.Fatalf("the writer never wrote (%d events, %v): the test proved nothing", len(events), err)
	}
	t.Logf("%d events written across the kills", len(events))
}

// childCommit learns and commits lessons until it is killed.
func childCommit(dir, worker string) int {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		l := sampleLesson(fmt.Sprintf("killed-commit-%s-%d", worker, i))
		if _, err := s.Update("learn "+l.ID, []string{LessonPath(l.ID)}, func() error { return s.WriteLesson(l) }); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println(wroteLine)
		}
	}
}

// TestKilledCommitsLeaveNoGitLock SIGKILLs a process that commits in a
// loop, at random moments. Its git (update-ref, update-index) is left to
// finish holding the store's write lock, so once the write lock is free
// no git lock file is left, and the next commit repairs the rest: git sees
// a clean store whose HEAD holds every lesson the killed writers wrote.
func TestKilledCommitsLeaveNoGitLock(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	s := newTestStore(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for round := range 30 {
		cmd := child(t, "commit", s.Dir(), "BORG_MEMFS_WORKER="+strconv.Itoa(round))
		startWriting(t, cmd)
		time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		// The killed writer's git holds the write lock until it ends.
		unlock, err := LockPath(filepath.Join(s.Dir(), filepath.FromSlash(writeLockFile)), time.Minute)
		if err != nil {
			t.Fatalf("round %d: the write lock stays held: %v", round, err)
		}
		locks, err := s.gitLocks()
		unlock()
		if err != nil {
			t.Fatal(err)
		}
		if len(locks) > 0 {
			t.Fatalf("round %d: a killed writer's git left %+v", round, locks)
		}
	}
	if _, err := s.Commit("after the kills"); err != nil {
		t.Fatal(err)
	}
	checkClean(t, s)
	unc, err := s.Uncommitted()
	if err != nil || len(unc) != 0 {
		t.Errorf("lessons no commit holds after the repair: %v %v", unc, err)
	}
	if out := gitCLI(t, s.Dir(), "reflog", "--format=%gs"); !strings.Contains(out, "commit: learn killed-commit-") {
		t.Errorf("git reflog lacks the killed writers' commits:\n%s", out)
	}
}
