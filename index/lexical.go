package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/length"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	bleveunicode "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// This file is the only importer of bleve. Everything else sees lexDoc,
// scored and the lexical type.

// lexicalVersion names the mapping, analyzer and field layout. Any change to
// them must change it: an on-disk index of another version is rebuilt.
const lexicalVersion = "borg-lexical-5"

// BM25 parameters of the lexical arm's scorer. k1 0.9 and b 0.4 are the
// Anserini defaults, measured better than Elasticsearch's 1.2/0.75 on the
// shared sets (BENCHMARKS.md). The mapping still selects bleve's own "bm25"
// model, which only matters to bleve's searcher; this package scores the
// postings itself (see search).
var (
	bm25K1 = 0.9
	bm25B  = 0.4
)

// Field weights of the lexical score, measured on the shared sets: BM25 over
// all the text as one field, plus bonuses for matches in the title, gist and
// tags.
var (
	boostAll   = 1.0
	boostTitle = 0.3
	boostGist  = 0.1
	boostTags  = 0.3
)

// Lexical field names.
const (
	fieldID    = "id"
	fieldType  = "type"
	fieldReach = "reach"
	fieldTags  = "tags"
	fieldTitle = "title"
	fieldGist  = "gist"
	fieldBody  = "body"
	fieldTagTx = "tagtext"
	fieldAll   = "all"

	analyzerName = "borg_en"
	lengthFilter = "borg_max_rune_99"
)

// lexDoc is what the lexical arm indexes for one lesson.
type lexDoc struct {
	ID, Type, Reach   string
	Tags              []string
	Title, Gist, Body string
}

// all is the lesson's whole text, the field BM25 mainly scores.
func (d lexDoc) all() string {
	return strings.Join([]string{d.Title, d.Gist, d.Body, strings.Join(d.Tags, " ")}, "\n")
}

// lexical wraps one bleve index, on disk or in memory.
type lexical struct {
	idx  bleve.Index
	path string // "" when in memory
}

// newLexicalMapping is the explicit static mapping: English text fields
// (possessives, lower case, stop words, Porter stemming, tokens of 100 runes
// or more dropped) and keyword fields, BM25 scoring, nothing dynamic.
func newLexicalMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	if err := im.AddCustomTokenFilter(lengthFilter, map[string]interface{}{
		"type": length.Name, "max": float64(maxWordRunes),
	}); err != nil {
		return nil, fmt.Errorf("lexical mapping: %w", err)
	}
	if err := im.AddCustomAnalyzer(analyzerName, map[string]interface{}{
		"type":      custom.Name,
		"tokenizer": bleveunicode.Name,
		"token_filters": []interface{}{
			lengthFilter, en.PossessiveName, lowercase.Name, en.StopName, porter.Name,
		},
	}); err != nil {
		return nil, fmt.Errorf("lexical mapping: %w", err)
	}
	doc := bleve.NewDocumentStaticMapping()
	keyword := func(name string) {
		f := bleve.NewKeywordFieldMapping()
		f.Store = false
		f.IncludeInAll = false
		f.DocValues = false
		doc.AddFieldMappingsAt(name, f)
	}
	text := func(name string) {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzerName
		f.Store = false
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		doc.AddFieldMappingsAt(name, f)
	}
	keyword(fieldID)
	keyword(fieldType)
	keyword(fieldReach)
	keyword(fieldTags)
	text(fieldTitle)
	text(fieldGist)
	text(fieldTagTx)
	text(fieldAll)
	im.DefaultMapping = doc
	im.DefaultAnalyzer = analyzerName
	return im, nil
}

// newMemLexical builds an empty in-memory lexical index.
func newMemLexical() (*lexical, error) {
	im, err := newLexicalMapping()
	if err != nil {
		return nil, err
	}
	// scorch without a path keeps its segments in memory: the same engine,
	// internal ids and scoring as on disk (NewMemOnly would be upsidedown).
	idx, err := bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("create memory lexical index: %w", err)
	}
	return &lexical{idx: idx}, nil
}

// errLexicalBusy reports that another process holds the on-disk index.
var errLexicalBusy = errors.New("lexical index is held by another process")

