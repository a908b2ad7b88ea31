package hooks

import "github.com/borg-memory/borg/domain"

// The test doubles of the hooks' tests, for the contract suites of
// hookstest (run in package hooks_test: hookstest imports hooks).

// NewMemStore is the in-memory Store the hooks' tests use, holding lessons.
func NewMemStore(lessons []domain.Lesson) Store { return newMemStore(lessons) }

// NewWordRecall is the word-matching Recaller the hooks' tests use, over a
// memory store holding lessons.
func NewWordRecall(lessons []domain.Lesson) Recaller { return wordRecall{store: newMemStore(lessons)} }

func newMemStore(lessons []domain.Lesson) *memStore {
	m := &memStore{lessons: map[string]domain.Lesson{}}
	for _, l := range lessons {
		m.lessons[l.ID] = l
	}
	return m
}

// The doubles meet the interfaces they stand in for.
var (
	_ Store    = (*memStore)(nil)
	_ Recaller = wordRecall{}
	_ Recaller = warmRecall{}
	_ Warmer   = warmRecall{}
	_ Recaller = fixedRecall{}
	_ Recaller = engineerRecall{}
)
