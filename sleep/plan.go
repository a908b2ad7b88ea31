package sleep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// Phase names one sleep phase.
type Phase string

// The phases, in the order a sleep runs and commits them.
const (
	PhaseDecay     Phase = "decay"
	PhaseReprieve  Phase = "reprieve"
	PhaseMerge     Phase = "merge"
	PhaseFrame     Phase = "frame-conflicts"
	PhaseEdges     Phase = "edge-typing"
	PhaseRetention Phase = "retention"
	PhaseLinks     Phase = "link-ager"
)

// Phases lists the phases in order.
var Phases = [7]Phase{PhaseDecay, PhaseReprieve, PhaseMerge, PhaseFrame, PhaseEdges, PhaseRetention, PhaseLinks}

// The commit trailers a sleep writes. trailerDate marks a sleep in history:
// the next sleep reads "since the last sleep" from the latest one merged.
const (
	trailerDate  = "Borg-Sleep"
	trailerPhase = "Borg-Sleep-Phase"
	trailerBase  = "Borg-Sleep-Base"
)

// Planner knobs' defaults (borg's choices, documented on PlanOptions).
const (
	// DefaultFrameConfidenceCap is the confidence a superseded frame claim
	// is capped at.
	DefaultFrameConfidenceCap = 0.3
	// DefaultMergeCandidateFloor is the similarity from which neighbour
	// pairs are considered at all; pairs between it and the merge threshold
	// are reported as refused at the threshold stage.
	DefaultMergeCandidateFloor = 0.85
	// DefaultMergePerSource is how many neighbours per lesson are
	// candidates.
	DefaultMergePerSource = 5
	// DefaultEdgeFloor is the similarity a pair sharing an entity needs to
	// become a derived edge.
	DefaultEdgeFloor = 0.3
	// DefaultEdgePerSource and DefaultEdgeLimit bound the derived edges: per
	// lesson and per night, so the commit stays reviewable.
	DefaultEdgePerSource = 3
	DefaultEdgeLimit     = 200
	// DefaultEntityMaxDF: an entity named by more lessons than this is too
	// common to say two lessons are about the same thing.
	DefaultEntityMaxDF = 50
	// DefaultYoungDays: a lesson created within this many days of the sleep
	// is never evicted.
	DefaultYoungDays = 30
	// DefaultMaxEvictShare is the share of the lessons retention may evict
	// in one night (at least one).
	DefaultMaxEvictShare = 0.02
)

// PlanOptions are the planner's knobs; a zero field takes its default.
type PlanOptions struct {
	// MergeMaxPairs caps committed merges per night (domain.MaxMergePairs).
	MergeMaxPairs int
	// MergeThreshold is the strict near-duplicate threshold
	// (domain.NearDuplicateThreshold).
	MergeThreshold float64
	// MergeCandidateFloor, MergePerSource: see the defaults.
	MergeCandidateFloor float64
	MergePerSource      int
	// FrameConfidenceCap: see DefaultFrameConfidenceCap.
	FrameConfidenceCap float64
	// EdgeFloor, EdgePerSource, EdgeLimit, EntityMaxDF: see the defaults.
	EdgeFloor     float64
	EdgePerSource int
	EdgeLimit     int
	EntityMaxDF   int
	// YoungDays: see DefaultYoungDays.
	YoungDays int
	// MaxEvictShare: see DefaultMaxEvictShare.
	MaxEvictShare float64

	// pairs forces the merge phase's candidate enumeration (tests).
	pairs pairMode
}

func (o PlanOptions) withDefaults() PlanOptions {
	if o.MergeMaxPairs <= 0 {
		o.MergeMaxPairs = domain.MaxMergePairs
	}
	if o.MergeThreshold <= 0 {
		o.MergeThreshold = domain.NearDuplicateThreshold
	}
	if o.MergeCandidateFloor <= 0 {
		o.MergeCandidateFloor = DefaultMergeCandidateFloor
	}
	o.MergeCandidateFloor = min(o.MergeCandidateFloor, o.MergeThreshold)
	if o.MergePerSource <= 0 {
		o.MergePerSource = DefaultMergePerSource
	}
	if o.FrameConfidenceCap <= 0 {
		o.FrameConfidenceCap = DefaultFrameConfidenceCap
	}
	if o.EdgeFloor <= 0 {
		o.EdgeFloor = DefaultEdgeFloor
	}
	if o.EdgePerSource <= 0 {
		o.EdgePerSource = DefaultEdgePerSource
	}
	if o.EdgeLimit <= 0 {
		o.EdgeLimit = DefaultEdgeLimit
	}
	if o.EntityMaxDF <= 0 {
		o.EntityMaxDF = DefaultEntityMaxDF
	}
	if o.YoungDays <= 0 {
		o.YoungDays = DefaultYoungDays
	}
	if o.MaxEvictShare <= 0 {
		o.MaxEvictShare = DefaultMaxEvictShare
	}
	return o
}

