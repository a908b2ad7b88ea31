package domain

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// LessonInfo is what Derive needs to know about a lesson besides its events:
// its id, its reach ("team", "" for team, or "repo:<tag>") and its creation
// time in unix ms (0 when unknown), which places the creation use of a lesson
// whose created event is missing.
type LessonInfo struct {
	ID        string
	Reach     string
	CreatedMS int64
}

// Memory is one lesson's derived memory at a tick of the activity clock.
type Memory struct {
	ID string
	// Uses counts the creation use and every session whose result is
	// changed, but for the reinforcement cooldown: one engineer's sessions
	// count once per ReinforceCooldown (see coolUses).
	Uses int
	// Activation is ln Σ age^(−d) over the uses (−Inf without any).
	Activation float64
	// The session results, one per (session, lesson), strongest winning.
	Changed, Ignored, Corrected, Vetoed int
	// Vouched sums the changed results' credits (Credit): the changes the
	// judge vouches for, which consolidation counts. Ranking reads Changed.
	Vouched float64
	// Tested counts sessions whose tests went green after the ask, excluding
	// sessions whose result is a correction or a veto.
	Tested int
	// Regretted is the capped regret credit in full regrets (before the
	// Regret weight).
	Regretted float64
	// Alpha and Beta are the belief's parameters under the weights.
	Alpha, Beta float64
	// Mean is the belief's mean; Draw is the session's Thompson draw from
	// the belief (the mean without a session).
	Mean, Draw float64
	// Weight is squash(A) × (0.5 + x), x the session's Thompson draw, or the
	// mean without a session.
	Weight float64
	// MeanWeight is squash(A) × (0.5 + mean): the relative bar reads it.
	MeanWeight float64
	// Consolidated: changed in enough distinct sessions across two repos or
	// two engineers. Dormant: not consolidated and A below DormantBelow.
	Consolidated, Dormant bool
	// LastUseTick is the clock tick of the latest use: the number of clock
	// sessions that started at or before it (0 = before the first session).
	LastUseTick int
	// Asked counts the sessions that asked the lesson.
	Asked int
	// TopVouchers are the two authors whose changed results vouch most for
	// the lesson, most first (by vouched sum, then id); an entry with
	// Vouched 0 is absent. Author "" gathers the changes no one is known to
	// have made. EarlyTrusted reads them. Changes under
	// UnattributedAuthor are left out: Unattributed sums them.
	TopVouchers [2]AuthorVouch
	// Unattributed is the vouched sum of the changes whose committer the
	// reader does not know yet (author UnattributedAuthor).
	Unattributed float64
}

// UnattributedAuthor is the author a store's reader gives an event of a
// committed log line whose committer it has not worked out yet (a hook
// reads between two walks of git history). Such changes may be anyone's,
// the forger's included, so they never count toward early delivery.
const UnattributedAuthor = "e-unattributed"

// AuthorVouch is one author's share of a lesson's vouched changes.
type AuthorVouch struct {
	Author  string
	Vouched float64
}

// topVouchers picks the two largest milli-sums of byAuthor (author →
// milli-changes, "" absent) and of the unknown rest (vouched less their
// sum, counted under ""), ordered by sum then id: independent of the order
// the results were added in.
func topVouchers(byAuthor func(yield func(string, int) bool), vouched int) [2]AuthorVouch {
	type share struct {
		author string
		milli  int
	}
	var top [2]share
	consider := func(a string, m int) {
		if m <= 0 {
			return
		}
		better := func(x share) bool { return m > x.milli || (m == x.milli && a < x.author) }
		switch {
		case top[0].milli == 0 || better(top[0]):
			top[1], top[0] = top[0], share{a, m}
		case top[1].milli == 0 || better(top[1]):
			top[1] = share{a, m}
		}
	}
	rest := vouched
	for a, m := range byAuthor {
		rest -= m
		if a != UnattributedAuthor {
			consider(a, m)
		}
	}
	consider("", rest)
	var out [2]AuthorVouch
	for i, t := range top {
		if t.milli > 0 {
			out[i] = AuthorVouch{Author: t.author, Vouched: float64(t.milli) / 1000}
		}
	}
	return out
}

