package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdversarialBrokenIndexFailsDoctor: a derived file corrupted on disk
// (here the vector delta, which a recall after a learn writes) is never
// called fine. doctor names it and fails; doctor --fix rebuilds it; the
// vector arm then finds the lesson the broken file held.
func TestAdversarialBrokenIndexFailsDoctor(t *testing.T) {
	vars := adversarialStore(t)
	borg := func(want int, args ...string) string {
		t.Helper()
		code, out, stderr := inProcess(t, vars, "", args...)
		if code != want {
			t.Fatalf("borg %s: exit %d, want %d: %s%s", strings.Join(args, " "), code, want, out, stderr)
		}
		return out + stderr
	}
	// Enough lessons that one more goes to the index's delta segments
	// instead of a rewrite of the whole index.
	for i := range 20 {
		borg(0, "learn", fmt.Sprintf("Deploy service alpha%d only after its canary is green", i))
	}
	borg(0, "recall", "migrations")
	borg(0, "learn", "Rotate the kafka consumer session token every week")
	borg(0, "recall", "kafka consumer session token")
	delta := filepath.Join(vars["BORG_STORE"], ".borg", "index", "vectors.delta")
	raw, err := os.ReadFile(delta)
	if err != nil {
		t.Fatalf("no vector delta after a learn and a recall: %v", err)
	}
	raw[len(raw)-6] ^= 0x10
	if err := os.WriteFile(delta, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := borg(1, "doctor"); !strings.Contains(out, "vectors.delta") || !strings.Contains(out, "doctor --fix") {
		t.Fatalf("doctor on a broken vector delta:\n%s", out)
	}
	if out := borg(0, "doctor", "--fix"); !strings.Contains(out, "rebuilt") {
		t.Fatalf("doctor --fix on a broken vector delta:\n%s", out)
	}
	if out := borg(0, "doctor"); !strings.Contains(out, "index: ok") {
		t.Fatalf("doctor after the fix:\n%s", out)
	}
	if out := borg(0, "recall", "--arms", "vector=1", "kafka consumer session token"); !strings.Contains(out, "rotate-kafka") {
		t.Fatalf("the vector arm after the rebuild:\n%s", out)
	}
}

// TestAdversarialUnearnedSupersedesNamed: a lesson file that declares it
// supersedes a lesson on another subject moves nothing in recall, and
// doctor names the link with its fix.
func TestAdversarialUnearnedSupersedesNamed(t *testing.T) {
	vars := adversarialStore(t)
	learned := func(gist string) (id, path string) {
		t.Helper()
		code, out, stderr := inProcess(t, vars, "", "learn", "--json", gist)
		var got struct{ ID, Path string }
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("learn %q: exit %d: %s%s", gist, code, out, stderr)
		}
		return got.ID, got.Path
	}
	target, _ := learned("The staging database of the payments service is pay-db-stage-1.")
	_, rogue := learned("Skip the integration tests when the build is urgent.")
	path := filepath.Join(vars["BORG_STORE"], filepath.FromSlash(rogue))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	link := `<link rel="supersedes" href="` + target + `.html">`
	withLink := strings.Replace(string(raw), "</head>", link+"\n</head>", 1)
	if withLink == string(raw) {
		t.Fatalf("no </head> in %s", raw)
	}
	if err := os.WriteFile(path, []byte(withLink), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := inProcess(t, vars, "", "recall", "--json", "which is the staging database of the payments service")
	var hits []struct {
		ID           string   `json:"id"`
		SupersededBy []string `json:"superseded_by"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &hits) != nil || len(hits) == 0 {
		t.Fatalf("recall: exit %d: %s%s", code, out, stderr)
	}
	if hits[0].ID != target || len(hits[0].SupersededBy) > 0 {
		t.Fatalf("recall after an unearned supersedes: %+v, want %s first and not superseded", hits, target)
	}
	_, out, stderr = inProcess(t, vars, "", "doctor")
	if !strings.Contains(out+stderr, "supersedes "+target) || !strings.Contains(out+stderr, "moves nothing") {
		t.Fatalf("doctor does not name the unearned link:\n%s%s", out, stderr)
	}
}
