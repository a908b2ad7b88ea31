package sim

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// Report is what Run measured. Its JSON form is `borg eval learning --json`.
type Report struct {
	Scenario Scenario `json:"scenario"`
	// Policies holds one entry per policy, in PolicyNames order.
	Policies []PolicyReport `json:"policies"`
	// Versus compares borg with each baseline (not the oracle).
	Versus  []Versus `json:"versus"`
	Spacing Spacing  `json:"spacing"`
	Holiday Holiday  `json:"holiday"`
}

// Scenario records the options a report was made with and the corpus it
// generated.
type Scenario struct {
	Engineers   int          `json:"engineers"`
	Repos       []string     `json:"repos"`
	Lessons     int          `json:"lessons"`
	NewLessons  int          `json:"new_lessons"`
	NewAt       int          `json:"new_at"`
	Sessions    int          `json:"sessions"`
	Seed        uint64       `json:"seed"`
	Slots       int          `json:"slots"`
	Candidates  int          `json:"candidates"`
	Censored    float64      `json:"censored"`
	Placebo     float64      `json:"placebo"`
	Uncovered   float64      `json:"uncovered"`
	HolidayAt   int          `json:"holiday_at"`
	HolidayDays int          `json:"holiday_days"`
	Judge       string       `json:"judge"`
	Agent       string       `json:"agent"`
	Effects     EffectCounts `json:"effects"`
	Weights     WeightsJSON  `json:"weights"`
}

// WeightsJSON is domain.Weights as the report writes it.
type WeightsJSON struct {
	D                   float64 `json:"d"`
	DConsolidated       float64 `json:"d_consolidated"`
	TestedW             float64 `json:"tested_w"`
	CorrectedW          float64 `json:"corrected_w"`
	VetoedW             float64 `json:"vetoed_w"`
	Regret              float64 `json:"regret"`
	RegretMax           float64 `json:"regret_max"`
	ConsolidateSessions int     `json:"consolidate_sessions"`
	ConsolidateMean     float64 `json:"consolidate_mean"`
	ConsolidateZ        float64 `json:"consolidate_z"`
	DormantBelow        float64 `json:"dormant_below"`
}

// EffectCounts counts lessons (or asks) by hidden effect.
type EffectCounts struct {
	Helps   int `json:"helps"`
	Neutral int `json:"neutral"`
	Harms   int `json:"harms"`
	Repo    int `json:"repo"`
	// Misplaced counts repo-only lessons asked outside their repo (asks
	// only); for the corpus, Scoped counts those written with a repo reach.
	Misplaced int `json:"misplaced,omitempty"`
	Scoped    int `json:"scoped,omitempty"`
}

// PolicyReport is one policy's figures.
type PolicyReport struct {
	Name string `json:"name"`
	// Regret is the cumulative regret at the end: the oracle's expected value
	// minus this policy's, summed over sessions.
	Regret           float64 `json:"regret"`
	RegretPerSession float64 `json:"regret_per_session"`
	// Value is the summed expected value of the lessons asked.
	Value        float64      `json:"value"`
	Asks         int          `json:"asks"`
	AsksByEffect EffectCounts `json:"asks_by_effect"`
	// AsksByRelevance splits the asks by the lesson's relevance to the task:
	// its subtopic, its topic's other subtopics, or unrelated.
	AsksByRelevance RelevanceCounts `json:"asks_by_relevance"`
	// Needless counts the sessions a policy interrupted although no lesson
	// it asked bears on the work (every one unrelated), and NeedlessPer100
	// the same per 100 sessions.
	Needless       int              `json:"needless"`
	NeedlessPer100 float64          `json:"needless_per_100"`
	Harmful        HarmfulReport    `json:"harmful"`
	NewLessons     NewLessonsReport `json:"new_lessons"`
	// Dormant and Consolidated count the lessons in each state at the end,
	// as the policy's own log derives them.
	Dormant      int `json:"dormant"`
	Consolidated int `json:"consolidated"`
	// EverConsolidated counts, by hidden effect, the lessons consolidated at
	// any point of the run (a misplaced count is a repo-only lesson): a
	// policy that derives memory every session sees each moment, the others
	// the end.
	EverConsolidated EffectCounts `json:"ever_consolidated"`
	// ReadChanged counts, by hidden effect, the lessons whose log holds at
	// least ConsolidateSessions changed results at the end: those the seed's
	// count alone would weigh for consolidation, credit and proof aside.
	ReadChanged EffectCounts `json:"read_changed"`
	// Events counts the policy's log by kind, as read back from its store.
	Events []KindCount `json:"events"`
	// RegretCurve is the cumulative regret after each session.
	RegretCurve []float64 `json:"regret_curve"`
}

