package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/index"
)

// TestAskSets plays the labelled ask sets through the real hooks (borg eval
// asks) and holds the Stop hook to what was measured with the default
// floor (BENCHMARKS.md): it speaks in few sessions that nothing bears on,
// most of what it asks is relevant, and it never asks a fact a newer lesson
// of the set rewrites. Harbor was written apart from Lumen, in another
// voice; the floor was set on both. A third set (quarry), written by
// someone who saw neither the other sets nor the code, checks the same
// floor where it was never set, and six more (ampercove, tidewright,
// kelpie, brindle, foxglove, saltmarsh), written blind after the floor was
// set, do again.
func TestAskSets(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 1,363 sessions through the hooks")
	}
	// Each set plays in its own throwaway store, in process; the sets run
	// beside each other and beside the other parallel tests, so the
	// package's run is not the sum of them.
	t.Parallel()
	tests := []struct {
		set                         string
		abstention, recall, precise float64
		stale                       int
	}{
		{"lumen", 0.93, 0.64, 0.65, 0},
		{"harbor", 0.91, 0.64, 0.72, 0},
		// Quarry's rewrites are paraphrased; the fact readers take some of
		// them and the guessed updates (index updateOf) the others: no old
		// fact of theirs is asked.
		{"quarry", 0.93, 0.84, 0.85, 0},
		// Ampercove, tidewright, kelpie and brindle were written blind
		// after the floor was set, each measured as written below the
		// acceptance; these hold them from getting worse.
		{"ampercove", 0.94, 0.51, 0.67, 0},
		{"tidewright", 0.85, 0.62, 0.69, 0},
		{"kelpie", 0.94, 0.60, 0.84, 0},
		{"brindle", 0.96, 0.65, 0.85, 0},
		// Foxglove was written blind after every change above; its stale
		// asks were read since (README.md there).
		{"foxglove", 0.91, 0.60, 0.74, 0},
		// Saltmarsh was written blind last; its stale asks were read once
		// after it was measured as written (README.md there).
		{"saltmarsh", 0.96, 0.65, 0.83, 0},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			t.Parallel()
			set, err := loadAskSet(filepath.Join("testdata", "asks", tt.set))
			if err != nil {
				t.Fatal(err)
			}
			e := &env{in: strings.NewReader(""), out: io.Discard, err: io.Discard, now: time.Now,
				getenv: func(string) string { return "" }}
			a := &askEval{e: e, progress: io.Discard}
			rep, err := a.run(t.Context(), set, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: abstention %.3f, session recall %.3f, precision %.3f, %d asked, %d stale; misses %v; needless %v",
				tt.set, rep.Abstention, rep.SessionRecall, rep.Precision, rep.Asked, rep.StaleAsks, rep.Misses, rep.Needless)
			if rep.Refused != 0 || rep.Sessions != len(set.Sessions) {
				t.Fatalf("%d lessons refused, %d of %d sessions played", rep.Refused, rep.Sessions, len(set.Sessions))
			}
			// Every miss, needless ask and stale ask is listed (the
			// table prints the first few): the lists agree with the
			// figures.
			relevant := rep.Sessions - rep.Empty
			if hits := relevant - len(rep.Misses); ratio(hits, relevant) != rep.SessionRecall || ratio(rep.Empty-len(rep.Needless), rep.Empty) != rep.Abstention || len(rep.Stale) != rep.StaleAsks {
				t.Errorf("%d misses, %d needless asks and %d stale asks listed, against session recall %.3f of %d, abstention %.3f of %d and %d stale asks",
					len(rep.Misses), len(rep.Needless), len(rep.Stale), rep.SessionRecall, relevant, rep.Abstention, rep.Empty, rep.StaleAsks)
			}
			if rep.Abstention < tt.abstention || rep.SessionRecall < tt.recall || rep.Precision < tt.precise || rep.StaleAsks > tt.stale {
				t.Errorf("abstention %.3f (want ≥ %.2f), session recall %.3f (≥ %.2f), precision %.3f (≥ %.2f), stale asks %d (≤ %d)",
					rep.Abstention, tt.abstention, rep.SessionRecall, tt.recall, rep.Precision, tt.precise, rep.StaleAsks, tt.stale)
			}
		})
	}
}

// TestLoadAskSetErrors: a set that names a lesson it does not hold is
// refused with the file and the key.
func TestLoadAskSetErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lessons.jsonl", `{"key":"L1","gist":"The gateway listens on port 8443."}`+"\n")
	write("sessions.jsonl", `{"id":"S1","prompt":"p","final":"f","relevant":["L9"]}`+"\n")
	if _, err := loadAskSet(dir); err == nil || !strings.Contains(err.Error(), `"L9"`) {
		t.Fatalf("a session naming a missing lesson: %v", err)
	}
	write("sessions.jsonl", `{"id":"S1","prompt":"p",`+"\n")
	if _, err := loadAskSet(dir); err == nil || !strings.Contains(err.Error(), "sessions.jsonl:1") {
		t.Fatalf("a torn line: %v", err)
	}
}

