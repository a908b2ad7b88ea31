package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
)

// techWords is a realistic core vocabulary for synthetic lessons; the
// generator adds pseudo-words (identifiers, names) drawn from syllables so
// the vocabulary grows with the corpus the way a real one does.
var techWords = strings.Fields(`
the a to of and in for on with is be run before after when not never always use
test tests testing build builds ci pipeline deploy deployment release migration
migrations schema database postgres mysql sqlite index query queries table tables
cache caching redis memcached timeout timeouts retry retries backoff network http
grpc api endpoint client server request response latency throughput error errors
panic crash log logs logging metric metrics trace tracing alert config configuration
env environment variable secret secrets token auth authentication permission role
docker container image kubernetes pod node cluster helm terraform module modules
go golang python rust java typescript node npm pip cargo maven gradle lint linter
format formatter vet race detector goroutine thread lock mutex deadlock channel
memory leak heap profile profiler cpu benchmark flaky fixture fixtures mock stub
integration unit end staging production rollback feature flag branch merge rebase
commit hook review pull request conflict version upgrade dependency vendor lockfile
file path directory permission symlink encoding utf json yaml csv parse parser
serialize queue worker job cron schedule batch stream kafka event events consumer
producer partition offset replica backup restore snapshot disk volume storage bucket
`)

var syllables = strings.Fields("ka lo mi ter vex dar sin pol ru bet qua zen fyr gal mok tri sep nor wex lum")

type lessonGen struct {
	rng   *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newLessonGen(seed uint64, vocabSize int) *lessonGen {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := append([]string(nil), techWords...)
	for len(vocab) < vocabSize {
		var b strings.Builder
		for n := 2 + rng.IntN(3); n > 0; n-- {
			b.WriteString(syllables[rng.IntN(len(syllables))])
		}
		vocab = append(vocab, b.String())
	}
	return &lessonGen{rng: rng, vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))}
}

func (g *lessonGen) words(lo, hi int) string {
	n := lo + g.rng.IntN(hi-lo+1)
	w := make([]string, n)
	for i := range w {
		w[i] = g.vocab[g.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func (g *lessonGen) lessons(n int) []domain.Lesson {
	out := make([]domain.Lesson, n)
	for i := range out {
		l := domain.Lesson{
			ID: fmt.Sprintf("lesson-%06d", i), Type: domain.TypeProcedural, Confidence: 0.8,
			Title: g.words(4, 9), Gist: g.words(8, 18) + ".", Body: g.words(30, 120) + ".",
			Tags: strings.Fields(g.words(1, 3)),
		}
		if g.rng.IntN(20) == 0 {
			l.Reach = "repo:r" + fmt.Sprint(g.rng.IntN(5))
		}
		if i > 0 && g.rng.IntN(10) == 0 {
			l.Links = []domain.LessonLink{{Rel: domain.RelSupports, Target: fmt.Sprintf("lesson-%06d", g.rng.IntN(i))}}
		}
		out[i] = l
	}
	return out
}

// queries draws realistic queries: a few words of a lesson's gist and body.
func (g *lessonGen) queries(ls []domain.Lesson, n int) []string {
	out := make([]string, n)
	for i := range out {
		l := ls[g.rng.IntN(len(ls))]
		w := strings.Fields(l.Gist + " " + l.Body)
		k := 4 + g.rng.IntN(6)
		q := make([]string, k)
		for j := range q {
			q[j] = w[g.rng.IntN(len(w))]
		}
		out[i] = strings.Join(q, " ")
	}
	return out
}

func benchSizes(b *testing.B) []int {
	sizes := []int{10_000}
	if os.Getenv("BORG_BENCH_100K") != "" {
		sizes = append(sizes, 100_000)
	}
	return sizes
}

// BenchmarkBuild measures a full index build on disk: every lesson analysed,
// the n-gram IDF fit, every embedding, the catalog and the sidecar.
// 100,000 lessons with BORG_BENCH_100K=1.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes(b) {
		ls := newLessonGen(1, 20_000).lessons(n)
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Sync(ls); err != nil {
					b.Fatal(err)
				}
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearch measures one in-process Search (all arms, MMR, K 10) on a
// warm on-disk index and reports the median and p95 per query.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes(b) {
		g := newLessonGen(1, 20_000)
		ls := g.lessons(n)
		qs := g.queries(ls, 1000)
		dir := b.TempDir()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Sync(ls); err != nil {
			b.Fatal(err)
		}
		useful := map[string]Usefulness{}
		for i := 0; i < n; i += 3 {
			useful[ls[i].ID] = Usefulness{Uses: i % 7, Results: i % 5, Mean: 0.6, Draw: 0.4}
		}
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := ix.Search(context.Background(), Query{Text: qs[i%len(qs)], Repo: "r1", Useful: useful}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			reportLatency(b, lat)
		})
		ix.Close()
	}
}

// BenchmarkOpenSearch measures what a fresh recall process pays on a warm
// store: Open (catalog and sidecar mapped) plus one Search.
func BenchmarkOpenSearch(b *testing.B) {
	for _, n := range benchSizes(b) {
		g := newLessonGen(1, 20_000)
		ls := g.lessons(n)
		qs := g.queries(ls, 100)
		dir := b.TempDir()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Sync(ls); err != nil {
			b.Fatal(err)
		}
		ix.Close()
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Search(context.Background(), Query{Text: qs[i%len(qs)]}); err != nil {
					b.Fatal(err)
				}
				ix.Close()
				lat = append(lat, time.Since(start))
				i++
			}
			reportLatency(b, lat)
		})
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "ms-median")
	b.ReportMetric(ms(lat[len(lat)*95/100]), "ms-p95")
}