// openLexical opens (or creates) the on-disk index under dir, waiting at
// most wait for another process's lock. rebuilt is true when the index was
// created fresh (missing, or of another version): its documents are gone and
// the caller must re-add every lesson. A held lock returns errLexicalBusy.
func openLexical(dir string, wait time.Duration) (l *lexical, rebuilt bool, err error) {
	path := filepath.Join(dir, "lexical.bleve")
	verPath := filepath.Join(dir, "lexical.version")
	cfg := map[string]interface{}{"bolt_timeout": wait.String()}
	ver, verr := os.ReadFile(verPath)
	if verr == nil && strings.TrimSpace(string(ver)) == lexicalVersion {
		idx, err := bleve.OpenUsing(path, cfg)
		if err == nil {
			return &lexical{idx: idx, path: path}, false, nil
		}
		if isLockTimeout(err) {
			return nil, false, fmt.Errorf("open lexical index: %w", errLexicalBusy)
		}
		// Corrupt or half-written: fall through and rebuild it.
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("create lexical index: %w", err)
	}
	// Another process may be using the old index: only replace it once we
	// know nobody holds it.
	if _, statErr := os.Stat(path); statErr == nil {
		if old, err := bleve.OpenUsing(path, cfg); err != nil && isLockTimeout(err) {
			return nil, false, fmt.Errorf("rebuild lexical index: %w", errLexicalBusy)
		} else if err == nil {
			_ = old.Close()
		}
		if err := os.RemoveAll(path); err != nil {
			return nil, false, fmt.Errorf("remove old lexical index: %w", err)
		}
	}
	_ = os.Remove(verPath)
	im, err := newLexicalMapping()
	if err != nil {
		return nil, false, err
	}
	idx, err := bleve.NewUsing(path, im, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		if isLockTimeout(err) {
			return nil, false, fmt.Errorf("create lexical index: %w", errLexicalBusy)
		}
		return nil, false, fmt.Errorf("create lexical index: %w", err)
	}
	if err := os.WriteFile(verPath, []byte(lexicalVersion+"\n"), 0o644); err != nil {
		_ = idx.Close()
		return nil, false, fmt.Errorf("write lexical version: %w", err)
	}
	return &lexical{idx: idx, path: path}, true, nil
}

// isLockTimeout recognises bolt's lock timeout, the only error that means
// "someone else holds it" rather than "it is broken".
func isLockTimeout(err error) bool {
	return err != nil && strings.Contains(err.Error(), "timeout")
}

// put indexes docs (replacing earlier versions of the same ids) and deletes
// the ids in remove, in one batch.
func (l *lexical) put(docs []lexDoc, remove []string) error {
	const chunk = 2000
	for start := 0; start < len(docs) || (start == 0 && len(remove) > 0); start += chunk {
		b := l.idx.NewBatch()
		if start == 0 {
			for _, id := range remove {
				b.Delete(id)
			}
		}
		for _, d := range docs[start:min(start+chunk, len(docs))] {
			m := map[string]interface{}{
				fieldID:    d.ID,
				fieldType:  d.Type,
				fieldReach: d.Reach,
				fieldTags:  d.Tags,
				fieldTitle: d.Title,
				fieldGist:  d.Gist,
				fieldTagTx: strings.Join(d.Tags, " "),
				fieldAll:   d.all(),
			}
			if err := b.Index(d.ID, m); err != nil {
				return fmt.Errorf("index lesson %s: %w", d.ID, err)
			}
		}
		if err := l.idx.Batch(b); err != nil {
			return fmt.Errorf("write lexical batch: %w", err)
		}
		if len(docs) == 0 {
			break
		}
	}
	return nil
}

// fieldWeight pairs a text field with its weight in the BM25 sum.
type fieldWeight struct {
	field  string
	weight float64
}

// lexFields are the scored text fields, in catalog order (lessonInfo.lens).
var lexFields = []fieldWeight{
	{fieldAll, boostAll},
	{fieldTitle, boostTitle},
	{fieldGist, boostGist},
	{fieldTagTx, boostTags},
}

