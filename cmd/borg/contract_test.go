package main

import (
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