// EarlyTrusted reports whether a lesson may be delivered unprompted (early,
// without the Stop hook asking it) to engineer: it is consolidated, and its
// consolidation proof (the vouched changes and the lower credible bound of
// provenUseful) still holds without the vouched changes of the one author
// who contributed most, engineer excepted, and without the changes no
// committer is known for yet (Unattributed). So no single pusher's log lines
// (made-up sessions, authors and repos committed under one identity, which
// the store attributes to that identity) can make a teammate's agent read a
// lesson unasked, while an engineer's own sessions always count for them.
// Consolidation itself (the decay every node derives alike) does not
// depend on who asks.
func EarlyTrusted(m Memory, engineer string, w Weights) bool {
	if !m.Consolidated {
		return false
	}
	drop := m.Unattributed
	for _, v := range m.TopVouchers {
		if v.Vouched > 0 && (v.Author == "" || v.Author != engineer) {
			drop += v.Vouched
			break
		}
	}
	rest := m
	rest.Vouched = math.Round((m.Vouched-drop)*1000) / 1000
	return rest.Vouched >= float64(w.ConsolidateSessions) && provenUseful(rest, w)
}

// Mark is the part of an event the ledger keeps for a natural key. Marks are
// totally ordered (by ms, then the remaining fields), so keeping the least of
// two is independent of the order they arrived in.
type Mark struct {
	MS      int64     `json:"ms"`
	ID      string    `json:"id,omitempty"`
	Kind    EventKind `json:"kind,omitempty"`
	Session string    `json:"session,omitempty"`
	Repo    string    `json:"repo,omitempty"`
	Author  string    `json:"author,omitempty"`
	// W is a changed result's credit as written (0: none written, a full
	// change; see Credit).
	W float64 `json:"w,omitempty"`
}

func markOf(e Event) Mark {
	m := Mark{MS: e.MS, ID: e.ID, Kind: e.Kind, Session: e.Session, Repo: e.Repo, Author: e.Author}
	if e.Kind == KindChanged {
		m.W = finiteW(e.W)
	}
	return m
}

// Credit is how much of a change a changed result's w vouches for: a w in
// (0, 1] as written, a missing (0) or larger one a full change (an external
// judge's verdict, or a log written before credits), a negative one none.
func Credit(w float64) float64 {
	switch {
	case w == 0 || w >= 1:
		return 1
	case w > 0:
		return w
	}
	return 0
}

// creditMilli is Credit in thousandths of a change, so that sums of credits
// are exact and do not depend on the order they are added in.
func creditMilli(w float64) int { return int(math.Round(Credit(w) * 1000)) }

func compareMarks(a, b Mark) int {
	if c := cmp.Compare(a.MS, b.MS); c != 0 {
		return c
	}
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Session, b.Session); c != 0 {
		return c
	}
	if c := strings.Compare(a.Repo, b.Repo); c != 0 {
		return c
	}
	if c := strings.Compare(a.Author, b.Author); c != 0 {
		return c
	}
	return cmp.Compare(a.W, b.W)
}

// resultStrength orders the session results: vetoed > corrected > changed >
// ignored; 0 for a kind that is no result.
func resultStrength(k EventKind) int {
	switch k {
	case KindVetoed:
		return 4
	case KindCorrected:
		return 3
	case KindChanged:
		return 2
	case KindIgnored:
		return 1
	}
	return 0
}

// strongerResult reports whether a should replace b as a session's result:
// the stronger kind, or on equal strength the lesser mark.
func strongerResult(a, b Mark) bool {
	sa, sb := resultStrength(a.Kind), resultStrength(b.Kind)
	if sa != sb {
		return sa > sb
	}
	return compareMarks(a, b) < 0
}

// RegretMark is one regret event: the deciding session, the lesson and the
// share W as written.
type RegretMark struct {
	Session string  `json:"session"`
	Lesson  string  `json:"lesson"`
	W       float64 `json:"w,omitempty"`
}