// TestLocomoAskSet: the set built from two LoCoMo conversations holds one
// conversation's turns as lessons, questions about it with their evidence,
// and twice as many questions about the other that bear on no lesson.
func TestLocomoAskSet(t *testing.T) {
	own, other := filepath.Join("..", "..", "..", "shared", "data", "beir", "locomo-conv-0"), filepath.Join("..", "..", "..", "shared", "data", "beir", "locomo-conv-1")
	if _, err := os.Stat(own); err != nil {
		t.Skip("../shared/data is not here:", err)
	}
	set, err := locomoAskSet(own, other, 10)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, l := range set.Lessons {
		keys[l.Key] = true
	}
	relevant, none := 0, 0
	for _, s := range set.Sessions {
		if len(s.Relevant) == 0 {
			none++
			continue
		}
		relevant++
		for _, k := range s.Relevant {
			if !keys[k] {
				t.Errorf("session %s names %s, not a lesson of the set", s.ID, k)
			}
		}
	}
	if len(set.Lessons) < 100 || relevant != 10 || none != 20 {
		t.Fatalf("%d lessons, %d sessions with evidence, %d without; want many, 10, 20", len(set.Lessons), relevant, none)
	}
}

// TestAskMarginsBands: a relevance falls in the band its cuts bound, a cut
// in the band it opens; cuts at or over the floor are left out, and the
// floor is the last cut.
func TestAskMarginsBands(t *testing.T) {
	tests := []struct {
		floor    float64
		cuts     []float64
		relevant []float64
		empty    []float64
		wantRel  []int
		wantEmp  []int
	}{
		{0.36, []float64{0.1, 0.2, 0.3, 0.36}, []float64{0, 0.1, 0.35, 0.36, 0.9}, []float64{0.25, 0.299},
			[]int{1, 1, 0, 1, 2}, []int{0, 0, 2, 0, 0}},
		{0.2, []float64{0.1, 0.2}, []float64{0.15, 0.2}, []float64{0.05},
			[]int{0, 1, 1}, []int{1, 0, 0}},
		// No floor: the bands at 0.1, 0.2 and 0.3 still; a session the
		// recall did not find (-1) in the lowest.
		{0, []float64{0.1, 0.2, 0.3}, []float64{-1, 0, 0.5}, []float64{0.3}, []int{2, 0, 0, 1}, []int{0, 0, 0, 1}},
	}
	for _, tt := range tests {
		m := newAskMargins(tt.floor)
		if !slices.Equal(m.Cuts, tt.cuts) {
			t.Errorf("floor %.2f: cuts %v, want %v", tt.floor, m.Cuts, tt.cuts)
			continue
		}
		for _, r := range tt.relevant {
			m.add(r, true)
		}
		for _, r := range tt.empty {
			m.add(r, false)
		}
		if !slices.Equal(m.Relevant, tt.wantRel) || !slices.Equal(m.Empty, tt.wantEmp) {
			t.Errorf("floor %.2f: relevant %v (want %v), empty %v (want %v)", tt.floor, m.Relevant, tt.wantRel, m.Empty, tt.wantEmp)
		}
	}
}

// TestAskMarginsOnASet: --margins recalls each session's work as the Stop
// hook's query would hold it, file paths and added lines included, and
// counts a session by the best of its relevant lessons, not of any: S1 is
// about its lesson, S2 about nothing, S3 about a lesson other than the one
// labelled, and S4 names its lesson only in the file it added.
func TestAskMarginsOnASet(t *testing.T) {
	set := t.TempDir()
	for name, body := range map[string]string{
		"lessons.jsonl": `{"key":"L1","gist":"The payments gateway client must retry with exponential backoff and jitter."}` + "\n" +
			`{"key":"L2","gist":"Grafana dashboards live in the observability repository."}` + "\n",
		"sessions.jsonl": `{"id":"S1","prompt":"the payments gateway client gives up on the first 503","final":"The payments gateway client now retries with exponential backoff and jitter.","files":[{"path":"payments/client.go","added":"backoff := jitter(exponential(attempt))"}],"relevant":["L1"]}` + "\n" +
			`{"id":"S2","prompt":"Rename the invoices table","final":"Renamed it to billing_invoices.","relevant":[]}` + "\n" +
			`{"id":"S3","prompt":"the payments gateway client gives up on the first 503","final":"The payments gateway client now retries with exponential backoff and jitter.","relevant":["L2"]}` + "\n" +
			`{"id":"S4","prompt":"move the latency panel up","final":"Moved it.","files":[{"path":"observability/grafana/dashboards/latency.json","added":"// grafana dashboards live in the observability repository"}],"relevant":["L2"]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(set, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := inProcess(t, map[string]string{"HOME": t.TempDir(), "BORG_FLOOR": ""}, "", "eval", "asks", "--json", "--margins", set)
	if code != 0 {
		t.Fatalf("borg eval asks --margins: exit %d: %s", code, stderr)
	}
	var reps []askReport
	if err := json.Unmarshal([]byte(stdout), &reps); err != nil || len(reps) != 1 || reps[0].Margins == nil {
		t.Fatalf("eval asks --json --margins printed %q (%v)", stdout, err)
	}
	m := reps[0].Margins
	n := len(m.Cuts)
	if m.Floor != index.DefaultFloor || m.Cuts[n-1] != index.DefaultFloor {
		t.Fatalf("margins %+v: want the default floor %.2f as the last cut", m, index.DefaultFloor)
	}
	wantRel, wantEmpty := make([]int, n+1), make([]int, n+1)
	wantRel[n], wantRel[0], wantEmpty[0] = 2, 1, 1
	if !slices.Equal(m.Relevant, wantRel) || !slices.Equal(m.Empty, wantEmpty) {
		t.Errorf("margins relevant %v, empty %v; want %v and %v (S1 and S4 over the floor, S3 and S2 under %.2f)", m.Relevant, m.Empty, wantRel, wantEmpty, m.Cuts[0])
	}
}