// BenchmarkSyncOneChange measures what a hook's sync costs after one lesson
// changed: Open, a sync with that lesson read, analysed and embedded into
// the delta segments (merges deferred as a hook's are), Close. "files"
// syncs from the full listing of file stamps (SyncFiles), "changed" from
// the change set (SyncChanged, the first Stop after a learn). 100,000
// lessons with BORG_BENCH_100K=1.
func BenchmarkSyncOneChange(b *testing.B) {
	for _, n := range benchSizes(b) {
		ls := newLessonGen(1, 20_000).lessons(n)
		for _, mode := range []string{"files", "changed"} {
			b.Run(fmt.Sprintf("lessons=%d/%s", n, mode), func(b *testing.B) {
				benchSyncOneChange(b, slices.Clone(ls), mode == "changed", 0, Options{DeferMerge: true})
			})
		}
	}
}

// BenchmarkSyncOneChangeGrownDelta is the first Stop's sync after a learn
// (SyncChanged, one lesson) when earlier syncs left held lessons in the
// delta: a team's store between two background merges holds up to
// maxDeltaDocs of them, and every such sync rewrites the delta. The syncs
// after the first are a hook's: merges and vectors deferred.
func BenchmarkSyncOneChangeGrownDelta(b *testing.B) {
	n := 10_000
	ls := newLessonGen(1, 20_000).lessons(n)
	for _, held := range []int{0, 256, 1000} {
		b.Run(fmt.Sprintf("lessons=%d/delta=%d", n, held), func(b *testing.B) {
			benchSyncOneChange(b, slices.Clone(ls), true, held, Options{DeferMerge: true, DeferVectors: true, LazyVectors: true})
		})
	}
}

// benchSyncOneChange times syncs of one changed lesson each, after a first
// sync of every lesson and, when held > 0, a sync of held changed lessons
// into the delta; opts are those of every sync after the first.
func benchSyncOneChange(b *testing.B, ls []domain.Lesson, changed bool, held int, opts Options) {
	n := len(ls)
	dir := b.TempDir()
	stamps := make([]FileStamp, n)
	byID := make(map[string]*domain.Lesson, n)
	for i := range ls {
		stamps[i] = FileStamp{ID: ls[i].ID, ModTime: 1, Size: int64(i)}
		byID[ls[i].ID] = &ls[i]
	}
	read := func(ids []string) []domain.Lesson {
		out := make([]domain.Lesson, 0, len(ids))
		for _, id := range ids {
			out = append(out, *byID[id])
		}
		return out
	}
	stamp := 0
	sync := func(k int) {
		o := opts
		if k < 0 {
			o = Options{DeferMerge: true}
		}
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), o)
		if err != nil {
			b.Fatal(err)
		}
		since := fmt.Sprint(stamp)
		stamp++
		if k >= 0 && changed {
			_, err = ix.SyncChanged(since, []FileStamp{stamps[k]}, nil, read, fmt.Sprint(stamp))
		} else {
			_, err = ix.SyncFiles(stamps, read, fmt.Sprint(stamp), false)
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
	}
	sync(-1)
	if held > 0 {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), opts)
		if err != nil {
			b.Fatal(err)
		}
		var some []FileStamp
		for k := 0; k < held; k++ {
			j := (k*104729 + 3) % n
			byID[ls[j].ID].Gist = fmt.Sprintf("payments gateway retries with backoff, held revision %d.", k)
			stamps[j].ModTime++
			some = append(some, stamps[j])
		}
		slices.SortFunc(some, func(a, b FileStamp) int { return strings.Compare(a.ID, b.ID) })
		since := fmt.Sprint(stamp)
		stamp++
		st, err := ix.SyncChanged(since, slices.CompactFunc(some, func(a, b FileStamp) bool { return a.ID == b.ID }), nil, read, fmt.Sprint(stamp))
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		if st.DeltaDocs < held/2 {
			b.Fatalf("the delta holds %d lessons, want about %d", st.DeltaDocs, held)
		}
	}
	i := 0
	for b.Loop() {
		k := (i * 7919) % n
		i++
		byID[ls[k].ID].Gist = fmt.Sprintf("payments gateway retries with backoff, revision %d.", i)
		stamps[k].ModTime++
		sync(k)
	}
}

// BenchmarkSuccessorLookup measures supersedeFromStore for one hit over the
// floor: the search of the store for a newer lesson rewriting it, which a
// hook pays for each lesson it is about to hand out.
func BenchmarkSuccessorLookup(b *testing.B) {
	for _, n := range benchSizes(b) {
		g := newLessonGen(1, 20_000)
		ls := g.lessons(n)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range ls {
			ls[i].Created = base.Add(time.Duration(i) * time.Minute)
		}
		ix, err := Open(b.TempDir(), NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Sync(ls); err != nil {
			b.Fatal(err)
		}
		neutralOf := func(string) Usefulness { return neutral }
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				l := ls[(i*7919)%len(ls)]
				hit := []Hit{{ID: l.ID, Gist: l.Gist, Weight: 1, MeanWeight: 1, Match: 0.8, Relevance: 0.8}}
				start := time.Now()
				ix.supersedeFromStore(context.Background(), hit, Query{}, DefaultFloor, neutralOf, (&Query{}).latestCreated())
				lat = append(lat, time.Since(start))
				i++
			}
			reportLatency(b, lat)
		})
		ix.Close()
	}
}
