package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
		commitSessions(t, store, sessionLog{node: node, email: email, repo: "api", lesson: lesson,
			sessions: sessions, first: first, gap: gap, at: at})
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

	// A team that starts together: three engineers' first syncs within
	// minutes, each a few sessions at a human pace, nothing re-attributed.
	// A note, not a suspicion, and no revert.
	commitLog("n-00000000c003", "cat@example.com", 3, ms(12*time.Minute), 240_000, now.Add(-9*time.Minute), "pin-go-toolchain")
	commitLog("n-00000000d004", "dan@example.com", 3, ms(11*time.Minute), 240_000, now.Add(-8*time.Minute), "pin-go-toolchain")
	commitLog("n-00000000f005", "fay@example.com", 3, ms(10*time.Minute), 240_000, now.Add(-7*time.Minute), "pin-go-toolchain")
	_, out, _ = inProcess(t, vars, "", "doctor")
	if strings.Contains(out, "suspect") || strings.Contains(out, "forged") || strings.Contains(out, "revert") {
		t.Fatalf("doctor suspects a team that starts together:\n%s", out)
	}
	if !strings.Contains(out, "n-00000000f005.jsonl: note: ") {
		t.Errorf("doctor does not note the identities appearing at once:\n%s", out)
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

// TestAdversarialSignedEvidence: a patient pusher commits as three git
// identities, an hour apart (no burst), at a human pace, in three repos:
// without the setting the lesson consolidates and reaches a teammate
// unasked, the limit SECURITY.md states. With git config borg.evidence
// signed only the commits git verifies count: the forgery counts for
// nothing, a teammate's signed evidence still counts, and doctor says how
// many lines it leaves out.
func TestAdversarialSignedEvidence(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed: git cannot sign with ssh here")
	}
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	var lesson string
	for _, f := range strings.Fields(testGit(t, store, nil, "ls-files", "lessons")) {
		if strings.Contains(f, "run-migrations") {
			lesson = strings.TrimSuffix(filepath.Base(f), ".html")
		}
	}
	// Ann's ssh key is the team's; the allowed-signers file names it.
	key := filepath.Join(t.TempDir(), "ann")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte("ann@example.com "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	testGit(t, store, nil, "config", "gpg.format", "ssh")
	testGit(t, store, nil, "config", "gpg.ssh.allowedSignersFile", allowed)

	start := time.Now().Add(-48 * time.Hour)
	commitLog := func(node, email, repo, signingKey string, sessions int, at time.Time) {
		t.Helper()
		// One session every 20 minutes, committed after the last.
		const gap = 20 * 60 * 1000
		commitSessions(t, store, sessionLog{node: node, email: email, repo: repo, lesson: lesson, signingKey: signingKey,
			sessions: sessions, first: at.UnixMilli(), gap: gap, at: at.Add(time.Duration(sessions) * gap * time.Millisecond)})
	}
	commitLog("n-000000000a11", "ann@example.com", "api", key, 3, start)
	commitLog("n-0000000e0001", "eve@example.com", "api", "", 20, start.Add(2*time.Hour))
	commitLog("n-0000000e0002", "mal@example.com", "web", "", 20, start.Add(10*time.Hour))
	commitLog("n-0000000e0003", "oz@example.com", "infra", "", 20, start.Add(18*time.Hour))

	memory := func() domain.Memory {
		t.Helper()
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
			if m.ID == lesson {
				return m
			}
		}
		t.Fatalf("no memory of %s", lesson)
		return domain.Memory{}
	}
	carol := memfs.HashEngineer("carol@example.com")
	if m := memory(); !m.Consolidated || !domain.EarlyTrusted(m, carol, domain.DefaultWeights) {
		t.Fatalf("the patient forgery does not work without the setting (consolidated %v, vouched %.1f): the test proves nothing", m.Consolidated, m.Vouched)
	}

	testGit(t, store, nil, "config", "borg.evidence", "signed")
	m := memory()
	if m.Consolidated || domain.EarlyTrusted(m, carol, domain.DefaultWeights) {
		t.Errorf("with signed evidence the forgery still consolidates %s (vouched %.1f, top vouchers %+v)", lesson, m.Vouched, m.TopVouchers)
	}
	if m.Vouched != 3 {
		t.Errorf("vouched %.1f, want Ann's 3 signed changes", m.Vouched)
	}
	code, out, errs := inProcess(t, vars, "", "doctor")
	if !strings.Contains(out, "evidence: signed only (git config borg.evidence): 180 log lines") {
		t.Errorf("doctor does not count the unsigned lines (exit %d):\n%s%s", code, out, errs)
	}
	// borg's own commits are signed now: a learn needs the signing key.
	testGit(t, store, nil, "config", "user.signingKey", key)
	if code, _, errs := inProcess(t, vars, "", "learn", "Tag releases from the main branch only"); code != 0 {
		t.Fatalf("learn under signed evidence: exit %d: %s", code, errs)
	}
	testGit(t, store, nil, "verify-commit", "HEAD")
}

