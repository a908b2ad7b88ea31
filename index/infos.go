package index

import "github.com/borg-memory/borg/domain"

// Infos lists what the index knows of each lesson that memory derivation
// needs (id and reach), sorted by id, without reading the lesson files: a
// hook derives usefulness from it in O(lessons). The slice is shared and
// rebuilt by Sync; callers must not modify it.
func (ix *Index) Infos() []domain.LessonInfo {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.infos
}
