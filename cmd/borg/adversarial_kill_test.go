package main

// The adversarial suite: the real borg binary, built once, killed with
// SIGKILL at random moments and run in parallel against one store. After
// every kill the next ordinary command must repair the store by itself.
// Nothing here is timed: the random delays only choose where a kill lands,
// and every check is on the state the processes leave.
//
// BORG_SOAK=1 runs the kill loop ten times longer; BORG_SOAK_SEED=N
// replays one seed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// advBinary is borgBinary for the kill suite, which needs unix signals and
// locks and the git CLI.
func advBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL and flock semantics: unix only")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	return borgBinary(t)
}

// advEnv is the environment of every borg the suite runs.
type advEnv struct {
	t     *testing.T
	bin   string
	store string
	proj  string
	env   []string
}

func newAdvEnv(t *testing.T) *advEnv {
	t.Helper()
	bin := advBinary(t)
	dir := t.TempDir()
	a := &advEnv{t: t, bin: bin, store: filepath.Join(dir, "store"), proj: filepath.Join(dir, "proj")}
	a.env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_DATA_HOME="+filepath.Join(dir, "home", "share"),
		"BORG_STORE="+a.store, "BORG_ENGINEER=adv@example.com", "BORG_PLACEBO_RATE=0",
		"GIT_AUTHOR_NAME=adv", "GIT_AUTHOR_EMAIL=adv@example.com", "GIT_COMMITTER_NAME=adv", "GIT_COMMITTER_EMAIL=adv@example.com",
		"GIT_CONFIG_NOSYSTEM=1",
		// The log rolls every few kilobytes: kills land in rolls and in
		// syncs of several segments too.
		"BORG_LOG_ROLL=2K")
	if err := os.MkdirAll(a.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	a.mustRun("init")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		a.git(a.proj, args...)
	}
	return a
}

