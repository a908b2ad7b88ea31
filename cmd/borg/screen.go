package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

// indexOptions are the index options every borg process opens store s's
// index with: the screen (memfs.Screen) gives each new or changed lesson a
// verdict when the index reads it, so searches (recall, the hooks) leave
// out lessons carrying a secret or instruction-like text without scanning.
// A lesson borg learn screened on this machine is not screened again: the
// hook that first indexes it would otherwise compile rules again for a
// verdict already known (see screenedFile).
func indexOptions(s *memfs.Store, lockWait time.Duration) index.Options {
	var once sync.Once
	var known map[string]bool
	screen := func(l domain.Lesson) string {
		once.Do(func() { known = readScreened(s) })
		if known[index.ContentHash(l)] {
			return ""
		}
		return memfs.Screen(l)
	}
	return index.Options{LockWait: lockWait, Screen: screen, ScreenID: memfs.ScreenID}
}

// screenedFile (under the store's .borg/, local, never shared) lists the
// content hashes (index.ContentHash) of lessons borg learn wrote and found
// clean with the rules memfs.ScreenID names, one "<hash> <screen id>" a
// line, newest last.
const screenedFile = ".borg/screened"

// maxScreened bounds screenedFile: past it, the oldest half is dropped (a
// lesson the index has read needs no entry any more).
const maxScreened = 512

// readScreened returns the clean content hashes screenedFile records for
// the current rules (none when it is missing or unreadable).
func readScreened(s *memfs.Store) map[string]bool {
	data, err := os.ReadFile(filepath.Join(s.Dir(), screenedFile))
	if err != nil {
		return nil
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if h, id, ok := strings.Cut(line, " "); ok && id == memfs.ScreenID {
			known[h] = true
		}
	}
	return known
}

// recordScreened notes that lesson l, as written, is clean (borg learn
// screened it). Failing to note it costs a later screen, nothing else.
func recordScreened(s *memfs.Store, l domain.Lesson) {
	path := filepath.Join(s.Dir(), screenedFile)
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) >= maxScreened {
		lines = lines[len(lines)-maxScreened/2:]
	}
	lines = append(lines, index.ContentHash(l)+" "+memfs.ScreenID)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = memfs.WriteFileAtomic(path, []byte(strings.TrimLeft(strings.Join(lines, "\n"), "\n")+"\n"), 0o644)
}

// redacted replaces each field of l that carries a secret (every field
// memfs.Screen reads, the reach tag included) with a note naming the kind,
// and returns the lesson's screen verdict: what borg show, borg list and
// borg serve print instead of the secret.
func redacted(l domain.Lesson) (domain.Lesson, string) {
	verdict := memfs.Screen(l)
	if !memfs.IsSecretVerdict(verdict) {
		return l, verdict
	}
	red := func(s string) string {
		if kind, found := memfs.FindSecretFolded(s); found {
			return fmt.Sprintf("[redacted: a secret (%s)]", kind)
		}
		return s
	}
	l.ID = memfs.SafeID(l.ID)
	l.Title, l.Gist, l.Body = red(l.Title), red(l.Gist), red(l.Body)
	l.Type, l.Reach, l.Author = red(l.Type), red(l.Reach), red(l.Author)
	l.Tags, l.Anchors, l.Links = slices.Clone(l.Tags), slices.Clone(l.Anchors), slices.Clone(l.Links)
	for _, list := range [][]string{l.Tags, l.Anchors} {
		for i := range list {
			list[i] = red(list[i])
		}
	}
	for i := range l.Links {
		l.Links[i].Target = memfs.SafeID(l.Links[i].Target)
	}
	return l, verdict
}

// refusedAdvice is what doctor tells a user to do about a lesson the
// screen refused.
func refusedAdvice(verdict string) string {
	if strings.HasPrefix(verdict, "secret ") {
		return verdict + "; it is never quoted to an agent: remove the secret from the file and rotate it (git history keeps it)"
	}
	return verdict + "; it is never quoted to an agent: say the lesson as a fact or a practice, not as an order to the agent"
}