// TestDoctorJudgesAMachinesSegmentsTogether: a machine's rolled log is one
// machine's evidence, judged as a whole: two committers across its
// segments is as suspect as two in one file, and doctor names the machine
// once.
func TestDoctorJudgesAMachinesSegmentsTogether(t *testing.T) {
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	commit := func(rel, email string, ms int64) {
		t.Helper()
		e := domain.Event{MS: ms, Kind: domain.KindSession, Session: fmt.Sprintf("s-%016x", ms), Repo: "api", Author: memfs.HashEngineer(email)}
		line, err := json.Marshal(e.WithID())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store, rel), append(line, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		id := []string{"GIT_AUTHOR_EMAIL=" + email, "GIT_COMMITTER_EMAIL=" + email, "GIT_AUTHOR_NAME=x", "GIT_COMMITTER_NAME=x"}
		testGit(t, store, id, "add", rel)
		testGit(t, store, id, "commit", "-q", "-m", "log "+rel)
	}
	now := time.Now().Add(-time.Hour).UnixMilli()
	commit("log/n-00000000c001.jsonl", "cy@example.com", now)
	commit("log/n-00000000c001~0001.jsonl", "cy@example.com", now+1000)
	commit("log/n-00000000c001~0002.jsonl", "dee@example.com", now+2000)
	_, out, errs := inProcess(t, vars, "", "doctor", "--json")
	var rep struct {
		Evidence []logFileCheck `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	var found *logFileCheck
	for i, c := range rep.Evidence {
		if strings.Contains(c.File, "n-00000000c001") {
			if found != nil {
				t.Fatalf("the machine is judged twice: %+v", rep.Evidence)
			}
			found = &rep.Evidence[i]
		}
	}
	if found == nil || found.File != "log/n-00000000c001.jsonl" || found.Segments != 3 || found.Verdict != "suspect" || len(found.Committers) != 2 {
		t.Fatalf("the machine's check: %+v", found)
	}
}

// sessionLog is a machine's log of sessions that each asked lesson and
// changed the work, committed by email (signed with signingKey when set)
// at at: sessions of them, the first at ms first, one every gap ms.
type sessionLog struct {
	node, email, repo, lesson, signingKey string
	sessions                              int
	first, gap                            int64
	at                                    time.Time
}

func commitSessions(t *testing.T, store string, l sessionLog) {
	t.Helper()
	var b strings.Builder
	for i := range l.sessions {
		s := fmt.Sprintf("s-%016x", l.first+int64(i))
		ms := l.first + int64(i)*l.gap
		for j, kind := range []domain.EventKind{domain.KindSession, domain.KindAsked, domain.KindChanged} {
			e := domain.Event{MS: ms + int64(j), Kind: kind, Session: s, Repo: l.repo, Author: memfs.HashEngineer(l.email)}
			if kind != domain.KindSession {
				e.Lesson = l.lesson
			}
			line, err := json.Marshal(e.WithID())
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
	}
	rel := "log/" + l.node + ".jsonl"
	if err := os.WriteFile(filepath.Join(store, rel), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	date := fmt.Sprintf("%d +0000", l.at.Unix())
	id := []string{"GIT_AUTHOR_EMAIL=" + l.email, "GIT_COMMITTER_EMAIL=" + l.email, "GIT_AUTHOR_NAME=x", "GIT_COMMITTER_NAME=x",
		"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	testGit(t, store, id, "add", rel)
	args := []string{"commit", "-q", "-m", "borg sync: outcomes of " + l.node}
	if l.signingKey != "" {
		args = append([]string{"-c", "user.signingKey=" + l.signingKey}, append(args, "-S")...)
	}
	testGit(t, store, id, args...)
}