// RelevanceCounts counts asks by relevance to the task.
type RelevanceCounts struct {
	Subtopic  int `json:"subtopic"`
	Topic     int `json:"topic"`
	Unrelated int `json:"unrelated"`
}

// KindCount is the number of events of one kind.
type KindCount struct {
	Kind  domain.EventKind `json:"kind"`
	Count int              `json:"count"`
	// Local counts those written to the local log (never shared).
	Local int `json:"local,omitempty"`
}

// HarmfulReport says how fast a policy stops asking harmful lessons. An
// opportunity is a session whose task is in the lesson's subtopic and repo
// reach.
type HarmfulReport struct {
	Lessons int `json:"lessons"` // harmful lessons with at least one opportunity
	Asked   int `json:"asked"`   // of those, asked at least once
	// Stopped counts asked lessons not asked at any of their last
	// StopWindow opportunities (they had at least that many after the first
	// ask).
	Stopped int `json:"stopped"`
	// MedianSessionsToStop is, over stopped lessons, the median number of
	// sessions of the collective from the first ask to the last (-1: none).
	MedianSessionsToStop int `json:"median_sessions_to_stop"`
	// AskRateEarly and AskRateLate are asks per opportunity in the first and
	// the last third of the run.
	AskRateEarly float64 `json:"ask_rate_early"`
	AskRateLate  float64 `json:"ask_rate_late"`
}

// StopWindow is how many trailing opportunities without an ask count a
// harmful lesson as no longer asked.
const StopWindow = 5

// NewLessonsReport says how fast a policy finds the helpful lessons written
// mid-run. Sessions count from the session the lesson was written in.
type NewLessonsReport struct {
	Lessons                     int         `json:"lessons"`
	Asked                       int         `json:"asked"`
	MedianSessionsToFirstAsk    int         `json:"median_sessions_to_first_ask"`
	Consolidated                int         `json:"consolidated"`
	MedianSessionsToConsolidate int         `json:"median_sessions_to_consolidate"`
	PerLesson                   []NewLesson `json:"per_lesson"`
}

// NewLesson is one mid-run lesson's timeline (-1: never).
type NewLesson struct {
	ID           string `json:"id"`
	Written      int    `json:"written"`
	FirstAsk     int    `json:"first_ask"`
	Consolidated int    `json:"consolidated"`
}

// Versus compares borg's cumulative regret with one baseline's.
type Versus struct {
	Baseline       string  `json:"baseline"`
	BorgRegret     float64 `json:"borg_regret"`
	BaselineRegret float64 `json:"baseline_regret"`
	// BorgLower reports whether borg's regret is strictly lower.
	BorgLower bool `json:"borg_lower"`
}

func weightsJSON(w domain.Weights) WeightsJSON {
	return WeightsJSON{D: w.D, DConsolidated: w.DConsolidated, TestedW: w.TestedW, CorrectedW: w.CorrectedW,
		VetoedW: w.VetoedW, Regret: w.Regret, RegretMax: w.RegretMax,
		ConsolidateSessions: w.ConsolidateSessions, ConsolidateMean: w.ConsolidateMean, ConsolidateZ: w.ConsolidateZ,
		DormantBelow: w.DormantBelow}
}

