package index

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/borg-memory/borg/domain"
)

// EvalOptions configures EvalRetrieval. The zero value evaluates the default
// pipeline on the test split.
type EvalOptions struct {
	// Arms switches arms on and off (zero value: DefaultArmWeights).
	Arms ArmWeights
	// NewEmbedder makes the embedder of each folder's index (nil: the
	// default n-gram embedder). Each folder gets its own: an embedder that
	// fits itself to a corpus keeps what it fitted, and a folder measured
	// with another folder's fit is measured with figures no store has.
	NewEmbedder func() (Embedder, error)
	// Split names the qrels file, qrels/<Split>.tsv (default "test").
	Split string
	// Bar and MMRLambda are passed to every Query (zero: Search's defaults).
	Bar       float64
	MMRLambda float64
	// Terminal draws a progress bar on the progress writer; otherwise
	// progress gets one line per folder.
	Terminal bool
	// Build, when set, makes the search each folder's queries go through
	// from the folder's documents (one lesson per document, its ID the
	// document's): the product path builds a real store and answers as
	// `borg recall` does. Nil is the lab path: an in-memory index searched
	// with neutral usefulness.
	// With Replay, Build is also given half the judged queries (chosen by
	// a hash of their id) to replay as agent sessions before the other
	// half is scored; without it, replay is nil and every query is scored.
	Build func(ctx context.Context, name string, lessons []domain.Lesson, replay []EvalQuery) (Searcher, error)
	// Path names the path in the report ("lab" when Build is nil).
	Path string
	// Replay splits the judged queries: half replayed by Build, half
	// scored. The lab path scores the same half, so the two compare.
	Replay bool
}

// EvalQuery is one judged query: its text and the graded relevance of
// the documents judged for it.
type EvalQuery struct {
	ID, Text, Category string
	Relevant           map[string]int
}

// replayed reports whether a judged query goes to the replay half: the
// split depends on the id alone, so every path and run agrees on it.
func replayed(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%2 == 0
}

// Searcher answers an evaluation's queries: the ids of the documents it
// ranks for text, best first, at most k.
type Searcher interface {
	Search(ctx context.Context, text string, k int) ([]string, error)
	Close() error
}

// labSearcher is the lab path's Searcher: Search over an in-memory index
// with neutral usefulness and no log.
type labSearcher struct {
	ix   *Index
	opts EvalOptions
	arms ArmWeights
}

func (l labSearcher) Search(ctx context.Context, text string, k int) ([]string, error) {
	hits, err := l.ix.Search(ctx, Query{Text: text, K: k, Arms: l.arms, Bar: l.opts.Bar, MMRLambda: l.opts.MMRLambda})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	for j, h := range hits {
		ids[j] = h.ID
	}
	return ids, nil
}

func (l labSearcher) Close() error { return l.ix.Close() }

// EvalMetrics are the figures of a set of judged queries.
type EvalMetrics struct {
	Queries   int     `json:"queries"`
	NDCG10    float64 `json:"ndcg10"`
	Recall10  float64 `json:"recall10"`
	Recall100 float64 `json:"recall100"`
	MRR10     float64 `json:"mrr10"`
}

// EvalCategory is the figures of one query category (LoCoMo's
// metadata.category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
// 5 adversarial).
type EvalCategory struct {
	Category string `json:"category"`
	EvalMetrics
}

// EvalFolder is the figures of one BEIR folder.
type EvalFolder struct {
	Name string `json:"name"`
	EvalMetrics
	Lessons    int            `json:"lessons"`
	Categories []EvalCategory `json:"categories,omitempty"`
}

// EvalReport is EvalRetrieval's result: per folder and micro-averaged over
// every judged query of every folder.
type EvalReport struct {
	Folders    []EvalFolder   `json:"folders"`
	All        EvalMetrics    `json:"all"`
	Categories []EvalCategory `json:"categories,omitempty"`
	Arms       string         `json:"arms"`
	Embedder   string         `json:"embedder"`
	Path       string         `json:"path"` // "lab", or the Build's name
	// Replay: half the judged queries were replayed as sessions before
	// the other half was scored.
	Replay bool `json:"replay,omitempty"`
}

// evalDepth is how many hits each query asks for (Recall@100 needs 100).
const evalDepth = 100

