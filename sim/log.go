package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// outcomeLog is one policy's throwaway store: its events go through the
// store's real log writer and come back through its real readers.
type outcomeLog struct {
	store *memfs.Store
}

// openLog initialises a store for policy name under dir. Its commits are
// stamped at the simulated team's first session, not the clock.
func openLog(ctx context.Context, dir, name string) (*outcomeLog, error) {
	s, err := memfs.Init(ctx, filepath.Join(dir, name), "",
		memfs.WithClock(func() time.Time { return time.UnixMilli(baseMS).UTC() }))
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	return &outcomeLog{store: s}, nil
}

func (l *outcomeLog) append(events []domain.Event) error {
	return l.store.Append(events...)
}

// read returns every event of the store (ReadEvents: shared and local logs,
// deduplicated and sorted), the events of the shared log's segments alone, and the
// ledger the store folds from its logs (LoadLedger).
func (l *outcomeLog) read() (all, shared []domain.Event, led *domain.Ledger, err error) {
	all, rep, err := l.store.ReadEvents()
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rep.Skipped) > 0 {
		return nil, nil, nil, fmt.Errorf("read events: %d lines skipped, first %s:%d: %s",
			len(rep.Skipped), rep.Skipped[0].File, rep.Skipped[0].Line, rep.Skipped[0].Reason)
	}
	segments, err := l.store.LogSegments()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, p := range segments {
		events, err := readJSONL(filepath.Join(l.store.Dir(), filepath.FromSlash(p)))
		if err != nil {
			return nil, nil, nil, err
		}
		shared = append(shared, events...)
	}
	led, err = l.store.LoadLedger()
	if err != nil {
		return nil, nil, nil, err
	}
	return all, shared, led, nil
}

// readJSONL decodes every line of one log file, strictly: a line that is not
// an event is an error here, since the simulator wrote them all.
func readJSONL(path string) ([]domain.Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []domain.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e domain.Event
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("read %s line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
