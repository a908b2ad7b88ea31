package index

import (
	"strings"

	"github.com/borg-memory/borg/domain"
)

// Infos lists what the index knows of each lesson that memory derivation
// needs (id and reach), sorted by id, without reading the lesson files. It
// is built on first use; callers must not modify it.
func (ix *Index) Infos() []domain.LessonInfo {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.infosOnce.Do(func() {
		ix.infos = make([]domain.LessonInfo, ix.cat.len())
		for i := range ix.infos {
			ix.infos[i] = domain.LessonInfo{ID: strings.Clone(ix.cat.id(i)), Reach: strings.Clone(ix.cat.reach(i))}
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
	return domain.LessonInfo{ID: strings.Clone(ix.cat.id(o)), Reach: strings.Clone(ix.cat.reach(o))}, true
}
