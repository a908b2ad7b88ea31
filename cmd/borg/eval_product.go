package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
	"github.com/borg-memory/borg/sleep"
)

// The product path of `borg eval retrieval --product`: each folder's
// documents become a real throwaway store through borg learn's own code
// (secret refusal, ids from the gist, lesson files, created events, a
// commit), and each query is answered as `borg recall` answers it (the
// store's index synced as recall syncs it, the log's summary, the
// usefulness bar, MMR, links). What the lab path leaves out (a log, ids
// that are not the corpus's, lessons learned twice) is all there.

// productEpoch is the product path's clock: lessons are learned a second
// apart from it, so the same corpus gives the same store.
var productEpoch = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// productSearcher answers a folder's queries from its throwaway store.
type productSearcher struct {
	dir   string // the store, removed by Close
	store *memfs.Store
	r     *retrieval
	arms  index.ArmWeights
	docs  map[string][]string // lesson id → the documents it was learned from
	keep  io.Writer           // non-nil: keep the store, and say where it is
}

// productBuilder returns the EvalOptions.Build of the product path.
func productBuilder(e *env, arms index.ArmWeights, progress io.Writer, terminal, keep, sleepFirst bool) func(context.Context, string, []domain.Lesson, []index.EvalQuery) (index.Searcher, error) {
	return func(ctx context.Context, name string, docs []domain.Lesson, replay []index.EvalQuery) (index.Searcher, error) {
		dir, err := os.MkdirTemp("", "borg-eval-"+name+"-")
		if err != nil {
			return nil, err
		}
		ps, err := buildProductStore(ctx, e, dir, docs, progress, terminal, name)
		if err == nil {
			ps.arms = arms
		}
		if err == nil && len(replay) > 0 {
			err = ps.replay(ctx, replay)
		}
		if err == nil && sleepFirst {
			err = ps.sleep(ctx)
		}
		if err != nil {
			if ps != nil && ps.r != nil {
				_ = ps.r.Close()
			}
			_ = os.RemoveAll(dir)
			return nil, err
		}
		if keep {
			ps.keep = progress
		}
		return ps, nil
	}
}

func buildProductStore(ctx context.Context, e *env, dir string, docs []domain.Lesson, progress io.Writer, terminal bool, name string) (*productSearcher, error) {
	tick := 0
	le := *e
	le.out, le.err = io.Discard, io.Discard
	// One fixed author: the store does not depend on who runs the
	// evaluation, and borg learn need not open a git repository per
	// document to find the engineer's email.
	le.getenv = func(k string) string {
		if k == "BORG_ENGINEER" {
			return "eval@borg.invalid"
		}
		return e.getenv(k)
	}
	le.now = func() time.Time { return productEpoch.Add(time.Duration(tick) * time.Second) }
	s, err := memfs.Init(ctx, dir, "", storeOptions(&le)...)
	if err != nil {
		return nil, err
	}
	ps := &productSearcher{dir: dir, store: s, docs: map[string][]string{}}
	var paths []string
	refused, empty := 0, 0
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tick = i
		// The document's whole text is the gist, as a user learns a fact
		// in one line (`borg learn "<text>"`): ids come from it, so two
		// documents share a lesson only when their texts are the same.
		gist := strings.Join(strings.Fields(d.Gist+" "+d.Body), " ")
		if gist == "" || gist == d.Title {
			gist = strings.Join(strings.Fields(d.Title), " ") // a document with no text but its title
		}
		if gist == "" {
			empty++
			continue
		}
		l, _, err := learnLesson(&le, s, learnOptions{gist: gist, title: d.Title, typ: d.Type}, false)
		var ee *exitError
		switch {
		case err == nil:
			ps.docs[l.ID] = append(ps.docs[l.ID], d.ID)
			paths = append(paths, memfs.LessonPath(l.ID))
		case errors.As(err, &ee) && ee.code == exitRefused:
			// Learned already (the same gist), or refused (a secret, text
			// addressed to the agent, a hidden character): the
			// document goes with the lesson of its gist, if there is one.
			if id, _, _ := gistLesson(s, gist); id != "" && len(ps.docs[id]) > 0 {
				ps.docs[id] = append(ps.docs[id], d.ID)
			} else {
				refused++
			}
		default:
			return nil, fmt.Errorf("learn document %s: %w", d.ID, err)
		}
		if terminal && (i+1)%100 == 0 {
			fmt.Fprintf(progress, "\r%-16s learning %d/%d documents…", name, i+1, len(docs))
		}
	}
	logs, err := s.OwnLogPaths()
	if err != nil {
		return nil, err
	}
	if _, err := s.Commit(fmt.Sprintf("borg eval: learn %d documents", len(docs)), append(paths, logs...)...); err != nil {
		return nil, err
	}
	if refused > 0 {
		fmt.Fprintf(progress, "%s: %d document(s) refused by borg learn (a secret, an instruction to the agent, or a hidden character) and left out\n", name, refused)
	}
	if empty > 0 {
		fmt.Fprintf(progress, "%s: %d empty document(s) left out\n", name, empty)
	}
	r, err := openRetrieval(ctx, s, openOptions{})
	if err != nil {
		return nil, err
	}
	ps.r = r
	return ps, nil
}