// EvalRetrieval builds a throwaway in-memory index from each BEIR-layout
// folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), one corpus
// document per lesson (title → Title, the text's first sentence → Gist, the
// rest → Body), runs every judged query through Search with neutral
// usefulness, and reports nDCG@10 (graded gains), Recall@10, Recall@100 and
// MRR@10 per folder, micro-averaged over all judged queries, and per query
// category where queries carry metadata.category.
func EvalRetrieval(ctx context.Context, dirs []string, opts EvalOptions, progress io.Writer) (EvalReport, error) {
	if len(dirs) == 0 {
		return EvalReport{}, errors.New("eval retrieval: no folders")
	}
	arms := opts.Arms
	if arms.isZero() {
		arms = DefaultArmWeights()
	}
	split := opts.Split
	if split == "" {
		split = "test"
	}
	if progress == nil {
		progress = io.Discard
	}
	rep := EvalReport{Arms: arms.String(), Path: opts.Path, Replay: opts.Replay}
	if rep.Path == "" {
		rep.Path = "lab"
	}
	var all metricSum
	allCats := map[string]*metricSum{}
	for _, dir := range dirs {
		var emb Embedder = NewNGramEmbedder(NGramOptions{})
		if opts.NewEmbedder != nil {
			var err error
			if emb, err = opts.NewEmbedder(); err != nil {
				return rep, err
			}
		}
		rep.Embedder = emb.ID()
		folder, cats, sum, err := evalFolder(ctx, dir, split, emb, arms, opts, progress)
		if err != nil {
			return rep, err
		}
		rep.Folders = append(rep.Folders, folder)
		all.add(sum)
		for c, s := range cats {
			if allCats[c] == nil {
				allCats[c] = &metricSum{}
			}
			allCats[c].add(*s)
		}
	}
	rep.All = all.metrics()
	rep.Categories = categoryList(allCats)
	return rep, nil
}

// ReadEvalFolder reads a BEIR-layout folder: its documents as lessons (the
// gist split from the text as EvalRetrieval learns them) and its judged
// queries of qrels/<split>.tsv, in file order.
func ReadEvalFolder(dir, split string) ([]domain.Lesson, []EvalQuery, error) {
	lessons, err := readCorpus(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	queries, err := readQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return nil, nil, err
	}
	var judged []EvalQuery
	for _, q := range queries {
		if len(qrels[q.ID]) > 0 {
			judged = append(judged, EvalQuery{ID: q.ID, Text: q.Text, Category: q.Category, Relevant: qrels[q.ID]})
		}
	}
	return lessons, judged, nil
}

func evalFolder(ctx context.Context, dir, split string, emb Embedder, arms ArmWeights,
	opts EvalOptions, progress io.Writer) (EvalFolder, map[string]*metricSum, metricSum, error) {
	name := filepath.Base(filepath.Clean(dir))
	var none metricSum
	lessons, err := readCorpus(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return EvalFolder{}, nil, none, err
	}
	queries, err := readQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return EvalFolder{}, nil, none, err
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return EvalFolder{}, nil, none, err
	}
	var judged []evalQuery
	var replay []EvalQuery
	for _, q := range queries {
		if len(qrels[q.ID]) == 0 {
			continue
		}
		if opts.Replay && replayed(q.ID) {
			replay = append(replay, EvalQuery{ID: q.ID, Text: q.Text, Category: q.Category, Relevant: qrels[q.ID]})
			continue
		}
		judged = append(judged, q)
	}
	if opts.Terminal {
		fmt.Fprintf(progress, "\r%-16s indexing %d documents…", name, len(lessons))
	}
	var search Searcher
	if opts.Build != nil {
		search, err = opts.Build(ctx, name, lessons, replay)
	} else {
		search, err = newLabSearcher(emb, lessons, arms, opts)
	}
	if err != nil {
		return EvalFolder{}, nil, none, fmt.Errorf("eval %s: %w", name, err)
	}
	defer search.Close()
	var sum metricSum
	cats := map[string]*metricSum{}
	bar := progressBar{w: progress, name: name, total: len(judged), on: opts.Terminal}
	for i, q := range judged {
		ids, err := search.Search(ctx, q.Text, evalDepth)
		if err != nil {
			return EvalFolder{}, nil, none, fmt.Errorf("eval %s query %s: %w", name, q.ID, err)
		}
		m := scoreQuery(ids, qrels[q.ID])
		sum.add(m)
		if q.Category != "" {
			if cats[q.Category] == nil {
				cats[q.Category] = &metricSum{}
			}
			cats[q.Category].add(m)
		}
		bar.update(i + 1)
	}
	bar.done()
	f := EvalFolder{Name: name, EvalMetrics: sum.metrics(), Lessons: len(lessons), Categories: categoryList(cats)}
	if !opts.Terminal {
		fmt.Fprintf(progress, "%s: %d queries, nDCG@10 %.4f\n", name, f.Queries, f.NDCG10)
	}
	return f, cats, sum, nil
}

func newLabSearcher(emb Embedder, lessons []domain.Lesson, arms ArmWeights, opts EvalOptions) (Searcher, error) {
	ix, err := NewMemory(emb, Options{})
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(lessons); err != nil {
		_ = ix.Close()
		return nil, err
	}
	return labSearcher{ix: ix, opts: opts, arms: arms}, nil
}

// metricSum accumulates per-query figures for a micro-average.
type metricSum struct {
	n                        int
	ndcg, rec10, rec100, mrr float64
}

func (s *metricSum) add(o metricSum) {
	s.n += o.n
	s.ndcg += o.ndcg
	s.rec10 += o.rec10
	s.rec100 += o.rec100
	s.mrr += o.mrr
}

