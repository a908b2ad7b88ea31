package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
)

// topic is one area of engineering with words every lesson about it shares
// and subtopics with words of their own.
type topic struct {
	name   string
	common []string
	subs   []subtopic
}

type subtopic struct {
	name  string
	words []string
}

// topics is the synthetic corpus's vocabulary. Lessons of one subtopic share
// most of their words, so retrieval alone cannot tell a helpful lesson from a
// harmful one of the same subtopic: only usefulness can.
var topics = []topic{
	{"migrations", []string{"schema", "migration", "database", "table"}, []subtopic{
		{"ordering", []string{"migrate", "integration", "apply", "order", "seed", "fresh"}},
		{"rollback", []string{"rollback", "down", "revert", "irreversible", "backup", "restore"}},
		{"locks", []string{"lock", "alter", "column", "concurrently", "downtime", "backfill"}},
	}},
	{"testing", []string{"test", "tests", "suite", "assert"}, []subtopic{
		{"flaky", []string{"flaky", "retry", "timeout", "sleep", "race", "nondeterministic"}},
		{"fixtures", []string{"fixture", "golden", "testdata", "snapshot", "update", "regenerate"}},
		{"mocks", []string{"mock", "fake", "stub", "interface", "inject", "double"}},
	}},
	{"caching", []string{"cache", "ttl", "stale", "redis"}, []subtopic{
		{"invalidation", []string{"invalidate", "evict", "key", "write", "through", "version"}},
		{"stampede", []string{"stampede", "thundering", "herd", "jitter", "singleflight", "warm"}},
		{"headers", []string{"etag", "header", "control", "browser", "cdn", "vary"}},
	}},
	{"auth", []string{"token", "auth", "login", "credentials"}, []subtopic{
		{"jwt", []string{"jwt", "expiry", "refresh", "signature", "claims", "clock"}},
		{"oauth", []string{"oauth", "redirect", "scope", "callback", "pkce", "state"}},
		{"passwords", []string{"password", "hash", "bcrypt", "salt", "reset", "rotate"}},
	}},
	{"logging", []string{"log", "logs", "logger", "structured"}, []subtopic{
		{"levels", []string{"level", "debug", "verbose", "noise", "warn", "sampling"}},
		{"pii", []string{"pii", "redact", "email", "secret", "mask", "gdpr"}},
		{"tracing", []string{"trace", "span", "correlation", "request", "propagate", "otel"}},
	}},
	{"deploy", []string{"deploy", "release", "rollout", "production"}, []subtopic{
		{"canary", []string{"canary", "percent", "traffic", "metrics", "abort", "gradual"}},
		{"config", []string{"env", "variable", "config", "flag", "default", "override"}},
		{"images", []string{"docker", "image", "layer", "tag", "registry", "digest"}},
	}},
	{"concurrency", []string{"goroutine", "channel", "mutex", "concurrent"}, []subtopic{
		{"leaks", []string{"leak", "cancel", "context", "close", "done", "waitgroup"}},
		{"deadlock", []string{"deadlock", "acquire", "nested", "wait", "hold", "order"}},
		{"atomics", []string{"atomic", "counter", "compare", "swap", "memory", "visibility"}},
	}},
	{"http", []string{"http", "client", "server", "endpoint"}, []subtopic{
		{"timeouts", []string{"timeout", "deadline", "dial", "idle", "keepalive", "slow"}},
		{"retries", []string{"retry", "backoff", "idempotent", "status", "budget", "circuit"}},
		{"json", []string{"json", "decode", "unknown", "fields", "unmarshal", "strict"}},
	}},
}

// uncoveredTopics are work no lesson of the corpus is about: a session on
// one of them shares words with lessons only by chance.
var uncoveredTopics = []topic{
	{"frontend", []string{"component", "css", "layout", "button"}, []subtopic{
		{"forms", []string{"form", "validation", "input", "submit", "label", "placeholder"}},
		{"a11y", []string{"aria", "contrast", "keyboard", "focus", "screenreader", "tabindex"}},
	}},
	{"docs", []string{"readme", "docs", "guide", "example"}, []subtopic{
		{"onboarding", []string{"onboarding", "setup", "install", "prerequisites", "walkthrough", "faq"}},
		{"changelog", []string{"changelog", "semver", "notes", "breaking", "highlights", "upgrade"}},
	}},
	{"analytics", []string{"dashboard", "chart", "report", "metric"}, []subtopic{
		{"funnels", []string{"funnel", "conversion", "cohort", "retention", "segment", "attribution"}},
		{"exports", []string{"csv", "spreadsheet", "pivot", "quarterly", "finance", "xlsx"}},
	}},
}