// Plan is what a sleep will do: one entry per phase, in order.
type Plan struct {
	Date      string      `json:"date"`
	Base      string      `json:"base"`
	LastSleep string      `json:"last_sleep,omitempty"`
	Lessons   int         `json:"lessons"`
	Events    int         `json:"events"`
	Embedder  string      `json:"embedder"`
	Skipped   []string    `json:"skipped,omitempty"`
	Note      string      `json:"note,omitempty"`
	Phases    []PhasePlan `json:"phases"`
}

// PhasePlan is one phase's decisions, the files it changes and the commit
// message that explains them. A phase with no Changes commits nothing.
type PhasePlan struct {
	Phase   Phase              `json:"phase"`
	Number  int                `json:"number"`
	Counts  []Count            `json:"counts"`
	Items   []Item             `json:"items"`
	Notes   []string           `json:"notes,omitempty"`
	Files   int                `json:"files"`
	Changes []memfs.FileChange `json:"-"`
	Message string             `json:"-"`
}

// Count is one named tally of a phase.
type Count struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// Item is one decision: what happened to which lesson and why, with the
// scores behind it.
type Item struct {
	Lesson string `json:"lesson"`
	Action string `json:"action"`
	Other  string `json:"other,omitempty"`
	Why    string `json:"why"`
	// NoChange marks a decision that changes no file (a refused merge, a
	// guard, a compress): the plan lists it, the phase's commit message
	// only counts it.
	NoChange bool `json:"no_change,omitempty"`
}

// Changed reports whether the phase writes any file.
func (p PhasePlan) Changed() bool { return len(p.Changes) > 0 }

// count returns the named tally (0 when absent).
func (p PhasePlan) count(name string) int {
	for _, c := range p.Counts {
		if c.Name == name {
			return c.N
		}
	}
	return 0
}

// String renders the plan as text: a header, then each phase's counts and
// decisions.
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sleep %s from %s (%d lessons, %d events, embedder %s)\n", p.Date, short(p.Base), p.Lessons, p.Events, p.Embedder)
	if p.LastSleep != "" {
		fmt.Fprintf(&b, "last sleep: %s\n", p.LastSleep)
	} else {
		b.WriteString("last sleep: none\n")
	}
	if p.Note != "" {
		fmt.Fprintf(&b, "%s\n", p.Note)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", s)
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(&b, "\n%d. %s: %s", ph.Number, ph.Phase, countLine(ph.Counts))
		if ph.Files > 0 {
			fmt.Fprintf(&b, " (%s)\n", FileCount(ph.Files))
		} else {
			b.WriteString(" (no commit)\n")
		}
		for _, n := range ph.Notes {
			fmt.Fprintf(&b, "   %s\n", n)
		}
		for _, it := range ph.Items {
			fmt.Fprintf(&b, "   - %s\n", it.line())
		}
	}
	return b.String()
}

func (it Item) line() string {
	s := it.Lesson + ": " + it.Action
	if it.Other != "" {
		s += " " + it.Other
	}
	if it.Why != "" {
		s += " (" + it.Why + ")"
	}
	return s
}

// FileCount says how many files a phase changed: "1 file", "3 files".
func FileCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// countLine joins a phase's counts, the first always and the others when
// not zero.
func countLine(cs []Count) string {
	if len(cs) == 0 {
		return "nothing to do"
	}
	var parts []string
	for i, c := range cs {
		if i == 0 || c.N != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, c.Name))
		}
	}
	return strings.Join(parts, ", ")
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// entry is one lesson's current state as the phases rewrite it.
type entry struct {
	l        domain.Lesson
	raw      []byte
	path     string // the file's path in lessons/
	stale    bool   // l changed since raw was rendered
	archived bool
}

