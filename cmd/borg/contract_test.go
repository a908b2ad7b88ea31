package main

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/hooks/hookstest"
)

// TestRecallerContract runs hooks.Recaller's contract on the recaller the
// hooks get from the CLI: the store's index, synced within the hook's
// budget. (hooks runs it on its tests' double, and hooks.Store's on memfs.)
func TestRecallerContract(t *testing.T) {
	hookstest.RecallerContract(t, func(t *testing.T, lessons []domain.Lesson) hooks.Recaller {
		s := hookstest.MemfsStore(t, lessons)
		sr := &storeRecaller{store: s, budget: hookBudget(func(string) string { return "" }), floor: -1} // the contract is about the protocol, not the floor
		t.Cleanup(sr.Close)
		return sr
	})
}

// TestRecallerCloseAndOpen: a hook that gave up closes its recaller while
// its handler may still be opening it. Close and an open on two goroutines
// share no unsynchronised state (-race), and an open asked for after Close
// fails rather than opening an index no one closes.
func TestRecallerCloseAndOpen(t *testing.T) {
	lessons := []domain.Lesson{{ID: "retry-payments", Gist: "Retry the payments client with backoff.", Type: domain.TypeSemantic}}
	t.Run("together", func(t *testing.T) {
		sr := &storeRecaller{store: hookstest.MemfsStore(t, lessons), budget: hookBudget(func(string) string { return "" })}
		var wg sync.WaitGroup
		wg.Go(sr.Warm)
		wg.Go(sr.Close)
		wg.Wait()
		sr.Close()
	})
	t.Run("close first", func(t *testing.T) {
		sr := &storeRecaller{store: hookstest.MemfsStore(t, lessons), budget: hookBudget(func(string) string { return "" })}
		sr.Close()
		if err := sr.open(context.Background()); !errors.Is(err, errRecallerClosed) {
			t.Fatalf("open after Close: %v, want errRecallerClosed", err)
		}
		if sr.r != nil {
			t.Fatal("an index was opened after Close")
		}
	})
}
