package memfs

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// TestAttributionCost measures attributing a store's log from git history:
// BORG_ATTRIB_COMMITS commits (git fast-import), each appending
// BORG_ATTRIB_LINES lines to one of BORG_ATTRIB_NODES node files under
// that node's engineer. It reports the first (full) refresh, an
// incremental one after one more commit, and the hook path (SummaryWithin,
// which never walks history). Run it by hand: BENCHMARKS.md, attribution.
func TestAttributionCost(t *testing.T) {
	commits, _ := strconv.Atoi(os.Getenv("BORG_ATTRIB_COMMITS"))
	if commits == 0 {
		t.Skip("set BORG_ATTRIB_COMMITS (e.g. 10000) to measure")
	}
	nodes, lines := envInt("BORG_ATTRIB_NODES", 20), envInt("BORG_ATTRIB_LINES", 2)
	s := newTestStore(t)
	start := time.Now()
	bytesFed := fastImportLog(t, s.Dir(), commits, nodes, lines)
	gitAs(t, s.Dir(), "t@example.com", "reset", "-q", "--hard")
	t.Logf("history: %d commits, %d node files, %d lines each; %.1f MB of file versions fed to fast-import in %v",
		commits, nodes, lines, float64(bytesFed)/1e6, time.Since(start).Round(time.Millisecond))

	hook := func(label string) {
		t.Helper()
		var best time.Duration
		for i := range 5 {
			t0 := time.Now()
			if _, _, err := s.SummaryWithin(64<<20, math.MaxInt64); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(t0); i == 0 || d < best {
				best = d
			}
		}
		var att time.Duration
		for i := range 5 {
			t0 := time.Now()
			a := s.newAttributor()
			for name := range a.st.Files {
				s.fileValid(a, name)
			}
			if d := time.Since(t0); i == 0 || d < att {
				att = d
			}
		}
		t.Logf("%s: SummaryWithin (hook path), best of 5: %v, of which loading the attribution and checking each file: %v", label, best, att)
	}
	t0 := time.Now()
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("first refresh (whole history): %v", time.Since(t0).Round(time.Millisecond))
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
	hook("attributed")

	if err := s.Append(domain.Event{MS: 9e12, Kind: domain.KindSession, Session: "s-new", Author: "t@example.com"}); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), "t@example.com", "add", "log")
	gitAs(t, s.Dir(), "t@example.com", "commit", "-qm", "one more")
	hook("HEAD moved, no refresh")
	t0 = time.Now()
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("incremental refresh (one commit): %v", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("refresh with nothing new: %v", time.Since(t0).Round(time.Microsecond))
	hook("after the refresh")
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// fastImportLog writes the history with git fast-import on top of HEAD and
// returns the bytes of file versions it fed.
func fastImportLog(t *testing.T, dir string, commits, nodes, lines int) int64 {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	head := gitAs(t, dir, "t@example.com", "rev-parse", "HEAD")
	branch := gitAs(t, dir, "t@example.com", "symbolic-ref", "HEAD")
	r := rand.New(rand.NewPCG(1, 2))
	content := make([][]byte, nodes)
	var fed int64
	ms := int64(1_700_000_000_000)
	for c := range commits {
		n := r.IntN(nodes)
		email := fmt.Sprintf("eng%02d@example.com", n)
		for l := range lines {
			ms += 1000
			e := domain.Event{MS: ms, Kind: []domain.EventKind{domain.KindSession, domain.KindAsked, domain.KindChanged}[l%3],
				Session: HashSession(fmt.Sprintf("%d-%d", c, n)), Lesson: fmt.Sprintf("lesson-%d", r.IntN(200)), Repo: "api", Author: HashEngineer(email)}
			content[n] = append(content[n], strings.Join(eventLines([]domain.Event{e.WithID()}), "")+"\n"...)
		}
		fed += int64(len(content[n]))
		fmt.Fprintf(w, "commit %s\nauthor %s <%s> %d +0000\ncommitter %s <%s> %d +0000\ndata 1\nc\n",
			branch, email, email, ms/1000, email, email, ms/1000)
		if c == 0 {
			fmt.Fprintf(w, "from %s\n", head)
		}
		fmt.Fprintf(w, "M 100644 inline log/n-%012d.jsonl\ndata %d\n", n, len(content[n]))
		_, _ = w.Write(content[n])
		_, _ = w.WriteString("\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return fed
}

// BenchmarkAttribRefreshAfterAppend is the refresh a command runs after
// a commit that appended one line to a committed log of
// BORG_ATTRIB_BENCH_LINES lines (default 100,000, about 15 MB): by the
// in-process append check ("append") and by git log -p ("git").
func BenchmarkAttribRefreshAfterAppend(b *testing.B) {
	n := envInt("BORG_ATTRIB_BENCH_LINES", 100_000)
	for _, mode := range []string{"append", "git"} {
		b.Run(mode, func(b *testing.B) {
			s := newTestStore(b)
			const name = "log/n-bench.jsonl"
			var buf strings.Builder
			for i := range n {
				e := domain.Event{MS: int64(i), Kind: domain.KindChanged, Session: HashSession(strconv.Itoa(i)), Lesson: "lesson-" + strconv.Itoa(i%200), Repo: "api", Author: HashEngineer("bench@example.com")}.WithID()
				buf.WriteString(eventLines([]domain.Event{e})[0] + "\n")
			}
			p := s.Dir() + "/" + name
			if err := os.WriteFile(p, []byte(buf.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			gitAs(b, s.Dir(), "bench@example.com", "add", "log")
			gitAs(b, s.Dir(), "bench@example.com", "commit", "-qm", "log")
			ctx := context.Background()
			if err := s.refreshAttribution(ctx); err != nil {
				b.Fatal(err)
			}
			defer func(v bool) { attribSlowOnly = v }(attribSlowOnly)
			attribSlowOnly = mode == "git"
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				e := domain.Event{MS: int64(n + i), Kind: domain.KindSession, Session: HashSession("new" + strconv.Itoa(i)), Author: HashEngineer("bench@example.com")}.WithID()
				_, _ = f.WriteString(eventLines([]domain.Event{e})[0] + "\n")
				_ = f.Close()
				if _, err := s.Commit("append", name); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.refreshAttribution(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