// analyze runs text through the text fields' analyzer and returns its terms
// (possessives stripped, lower-cased, stop words dropped, stemmed).
func (l *lexical) analyze(text string) []string {
	a := l.idx.Mapping().AnalyzerNamed(analyzerName)
	if a == nil {
		return nil
	}
	toks := a.Analyze([]byte(text))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// search scores every lesson holding a query term by BM25 (k1 bm25K1, b
// bm25B, Robertson–Spärck Jones IDF), summed over the text fields with their
// weights, and returns the n best that keep accepts, best first (ties by
// id). avgLen gives each field's mean length in terms.
//
// The scoring is computed here over bleve's postings (term frequencies and
// field-length norms) rather than by bleve's own "bm25" model, which takes
// the square root of term frequencies, squares the IDF through its query
// norm and multiplies in a coordination factor; on the shared sets that
// variant measured 0.59 nDCG@10 on SciFact where textbook BM25 gives 0.66.
func (l *lexical) search(ctx context.Context, text string, n int, avgLen []float64, keep func(string) bool) ([]scored, error) {
	if n <= 0 {
		return nil, nil
	}
	terms := l.analyze(text)
	if len(terms) == 0 {
		return nil, nil
	}
	qtf := map[string]int{}
	var order []string
	for _, t := range terms {
		if qtf[t] == 0 {
			order = append(order, t)
		}
		qtf[t]++
	}
	adv, err := l.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer r.Close()
	docs, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	N := float64(docs)
	acc := newAccumulator()
	acc.reserve(int(docs + docs/4))
	var tfd bleveindex.TermFieldDoc
	for fi, fw := range lexFields {
		if fw.weight <= 0 || fi >= len(avgLen) || avgLen[fi] <= 0 {
			continue
		}
		avg := avgLen[fi]
		for _, t := range order {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lexical search: %w", err)
			}
			tfr, err := r.TermFieldReader(ctx, []byte(t), fw.field, true, true, false)
			if err != nil {
				return nil, fmt.Errorf("lexical search: %w", err)
			}
			df := float64(tfr.Count())
			if df == 0 {
				_ = tfr.Close()
				continue
			}
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			w := fw.weight * idf * float64(qtf[t])
			for {
				tfd.ID = tfd.ID[:0] // some readers append to a reused id
				d, err := tfr.Next(&tfd)
				if err != nil {
					_ = tfr.Close()
					return nil, fmt.Errorf("lexical search: %w", err)
				}
				if d == nil {
					break
				}
				tf := float64(d.Freq)
				dl := avg
				if d.Norm > 0 {
					dl = 1 / (d.Norm * d.Norm)
				}
				acc.add(d.ID, w*tf*(bm25K1+1)/(tf+bm25K1*(1-bm25B+bm25B*dl/avg)))
			}
			_ = tfr.Close()
		}
	}
	// Take twice what is wanted; only when the filter rejects too many,
	// fall back to ranking every scored document.
	var out []scored
	for _, want := range []int{2*n + 16, -1} {
		out = out[:0]
		cands := acc.best(want)
		for _, c := range cands {
			id, err := r.ExternalID(c.key)
			if err != nil {
				return nil, fmt.Errorf("lexical search: %w", err)
			}
			if keep != nil && !keep(id) {
				continue
			}
			out = append(out, scored{id: id, score: c.score})
			if len(out) == n {
				break
			}
		}
		if len(out) == n || len(cands) < want || want < 0 {
			break
		}
	}
	// Equal scores: order by id so the arm is reproducible.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out, nil
}

// accumulator sums scores per internal document id: a dense slice by
// scorch's 8-byte document number, a map for any other id shape.
type accumulator struct {
	sums    []float64
	seen    []bool
	touched []uint64
	other   map[string]float64
}

func newAccumulator() *accumulator { return &accumulator{other: map[string]float64{}} }

const maxDenseDoc = 1 << 26

// reserve sizes the dense table for document numbers below n.
func (a *accumulator) reserve(n int) {
	n = min(n, maxDenseDoc)
	if n > len(a.sums) {
		a.sums = make([]float64, n)
		a.seen = make([]bool, n)
	}
}

