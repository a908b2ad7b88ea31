package hooks_test

import (
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/hooks/hookstest"
)

// TestStoreContract runs hooks.Store's contract on the store the CLI gives
// the hooks (memfs) and on the hooks' tests' double.
func TestStoreContract(t *testing.T) {
	t.Run("memfs", func(t *testing.T) {
		hookstest.StoreContract(t, func(t *testing.T, lessons []domain.Lesson) hooks.Store {
			return hookstest.MemfsStore(t, lessons)
		})
	})
	t.Run("double", func(t *testing.T) {
		hookstest.StoreContract(t, func(_ *testing.T, lessons []domain.Lesson) hooks.Store {
			return hooks.NewMemStore(lessons)
		})
	})
}

// TestRecallerContract runs hooks.Recaller's contract on the hooks' tests'
// double; cmd/borg runs it on the CLI's recaller.
func TestRecallerContract(t *testing.T) {
	hookstest.RecallerContract(t, func(_ *testing.T, lessons []domain.Lesson) hooks.Recaller {
		return hooks.NewWordRecall(lessons)
	})
}
