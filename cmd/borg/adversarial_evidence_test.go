package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// TestAdversarialEvidenceNoTeamProduces: one pusher commits three log
// files as three git identities, each file's events claiming its own
// committer (nothing re-attributed), 120 sessions within two minutes, all
// "changed". doctor flags the pace no person keeps and the three
// identities appearing at once, and names the commits; a team's ordinary
// evidence (a few sessions, identities starting apart) is not flagged.
func TestAdversarialEvidenceNoTeamProduces(t *testing.T) {
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	lesson := "run-migrations-integration-tests-6b1c"
	if out := testGit(t, store, nil, "ls-files", "lessons"); !strings.Contains(out, "run-migrations") {
		t.Fatalf("no lesson to forge evidence for: %s", out)
	}
	for _, f := range strings.Fields(testGit(t, store, nil, "ls-files", "lessons")) {
		if strings.Contains(f, "run-migrations") {
			lesson = strings.TrimSuffix(filepath.Base(f), ".html")
		}
	}
	now := time.Now()
	commitLog := func(node, email string, sessions int, first int64, gap int64, at time.Time, lesson string) {
		t.Helper()
		var b strings.Builder
		by := memfs.HashEngineer(email)
		for i := range sessions {
			s := fmt.Sprintf("s-%016x", int64(i)+first)
			at := first + int64(i)*gap
			for j, kind := range []domain.EventKind{domain.KindSession, domain.KindAsked, domain.KindChanged} {
				e := domain.Event{MS: at + int64(j), Kind: kind, Session: s, Repo: "api", Author: by}
				if kind != domain.KindSession {
					e.Lesson = lesson
				}
				line, err := json.Marshal(e.WithID())
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
		}
		rel := "log/" + node + ".jsonl"
		if err := os.WriteFile(filepath.Join(store, rel), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		date := fmt.Sprintf("%d +0000", at.Unix())
		id := []string{"GIT_AUTHOR_EMAIL=" + email, "GIT_COMMITTER_EMAIL=" + email, "GIT_AUTHOR_NAME=x", "GIT_COMMITTER_NAME=x",
			"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		testGit(t, store, id, "add", rel)
		testGit(t, store, id, "commit", "-q", "-m", "borg sync: outcomes of "+node)
	}

	// A team: two engineers, a few sessions each, their first syncs
	// twenty minutes apart. Nothing to flag.
	ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	commitLog("n-00000000a001", "ann@example.com", 4, ms(55*time.Minute), 300_000, now.Add(-35*time.Minute), "pin-go-toolchain")
	commitLog("n-00000000b002", "ben@example.com", 3, ms(30*time.Minute), 300_000, now.Add(-15*time.Minute), "pin-go-toolchain")
	_, out, _ := inProcess(t, vars, "", "doctor")
	if strings.Contains(out, "suspect") || strings.Contains(out, "forged") {
		t.Fatalf("doctor flags a team's ordinary evidence:\n%s", out)
	}

	// One pusher, three identities, one push.
	commitLog("n-0000000e0001", "eve@example.com", 120, ms(5*time.Minute), 900, now, lesson)
	commitLog("n-0000000e0002", "mal@example.com", 40, ms(5*time.Minute)+100, 2000, now, lesson)
	commitLog("n-0000000e0003", "oz@example.com", 40, ms(5*time.Minute)+200, 2000, now, lesson)
	code, out, errs := inProcess(t, vars, "", "doctor")
	for _, want := range []string{"faster than anyone works", "several identities appearing at once", "revert"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q (exit %d):\n%s%s", want, code, out, errs)
		}
	}
	for _, f := range []string{"n-0000000e0001", "n-0000000e0002", "n-0000000e0003"} {
		if !strings.Contains(out, "log/"+f+".jsonl: suspect") {
			t.Errorf("doctor does not flag log/%s.jsonl:\n%s", f, out)
		}
	}
	if strings.Contains(out, "n-00000000a001.jsonl: suspect") {
		t.Errorf("doctor flags the team's own file:\n%s", out)
	}

	// The three identities appeared at once: their evidence counts as one
	// engineer's, in one repo, so it consolidates nothing, and the lesson
	// is not delivered unasked to a teammate on the forger's word.
	st, err := memfs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	lessons, _ := st.Lessons()
	mems, err := st.Memories(lessons, "", domain.DefaultWeights)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		if m.ID == lesson && (m.Consolidated || domain.EarlyTrusted(m, memfs.HashEngineer("carol@example.com"), domain.DefaultWeights)) {
			t.Errorf("one pusher's three identities earn %s early delivery (vouched %.1f, top vouchers %+v)", lesson, m.Vouched, m.TopVouchers)
		}
	}
}