func compareRegrets(a, b RegretMark) int {
	if c := strings.Compare(a.Session, b.Session); c != 0 {
		return c
	}
	if c := strings.Compare(a.Lesson, b.Lesson); c != 0 {
		return c
	}
	return cmp.Compare(a.W, b.W)
}

// Ledger accumulates outcome-log events into the state Derive reads, keyed by
// natural keys so that adding an event twice, or events in any order, gives
// the same state. Its strings are interned and its keys are integers
// (ledgerkeys.go); WriteLedger and ParseLedger store it, so a cache can
// keep it and fold in only the lines appended since. The zero value is an
// empty ledger.
type Ledger struct {
	strs strtab
	// sessions maps a session to the least mark of its session events: its
	// first ms, repo and author.
	sessions sessionMarks
	// created maps a lesson to the least mark of its created events.
	created map[uint32]mark
	// results maps (session, lesson) to the strongest result.
	results map[pair]mark
	// tested and asked are the (session, lesson) pairs with such an event.
	tested, asked map[pair]struct{}
	// corrections maps a session to the distinct ms stamps of its
	// correction results, ascending (the regret cap counts them).
	corrections map[uint32][]int64
	// regrets maps an event id to its regret.
	regrets map[string]RegretMark
	// passings maps an event id to its link event (see Links).
	passings map[string]Event
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	l := &Ledger{}
	l.init()
	return l
}

func (l *Ledger) init() {
	if l.created != nil {
		return
	}
	l.strs.init()
	l.created = map[uint32]mark{}
	l.results = map[pair]mark{}
	l.tested = map[pair]struct{}{}
	l.asked = map[pair]struct{}{}
	l.corrections = map[uint32][]int64{}
	l.regrets = map[string]RegretMark{}
	l.passings = map[string]Event{}
}

// Intern is b as a string, the one copy the ledger keeps of it (added when
// new): a reader that decodes events to fold here shares the ledger's
// strings instead of making its own for every line.
func (l *Ledger) Intern(b []byte) string {
	l.init()
	return l.strs.bytes(b)
}

// Add folds one event into the ledger. Kinds that carry no usefulness
// (censored, unclear, placebo) and events missing the keys their kind needs
// are ignored; passing events are kept for Links. Add is idempotent and
// order-insensitive.
func (l *Ledger) Add(e Event) {
	l.init()
	t := &l.strs
	switch e.Kind {
	case KindSession:
		if e.Session == "" {
			return
		}
		m := t.pack(markOf(e))
		if old, ok := l.sessions.get(m.session); !ok || t.compare(m, old) < 0 {
			l.sessions.set(m.session, m)
		}
	case KindCreated:
		if e.Lesson == "" {
			return
		}
		m, id := t.pack(markOf(e)), t.id(e.Lesson)
		if old, ok := l.created[id]; !ok || t.compare(m, old) < 0 {
			l.created[id] = m
		}
	case KindChanged, KindIgnored, KindCorrected, KindVetoed:
		if e.Session == "" || e.Lesson == "" {
			return
		}
		m := t.pack(markOf(e))
		p := pair{m.session, t.id(e.Lesson)}
		if old, ok := l.results[p]; !ok || t.stronger(m, old) {
			l.results[p] = m
		}
		if e.Kind == KindCorrected {
			times := l.corrections[p.s]
			if i, found := slices.BinarySearch(times, e.MS); !found {
				l.corrections[p.s] = slices.Insert(times, i, e.MS)
			}
		}
	case KindTested:
		if e.Session != "" && e.Lesson != "" {
			l.tested[pair{t.id(e.Session), t.id(e.Lesson)}] = struct{}{}
		}
	case KindAsked:
		if e.Session != "" && e.Lesson != "" {
			l.asked[pair{t.id(e.Session), t.id(e.Lesson)}] = struct{}{}
		}
	case KindRegret:
		if e.Session == "" || e.Lesson == "" {
			return
		}
		l.addRegret(e.WithID().ID, RegretMark{Session: e.Session, Lesson: e.Lesson, W: finiteW(e.W)})
	case KindPassing:
		if e.Src != "" && e.Dst != "" {
			e = e.WithID()
			e.W = 0 // unused by links; keeps the ledger encodable
			l.addPassing(e)
		}
	}
}