// replay plays each query as one agent session, as the hooks record it:
// the session starts, the Stop hook asks the lessons its recall puts over
// the bar (with the hooks' arms, up to their slots, in the session's
// draw, whatever arms the evaluation ranks with), and an honest
// judge records each asked lesson as changed when it was learned from a
// document judged relevant to the query, ignored otherwise. Later sessions
// see the evidence of earlier ones, as a team's do.
func (p *productSearcher) replay(ctx context.Context, queries []index.EvalQuery) error {
	slots := hooks.DefaultConfig().Slots
	ms := productEpoch.Add(24 * time.Hour).UnixMilli()
	for i, q := range queries {
		session := memfs.HashSession(fmt.Sprintf("eval-replay-%d-%s", i, q.ID))
		ms += 60_000
		events := []domain.Event{{MS: ms, Kind: domain.KindSession, Session: session}}
		hits, err := p.r.ix.Search(ctx, index.Query{Text: q.Text, K: slots, Session: session, Arms: index.HookArmWeights(),
			UsefulFunc: p.r.usefulFunc(session), OnlyOverBar: true, Explore: true, Links: p.r.lessonLinks(ms)})
		if err != nil {
			return fmt.Errorf("replay %s: %w", q.ID, err)
		}
		for j, h := range hits {
			kind := domain.KindIgnored
			for _, doc := range p.docs[h.ID] {
				if q.Relevant[doc] > 0 {
					kind = domain.KindChanged
				}
			}
			events = append(events,
				domain.Event{MS: ms + int64(1+2*j), Kind: domain.KindAsked, Session: session, Lesson: h.ID},
				domain.Event{MS: ms + int64(2+2*j), Kind: kind, Session: session, Lesson: h.ID})
		}
		if err := p.store.Append(events...); err != nil {
			return err
		}
		sum, err := p.store.Summary()
		if err != nil {
			return err
		}
		p.r.summary = sum
	}
	return nil
}

// sleep runs one `borg sleep --apply` the night after the store was built
// (and replayed), then reopens the search state as the next recall would.
func (p *productSearcher) sleep(ctx context.Context) error {
	date := productEpoch.Add(30 * 24 * time.Hour)
	if _, err := sleep.Run(ctx, p.store, sleep.Options{Date: date, Apply: true}, io.Discard); err != nil {
		return fmt.Errorf("sleep: %w", err)
	}
	_ = p.r.Close()
	r, err := openRetrieval(ctx, p.store, openOptions{})
	if err != nil {
		return err
	}
	p.r = r
	return nil
}

// Search answers as `borg recall --k k` does, then names documents.
func (p *productSearcher) Search(ctx context.Context, text string, k int) ([]string, error) {
	hits, err := p.r.recall(ctx, index.Query{Text: text, K: k, Arms: p.arms})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range hits {
		out = append(out, p.docs[h.ID]...)
	}
	return out, nil
}

func (p *productSearcher) Close() error {
	err := p.r.Close()
	if p.keep != nil {
		fmt.Fprintf(p.keep, "kept the product path's store in %s\n", p.dir)
		return err
	}
	if rerr := os.RemoveAll(p.dir); err == nil {
		err = rerr
	}
	return err
}
