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

// TestHookFloor: BORG_FLOOR as the hooks read it: a relevance in (0, 1],
// 0 for none (-1 to the index), anything else (NaN too) the default (0 to
// the index); doctor names what the hooks cannot use.
func TestHookFloor(t *testing.T) {
	for _, tt := range []struct {
		v       string
		want    float64
		flagged bool
	}{
		{"", 0, false}, {"0.4", 0.4, false}, {"1", 1, false}, {"0", -1, false},
		{"2", 0, true}, {"-0.1", 0, true}, {"NaN", 0, true}, {"0,5", 0, true}, {"abc", 0, true},
	} {
		getenv := func(k string) string {
			if k == "BORG_FLOOR" {
				return tt.v
			}
			return ""
		}
		if got := hookFloor(getenv); got != tt.want {
			t.Errorf("BORG_FLOOR=%q: floor %v, want %v", tt.v, got, tt.want)
		}
		if got := len(hookEnvProblems(getenv)) > 0; got != tt.flagged {
			t.Errorf("BORG_FLOOR=%q: doctor flags it: %v, want %v", tt.v, got, tt.flagged)
		}
	}
}
