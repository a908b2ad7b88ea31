package memfs

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestSettingsFrom(t *testing.T) {
	kv := func(pairs ...string) [][2]string {
		var out [][2]string
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, [2]string{pairs[i], pairs[i+1]})
		}
		return out
	}
	tests := []struct {
		name         string
		pairs        [][2]string
		signed, sign bool
		bad          bool
		gcOff        bool
	}{
		{"nothing set", nil, false, false, false, false},
		{"signed", kv("borg.evidence", "signed"), true, true, false, false},
		{"any", kv("borg.evidence", "any"), false, false, false, false},
		{"case folded", kv("borg.evidence", "Signed"), true, true, false, false},
		{"gpgsign only", kv("commit.gpgsign", "true"), false, true, false, false},
		{"gpgsign off", kv("commit.gpgsign", "false"), false, false, false, false},
		{"the last value wins", kv("borg.evidence", "signed", "borg.evidence", "any"), false, false, false, false},
		{"a typo fails closed", kv("borg.evidence", "sigend"), true, true, true, false},
		{"a typo then a good value", kv("borg.evidence", "sigend", "borg.evidence", "any"), false, false, false, false},
		{"gc off", kv("gc.auto", "0"), false, false, false, true},
		{"gc on again", kv("gc.auto", "0", "gc.auto", "6700"), false, false, false, false},
		{"gc key case folded", kv("GC.Auto", " 0 "), false, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := settingsFrom(tt.pairs)
			if v.signed != tt.signed || v.sign != tt.sign || (v.err != nil) != tt.bad || v.gcOff != tt.gcOff {
				t.Fatalf("got signed=%v sign=%v err=%v gcOff=%v", v.signed, v.sign, v.err, v.gcOff)
			}
		})
	}
}