func (s metricSum) metrics() EvalMetrics {
	if s.n == 0 {
		return EvalMetrics{}
	}
	n := float64(s.n)
	r := func(x float64) float64 { return math.Round(x/n*1e4) / 1e4 }
	return EvalMetrics{Queries: s.n, NDCG10: r(s.ndcg), Recall10: r(s.rec10), Recall100: r(s.rec100), MRR10: r(s.mrr)}
}

func categoryList(m map[string]*metricSum) []EvalCategory {
	var out []EvalCategory
	for c, s := range m {
		out = append(out, EvalCategory{Category: c, EvalMetrics: s.metrics()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return out
}

// scoreQuery computes one query's figures from its ranked ids and graded
// judgments (gain = grade, positive grades relevant; nDCG's ideal ranking
// sorts all judged grades).
func scoreQuery(ranked []string, rel map[string]int) metricSum {
	m := metricSum{n: 1}
	relevant := 0
	var grades []int
	for _, g := range rel {
		if g > 0 {
			relevant++
			grades = append(grades, g)
		}
	}
	if relevant == 0 {
		return m
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var dcg, idcg float64
	for i := 0; i < 10 && i < len(grades); i++ {
		idcg += float64(grades[i]) / math.Log2(float64(i+2))
	}
	found10, found100 := 0, 0
	for i, id := range ranked {
		if i >= 100 {
			break
		}
		g := rel[id]
		if g <= 0 {
			continue
		}
		found100++
		if i < 10 {
			found10++
			dcg += float64(g) / math.Log2(float64(i+2))
			if m.mrr == 0 {
				m.mrr = 1 / float64(i+1)
			}
		}
	}
	m.ndcg = dcg / idcg
	m.rec10 = float64(found10) / float64(relevant)
	m.rec100 = float64(found100) / float64(relevant)
	return m
}

type evalQuery struct {
	ID, Text, Category string
}

// readCorpus reads corpus.jsonl into lessons.
func readCorpus(path string) ([]domain.Lesson, error) {
	var out []domain.Lesson
	seen := map[string]bool{}
	err := readJSONL(path, func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		if d.ID == "" || seen[d.ID] {
			return nil
		}
		seen[d.ID] = true
		gist, body := splitGist(d.Title, d.Text)
		out = append(out, domain.Lesson{ID: d.ID, Title: d.Title, Type: domain.TypeSemantic,
			Gist: gist, Body: body})
		return nil
	})
	return out, err
}

// splitGist takes a document's first sentence as its gist and the rest as
// its body, the way a lesson's <mark> claim precedes its article; a text
// without words leaves the title as the gist.
func splitGist(title, text string) (gist, body string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return title, ""
	}
	for i, r := range text {
		if i > 0 && (r == '.' || r == '?' || r == '!' || r == '\n') {
			end := i + 1
			if end == len(text) {
				return text, ""
			}
			if c := text[end]; c == ' ' || c == '\n' || c == '\t' {
				return strings.TrimSpace(text[:end]), strings.TrimSpace(text[end:])
			}
		}
	}
	return text, ""
}

// readQueries reads queries.jsonl; metadata.category, when present, is kept
// as a string.
func readQueries(path string) ([]evalQuery, error) {
	var out []evalQuery
	err := readJSONL(path, func(line []byte) error {
		var q struct {
			ID       string         `json:"_id"`
			Text     string         `json:"text"`
			Metadata map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		cat := ""
		switch c := q.Metadata["category"].(type) {
		case float64:
			cat = strconv.FormatFloat(c, 'f', -1, 64)
		case string:
			cat = c
		}
		out = append(out, evalQuery{ID: q.ID, Text: q.Text, Category: cat})
		return nil
	})
	return out, err
}

// readQrels reads a BEIR qrels TSV (header line, then query, doc, grade).
func readQrels(path string) (map[string]map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read qrels: %w", err)
	}
	defer f.Close()
	out := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(strings.TrimRight(sc.Text(), "\r"), "\t")
		if len(fields) < 3 {
			continue
		}
		g, err := strconv.Atoi(strings.TrimSpace(fields[2]))
		if err != nil {
			if line == 1 {
				continue // the header
			}
			return nil, fmt.Errorf("read qrels %s line %d: bad grade %q", path, line, fields[2])
		}
		q, d := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		if out[q] == nil {
			out[q] = map[string]int{}
		}
		out[q][d] = g
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read qrels %s: %w", path, err)
	}
	return out, nil
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("read %s line %d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// progressBar draws "name [=====     ] i/n" on a terminal, redrawing at
// most about a hundred times.
type progressBar struct {
	w         io.Writer
	name      string
	total     int
	on        bool
	lastDrawn int
}

func (p *progressBar) update(i int) {
	if !p.on || p.total == 0 {
		return
	}
	if i != p.total && (i-p.lastDrawn)*100 < p.total {
		return
	}
	p.lastDrawn = i
	const width = 30
	fill := width * i / p.total
	fmt.Fprintf(p.w, "\r%-16s [%s%s] %d/%d", p.name, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), i, p.total)
}

func (p *progressBar) done() {
	if p.on {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 16+34+24))
	}
}
