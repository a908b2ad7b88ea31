package memfs

import (
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/memfstest"
)

var _ memfstest.Store = (*Store)(nil)

// TestStoreContract runs the store contract on the disk store.
func TestStoreContract(t *testing.T) {
	memfstest.TestStore(t, func(t *testing.T, lessons []domain.Lesson) memfstest.Store {
		s := newTestStore(t)
		for _, l := range lessons {
			if err := s.WriteLesson(l); err != nil {
				t.Fatal(err)
			}
		}
		return s
	})
}