// buildReport reads every policy's log back from its store, checks that the
// log derives the same memory as the ledger the run kept, and assembles the
// figures.
func buildReport(ctx context.Context, opts Options, w *world, pols []*policy) (Report, error) {
	rep := Report{Scenario: Scenario{
		Engineers: opts.Engineers, Repos: w.repos, Lessons: opts.Lessons, NewLessons: opts.NewLessons,
		NewAt: opts.NewAt, Sessions: opts.Sessions, Seed: opts.Seed, Slots: opts.Slots,
		Candidates: opts.Candidates, Censored: opts.Censored, Placebo: opts.Placebo, Uncovered: opts.Uncovered,
		HolidayAt: opts.HolidayAt, HolidayDays: opts.HolidayDays, Weights: weightsJSON(opts.Weights),
		Judge: opts.Judge, Agent: opts.Agent,
	}}
	all := make([]domain.LessonInfo, len(w.lessons))
	for i, l := range w.lessons {
		all[i] = domain.LessonInfo{ID: l.lesson.ID, Reach: l.lesson.Reach, CreatedMS: l.createdMS}
		if l.introduced < 0 {
			countEffect(&rep.Scenario.Effects, l, -1)
			if l.scoped {
				rep.Scenario.Effects.Scoped++
			}
		}
	}
	opps := opportunities(w)
	var borgEvents []domain.Event
	for _, p := range pols {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("sim: %w", err)
		}
		events, shared, want, err := p.readBack(all, opts.Weights)
		if err != nil {
			return Report{}, err
		}
		if p.name == PolicyBorg {
			borgEvents = events
		}
		pr := p.report(w, opts.Weights, events, shared, want)
		pr.Harmful = harmfulReport(w, p, opps)
		pr.NewLessons = newLessonsReport(w, p)
		rep.Policies = append(rep.Policies, pr)
	}
	for _, pr := range rep.Policies[1 : len(rep.Policies)-1] {
		b := rep.Policies[0]
		rep.Versus = append(rep.Versus, Versus{Baseline: pr.Name, BorgRegret: b.Regret,
			BaselineRegret: pr.Regret, BorgLower: b.Regret < pr.Regret})
	}
	rep.Spacing = spacingExperiment(opts.Weights)
	rep.Holiday = holidayExperiment(opts, w, borgEvents)
	return rep, nil
}

// readBack reads p's log back from its store and checks that it derives
// the memory of all as p's ledger does (through domain.Derive and through
// the store's own ledger), and that no private event reached the shared
// log. It returns every event, the shared ones and that memory.
func (p *policy) readBack(all []domain.LessonInfo, wt domain.Weights) (events, shared []domain.Event, mems []domain.Memory, err error) {
	events, shared, storeLedger, err := p.log.read()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sim: read %s log: %w", p.name, err)
	}
	for _, e := range shared {
		if !e.Kind.Shared() {
			return nil, nil, nil, fmt.Errorf("sim: %s log: a %s event reached the shared log", p.name, e.Kind)
		}
	}
	want := p.ledger.Memories(all, "", wt)
	if got := domain.Derive(events, all, "", wt); !reflect.DeepEqual(got, want) {
		return nil, nil, nil, fmt.Errorf("sim: %s log: the events read back derive another memory than the run's ledger", p.name)
	}
	if got := storeLedger.Memories(all, "", wt); !reflect.DeepEqual(got, want) {
		return nil, nil, nil, fmt.Errorf("sim: %s log: the store's ledger derives another memory than the run's ledger", p.name)
	}
	return events, shared, want, nil
}

// report is p's figures from its log's events (shared: those of the shared
// log) and its final memory mems.
func (p *policy) report(w *world, wt domain.Weights, events, shared []domain.Event, mems []domain.Memory) PolicyReport {
	var dormant, consolidated int
	var readChanged []string
	for _, m := range mems {
		if m.Dormant {
			dormant++
		}
		if m.Consolidated {
			consolidated++
			p.everConsolidated[m.ID] = true
		}
		if m.Changed >= wt.ConsolidateSessions {
			readChanged = append(readChanged, m.ID)
		}
	}
	pr := PolicyReport{Name: p.name, Regret: round4(p.regret), Value: round4(p.value),
		RegretPerSession: round4(p.regret / float64(len(w.tasks))), Asks: p.slots,
		Events: kindCounts(events, shared), RegretCurve: p.curve,
		Dormant: dormant, Consolidated: consolidated}
	for id := range p.everConsolidated {
		countEffect(&pr.EverConsolidated, w.byID[id], -1)
	}
	for _, id := range readChanged {
		countEffect(&pr.ReadChanged, w.byID[id], -1)
	}
	relevantAsk := map[int]bool{} // session → some asked lesson bears on it
	for id, ss := range p.asked {
		l := w.byID[id]
		for _, s := range ss {
			relevantAsk[s] = relevantAsk[s] || relevance(l, w.tasks[s]) > 0
			countEffect(&pr.AsksByEffect, l, w.tasks[s].repo)
			switch relevance(l, w.tasks[s]) {
			case subtopicRel:
				pr.AsksByRelevance.Subtopic++
			case topicRel:
				pr.AsksByRelevance.Topic++
			default:
				pr.AsksByRelevance.Unrelated++
			}
		}
	}
	for _, relevant := range relevantAsk {
		if !relevant {
			pr.Needless++
		}
	}
	pr.NeedlessPer100 = round4(100 * float64(pr.Needless) / float64(len(w.tasks)))
	return pr
}