func (a *accumulator) add(id bleveindex.IndexInternalID, s float64) {
	if len(id) == 8 {
		if k := binary.BigEndian.Uint64(id); k < maxDenseDoc {
			if int(k) >= len(a.sums) {
				n := max(int(k)+1, 2*len(a.sums), 1024)
				a.sums = append(a.sums, make([]float64, n-len(a.sums))...)
				a.seen = append(a.seen, make([]bool, n-len(a.seen))...)
			}
			if !a.seen[k] {
				a.seen[k] = true
				a.touched = append(a.touched, k)
			}
			a.sums[k] += s
			return
		}
	}
	a.other[string(id)] += s
}

type accEntry struct {
	key   bleveindex.IndexInternalID
	score float64
}

// best returns the n best entries, best first (ties by internal id, which
// the caller re-breaks by external id), with n < 0 meaning all of them.
func (a *accumulator) best(n int) []accEntry {
	all := make([]keyScore, 0, len(a.touched)+len(a.other))
	for _, k := range a.touched {
		all = append(all, keyScore{score: a.sums[k], dense: k, isDense: true})
	}
	for k, s := range a.other {
		all = append(all, keyScore{key: k, score: s})
	}
	if n < 0 || n > len(all) {
		n = len(all)
	}
	top := selectTop(all, n)
	out := make([]accEntry, len(top))
	for i, e := range top {
		key := bleveindex.IndexInternalID(e.key)
		if e.isDense {
			key = binary.BigEndian.AppendUint64(nil, e.dense)
		}
		out[i] = accEntry{key: key, score: e.score}
	}
	return out
}

type keyScore struct {
	key     string
	score   float64
	dense   uint64
	isDense bool
}

func (a keyScore) better(b keyScore) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.isDense && b.isDense {
		return a.dense < b.dense
	}
	return a.key < b.key
}

// selectTop returns the n best of all, best first, in O(len·log n) without
// allocating per element (a hand-rolled min-heap on the worst kept).
func selectTop(all []keyScore, n int) []keyScore {
	if n <= 0 {
		return nil
	}
	h := make([]keyScore, 0, n)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && h[m].better(h[l]) {
				m = l
			}
			if r := l + 1; r < len(h) && h[m].better(h[r]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, e := range all {
		if len(h) < n {
			h = append(h, e)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !h[p].better(h[i]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if e.better(h[0]) {
			h[0] = e
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return h[i].better(h[j]) })
	return h
}

// fieldLens is the length in terms of each of d's lexFields. Title, gist
// and tags are analysed exactly; the body, the bulk of the text, is counted
// by a fast approximation of the analyser (words of at most 99 runes that
// are not stop words), because only the field's mean length depends on it:
// each document's own length comes from bleve's norm at query time.
func (l *lexical) fieldLens(d lexDoc) []uint32 {
	title := len(l.analyze(d.Title))
	gist := len(l.analyze(d.Gist))
	tags := len(l.analyze(strings.Join(d.Tags, " ")))
	body := approxTerms(d.Body)
	return []uint32{clampU32(title + gist + body + tags), clampU32(title), clampU32(gist), clampU32(tags)}
}

var (
	stopOnce sync.Once
	stopSet  map[string]bool
)

// approxTerms counts the words of text the analyser would keep.
func approxTerms(text string) int {
	stopOnce.Do(func() {
		stopSet = map[string]bool{}
		for _, line := range strings.Split(string(en.EnglishStopWords), "\n") {
			if k := strings.IndexByte(line, '|'); k >= 0 {
				line = line[:k]
			}
			for _, w := range strings.Fields(line) {
				stopSet[w] = true
			}
		}
	})
	n := 0
	var word []byte
	flush := func() {
		if len(word) > 0 && utf8.RuneCount(word) <= maxWordRunes && !stopSet[string(word)] {
			n++
		}
		word = word[:0]
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = utf8.AppendRune(word, unicode.ToLower(r))
			continue
		}
		flush()
	}
	flush()
	return n
}

func (l *lexical) close() error {
	if l == nil || l.idx == nil {
		return nil
	}
	if err := l.idx.Close(); err != nil {
		return fmt.Errorf("close lexical index: %w", err)
	}
	return nil
}
