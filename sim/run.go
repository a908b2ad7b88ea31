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
	pols, err := newPolicies(ctx, opts, w, tmp)
	if err != nil {
		return Report{}, err
	}
	r := &simRun{opts: opts, w: w, ix: ix, pols: pols, synced: -1,
		reactSeed: subSeed(opts.Seed, "react"), randSeed: subSeed(opts.Seed, "random")}
	for s, t := range w.tasks {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("sim: %w", err)
		}
		if err := r.session(ctx, s, t); err != nil {
			return Report{}, err
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

// newPolicies opens every policy's store under tmp and records the
// creation of the lessons there before the run.
func newPolicies(ctx context.Context, opts Options, w *world, tmp string) ([]*policy, error) {
	pols := make([]*policy, len(PolicyNames))
	for i, name := range PolicyNames {
		lg, err := openLog(ctx, tmp, name)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
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
	return pols, nil
}

// simRun is the state of one run across its sessions: the shared index and
// the lessons it holds, and the policies.
type simRun struct {
	opts                Options
	w                   *world
	ix                  *index.Index
	pols                []*policy
	reactSeed, randSeed uint64
	// synced is how many lessons the index holds (-1: none synced yet);
	// infos are theirs, newInfos those of the lessons created mid-run.
	synced          int
	infos, newInfos []domain.LessonInfo
}

// session plays session s (task t) for every policy and adds up their
// value and regret.
func (r *simRun) session(ctx context.Context, s int, t task) error {
	if err := r.sync(s); err != nil {
		return err
	}
	hits, err := r.ix.Search(ctx, index.Query{Text: t.text, K: r.opts.Candidates, Repo: r.w.repos[t.repo], Session: t.session,
		MMRLambda: r.opts.MMRLambda})
	if err != nil {
		return fmt.Errorf("sim: session %d: %w", s, err)
	}
	cands := make([]string, len(hits))
	for i, h := range hits {
		cands[i] = h.ID
	}
	sc := sessionCtx{ix: r.ix, opts: r.opts, w: r.w, t: t, s: s, infos: r.infos,
		candidates: cands, randSeed: r.randSeed}
	values := make([]float64, len(r.pols))
	for i, p := range r.pols {
		if values[i], err = r.play(ctx, p, sc); err != nil {
			return err
		}
	}
	best := values[len(values)-1]
	for i, p := range r.pols {
		p.value += values[i]
		p.regret += best - values[i]
		p.curve = append(p.curve, round4(p.regret))
	}
	return nil
}

// sync brings the index up to the lessons available at session s.
func (r *simRun) sync(s int) error {
	avail := r.w.available(s)
	if len(avail) == r.synced {
		return nil
	}
	lessons := make([]domain.Lesson, len(avail))
	r.infos = make([]domain.LessonInfo, len(avail))
	r.newInfos = r.newInfos[:0]
	for i, l := range avail {
		lessons[i] = l.lesson
		r.infos[i] = domain.LessonInfo{ID: l.lesson.ID, Reach: l.lesson.Reach, CreatedMS: l.createdMS}
		if l.introduced >= 0 {
			r.newInfos = append(r.newInfos, r.infos[i])
		}
	}
	if _, err := r.ix.Sync(lessons); err != nil {
		return fmt.Errorf("sim: session %d: %w", s, err)
	}
	r.synced = len(avail)
	return nil
}

// play is one policy's session sc: its events, its choice and the asks'
// reactions, the lessons created in it; it returns the asks' value.
func (r *simRun) play(ctx context.Context, p *policy, sc sessionCtx) (float64, error) {
	s, t := sc.s, sc.t
	sd := sessionDraws(r.reactSeed, t.session)
	censored := sd.censored < r.opts.Censored
	placebo := sd.placebo < r.opts.Placebo
	p.emit(sessionEvent(r.w, t))
	p.emit(p.pending[s]...)
	delete(p.pending, s)
	ids, err := p.choose(ctx, sc)
	if err != nil {
		return 0, fmt.Errorf("sim: session %d: %w", s, err)
	}
	v := p.ask(r.w, s, t, ids, censored, r.reactSeed)
	if placebo && !censored {
		p.placebo(r.w, t, sd)
	}
	for _, l := range r.w.lessons {
		if l.introduced == s {
			p.emit(createdEvent(r.w, l, t.session))
		}
	}
	// Consolidation only moves when a new lesson gets a changed result, so
	// only then is its memory derived again.
	if p.changedNew && len(p.newConsolidated) < len(r.newInfos) {
		p.changedNew = false
		for _, m := range p.ledger.Memories(r.newInfos, t.session, r.opts.Weights) {
			if _, done := p.newConsolidated[m.ID]; !done && m.Consolidated {
				p.newConsolidated[m.ID] = s
			}
		}
	}
	if (s+1)%flushEvery == 0 {
		if err := p.flush(); err != nil {
			return 0, fmt.Errorf("sim: %w", err)
		}
	}
	return v, nil
}

// ask records the asks and reactions of one session's chosen lessons and
// returns their value for the task.
func (p *policy) ask(w *world, s int, t task, ids []string, censored bool, seed uint64) float64 {
	var v float64
	if len(ids) > 0 {
		v -= interruptCost
	}
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
