//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// TestStopHookWhileIndexHeld: another process writing the on-disk index
// (here: its write lock held, as during a long sync) while the lessons have
// changed must not make the Stop hook hang or fail: it answers within its
// deadline, exit 0, from an index synced in memory.
//
// It is long on purpose: one scenario whose steps each build on the state
// the last left, read top to bottom.
func TestStopHookWhileIndexHeld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	getenv := storeGetenv(dir)
	s, err := memfs.Init(context.Background(), dir, "", memfs.WithEnv(getenv))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []domain.Lesson{
		{ID: "retry-payments-backoff-1a2b", Type: "procedural", Confidence: 0.8, Gist: "Retry the payments client with exponential backoff and jitter."},
		{ID: "gateway-timeout-context-3c4d", Type: "semantic", Confidence: 0.8, Gist: "Every payments gateway call takes a context with a timeout."},
	} {
		if err := s.WriteLesson(l); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(domain.Event{MS: 1, Kind: domain.KindCreated, Lesson: l.ID}); err != nil {
			t.Fatal(err)
		}
	}
	held, err := index.Open(indexDir(s), mustEmbedder(t), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	lessons, _ := s.Lessons()
	if _, err := held.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	// A lesson the index does not hold yet, so the hook must sync.
	if err := s.WriteLesson(domain.Lesson{ID: "payments-idempotency-5e6f", Type: "semantic", Confidence: 0.8,
		Gist: "Payments retries carry an idempotency key."}); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(indexDir(s), "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	proj := t.TempDir()
	testGit(t, proj, nil, "init", "-q")
	in := `{"session_id":"held-1","cwd":"` + proj + `","last_assistant_message":"I added retries with backoff to the payments client."}`
	var out, errb bytes.Buffer
	e := &env{in: strings.NewReader(in), out: &out, err: &errb, getenv: getenv, now: time.Now}
	done := make(chan int, 1)
	go func() { done <- runHook(context.Background(), e, "stop", "") }()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Stop hook hung on a held index")
	}
	// The index synced in memory still answers, and nothing was written.
	if o := out.String(); !strings.HasPrefix(o, `{"decision":"block"`) || strings.Count(o, "\n") != 1 {
		t.Fatalf("want one block from the fallback index, got %q (stderr %q)", o, errb.String())
	}
	if n := strings.Count(strings.TrimRight(errb.String(), "\n"), "\n"); n > 0 {
		t.Fatalf("more than one stderr line: %q", errb.String())
	}
	if got := held.Len(); got != 2 {
		t.Fatalf("the held index changed under its writer: %d lessons", got)
	}
	reopened, err := index.Open(indexDir(s), mustEmbedder(t), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if got := reopened.Len(); got != 2 {
		t.Fatalf("a sync without the lock wrote the catalog: %d lessons", got)
	}

}

func mustEmbedder(t *testing.T) index.Embedder {
	t.Helper()
	emb, err := newEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	return emb
}