// planner carries the snapshot and the lessons' state through the phases.
type planner struct {
	snap  Snapshot
	opts  PlanOptions
	at    time.Time // the sleep's instant
	since time.Time // the start of the cycle: the last sleep, or a day before
	ids   []string  // every lesson id, sorted
	cur   map[string]*entry
	vec   map[string][]float32
	stats map[string]*lessonStats
	mems  map[string]domain.Memory
	// born is each lesson's creation time as borg believes it
	// (domain.BelievedCreated): zero, the oldest, when it has no date or one
	// more than a day past the sleep. origin is the activity clock's start,
	// the log's first event before the sleep (zero without one): the age an
	// undated lesson has.
	born   map[string]time.Time
	origin time.Time

	// changes collects the current phase's file changes by path; rerender
	// names the lesson (by path) whose file flush renders.
	changes  map[string]memfs.FileChange
	rerender map[string]string
}

// lessonStats are the per-lesson event tallies the phases read.
type lessonStats struct {
	asked, changed, tested, created int
	lastUseMS                       int64 // latest created/changed/tested
	lastAccessMS                    int64 // latest of any lesson event
}

// MakePlan computes what a sleep does from one snapshot. It is pure and
// deterministic: it iterates in sorted order, reads no clock and no global
// state, so the same snapshot and options give the same plan, byte for byte
// (the file changes and the commit messages included).
func MakePlan(snap Snapshot, opts PlanOptions) Plan {
	p := newPlanner(snap, opts)
	out := Plan{
		Date: p.at.Format(time.DateOnly), Base: snap.Base, Lessons: len(p.ids),
		Events: len(snap.Events), Embedder: snap.EmbedderID, Skipped: slices.Clone(snap.Skipped),
		Phases: []PhasePlan{}, // [] in JSON, never null
	}
	if !snap.LastSleep.IsZero() {
		out.LastSleep = snap.LastSleep.Format(time.DateOnly)
	}
	if !snap.LastSleep.IsZero() && !snap.LastSleep.Before(p.at) {
		out.Note = fmt.Sprintf("already slept on %s: nothing to do until a later date", out.LastSleep)
		return out
	}
	phases := []func() PhasePlan{p.decay, p.reprieve, p.merge, p.frames, p.edges, p.retention, p.linkAger}
	for i, run := range phases {
		p.changes = map[string]memfs.FileChange{}
		ph := run()
		ph.Phase, ph.Number = Phases[i], i+1
		if ph.Items == nil {
			ph.Items = []Item{} // [] in JSON, never null
		}
		ph.Changes = p.flush()
		ph.Files = len(ph.Changes)
		if ph.Changed() {
			ph.Message = p.message(ph)
		}
		out.Phases = append(out.Phases, ph)
	}
	return out
}

func newPlanner(snap Snapshot, opts PlanOptions) *planner {
	p := &planner{snap: snap, opts: opts.withDefaults(), at: dayOf(snap.Date),
		cur: map[string]*entry{}, vec: map[string][]float32{}, stats: map[string]*lessonStats{},
		born: map[string]time.Time{}, rerender: map[string]string{}}
	if !snap.LastSleep.IsZero() {
		p.since = dayOf(snap.LastSleep)
	} else {
		p.since = p.at.Add(-24 * time.Hour)
	}
	lessons := sortedLessons(snap.Lessons)
	ls := make([]domain.Lesson, 0, len(lessons))
	for _, lf := range lessons {
		if _, dup := p.cur[lf.Lesson.ID]; dup {
			continue
		}
		p.ids = append(p.ids, lf.Lesson.ID)
		path := lf.Path
		if path == "" {
			path = memfs.LessonPath(lf.Lesson.ID)
		}
		p.cur[lf.Lesson.ID] = &entry{l: lf.Lesson, raw: lf.Raw, path: path}
		p.stats[lf.Lesson.ID] = &lessonStats{}
		p.born[lf.Lesson.ID] = domain.BelievedCreated(lf.Lesson.Created, p.at)
		ls = append(ls, lf.Lesson)
	}
	for _, kv := range snap.Vectors {
		if _, ok := p.vec[kv.Key]; !ok {
			p.vec[kv.Key] = kv.Vec
		}
	}
	atMS := p.at.UnixMilli()
	var events []domain.Event
	for _, e := range snap.Events {
		if e.MS >= atMS {
			continue
		}
		events = append(events, e)
		if p.origin.IsZero() || e.MS < p.origin.UnixMilli() {
			p.origin = time.UnixMilli(e.MS)
		}
		s := p.stats[e.Lesson]
		if s == nil {
			continue
		}
		switch e.Kind {
		case domain.KindAsked:
			s.asked++
		case domain.KindChanged:
			s.changed++
		case domain.KindTested:
			s.tested++
		case domain.KindCreated:
			s.created++
		}
		switch e.Kind {
		case domain.KindCreated, domain.KindChanged, domain.KindTested:
			s.lastUseMS = max(s.lastUseMS, e.MS)
		}
		s.lastAccessMS = max(s.lastAccessMS, e.MS)
	}
	p.mems = map[string]domain.Memory{}
	for _, m := range domain.Derive(events, memfs.LessonInfos(ls, p.at), "", domain.DefaultWeights) {
		p.mems[m.ID] = m
	}
	return p
}

