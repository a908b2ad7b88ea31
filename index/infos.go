package index

import (
	"sort"

	"github.com/borg-memory/borg/domain"
)

// Infos lists what the index knows of each lesson that memory derivation
// needs (id and reach), sorted by id, without reading the lesson files: a
// hook derives usefulness from it in O(lessons).
func (ix *Index) Infos() []domain.LessonInfo {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]domain.LessonInfo, 0, len(ix.cat.lessons))
	for _, li := range ix.cat.lessons {
		out = append(out, domain.LessonInfo{ID: li.id, Reach: li.reach})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
