package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
)

// flushEvery is how many sessions of events a policy buffers before it
// appends them to its log in one call (the ledger folds them at once).
const flushEvery = 25

// policy is one ranking policy's run: its own store and log, its own ledger
// (fed the very events the log receives) and its running figures.
type policy struct {
	name    string
	log     *outcomeLog
	ledger  *domain.Ledger
	buf     []domain.Event
	value   float64
	regret  float64
	curve   []float64
	asked   map[string][]int // lesson → sessions that asked it
	pending map[int][]domain.Event
	slots   int // questions asked in all
	// newFirst and newConsolidated: a new lesson's first ask and first
	// consolidated session (absent: not yet).
	newFirst, newConsolidated map[string]int
	changedNew                bool // a new lesson got a changed result since the last check
	// tallies are the default judge's placebo tallies, one per engineer's
	// machine (a tally never leaves the machine it was kept on).
	tallies []domain.JudgeTally
	// everConsolidated holds the lessons seen consolidated at any session
	// the policy derived memory in, and at the end.
	everConsolidated map[string]bool
	judge, agent     string
}

// emit folds events into the ledger now and queues them for the log.
func (p *policy) emit(events ...domain.Event) {
	for _, e := range events {
		e = e.WithID()
		p.ledger.Add(e)
		p.buf = append(p.buf, e)
	}
}

func (p *policy) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	if err := p.log.append(p.buf); err != nil {
		return fmt.Errorf("policy %s: %w", p.name, err)
	}
	p.buf = p.buf[:0]
	return nil
}

// Run simulates opts's scenario and reports how each policy did. progress,
// when not nil, receives a line per tenth of the run. Run builds a throwaway
// store per policy in a temporary directory and removes it before returning.
func Run(ctx context.Context, opts Options, progress io.Writer) (Report, error) {
	if err := opts.validate(); err != nil {
		return Report{}, err
	}
	tmp, err := os.MkdirTemp("", "borg-sim-")
	if err != nil {
		return Report{}, fmt.Errorf("sim: %w", err)
	}
	defer os.RemoveAll(tmp)
	return run(ctx, opts, progress, tmp)
}

// run is Run with the stores kept under dir (one folder per policy).
func run(ctx context.Context, opts Options, progress io.Writer, tmp string) (Report, error) {
	if err := opts.validate(); err != nil {
		return Report{}, err
	}
	if progress == nil {
		progress = io.Discard
	}

	w := newWorld(opts)
	ix, err := index.NewMemory(index.NewNGramEmbedder(index.NGramOptions{}), index.Options{})
	if err != nil {
		return Report{}, fmt.Errorf("sim: %w", err)
	}
	defer ix.Close()

	pols := make([]*policy, len(PolicyNames))
	for i, name := range PolicyNames {
		lg, err := openLog(ctx, tmp, name)
		if err != nil {
			return Report{}, fmt.Errorf("sim: %w", err)
		}
		pols[i] = &policy{name: name, log: lg, ledger: domain.NewLedger(),
			asked: map[string][]int{}, pending: map[int][]domain.Event{},
			newFirst: map[string]int{}, newConsolidated: map[string]int{},
			tallies: make([]domain.JudgeTally, opts.Engineers), judge: opts.Judge, agent: opts.Agent,
			everConsolidated: map[string]bool{}}
	}
	for _, l := range w.lessons {
		if l.introduced < 0 {
			for _, p := range pols {
				p.emit(createdEvent(w, l, ""))
			}
		}
	}

	reactSeed := subSeed(opts.Seed, "react")
	randSeed := subSeed(opts.Seed, "random")
	var newInfos []domain.LessonInfo
	synced := -1
	var infos []domain.LessonInfo
	for s, t := range w.tasks {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("sim: %w", err)
		}
		avail := w.available(s)
		if len(avail) != synced {
			lessons := make([]domain.Lesson, len(avail))
			infos = make([]domain.LessonInfo, len(avail))
			newInfos = newInfos[:0]
			for i, l := range avail {
				lessons[i] = l.lesson
				infos[i] = domain.LessonInfo{ID: l.lesson.ID, Reach: l.lesson.Reach, CreatedMS: l.createdMS}
				if l.introduced >= 0 {
					newInfos = append(newInfos, infos[i])
				}
			}
			if _, err := ix.Sync(lessons); err != nil {
				return Report{}, fmt.Errorf("sim: session %d: %w", s, err)
			}
			synced = len(avail)
		}
		hits, err := ix.Search(ctx, index.Query{Text: t.text, K: opts.Candidates, Repo: w.repos[t.repo], Session: t.session,
			MMRLambda: opts.MMRLambda})
		if err != nil {
			return Report{}, fmt.Errorf("sim: session %d: %w", s, err)
		}
		cands := make([]string, len(hits))
		for i, h := range hits {
			cands[i] = h.ID
		}
		sc := sessionCtx{ix: ix, opts: opts, w: w, t: t, s: s, infos: infos,
			candidates: cands, randSeed: randSeed}
		sd := sessionDraws(reactSeed, t.session)
		censored := sd.censored < opts.Censored
		placebo := sd.placebo < opts.Placebo

		values := make([]float64, len(pols))
		for i, p := range pols {
			p.emit(sessionEvent(w, t))
			p.emit(p.pending[s]...)
			delete(p.pending, s)
			ids, err := p.choose(ctx, sc)
			if err != nil {
				return Report{}, fmt.Errorf("sim: session %d: %w", s, err)
			}
			values[i] = p.ask(w, s, t, ids, censored, reactSeed)
			if placebo && !censored {
				p.placebo(w, t, sd)
			}
			for _, l := range w.lessons {
				if l.introduced == s {
					p.emit(createdEvent(w, l, t.session))
				}
			}
			// Consolidation only moves when a new lesson gets a changed
			// result, so only then is its memory derived again.
			if p.changedNew && len(p.newConsolidated) < len(newInfos) {
				p.changedNew = false
				for _, m := range p.ledger.Memories(newInfos, t.session, opts.Weights) {
					if _, done := p.newConsolidated[m.ID]; !done && m.Consolidated {
						p.newConsolidated[m.ID] = s
					}
				}
			}
			if (s+1)%flushEvery == 0 {
				if err := p.flush(); err != nil {
					return Report{}, fmt.Errorf("sim: %w", err)
				}
			}
		}
		best := values[len(values)-1]
		for i, p := range pols {
			p.value += values[i]
			p.regret += best - values[i]
			p.curve = append(p.curve, round4(p.regret))
		}
		if n := len(w.tasks); progress != io.Discard && (s+1)%max(1, n/10) == 0 {
			fmt.Fprintf(progress, "session %d/%d: regret borg %.1f, relevance %.1f\n",
				s+1, n, pols[0].regret, pols[1].regret)
		}
	}
	for _, p := range pols {
		if err := p.flush(); err != nil {
			return Report{}, fmt.Errorf("sim: %w", err)
		}
	}
	return buildReport(ctx, opts, w, pols)
}