// countEffect adds one lesson to c by effect; repo ≥ 0 is the repo it was
// asked in (a repo-only lesson outside it counts as misplaced too).
func countEffect(c *EffectCounts, l *simLesson, repo int) {
	switch l.effect {
	case Helps:
		c.Helps++
	case Neutral:
		c.Neutral++
	case Harms:
		c.Harms++
	case RepoOnly:
		c.Repo++
		if repo >= 0 && repo != l.home {
			c.Misplaced++
		}
	}
}

// kindCounts counts all events by kind; those missing from the shared log
// file went to the local one.
func kindCounts(all, shared []domain.Event) []KindCount {
	inShared := make(map[string]bool, len(shared))
	for _, e := range shared {
		inShared[e.ID] = true
	}
	m := map[domain.EventKind]*KindCount{}
	for _, e := range all {
		k := m[e.Kind]
		if k == nil {
			k = &KindCount{Kind: e.Kind}
			m[e.Kind] = k
		}
		k.Count++
		if !inShared[e.ID] {
			k.Local++
		}
	}
	out := make([]KindCount, 0, len(m))
	for _, k := range m {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b KindCount) int { return strings.Compare(string(a.Kind), string(b.Kind)) })
	return out
}

// opportunities maps each lesson to the sessions whose task is in its
// subtopic and reach, after it was written.
func opportunities(w *world) map[string][]int {
	out := map[string][]int{}
	for s, t := range w.tasks {
		for _, l := range w.lessons {
			if l.introduced < s && relevance(l, t) == subtopicRel && w.reachable(l, t) {
				out[l.lesson.ID] = append(out[l.lesson.ID], s)
			}
		}
	}
	return out
}

func harmfulReport(w *world, p *policy, opps map[string][]int) HarmfulReport {
	hr := HarmfulReport{MedianSessionsToStop: -1}
	n := len(w.tasks)
	var toStop []int
	var oppEarly, oppLate, askEarly, askLate int
	for _, l := range w.lessons {
		id := l.lesson.ID
		if l.effect != Harms || len(opps[id]) == 0 {
			continue
		}
		hr.Lessons++
		asked := p.asked[id]
		inAsked := func(s int) bool { _, ok := slices.BinarySearch(asked, s); return ok }
		for _, s := range opps[id] {
			switch {
			case s < n/3:
				oppEarly++
				if inAsked(s) {
					askEarly++
				}
			case s >= n-n/3:
				oppLate++
				if inAsked(s) {
					askLate++
				}
			}
		}
		if len(asked) == 0 {
			continue
		}
		hr.Asked++
		first, last := asked[0], asked[len(asked)-1]
		var after []int
		for _, s := range opps[id] {
			if s > first {
				after = append(after, s)
			}
		}
		if len(after) >= StopWindow && after[len(after)-StopWindow] > last {
			hr.Stopped++
			toStop = append(toStop, last-first)
		}
	}
	hr.MedianSessionsToStop = median(toStop)
	if oppEarly > 0 {
		hr.AskRateEarly = round4(float64(askEarly) / float64(oppEarly))
	}
	if oppLate > 0 {
		hr.AskRateLate = round4(float64(askLate) / float64(oppLate))
	}
	return hr
}

func newLessonsReport(w *world, p *policy) NewLessonsReport {
	nr := NewLessonsReport{MedianSessionsToFirstAsk: -1, MedianSessionsToConsolidate: -1}
	var first, cons []int
	for _, l := range w.lessons {
		if l.introduced < 0 {
			continue
		}
		id := l.lesson.ID
		nl := NewLesson{ID: id, Written: l.introduced, FirstAsk: -1, Consolidated: -1}
		if s, ok := p.newFirst[id]; ok {
			nl.FirstAsk = s - l.introduced
			first = append(first, nl.FirstAsk)
			nr.Asked++
		}
		if s, ok := p.newConsolidated[id]; ok {
			nl.Consolidated = s - l.introduced
			cons = append(cons, nl.Consolidated)
			nr.Consolidated++
		}
		nr.Lessons++
		nr.PerLesson = append(nr.PerLesson, nl)
	}
	nr.MedianSessionsToFirstAsk = median(first)
	nr.MedianSessionsToConsolidate = median(cons)
	return nr
}

// median is the lower median of xs, or -1 for none.
func median(xs []int) int {
	if len(xs) == 0 {
		return -1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// meanFinite is the mean of the finite values of xs (0 for none).
func meanFinite(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
