package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/length"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/borg-memory/borg/domain"
)

// This file is the only importer of bleve. Everything else sees lexDoc,
// scored and the lexical type.

// lexicalVersion names the mapping, analyzer and field layout. Any change to
// them must change it: an on-disk index of another version is rebuilt.
const lexicalVersion = "borg-lexical-3"

// BM25 parameters. bleve keeps them in package variables; borg is their only
// user in the process. k1 0.9 and b 0.4 are the Anserini defaults, measured
// better than Elasticsearch's 1.2/0.75 on the shared sets (BENCHMARKS.md).
const (
	bm25K1 = 0.9
	bm25B  = 0.4
)

func init() {
	search.BM25_k1 = bm25K1
	search.BM25_b = bm25B
}

// Field boosts of the lexical query, measured on the shared sets.
const (
	boostTitle = 1.0
	boostGist  = 1.0
	boostBody  = 1.0
	boostTags  = 1.0
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

	analyzerName = "borg_en"
	lengthFilter = "borg_max_rune_99"
)

// lexDoc is what the lexical arm indexes for one lesson.
type lexDoc struct {
	ID, Type, Reach   string
	Tags              []string
	Title, Gist, Body string
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
		"tokenizer": unicode.Name,
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
	text(fieldBody)
	text(fieldTagTx)
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
	idx, err := bleve.NewMemOnly(im)
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
				fieldBody:  d.Body,
				fieldTagTx: strings.Join(d.Tags, " "),
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

// search runs text as a BM25 disjunction over title, gist, body and tags and
// returns the n best lessons, best first. With scoped set, lessons of a repo
// reach other than "repo:"+repo are excluded inside the query (they cost no
// slot of the n).
func (l *lexical) search(ctx context.Context, text string, n int, scoped bool, repo string) ([]scored, error) {
	if n <= 0 || strings.TrimSpace(text) == "" {
		return nil, nil
	}
	field := func(name string, boost float64) query.Query {
		q := bleve.NewMatchQuery(text)
		q.SetField(name)
		q.Analyzer = analyzerName
		q.SetBoost(boost)
		return q
	}
	q := bleve.NewDisjunctionQuery(
		field(fieldTitle, boostTitle),
		field(fieldGist, boostGist),
		field(fieldBody, boostBody),
		field(fieldTagTx, boostTags),
	)
	var top query.Query = q
	if scoped {
		other := bleve.NewBooleanQuery()
		prefix := bleve.NewPrefixQuery(domain.ReachRepoPrefix)
		prefix.SetField(fieldReach)
		other.AddMust(prefix)
		if repo != "" {
			own := bleve.NewTermQuery(domain.ReachRepoPrefix + repo)
			own.SetField(fieldReach)
			other.AddMustNot(own)
		}
		b := bleve.NewBooleanQuery()
		b.AddMust(q)
		b.AddMustNot(other)
		top = b
	}
	req := bleve.NewSearchRequestOptions(top, n, 0, false)
	res, err := l.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	out := make([]scored, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, scored{id: h.ID, score: h.Score})
	}
	return out, nil
}

// count is the number of indexed documents.
func (l *lexical) count() (uint64, error) {
	n, err := l.idx.DocCount()
	if err != nil {
		return 0, fmt.Errorf("count lexical documents: %w", err)
	}
	return n, nil
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