func (a *advEnv) command(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(a.bin, args...)
	cmd.Env = a.env
	cmd.Dir = a.proj
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// run runs borg to completion and returns stdout, stderr and the exit code.
func (a *advEnv) run(stdin string, args ...string) (string, string, int) {
	cmd := a.command(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		a.t.Fatalf("borg %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

func (a *advEnv) mustRun(args ...string) string {
	a.t.Helper()
	out, errs, code := a.run("", args...)
	if code != 0 {
		a.t.Fatalf("borg %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (a *advEnv) git(dir string, args ...string) string {
	a.t.Helper()
	return testGit(a.t, dir, append(a.env, "LC_ALL=C"), args...)
}

// killAfter starts borg and SIGKILLs it after delay unless it has exited;
// it reports whether the kill landed and the stdout of a finished run (and
// its stderr after, when it failed).
func (a *advEnv) killAfter(delay time.Duration, stdin string, args ...string) (killed bool, stdout string, code int) {
	a.t.Helper()
	cmd := a.command(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err = <-done
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true, "", -1
		}
		return false, out.String() + errb.String(), ee.ExitCode()
	}
	if err != nil {
		a.t.Fatal(err)
	}
	return false, out.String(), 0
}

// headLessons is every lesson id HEAD holds, in lessons/ or archive/.
func (a *advEnv) headLessons() map[string]bool {
	out := a.git(a.store, "ls-tree", "-r", "--name-only", "HEAD", "lessons", "archive")
	ids := map[string]bool{}
	for _, p := range strings.Fields(out) {
		if strings.HasSuffix(p, ".html") {
			ids[strings.TrimSuffix(filepath.Base(p), ".html")] = true
		}
	}
	return ids
}

// waitStoreGits waits until no git runs in the store. A killed borg
// leaves the git it started to finish (gitcli: git is not killed with
// borg), and a git fetch borg ran outside the store's write lock goes on
// to git's own maintenance, whose objects/maintenance.lock is git's and
// removed when it ends: a lock check taken while such a git runs would
// read a lock in use as one left behind. Linux only (it reads /proc);
// elsewhere it returns at once.
func (a *advEnv) waitStoreGits(what string) {
	a.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		running := storeGits(a.store)
		if len(running) == 0 {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%s: git still running in the store after 2 minutes: %q", what, running)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storeGits lists the command lines of the git processes that run in dir
// or whose arguments name it.
func storeGits(dir string) []string {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		cwd, _ := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if filepath.Base(args[0]) == "git" && (strings.HasPrefix(cwd, dir) || slices.ContainsFunc(args[1:], func(a string) bool { return strings.HasPrefix(a, dir) })) {
			out = append(out, strings.Join(args, " "))
		}
	}
	return out
}

// checkStore asserts what must hold once the store has been recovered:
// no lock file or journal, the git index agreeing with HEAD under lessons/,
// archive/ and log/, no lesson file outside a commit, every lesson once
// committed (committed) or reported learned (reported) still in HEAD, and,
// with fsck, git fsck clean.
func (a *advEnv) checkStore(what string, committed, reported map[string]bool, fsck bool) {
	t := a.t
	t.Helper()
	a.waitStoreGits(what)
	gitDir := filepath.Join(a.store, ".git")
	_ = filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			t.Errorf("%s: lock left behind: %s", what, p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(a.store, ".borg", "journal.json")); err == nil {
		t.Errorf("%s: journal left behind", what)
	}
	for _, line := range strings.Split(a.git(a.store, "status", "--porcelain", "--untracked-files=all"), "\n") {
		if len(line) < 4 {
			continue
		}
		p := line[3:]
		ours := strings.HasPrefix(p, "lessons/") || strings.HasPrefix(p, "archive/") || strings.HasPrefix(p, "log/")
		switch {
		case !ours:
		case line[:2] == "??" && !strings.HasPrefix(p, "log/"):
			t.Errorf("%s: uncommitted lesson file: %q", what, line)
		case line[0] != ' ' && line[0] != '?':
			t.Errorf("%s: the git index disagrees with HEAD: %q", what, line)
		}
	}
	head := a.headLessons()
	for id := range committed {
		if !head[id] {
			t.Errorf("%s: committed lesson %s lost", what, id)
		}
	}
	for id := range reported {
		if !head[id] {
			t.Errorf("%s: lesson %s was reported learned but is not in HEAD", what, id)
		}
	}
	for id := range head {
		committed[id] = true
	}
	if fsck {
		// fsck reports on stderr: read both streams.
		out, err := memfs.Git{Dir: a.store}.Command(context.Background(), "fsck", "--no-progress", "--no-dangling").CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("error")) || bytes.Contains(out, []byte("missing")) {
			t.Errorf("%s: git fsck: %v\n%s", what, err, out)
		}
	}
}

// TestAdversarialKillLoop SIGKILLs borg learn, borg sleep (with and
// without --apply) and the Stop, SessionStart and prompt hooks at random
// moments, a few hundred runs in all. Every learn that finishes must have
// repaired what the kills before it left: the store is checked then (see
// checkStore), and once more after a final learn. A hook run to the end
// exits 0 whatever the kills before it left.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestAdversarialKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	a := newAdvEnv(t)
	rounds := 50
	if os.Getenv("BORG_SOAK") != "" {
		rounds = 500
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BORG_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with BORG_SOAK_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	// How long each op takes here, unkilled: the kills land within it.
	span := map[string]time.Duration{}
	measure := func(name string, stdin string, args ...string) {
		start := time.Now()
		_, _, _ = a.run(stdin, args...)
		span[name] = max(time.Since(start), 5*time.Millisecond)
	}
	measure("learn", "", "learn", "Warm up the store before the kill loop")
	measure("stop", `{"session_id":"warm","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`, "hook", "stop")
	measure("sleep", "", "sleep", "--date", "2099-01-01")
	// A team remote, and a teammate who pushes a lesson now and then, so
	// that syncs fetch, fast-forward and merge while they are killed.
	remote := filepath.Join(filepath.Dir(a.store), "remote.git")
	mate := filepath.Join(filepath.Dir(a.store), "mate")
	a.git(filepath.Dir(a.store), "init", "-q", "--bare", "-b", "main", remote)
	a.git(a.store, "remote", "add", "origin", remote)
	measure("sync", "", "sync")
	a.git(filepath.Dir(a.store), "clone", "-q", remote, mate)
	matePush := func(r int) {
		id := fmt.Sprintf("teammate-lesson-%04d", r)
		l := domain.Lesson{ID: id, Type: "semantic", Confidence: 0.5, Reach: domain.ReachTeam, Gist: fmt.Sprintf("Teammate lesson %d about remotes", r)}
		if err := os.WriteFile(filepath.Join(mate, "lessons", id+".html"), memfs.Render(l), 0o644); err != nil {
			t.Fatal(err)
		}
		a.git(mate, "add", "lessons")
		a.git(mate, "commit", "-q", "-m", "teammate: "+id)
		// A killed sync's git push may still be finishing: as a teammate
		// would, pull and push again until the remote takes it.
		for try := 0; ; try++ {
			a.git(mate, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
			_, err := memfs.Git{Dir: mate, Env: a.env}.Run(context.Background(), nil, "push", "-q", "origin", "HEAD:main")
			if err == nil {
				break
			}
			if try == 20 {
				t.Fatalf("the teammate could not push: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("unkilled: learn %s, stop hook %s, sleep %s, sync %s", span["learn"], span["stop"], span["sleep"], span["sync"])

	committed, reported := map[string]bool{}, map[string]bool{}
	a.checkStore("start", committed, reported, true)
	kills, runs, checks, sinceCheck := 0, 0, 0, 0
	started := time.Now()
	for r := 0; r < rounds; r++ {
		if r%4 == 0 {
			matePush(r)
		}
		for step := 0; step < 6; step++ {
			var args []string
			var stdin, op string
			session := fmt.Sprintf("sess-%d", r)
			switch step {
			case 0, 1:
				op = "learn"
				args = []string{"learn", fmt.Sprintf("Adversarial lesson %d %d about killing writers", r, step), "--body", strings.Repeat("why ", 50)}
			case 2:
				op = "stop"
				args = []string{"hook", "stop"}
				stdin = fmt.Sprintf(`{"session_id":%q,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"I changed the writers"}`, session)
			case 3:
				op = "stop"
				hook := []string{"session-start", "prompt"}[r%2]
				args = []string{"hook", hook}
				stdin = fmt.Sprintf(`{"session_id":%q,"hook_event_name":"SessionStart","source":"startup","prompt":"kill the writers"}`, session)
			case 4:
				if r%3 != 0 {
					continue
				}
				op = "sleep"
				args = []string{"sleep", "--date", fmt.Sprintf("2099-%02d-%02d", 1+r/28%12, 1+r%28)}
				if r%2 == 0 {
					args = append(args, "--apply")
				}
			case 5:
				if r%2 != 0 {
					continue
				}
				op = "sync"
				args = []string{"sync"}
			}
			// A learn is given up to twice its span, so about half finish:
			// each finished learn has repaired what the kills before it
			// left, and the store is checked then.
			limit := span[op]
			if op == "learn" {
				limit *= 2
			}
			delay := time.Duration(rng.Int64N(int64(limit) + 1))
			began := time.Now()
			killed, out, code := a.killAfter(delay, stdin, args...)
			runs++
			if !killed {
				// The store grows: the span follows the longest run seen.
				span[op] = max(span[op], time.Since(began))
			}
			what := fmt.Sprintf("round %d: %s after %s", r, strings.Join(args[:min(2, len(args))], " "), delay)
			if killed {
				kills++
				sinceCheck++
				continue
			}
			switch {
			case op == "learn" && code == 0:
				reported[strings.Fields(out)[1]] = true
				a.checkStore(what+fmt.Sprintf(" (after %d kills)", sinceCheck), committed, reported, checks%10 == 0)
				checks++
				sinceCheck = 0
				if t.Failed() {
					t.FailNow()
				}
			case op == "learn":
				t.Fatalf("%s: learn failed (exit %d): %s", what, code, out)
			case op == "stop" && code != 0:
				t.Errorf("%s: a hook exited %d: %s", what, code, out)
			case op == "sync" && code != 0:
				t.Errorf("%s: sync failed (exit %d): %s", what, code, out)
			case op == "sleep" && code != 0:
				// A sleep may refuse (a branch that holds an earlier
				// sleep after an applied merge); it never shows a raw git
				// error.
				if strings.Contains(out, "fatal:") || strings.Contains(out, "stash") {
					t.Errorf("%s: sleep failed with a git error: %s", what, out)
				}
			}
		}
	}
	// The last repair: one more learn, never killed.
	out, errs, code := a.run("", "learn", "The kill loop is over")
	if code != 0 {
		t.Fatalf("the final learn failed (exit %d): %s%s", code, out, errs)
	}
	reported[strings.Fields(out)[1]] = true
	a.checkStore("end", committed, reported, true)
	elapsed := time.Since(started)
	t.Logf("%d runs, %d killed mid-run, %d store checks, %d lessons in HEAD, %s (%s per run)", runs, kills, checks, len(a.headLessons()), elapsed.Round(time.Millisecond), (elapsed / time.Duration(runs)).Round(time.Microsecond))
}

// TestAdversarialParallelLearn: sixteen learns of one gist at once, each
// with its own body: exactly one learns, the fifteen others are refused
// saying the lesson exists, and HEAD holds the winner's body. Sixteen
// learns of sixteen gists at once all learn.
func TestAdversarialParallelLearn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real binary")
	}
	a := newAdvEnv(t)
	const n = 16
	tests := []struct {
		name     string
		gist     func(i int) string
		learned  int
		refusals int
	}{
		{"same gist", func(int) string { return "Sixteen agents learn the same thing at once" }, 1, n - 1},
		{"different gists", func(i int) string { return fmt.Sprintf("Agent %d learns its own thing at once", i) }, n, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				out, errs string
				code      int
				body      string
			}
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := fmt.Sprintf("body number %d", i)
					out, errs, code := a.run("", "learn", tt.gist(i), "--body", body)
					results[i] = result{out, errs, code, body}
				}()
			}
			wg.Wait()
			learned, refused := 0, 0
			var winners []result
			for _, r := range results {
				switch {
				case r.code == 0 && strings.HasPrefix(r.out, "learned "):
					learned++
					winners = append(winners, r)
				case r.code == exitRefused && strings.Contains(r.errs, "already says this"):
					refused++
				default:
					t.Errorf("unexpected: exit %d: %s%s", r.code, r.out, r.errs)
				}
			}
			if learned != tt.learned || refused != tt.refusals {
				t.Fatalf("%d learned, %d refused; want %d and %d", learned, refused, tt.learned, tt.refusals)
			}
			for _, w := range winners {
				id := strings.Fields(w.out)[1]
				show := a.git(a.store, "show", "HEAD:"+memfs.LessonPath(id))
				if !strings.Contains(show, w.body) {
					t.Errorf("HEAD's %s does not hold the body of the learn that reported it (%q)", id, w.body)
				}
			}
			a.checkStore(tt.name, map[string]bool{}, map[string]bool{}, true)
		})
	}
}

// TestAdversarialParallelSleep: two sleeps --apply at once, several times:
// each either sleeps or says plainly that another sleep is running; none
// shows a git error, and the store stays whole.
func TestAdversarialParallelSleep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the real binary")
	}
	a := newAdvEnv(t)
	for i := range 4 {
		a.mustRun("learn", fmt.Sprintf("Parallel sleep lesson %d needs a review", i))
	}
	for round := range 3 {
		date := fmt.Sprintf("2099-0%d-01", round+1)
		var wg sync.WaitGroup
		outs := make([]string, 2)
		codes := make([]int, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, errs, code := a.run("", "sleep", "--date", date, "--apply")
				outs[i], codes[i] = out+errs, code
			}()
		}
		wg.Wait()
		for i := range 2 {
			if strings.Contains(outs[i], "fatal:") || strings.Contains(outs[i], "stash") {
				t.Errorf("round %d: a sleep showed a git error: %s", round, outs[i])
			}
			if codes[i] != 0 && !strings.Contains(outs[i], "another borg sleep is running") {
				t.Errorf("round %d: a sleep failed without saying another one runs: %s", round, outs[i])
			}
		}
		if codes[0] != 0 && codes[1] != 0 {
			t.Errorf("round %d: both sleeps failed:\n%s\n%s", round, outs[0], outs[1])
		}
		a.checkStore(fmt.Sprintf("round %d", round), map[string]bool{}, map[string]bool{}, true)
	}
}

// TestKilledColdBuild SIGKILLs the cold build of a team's log (the walk
// of history, the fold of the segments, the caches written a chunk at a
// time) at random moments, each run going on from what the last left; the
// build that finishes derives exactly what an unkilled one derived.
func TestKilledColdBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	a := newAdvEnv(t)
	var ids []string
	for i := range 3 {
		a.mustRun("learn", fmt.Sprintf("Cold build lesson %d about retrying flaky calls", i))
	}
	var listed []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(a.mustRun("list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		ids = append(ids, l.ID)
	}
	// Teammates' machines: segments of sessions that asked and changed
	// the lessons, committed by each teammate.
	rng := rand.New(rand.NewPCG(7, 7))
	for m := range 3 {
		var b strings.Builder
		for s := range 1500 {
			session := fmt.Sprintf("s-%d-%d", m, s)
			ms := int64(1_750_000_000_000 + (m*1500+s)*60_000)
			lesson := ids[rng.IntN(len(ids))]
			kind := []domain.EventKind{domain.KindChanged, domain.KindIgnored}[rng.IntN(2)]
			for _, e := range []domain.Event{
				{MS: ms, Kind: domain.KindSession, Session: session, Repo: "api", Author: fmt.Sprintf("e-%d", m)},
				{MS: ms + 1, Kind: domain.KindAsked, Session: session, Lesson: lesson, Repo: "api", Author: fmt.Sprintf("e-%d", m)},
				{MS: ms + 2, Kind: kind, Session: session, Lesson: lesson, Repo: "api", Author: fmt.Sprintf("e-%d", m)},
			} {
				line, err := json.Marshal(e.WithID())
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
		}
		name := filepath.Join(a.store, "log", fmt.Sprintf("n-mate%d~0001.jsonl", m))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		a.git(a.store, "add", "log")
		a.git(a.store, "-c", fmt.Sprintf("user.email=mate%d@example.com", m), "-c", "user.name=mate",
			"commit", "-q", "-m", fmt.Sprintf("mate %d's sessions", m))
	}
	cache := filepath.Join(a.store, ".borg", "cache")
	cold := func() time.Duration {
		if err := os.RemoveAll(cache); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		a.mustRun("list", "--json")
		return time.Since(start)
	}
	span := cold()
	want := a.mustRun("list", "--json")
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	kills := 0
	for r := range 12 {
		if r%3 == 0 {
			// A fresh start now and then; the other runs go on from
			// whatever the killed ones left.
			if err := os.RemoveAll(cache); err != nil {
				t.Fatal(err)
			}
		}
		if killed, _, _ := a.killAfter(time.Duration(rng.Int64N(int64(span))), "", "list", "--json"); killed {
			kills++
		}
	}
	if got := a.mustRun("list", "--json"); got != want {
		t.Fatalf("after %d kills the build derives\n%s\nwant\n%s", kills, got, want)
	}
	if out := a.git(a.store, "status", "--porcelain"); out != "" {
		t.Fatalf("the kills left the store dirty:\n%s", out)
	}
	t.Logf("%d of 12 runs killed within the %s a cold build takes", kills, span)
}