// finiteW maps a non-finite w (a regret's share, a change's credit) onto a
// finite one both readers take alike, so the ledger stays encodable:
// +Inf is full weight, NaN and −Inf count nothing.
func finiteW(w float64) float64 {
	switch {
	case math.IsInf(w, 1):
		return 1
	case math.IsNaN(w) || math.IsInf(w, -1):
		return -1
	}
	return w
}

// addPassing keeps one passing per id; should two differ under one id, the
// lesser (by ms, then endpoints) stays, whatever the order.
func (l *Ledger) addPassing(e Event) {
	old, ok := l.passings[e.ID]
	if ok {
		ka := [5]string{e.Src, e.SrcV, e.Dst, e.DstV, e.Session}
		kb := [5]string{old.Src, old.SrcV, old.Dst, old.DstV, old.Session}
		if c := cmp.Compare(e.MS, old.MS); c > 0 || (c == 0 && slices.Compare(ka[:], kb[:]) >= 0) {
			return
		}
	}
	l.passings[e.ID] = e
}

// Links folds the ledger's passing events into links (FoldLinks).
func (l *Ledger) Links() []Link {
	events := make([]Event, 0, len(l.passings))
	for _, e := range l.passings {
		events = append(events, e)
	}
	return FoldLinks(events)
}

func (l *Ledger) addRegret(id string, r RegretMark) {
	if old, ok := l.regrets[id]; !ok || compareRegrets(r, old) < 0 {
		l.regrets[id] = r
	}
}

// resultKind is the kind of the result kept for p ("" without one).
func (l *Ledger) resultKind(p pair) EventKind {
	return markKinds[l.results[p].kind]
}

// severe says the result kept for p is a correction or a veto.
func (l *Ledger) severe(p pair) bool {
	k := l.resultKind(p)
	return k == KindCorrected || k == KindVetoed
}

// pairOf is the pair of session and lesson, if the ledger knows both.
func (l *Ledger) pairOf(session, lesson string) (pair, bool) {
	s, ok1 := l.strs.lookup(session)
	les, ok2 := l.strs.lookup(lesson)
	return pair{s, les}, ok1 && ok2
}

// correctionTimes is the distinct ms stamps of session's corrections.
func (l *Ledger) correctionTimes(session string) []int64 {
	if s, ok := l.strs.lookup(session); ok {
		return l.corrections[s]
	}
	return nil
}

type sessionAt struct {
	id uint32
	mark
}

// clock is the sorted activity clock with the lookups Memories needs.
type clock struct {
	strs    []string
	ids     []uint32 // each position's session
	firstMS []int64
	repos   []uint32
	authors []uint32
	at      []int32            // string id → its session's position, −1 for none
	prefix  map[string][]int32 // repo tag → eligible sessions among the first t
}

func (l *Ledger) newClock() *clock {
	t := &l.strs
	marks := make([]sessionAt, 0, l.sessions.len())
	l.sessions.each(func(s uint32, m mark) { marks = append(marks, sessionAt{s, m}) })
	slices.SortFunc(marks, func(a, b sessionAt) int {
		if c := cmp.Compare(a.ms, b.ms); c != 0 {
			return c
		}
		return strings.Compare(t.strs[a.id], t.strs[b.id])
	})
	c := &clock{
		strs:    t.strs,
		ids:     make([]uint32, len(marks)),
		firstMS: make([]int64, len(marks)),
		repos:   make([]uint32, len(marks)),
		authors: make([]uint32, len(marks)),
		at:      make([]int32, len(t.strs)),
		prefix:  map[string][]int32{},
	}
	for i := range c.at {
		c.at[i] = -1
	}
	for i, m := range marks {
		c.ids[i], c.firstMS[i], c.repos[i], c.authors[i] = m.id, m.ms, m.repo, m.author
		c.at[m.id] = int32(i)
	}
	return c
}