func TestSignerIdentity(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"Ann Lee <ann@example.com>", "ann@example.com"},
		{"ann@example.com", "ann@example.com"},
		{"CN=Ann Lee", "CN=Ann Lee"},
		{"", ""},
	} {
		if got := signerIdentity(tt.name); got != tt.want {
			t.Errorf("signerIdentity(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// sshSigner is an ssh signing key made for a test: its private key file
// and its allowed-signers line for principal.
type sshSigner struct{ key, allowed string }

func newSSHSigner(t *testing.T, principal string) sshSigner {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed: git cannot sign with ssh here")
	}
	key := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	return sshSigner{key: key, allowed: principal + ` namespaces="git" ` + f[0] + " " + f[1] + "\n"}
}

// TestSignedEvidence: with borg.evidence = signed, a log line counts only
// when the commit that added it carries a signature git verifies, and then
// as the signer's; lines this machine has not committed count, and borg's
// own commits are signed so its evidence keeps counting.
func TestSignedEvidence(t *testing.T) {
	const ada, bob, eve = "ada@example.com", "bob@example.com", "eve@example.com"
	adaKey, eveKey := newSSHSigner(t, ada), newSSHSigner(t, eve)
	s := newTestStore(t)
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte(adaKey.allowed), 0o644); err != nil { // eve's key is no teammate's
		t.Fatal(err)
	}
	gitCLI(t, s.Dir(), "config", "gpg.format", "ssh")
	gitCLI(t, s.Dir(), "config", "gpg.ssh.allowedSignersFile", allowed)
	// Each engineer's first commit a day apart: no burst of identities
	// (attrib.go) groups them.
	day := 0
	commit := func(email, key, file, msg string, events ...domain.Event) {
		t.Helper()
		writeLog(t, s, file, events)
		gitAs(t, s.Dir(), email, "add", file)
		args := []string{"commit", "-qm", msg}
		if key != "" {
			args = []string{"-c", "user.signingKey=" + key, "commit", "-S", "-qm", msg}
		}
		day++
		date := fmt.Sprintf("GIT_AUTHOR_DATE=%d +0000", 1_700_000_000+day*86400)
		cmd := exec.Command("git", append([]string{"-C", s.Dir()}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+email, "GIT_AUTHOR_EMAIL="+email,
			"GIT_COMMITTER_NAME="+email, "GIT_COMMITTER_EMAIL="+email, date)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v\n%s", err, out)
		}
	}
	commit(ada, adaKey.key, "log/n-ada.jsonl", "ada, signed", claim(1, domain.KindChanged, "s1", ada))
	commit(bob, "", "log/n-bob.jsonl", "bob, unsigned", claim(2, domain.KindChanged, "s2", bob))
	commit(eve, eveKey.key, "log/n-eve.jsonl", "eve, signed by a key no one allowed", claim(3, domain.KindChanged, "s3", eve))
	// Ada's key signs a commit that names bob: it counts as Ada's.
	commit(bob, adaKey.key, "log/n-bob2.jsonl", "bob's name, ada's key", claim(4, domain.KindChanged, "s4", bob))

	everyone := map[string]string{HashSession("s1"): HashEngineer(ada), HashSession("s2"): HashEngineer(bob),
		HashSession("s3"): HashEngineer(eve), HashSession("s4"): HashEngineer(bob)}
	if got := authorsBySession(t, s); !mapsEqual(got, everyone) {
		t.Fatalf("without the setting: authors %v, want %v", got, everyone)
	}

	gitCLI(t, s.Dir(), "config", "borg.evidence", "signed")
	gitCLI(t, s.Dir(), "config", "user.signingKey", adaKey.key)
	s, err := Open(s.Dir(), WithEnv(testEnv(map[string]string{"BORG_ENGINEER": ada})))
	if err != nil {
		t.Fatal(err)
	}
	if signed, err := s.SignedEvidence(); !signed || err != nil {
		t.Fatalf("SignedEvidence = %v, %v", signed, err)
	}
	signedOnly := map[string]string{HashSession("s1"): HashEngineer(ada), HashSession("s4"): HashEngineer(ada)}
	if got := authorsBySession(t, s); !mapsEqual(got, signedOnly) {
		t.Fatalf("signed evidence: authors %v, want %v", got, signedOnly)
	}
	if _, rep, _ := s.ReadEvents(); rep.Unsigned != 2 {
		t.Fatalf("ReadEvents counts %d unsigned lines, want 2", rep.Unsigned)
	}
	l, err := s.LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	if got := vouchers(l, "retry-lesson"); !maps.Equal(got, map[string]float64{HashEngineer(ada): 2}) {
		t.Fatalf("the ledger counts %v, want ada's two signed changes only", got)
	}

	// This machine's lines count before they are committed, and after:
	// borg signs its commit.
	if err := s.Append(domain.Event{MS: 5, Kind: domain.KindChanged, Session: "s5", Lesson: "retry-lesson", Author: ada}); err != nil {
		t.Fatal(err)
	}
	if got := authorsBySession(t, s); got[HashSession("s5")] == "" {
		t.Fatalf("an uncommitted line of this machine is not counted: %v", got)
	}
	node, err := s.Node()
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Commit("borg sync: outcomes", LogDir+"/"+node+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", s.Dir(), "verify-commit", h).CombinedOutput(); err != nil {
		t.Fatalf("borg's commit does not verify: %v\n%s", err, out)
	}
	if got := authorsBySession(t, s); got[HashSession("s5")] != HashEngineer(ada) {
		t.Fatalf("borg's own signed commit: authors %v", got)
	}
	gitCLI(t, s.Dir(), "fsck", "--strict")

	// Back to any evidence: every line counts again.
	gitCLI(t, s.Dir(), "config", "borg.evidence", "any")
	s, err = Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := authorsBySession(t, s); len(got) != 5 || got[HashSession("s2")] != HashEngineer(bob) {
		t.Fatalf("back to any: authors %v", got)
	}
	if err := s.refreshAttribution(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestEvidenceSettingsCache: the settings are cached between Stores and
// read again from git when a file they came from changes, an included
// file too.
func TestEvidenceSettingsCache(t *testing.T) {
	s := newTestStore(t)
	inc := filepath.Join(t.TempDir(), "team.gitconfig")
	if err := os.WriteFile(inc, []byte("[borg]\n\tevidence = any\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.Dir(), "config", "include.path", inc)
	reopen := func() *Store {
		t.Helper()
		s, err := Open(s.Dir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if signed, _ := reopen().SignedEvidence(); signed {
		t.Fatal("signed before the setting")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), filepath.FromSlash(settingsFile))); err != nil {
		t.Fatalf("no settings cache: %v", err)
	}
	if err := os.WriteFile(inc, []byte("[borg]\n\tevidence = signed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if signed, err := reopen().SignedEvidence(); !signed || err != nil {
		t.Fatalf("the included file's change is not seen: %v %v", signed, err)
	}
	gitCLI(t, s.Dir(), "config", "borg.evidence", "nope")
	if signed, err := reopen().SignedEvidence(); !signed || err == nil {
		t.Fatalf("a bad value: signed %v, err %v", signed, err)
	}
}