// repoNames are the repo tags, in order; Options.Repos takes a prefix.
var repoNames = []string{"api", "web", "infra", "billing", "mobile", "data", "search", "auth-svc"}

var (
	lessonVerbs = []string{"Always", "Never", "Prefer to", "Remember to", "Do not", "Make sure to"}
	taskVerbs   = []string{"fix", "add", "update", "refactor", "investigate", "handle", "speed up", "clean up"}
	lessonTypes = []string{domain.TypeProcedural, domain.TypeSemantic, domain.TypeErrorPattern, domain.TypeEpisodic}
)

// Effect is a lesson's hidden true effect on the work it is asked for.
type Effect string

// The hidden effects.
const (
	Helps    Effect = "helps"   // the agent's work improves when it follows the lesson
	Neutral  Effect = "neutral" // following it changes nothing that matters
	Harms    Effect = "harms"   // following it makes the work worse
	RepoOnly Effect = "repo"    // helps in its home repo, misleads elsewhere
)

// Values of asking a lesson, per unit of relevance, and the cost of an ask.
const (
	helpValue     = 1.0
	harmValue     = -1.0
	misplaceValue = -0.5 // a repo-only lesson followed in another repo
	askCost       = 0.02 // every question takes some of the agent's attention
	// interruptCost is what blocking a session costs, once, however many
	// lessons it asks: the agent stops, weighs notes and answers. An ask is
	// worth it when what it brings outweighs that, as a note of the
	// session's topic that helps (topicRel) just does.
	interruptCost = topicRel
	// subtopicRel and topicRel are a lesson's relevance to a task of its
	// subtopic and of its topic's other subtopics.
	subtopicRel = 1.0
	topicRel    = 0.3
)

// simLesson is a lesson of the simulated corpus with its hidden truth.
type simLesson struct {
	lesson     domain.Lesson
	topic, sub int
	effect     Effect
	home       int // a repo-only lesson's home repo (index into repos)
	scoped     bool
	createdMS  int64
	introduced int // session it was written in; -1 for the initial corpus
	author     string
}

// task is one session's work.
type task struct {
	session    string
	ms         int64
	engineer   int
	repo       int
	topic, sub int
	text       string
}

// world is the generated scenario: team, corpus and task stream.
type world struct {
	engineers []string
	repos     []string
	lessons   []*simLesson // initial corpus then the new lessons, in order
	byID      map[string]*simLesson
	tasks     []task
	holidayMS int64
}

// baseMS is the simulated team's first session: 2026-01-05 09:00 UTC.
const baseMS = 1767603600000

// sessionGapMS is the wall time between two consecutive sessions.
const sessionGapMS = int64(20 * time.Minute / time.Millisecond)

// subSeed derives an independent stream for one purpose from the run's seed.
func subSeed(seed uint64, label string) uint64 {
	return domain.NewRng(seed ^ domain.Seed("sim", label)).Uint64()
}

// hexID is n random hex digits.
func hexID(r *domain.Rng, n int) string {
	return fmt.Sprintf("%016x", r.Uint64())[:n]
}

// pick returns a uniformly chosen element of xs.
func pick[T any](r *domain.Rng, xs []T) T { return xs[r.Intn(len(xs))] }