// index is the clock position of session s (a string id), if it ticks.
func (c *clock) index(s uint32) (int, bool) {
	if s != 0 && int(s) < len(c.at) && c.at[s] >= 0 {
		return int(c.at[s]), true
	}
	return 0, false
}

// pos is the clock position of something that happened in session at ms: the
// session's own index when it ticks the clock, else the last session that
// started at or before ms (−1 before the first).
func (c *clock) pos(session uint32, ms int64) int {
	if i, ok := c.index(session); ok {
		return i
	}
	return sort.Search(len(c.firstMS), func(i int) bool { return c.firstMS[i] > ms }) - 1
}

// stamp is the time and engineer of a use at clock position p (coolUses);
// a session of no known engineer stamps nothing.
func (c *clock) stamp(p int) (ms int64, by uint32, ok bool) {
	if p < 0 || p >= len(c.ids) || !knownAuthor(c.strs[c.authors[p]]) {
		return 0, 0, false
	}
	return c.firstMS[p], c.authors[p], true
}

// knownAuthor says whether author names one engineer: not empty, and not a
// change whose committer is not worked out yet.
func knownAuthor(author string) bool { return author != "" && author != UnattributedAuthor }

// eligible counts the sessions in positions (i, q] that a lesson of the given
// repo tag ages with ("" = team: every session).
func (c *clock) eligible(tag string, i, q int) int {
	if i >= q {
		return 0
	}
	if tag == "" {
		return q - i
	}
	p, ok := c.prefix[tag]
	if !ok {
		p = make([]int32, len(c.ids)+1)
		for k, r := range c.repos {
			p[k+1] = p[k]
			if c.strs[r] == tag {
				p[k+1]++
			}
		}
		c.prefix[tag] = p
	}
	return int(p[q+1] - p[i+1])
}

// lessonAgg gathers one lesson's evidence while Memories walks the ledger.
type lessonAgg struct {
	info                                               LessonInfo
	uses                                               []int
	changed, ignored, corrected, vetoed, tested, asked int
	vouched                                            int      // milli-changes
	repos, authors                                     []string // distinct, few
	byAuthor                                           map[string]int
	regrets                                            []regretRef
}

// addDistinct appends v to a short set unless it is empty or present.
func addDistinct(set []string, v string) []string {
	if v == "" || slices.Contains(set, v) {
		return set
	}
	return append(set, v)
}

type regretRef struct {
	id string
	RegretMark
}

