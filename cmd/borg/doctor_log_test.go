package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func TestCheckLogEvidence(t *testing.T) {
	now := time.Now().UnixMilli()
	ev := func(ms int64, kind domain.EventKind, session, by string) domain.Event {
		return domain.Event{MS: ms, Kind: kind, Session: session, Lesson: "retry-lesson", Repo: "api", Author: memfs.HashEngineer(by)}.WithID()
	}
	sessionOf := func(ms int64, session, by string) []domain.Event {
		return []domain.Event{ev(ms, domain.KindSession, session, by), ev(ms+1, domain.KindAsked, session, by), ev(ms+2, domain.KindChanged, session, by)}
	}
	tests := []struct {
		name      string
		committer string
		events    []domain.Event
		verdict   string
		me        string // who runs doctor
	}{
		{"an engineer's own sessions", "ada@example.com", append(sessionOf(now-5000, "s-1", "ada@example.com"), sessionOf(now-4000, "s-2", "ada@example.com")...), "ok", ""},
		{"an engineer whose email changed", "ada@new.example.com", sessionOf(now-5000, "s-1", "ada@example.com"), "suspect", ""},
		{"made-up engineers", "eve@example.com", append(sessionOf(now-5000, "s-1", "bob@example.com"), sessionOf(now-4000, "s-2", "carol@example.com")...), "forged", ""},
		{"results of sessions that never were", "eve@example.com", []domain.Event{ev(now-5000, domain.KindChanged, "s-9", "bob@example.com")}, "forged", ""},
		{"dated in the future", "eve@example.com", sessionOf(now+48*3600*1000, "s-1", "bob@example.com"), "forged", ""},
		{"pushed under the identity of who runs doctor", "bob@example.com", sessionOf(now-5000, "s-1", "bob@example.com"), "suspect", "bob@example.com"},
		{"another engineer's own sessions", "ada@example.com", sessionOf(now-5000, "s-1", "ada@example.com"), "ok", "bob@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := memfs.Init(context.Background(), filepath.Join(t.TempDir(), "store"), "")
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, e := range tt.events {
				line, _ := json.Marshal(e)
				b.Write(append(line, '\n'))
			}
			if err := os.WriteFile(filepath.Join(s.Dir(), "log", "n-000000000001.jsonl"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"add", "log"}, {"commit", "-qm", "log"}} {
				testGit(t, s.Dir(), []string{"GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=" + tt.committer, "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=" + tt.committer}, args...)
			}
			checks, err := checkLogEvidence(context.Background(), s, now, memfs.HashEngineer(tt.me))
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != 1 || checks[0].Verdict != tt.verdict {
				t.Fatalf("checks %+v, want one %s", checks, tt.verdict)
			}
			if tt.verdict == "forged" && len(checks[0].Commits) != 1 {
				t.Fatalf("the forged file names commits %v, want the one", checks[0].Commits)
			}
		})
	}
}