// sample returns k distinct elements of xs in a random order.
func sample(r *domain.Rng, xs []string, k int) []string {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	k = min(k, len(xs))
	out := make([]string, 0, k)
	for i := 0; i < k; i++ {
		j := i + r.Intn(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
		out = append(out, xs[idx[i]])
	}
	return out
}

// topicWeights skews the task stream: some topics come up far more often
// than others, as in a real team (weight 1/(k+1)).
func topicWeights() []float64 {
	w := make([]float64, len(topics))
	for k := range w {
		w[k] = 1 / float64(k+1)
	}
	return w
}

func pickWeighted(r *domain.Rng, w []float64) int {
	var total float64
	for _, x := range w {
		total += x
	}
	u := r.Float64() * total
	for i, x := range w {
		if u < x {
			return i
		}
		u -= x
	}
	return len(w) - 1
}

// newWorld generates the team, the corpus and the task stream for opts.
func newWorld(opts Options) *world {
	wr := domain.NewRng(subSeed(opts.Seed, "world"))
	w := &world{byID: map[string]*simLesson{}}
	for i := 0; i < opts.Engineers; i++ {
		w.engineers = append(w.engineers, "e-"+hexID(wr, 8))
	}
	w.repos = append(w.repos, repoNames[:opts.Repos]...)

	// The initial corpus: effects in fixed shares (40% helps, 25% neutral,
	// 20% harms, 15% repo-only, half of those scoped to their repo), each
	// lesson in a random subtopic, written over the week before the run.
	for i := 0; i < opts.Lessons; i++ {
		var e Effect
		switch u := wr.Float64(); {
		case u < 0.40:
			e = Helps
		case u < 0.65:
			e = Neutral
		case u < 0.85:
			e = Harms
		default:
			e = RepoOnly
		}
		ms := baseMS - int64(7*24*time.Hour/time.Millisecond) + int64(i)*60000
		w.addLesson(wr, e, ms, -1, "")
	}
	// The task stream (holiday included), drawn once for every policy; a
	// stream of its own turns some tasks into uncovered work, leaving the
	// others as they were drawn.
	tr := domain.NewRng(subSeed(opts.Seed, "tasks"))
	ur := domain.NewRng(subSeed(opts.Seed, "uncovered"))
	sr := domain.NewRng(subSeed(opts.Seed, "summary"))
	tw := topicWeights()
	ms := int64(baseMS)
	for s := 0; s < opts.Sessions; s++ {
		if opts.HolidayDays > 0 && opts.HolidayAt > 0 && s == opts.HolidayAt {
			ms += int64(opts.HolidayDays) * int64(24*time.Hour/time.Millisecond)
			w.holidayMS = ms
		}
		t := task{session: "s-" + hexID(tr, 16), ms: ms, engineer: tr.Intn(len(w.engineers))}
		// Each engineer works mostly in a home repo.
		if home := t.engineer % len(w.repos); tr.Float64() < 0.7 {
			t.repo = home
		} else {
			t.repo = tr.Intn(len(w.repos))
		}
		t.topic = pickWeighted(tr, tw)
		t.sub = tr.Intn(len(topics[t.topic].subs))
		t.text = taskText(tr, t.topic, t.sub)
		if ur.Float64() < opts.Uncovered {
			t.topic, t.sub, t.text = -1, -1, uncoveredText(ur)
		} else {
			t.text += " " + summaryText(sr, topics[t.topic], t.sub)
		}
		w.tasks = append(w.tasks, t)
		ms += sessionGapMS
	}
	// The new lessons: helpful, in the subtopics the stream visits, written
	// by the engineer of the session they appear in.
	for i := 0; i < opts.NewLessons; i++ {
		s := min(opts.NewAt+i, opts.Sessions-1)
		t := w.tasks[s]
		l := w.addLesson(wr, Helps, t.ms+1, s, w.engineers[t.engineer])
		l.home = t.repo
	}
	return w
}

// addLesson generates one lesson of effect e written at ms in session s (-1
// for the initial corpus) by author ("" picks one).
func (w *world) addLesson(r *domain.Rng, e Effect, ms int64, s int, author string) *simLesson {
	tp := r.Intn(len(topics))
	sb := r.Intn(len(topics[tp].subs))
	if s >= 0 {
		// A new lesson is about what the team works on most.
		tp = pickWeighted(r, topicWeights()[:3])
	}
	if author == "" {
		author = pick(r, w.engineers)
	}
	l := &simLesson{topic: tp, sub: sb, effect: e, createdMS: ms, introduced: s, author: author}
	l.home = r.Intn(len(w.repos))
	reach := domain.ReachTeam
	if e == RepoOnly && r.Float64() < 0.5 {
		l.scoped = true
		reach = domain.ReachRepoPrefix + w.repos[l.home]
	}
	t, st := topics[tp], topics[tp].subs[sb]
	id := fmt.Sprintf("%s-%s-%s", t.name, st.name, hexID(r, 4))
	words := sample(r, st.words, 4)
	cw := sample(r, t.common, 2)
	title := fmt.Sprintf("%s %s %s %s", pick(r, lessonVerbs), words[0], cw[0], words[1])
	gist := fmt.Sprintf("%s %s the %s %s before the %s %s changes.",
		pick(r, lessonVerbs), words[0], words[1], cw[0], words[2], cw[1])
	body := fmt.Sprintf("We hit this with the %s %s: the %s and %s mattered more than expected.",
		cw[1], words[3], words[2], pick(r, t.common))
	l.lesson = domain.Lesson{
		Format: domain.FormatVersion, ID: id, Title: title, Type: pick(r, lessonTypes),
		Confidence: 0.8, Reach: reach, Author: author,
		Created: time.UnixMilli(ms).UTC(), Tags: []string{t.name, st.name},
		Gist: gist, Body: body,
	}
	w.lessons = append(w.lessons, l)
	w.byID[id] = l
	return l
}

// taskText is a session's prompt: words of its subtopic and topic, a verb,
// and a stray word from another topic (real prompts are never clean).
func taskText(r *domain.Rng, tp, sb int) string {
	t := topics[tp]
	words := sample(r, t.subs[sb].words, 3)
	cw := sample(r, t.common, 2)
	other := topics[(tp+1+r.Intn(len(topics)-1))%len(topics)]
	return strings.Join([]string{pick(r, taskVerbs), "the", cw[0], words[0], words[1],
		"and", words[2], "in", "the", cw[1], pick(r, other.common)}, " ")
}

// uncoveredText is the Stop hook's text of work no lesson covers: a prompt
// of an uncovered topic's words with a stray word of a covered topic (real
// prompts share words with lessons they have nothing to do with), and the
// agent's summary of its work.
func uncoveredText(r *domain.Rng) string {
	t := pick(r, uncoveredTopics)
	sb := r.Intn(len(t.subs))
	words := sample(r, t.subs[sb].words, 3)
	cw := sample(r, t.common, 2)
	stray := pick(r, topics)
	return strings.Join([]string{pick(r, taskVerbs), "the", cw[0], words[0], words[1],
		"and", words[2], "in", "the", cw[1], pick(r, stray.common), summaryText(r, t, sb)}, " ")
}

// summaryText is the agent's last message about work on topic t's
// subtopic sb, as the Stop hook reads it beside the prompt: more of the
// subtopic's words and one of the topic's.
func summaryText(r *domain.Rng, t topic, sb int) string {
	words := sample(r, t.subs[sb].words, 3)
	return strings.Join([]string{"I", "changed", "the", words[0], "and", words[1], "so", "the", pick(r, t.common), words[2], "works"}, " ")
}

// relevance is how much a lesson bears on a task: 1 in its subtopic, 0.3
// elsewhere in its topic, 0 outside it (and for uncovered work).
func relevance(l *simLesson, t task) float64 {
	switch {
	case l.topic == t.topic && l.sub == t.sub:
		return subtopicRel
	case l.topic == t.topic:
		return topicRel
	}
	return 0
}

// effectIn is the value per unit of relevance of following l in repo.
func effectIn(l *simLesson, repo int) float64 {
	switch l.effect {
	case Helps:
		return helpValue
	case Harms:
		return harmValue
	case RepoOnly:
		if repo == l.home {
			return helpValue
		}
		return misplaceValue
	}
	return 0
}

// value is the expected value of asking l for t: relevance × effect, less
// the cost of the question (a session's asks also cost interruptCost, once).
func value(l *simLesson, t task) float64 {
	return relevance(l, t)*effectIn(l, t.repo) - askCost
}

// reachable reports whether l may be recalled in t's repo (its reach).
func (w *world) reachable(l *simLesson, t task) bool {
	return !l.scoped || l.home == t.repo
}

// available lists the lessons written before session s's asks, in corpus
// order.
func (w *world) available(s int) []*simLesson {
	out := make([]*simLesson, 0, len(w.lessons))
	for _, l := range w.lessons {
		if l.introduced <= s {
			out = append(out, l)
		}
	}
	return out
}