// Memories derives the memory of each lesson in lessons (deduplicated by id,
// sorted by id) as of session's tick; an empty or unknown session means the
// next tick (all sessions of the clock). With a session, Weight uses that
// session's Thompson draw; without, the belief mean.
func (l *Ledger) Memories(lessons []LessonInfo, session string, w Weights) []Memory {
	l.init()
	c := l.newClock()
	q := len(c.ids) - 1
	if s, ok := l.strs.lookup(session); ok {
		if i, ok := c.index(s); ok {
			q = i
		}
	}

	// One entry per wanted lesson; those the ledger has a string for are
	// also found by its id, which both filters and finds the accumulator.
	byName := make(map[string]*lessonAgg, len(lessons))
	all := make([]*lessonAgg, 0, len(lessons))
	aggs := make(map[uint32]*lessonAgg, len(lessons))
	for _, li := range lessons {
		if byName[li.ID] != nil {
			continue
		}
		a := &lessonAgg{info: li}
		byName[li.ID] = a
		all = append(all, a)
		if id, ok := l.strs.lookup(li.ID); ok {
			aggs[id] = a
		}
	}

	l.gatherResults(aggs, c)
	l.gatherTestedAskedRegrets(aggs, byName)

	out := make([]Memory, 0, len(all))
	for _, a := range all {
		out = append(out, l.memoryOf(a.info, a, c, q, session, w))
	}
	slices.SortFunc(out, func(x, y Memory) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// gatherResults counts each wanted lesson's session results into its
// accumulator: a changed result is a use, at its session's clock position
// (by its ms for a session without a session event), and vouches under its
// repo and author.
func (l *Ledger) gatherResults(aggs map[uint32]*lessonAgg, c *clock) {
	for p, m := range l.results {
		a := aggs[p.l]
		if a == nil {
			continue
		}
		switch markKinds[m.kind] {
		case KindChanged:
			// A session that ticks the clock places the use; one without
			// a session event places it by its ms.
			sm, known := l.sessions.get(p.s)
			a.addChanged(&l.strs, m, sm, known, c.pos(p.s, m.ms))
		case KindIgnored:
			a.ignored++
		case KindCorrected:
			a.corrected++
		case KindVetoed:
			a.vetoed++
		}
	}
}

// addChanged counts one changed result m of a session (sm its session
// mark, known whether it has one) used at clock position at.
func (a *lessonAgg) addChanged(t *strtab, m, sm mark, known bool, at int) {
	a.changed++
	a.vouched += creditMilli(m.w)
	a.uses = append(a.uses, at)
	repo, author := m.repo, m.author
	if known {
		// The result's own author counts: whoever wrote (and committed)
		// the verdict vouches for it, not whoever the session names.
		repo, author = cmp.Or(sm.repo, m.repo), cmp.Or(m.author, sm.author)
	}
	a.repos = addDistinct(a.repos, t.strs[repo])
	by := t.strs[author]
	if by != UnattributedAuthor {
		// Changes whose committer is unknown yet are no second engineer.
		a.authors = addDistinct(a.authors, by)
	}
	if by != "" {
		if a.byAuthor == nil {
			a.byAuthor = map[string]int{}
		}
		a.byAuthor[by] += creditMilli(m.w)
	}
}

// gatherTestedAskedRegrets counts each wanted lesson's tested and asked
// pairs and gathers its regrets; a session whose result for the lesson is
// a correction or a veto adds neither tested nor regret (the stronger
// result already counts it).
func (l *Ledger) gatherTestedAskedRegrets(aggs map[uint32]*lessonAgg, byName map[string]*lessonAgg) {
	for p := range l.tested {
		if a := aggs[p.l]; a != nil && !l.severe(p) {
			a.tested++
		}
	}
	for p := range l.asked {
		if a := aggs[p.l]; a != nil {
			a.asked++
		}
	}
	for id, r := range l.regrets {
		a := byName[r.Lesson]
		if a == nil {
			continue
		}
		if p, ok := l.pairOf(r.Session, r.Lesson); !ok || !l.severe(p) {
			a.regrets = append(a.regrets, regretRef{id: id, RegretMark: r})
		}
	}
}

// memoryOf finishes one lesson's memory from its gathered evidence.
func (l *Ledger) memoryOf(info LessonInfo, a *lessonAgg, c *clock, q int, session string, w Weights) Memory {
	m := Memory{
		ID: info.ID, Changed: a.changed, Ignored: a.ignored, Corrected: a.corrected,
		Vetoed: a.vetoed, Tested: a.tested, Asked: a.asked, Vouched: float64(a.vouched) / 1000,
	}
	// The creation use.
	created := -1
	id, known := l.strs.lookup(info.ID)
	if cm, ok := l.created[id]; known && ok {
		created = c.pos(cm.session, cm.ms)
	} else if info.CreatedMS != 0 {
		created = c.pos(0, info.CreatedMS)
	}
	slices.Sort(a.uses)
	uses := coolUses(a.uses, make([]int, 0, len(a.uses)+1), c.stamp)
	uses = append(uses, created)
	slices.Sort(uses)
	m.Uses = len(uses)
	m.LastUseTick = uses[len(uses)-1] + 1

	m.Regretted = regretted(a.regrets, l.correctionTimes, w)
	m.TopVouchers = topVouchers(maps.All(a.byAuthor), a.vouched)
	m.Unattributed = float64(a.byAuthor[UnattributedAuthor]) / 1000
	var d float64
	m.Consolidated, d = consolidation(m, len(a.repos), len(a.authors), w)
	tag, repoReach := strings.CutPrefix(info.Reach, ReachRepoPrefix)
	if !repoReach {
		tag = "" // a team lesson ages with every session
	}
	var sum float64
	for _, p := range uses {
		sum += agePow(c.eligible(tag, p, q)+1, d)
	}
	m.Activation = math.Log(sum)
	m.settle(session, w)
	return m
}

// settle derives the belief, the weights and dormancy of m from its counts,
// activation and consolidation: the part of a memory the ledger and the
// summary compute alike. The draw is the session's (the mean without one).
func (m *Memory) settle(session string, w Weights) {
	b := BeliefOf(m.Changed, m.Ignored, m.Corrected, m.Vetoed, m.Tested, m.Regretted, w)
	m.Alpha, m.Beta, m.Mean = b.Alpha, b.Beta, b.Mean()
	x := m.Mean
	if session != "" {
		x = Draw(b.Alpha, b.Beta, Seed(session, m.ID))
	}
	m.Draw = x
	m.Weight = UsefulnessWeight(m.Activation, x)
	m.MeanWeight = UsefulnessWeight(m.Activation, m.Mean)
	m.Dormant = !m.Consolidated && m.Activation < w.DormantBelow
}

// regretted sums one lesson's regret credit: each regret's share (at most
// RegretMax), capped per deciding session at that session's RegretCap, in a
// fixed order so the float sum does not depend on map order.
func regretted(rs []regretRef, corrections func(session string) []int64, w Weights) float64 {
	if len(rs) == 0 {
		return 0
	}
	slices.SortFunc(rs, func(x, y regretRef) int {
		if c := strings.Compare(x.Session, y.Session); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	var total float64
	for i := 0; i < len(rs); {
		j, s := i, 0.0
		for ; j < len(rs) && rs[j].Session == rs[i].Session; j++ {
			s += regretShare(rs[j].W, w.RegretMax)
		}
		capN := RegretCap(corrections(rs[i].Session))
		total += math.Min(s, float64(capN))
		i = j
	}
	return total
}

// Derive is each lesson's memory from a list of events as of session's tick
// (the next tick when session is empty or unknown): NewLedger, Add every
// event, Memories.
func Derive(events []Event, lessons []LessonInfo, session string, w Weights) []Memory {
	l := NewLedger()
	for _, e := range events {
		l.Add(e)
	}
	return l.Memories(lessons, session, w)
}

// consolidation says whether a lesson with m's results is consolidated,
// across repos repos and authors engineers (a changed result counts under
// its own author, else its session's), and the decay its uses take: D,
// or the slower DConsolidated once consolidated. Consolidated means changed
// in at least ConsolidateSessions sessions' worth of vouched changes (the
// credits of its changed results), across two repos or two engineers, and
// proven useful: on the vouched changes against the results against it
// (ignored, corrected, vetoed, regretted; tested, which is about the work, is
// left out), the mean stands above ConsolidateMean by ConsolidateZ standard
// deviations. The seed asks only for the sessions; the credit and the proof
// are borg's (docs/design.md, Asking and judging): a judge that reads changes by chance (a word
// rule on shared vocabulary, an agent that says "applies" of everything)
// would otherwise consolidate any lesson asked often enough, and a
// consolidated lesson is delivered unasked.
func consolidation(m Memory, repos, authors int, w Weights) (bool, float64) {
	if m.Vouched >= float64(w.ConsolidateSessions) && (repos >= 2 || authors >= 2) && provenUseful(m, w) {
		return true, w.DConsolidated
	}
	return false, w.D
}

// provenUseful: the belief of the vouched changes against the results
// against the lesson, less ConsolidateZ standard deviations (a normal
// approximation of its lower credible bound), is above ConsolidateMean.
func provenUseful(m Memory, w Weights) bool {
	b := Belief{Alpha: 1 + m.Vouched, Beta: BeliefOf(0, m.Ignored, m.Corrected, m.Vetoed, 0, m.Regretted, w).Beta}
	return b.Mean()-w.ConsolidateZ*b.SD() > w.ConsolidateMean
}