// ask records the asks and reactions of one session's chosen lessons and
// returns their value for the task.
func (p *policy) ask(w *world, s int, t task, ids []string, censored bool, seed uint64) float64 {
	var v float64
	repo, author := w.repos[t.repo], w.engineers[t.engineer]
	for i, id := range ids {
		l := w.byID[id]
		v += value(l, t)
		p.asked[id] = append(p.asked[id], s)
		p.slots++
		if l.introduced >= 0 {
			if _, seen := p.newFirst[id]; !seen {
				p.newFirst[id] = s
			}
		}
		base := domain.Event{Session: t.session, Lesson: id, Repo: repo, Author: author}
		asked := base
		asked.MS, asked.Kind = t.ms+100+int64(i), domain.KindAsked
		p.emit(asked)
		res := base
		res.MS = t.ms + 1000 + int64(i)
		if censored {
			res.Kind = domain.KindCensored
			p.emit(res)
			continue
		}
		jc := judgeCtx{judge: p.judge, agent: p.agent, credit: p.tallies[t.engineer].Credit()}
		r := react(l, t, drawsFor(seed, t.session, id), jc)
		if jc.judge == JudgeDefault && r.result != domain.KindCorrected && r.result != domain.KindVetoed {
			p.tallies[t.engineer].Add(false, r.acted)
		}
		res.Kind, res.W = r.result, r.w
		p.emit(res)
		if l.introduced >= 0 && r.result == domain.KindChanged {
			p.changedNew = true
		}
		if r.tested {
			ev := base
			ev.MS, ev.Kind = t.ms+2000+int64(i), domain.KindTested
			p.emit(ev)
		}
		if r.regretDelay > 0 && s+r.regretDelay < len(w.tasks) {
			later := w.tasks[s+r.regretDelay]
			ev := base
			ev.MS, ev.Kind, ev.W = later.ms+4000+int64(i), domain.KindRegret, round4(1/float64(len(ids)))
			p.pending[s+r.regretDelay] = append(p.pending[s+r.regretDelay], ev)
		}
	}
	return v
}

// placebo asks a placebo in t's session: a lesson of no relevance, which
// no agent acts on, judged as the real asks are. Its verdict stays on the
// engineer's machine (local log) and feeds that machine's tally.
func (p *policy) placebo(w *world, t task, sd sessionDraw) {
	obs := observe(p.agent, false, 0, sd.placeboDeclare, sd.placeboWords)
	e := domain.Event{MS: t.ms + 3000, Kind: domain.KindPlacebo, Session: t.session,
		Lesson: fmt.Sprintf("placebo-%06d", int(sd.placeboID*1e6)), Repo: w.repos[t.repo],
		Author: w.engineers[t.engineer]}
	if p.judge == JudgePerfect {
		if sd.placeboWords < perfectNoise {
			e.W = 1
		}
	} else {
		p.tallies[t.engineer].Add(true, obs.Acted())
		if obs.Acted() {
			e.W = 1
		}
	}
	p.emit(e)
}

func sessionEvent(w *world, t task) domain.Event {
	return domain.Event{MS: t.ms, Kind: domain.KindSession, Session: t.session,
		Repo: w.repos[t.repo], Author: w.engineers[t.engineer]}
}

// createdEvent is l's creation: in session (a mid-run lesson) or before the
// run ("" session).
func createdEvent(w *world, l *simLesson, session string) domain.Event {
	return domain.Event{MS: l.createdMS, Kind: domain.KindCreated, Session: session,
		Lesson: l.lesson.ID, Repo: w.repos[l.home], Author: l.author}
}

// round4 rounds to four decimals, so the report's figures read well.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