// active lists the ids of the lessons not archived yet, sorted.
func (p *planner) active() []string {
	out := make([]string, 0, len(p.ids))
	for _, id := range p.ids {
		if !p.cur[id].archived {
			out = append(out, id)
		}
	}
	return out
}

// update rewrites a lesson's file with l. The file is rewritten when the
// phase flushes (or archives the lesson), over the available CPUs: a night's
// decay rewrites nearly every lesson, and memfs.Rewrite is pure, so the bytes
// are the same whenever and wherever they are written.
func (p *planner) update(l domain.Lesson) {
	e := p.cur[l.ID]
	e.l = l
	e.stale = true
	p.changes[e.path] = memfs.FileChange{Path: e.path}
	p.rerender[e.path] = l.ID
}

// archive moves a lesson's file, as it stands, to archive/.
func (p *planner) archive(id string) {
	e := p.cur[id]
	e.archived = true
	p.render(e)
	from, to := e.path, memfs.ArchivePath(id)
	delete(p.rerender, from)
	p.changes[from] = memfs.FileChange{Path: from, Delete: true}
	p.changes[to] = memfs.FileChange{Path: to, Data: e.raw}
}

// render brings e.raw up to date with e.l: the lines the edit changes, a
// file written by hand keeping the rest of its markup (memfs.Rewrite).
func (p *planner) render(e *entry) {
	if e.stale {
		e.raw, e.stale = memfs.Rewrite(e.raw, e.l), false
	}
}

// flush renders the phase's rewritten lessons and returns its changes
// sorted by path.
func (p *planner) flush() []memfs.FileChange {
	paths := make([]string, 0, len(p.rerender))
	for path := range p.rerender {
		paths = append(paths, path)
	}
	parallelStripes(runtimeWorkers(), len(paths), func(_, i int) { p.render(p.cur[p.rerender[paths[i]]]) })
	for _, path := range paths {
		p.changes[path] = memfs.FileChange{Path: path, Data: p.cur[p.rerender[path]].raw}
	}
	p.rerender = map[string]string{}
	out := make([]memfs.FileChange, 0, len(p.changes))
	for _, c := range p.changes {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b memfs.FileChange) int { return strings.Compare(a.Path, b.Path) })
	p.changes = nil
	return out
}

// olderFirst orders two lessons by the created time borg believes (p.born:
// an unknown time counts as oldest), then id: it reports whether a is the
// older.
func (p *planner) olderFirst(a, b string) bool {
	ca, cb := p.born[a], p.born[b]
	if !ca.Equal(cb) {
		return ca.Before(cb)
	}
	return a < b
}

// phaseTitles are the commit subjects' phase names.
var phaseTitles = map[Phase]string{
	PhaseDecay: "confidence decay", PhaseReprieve: "reprieve", PhaseMerge: "near-duplicate merge",
	PhaseFrame: "frame conflicts", PhaseEdges: "edge typing", PhaseRetention: "retention triage",
	PhaseLinks: "link ager",
}

