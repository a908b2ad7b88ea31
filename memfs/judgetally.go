package memfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/borg-memory/borg/domain"
)

// judgeTallyFile keeps this machine's default-judge tally (domain.JudgeTally):
// how often its judge read "acted" on real asks and on placebos. It is local
// (placebo verdicts never leave the machine); without it the judge credits
// readings at the seed's prior until placebos accumulate again.
const judgeTallyFile = localLogDir + "/judge-tally.json"

// judgeTallyWait bounds how long a hook waits for another process updating
// the tally: a small part of a hook's deadline, since the judge goes on with
// the tally as it stands without it. (A variable so that a test of parallel
// updates can wait for the lock instead of racing the clock.)
var judgeTallyWait = 200 * time.Millisecond

// JudgeTally reads this machine's judge tally; the zero tally when there is
// none yet.
func (s *Store) JudgeTally() (domain.JudgeTally, error) {
	var t domain.JudgeTally
	p := filepath.Join(s.dir, filepath.FromSlash(judgeTallyFile))
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("read judge tally: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil || t.Asks < 0 || t.AsksActed < 0 || t.AsksActed > t.Asks ||
		t.Placebos < 0 || t.PlacebosActed < 0 || t.PlacebosActed > t.Placebos {
		return domain.JudgeTally{}, fmt.Errorf("judge tally %s is corrupt; delete it (the judge starts again from its prior)", p)
	}
	return t, nil
}

// UpdateJudgeTally applies fn to this machine's judge tally under its lock
// and writes it back atomically; it returns the tally as written.
func (s *Store) UpdateJudgeTally(fn func(*domain.JudgeTally)) (domain.JudgeTally, error) {
	p := filepath.Join(s.dir, filepath.FromSlash(judgeTallyFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return domain.JudgeTally{}, fmt.Errorf("update judge tally: %w", err)
	}
	unlock, err := LockPath(p+".lock", judgeTallyWait)
	if err != nil {
		return domain.JudgeTally{}, fmt.Errorf("update judge tally: %w", err)
	}
	defer unlock()
	t, err := s.JudgeTally()
	if err != nil {
		// A corrupt tally is replaced: it is a cache of calibration, and
		// the hook must not stop judging over it.
		t = domain.JudgeTally{}
	}
	fn(&t)
	b, err := json.Marshal(t)
	if err != nil {
		return t, fmt.Errorf("update judge tally: %w", err)
	}
	if err := WriteFileAtomic(p, append(b, '\n'), 0o644); err != nil {
		return t, fmt.Errorf("update judge tally: %w", err)
	}
	return t, nil
}
