package index

import (
	"github.com/borg-memory/borg/domain"
)

// Infos lists what the index knows of each lesson that memory derivation
// needs (id and reach), sorted by id, without reading the lesson files. It
// is built on first use; callers must not modify it.
func (ix *Index) Infos() []domain.LessonInfo {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.infosOnce.Do(func() {
		ords := ix.cat.ordered()
		ix.infos = make([]domain.LessonInfo, len(ords))
		for i, g := range ords {
			ix.infos[i] = domain.LessonInfo{ID: ix.cat.id(g), Reach: ix.cat.reach(g)}
		}
	})
	return ix.infos
}

// Info is one lesson's entry of Infos, found without building them all.
func (ix *Index) Info(id string) (domain.LessonInfo, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	o, ok := ix.cat.find(id)
	if !ok {
		return domain.LessonInfo{}, false
	}
	return domain.LessonInfo{ID: ix.cat.id(o), Reach: ix.cat.reach(o)}, true
}