// phaseWhy is each commit's first paragraph: the rule the phase applies.
func (p *planner) phaseWhy(ph Phase) string {
	o := p.opts
	switch ph {
	case PhaseDecay:
		return fmt.Sprintf("Lessons with no created, changed or tested event since %s decay one cycle toward\n"+
			"the floor %.2f (alpha %.2f, on the 4-decimal grid). A change under %.3f is not written.",
			p.since.Format(time.DateOnly), domain.DefaultConfidenceFloor, domain.DefaultConfidenceDecayAlpha, domain.ConfidenceCommitDelta)
	case PhaseReprieve:
		return fmt.Sprintf("Lessons past memhtml-valid-until: reprieved %d days from tonight when the reprieve\n"+
			"score is at least %.2f and fewer than %d reprieves were spent; otherwise moved to\n"+
			"archive/.",
			domain.ReprieveDays, domain.ReprieveFloor, domain.MaxReprieves)
	case PhaseMerge:
		return fmt.Sprintf("Neighbour pairs of one reach above %.2f cosine (candidates from %.2f) are\n"+
			"near-duplicates unless a divergence guard vetoes them or a person vetoed one of\n"+
			"them (borg no). The lesson with more session results keeps (changed results first,\n"+
			"then all results, then the older one). The other's tags, anchors and links join the\n"+
			"keeper's; a merge note with its gist, then its body paragraphs the keeper lacks, are\n"+
			"appended to the keeper's body; the later valid-until holds (none when either has\n"+
			"none); and its file moves to archive/, its results staying in the log under its id.\n"+
			"At most %d merges a night.",
			o.MergeThreshold, o.MergeCandidateFloor, o.MergeMaxPairs)
	case PhaseFrame:
		return fmt.Sprintf("Lessons of one reach whose gists write different values into the same frame about\n"+
			"the same subject: the newer claim supersedes the older one, whose confidence is capped\n"+
			"at %.2f.",
			o.FrameConfidenceCap)
	case PhaseEdges:
		return fmt.Sprintf("Lessons naming the same entity (a path, an identifier, a proper name) and at\n"+
			"least %.2f similar get a derived link (data-derived): contradicts when their gists\n"+
			"diverge in negation or numbers, supports otherwise. Derived links are suspicions\n"+
			"for review and never count as authored ones.", o.EdgeFloor)
	case PhaseRetention:
		return fmt.Sprintf("The eight-signal retention score (PageRank, communities and bridges over the\n"+
			"lesson links; access and outcomes from the log): evict at or below %.1f moves to\n"+
			"archive/, compress (up to %.1f) and keep stay. A lesson created within %d days\n"+
			"or with a changed or tested outcome is never evicted, nor one that supersedes a lesson\n"+
			"that stays (the one it replaced goes first), and at most %.0f%% of the lessons are\n"+
			"evicted a night, lowest scores first.",
			domain.EvictThreshold, domain.KeepThreshold, o.YoungDays, 100*o.MaxEvictShare)
	}
	return ""
}

// MessageItems is how many decisions a phase's commit message lists; the
// rest are counted (the commit's diff shows every change).
const MessageItems = 200

// message is a phase's commit message: subject with counts, the rule, one
// line per decision that changes a file (the first MessageItems of them),
// the count of those that change none, and the trailers.
func (p *planner) message(ph PhasePlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sleep %s: %s (%s)\n\n", p.at.Format(time.DateOnly), phaseTitles[ph.Phase], countLine(ph.Counts))
	if why := p.phaseWhy(ph.Phase); why != "" {
		b.WriteString(why)
		b.WriteString("\n\n")
	}
	for _, n := range ph.Notes {
		b.WriteString(n)
		b.WriteString("\n")
	}
	if len(ph.Notes) > 0 {
		b.WriteString("\n")
	}
	listed, quiet := 0, 0
	for _, it := range ph.Items {
		switch {
		case it.NoChange:
			quiet++
		case listed < MessageItems:
			fmt.Fprintf(&b, "- %s\n", it.line())
			listed++
		}
	}
	if more := len(ph.Items) - quiet - listed; more > 0 {
		fmt.Fprintf(&b, "- … and %d more (the diff shows every change)\n", more)
	}
	switch {
	case quiet == 1:
		b.WriteString("\nNot listed: 1 decision that changes no file (the plan lists it: borg sleep --dry-run).\n")
	case quiet > 1:
		fmt.Fprintf(&b, "\nNot listed: %d decisions that change no file (the plan lists them: borg sleep --dry-run).\n", quiet)
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: %d %s\n%s: %s\n", trailerDate, p.at.Format(time.DateOnly),
		trailerPhase, ph.Number, ph.Phase, trailerBase, p.snap.Base)
	return b.String()
}

// fp4 formats a score with four decimals.
func fp4(x float64) string { return fmt.Sprintf("%.4f", x) }
