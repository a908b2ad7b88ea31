package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

func lesson(id, title, gist, body string) domain.Lesson {
	return domain.Lesson{ID: id, Title: title, Type: domain.TypeProcedural, Confidence: 0.8, Gist: gist, Body: body}
}

// corpus is a small store about unrelated engineering topics.
func corpus() []domain.Lesson {
	return []domain.Lesson{
		lesson("migrate-before-tests", "Run migrations before the integration tests",
			"Run make migrate before go test ./integration/...", "The schema is not applied automatically; tests fail with missing tables."),
		lesson("flaky-network-retry", "Retry flaky network calls with backoff",
			"Wrap outbound HTTP calls in a retry with exponential backoff.", "Timeouts from the payment gateway are transient."),
		lesson("go-race-detector", "Always run the race detector in CI",
			"go test -race catches data races in the cache.", "A data race in the session cache corrupted memory twice."),
		lesson("python-venv", "Use a virtual environment for Python tools",
			"Create a venv before installing the linters.", "System Python packages conflict with the project's pins."),
		lesson("docker-layer-cache", "Order Dockerfile steps for the layer cache",
			"Copy go.mod and download modules before copying the sources.", "Builds drop from six minutes to forty seconds."),
		lesson("sql-index-on-fk", "Index foreign keys in Postgres",
			"Every foreign key column needs an index.", "Deletes on the parent table scanned the child table in full."),
	}
}

func newTestIndex(t *testing.T, lessons []domain.Lesson) *Index {
	t.Helper()
	ix, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(lessons); err != nil {
		t.Fatal(err)
	}
	return ix
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func indexOf(list []string, id string) int {
	for i, s := range list {
		if s == id {
			return i
		}
	}
	return -1
}

// lexSearch runs the lexical arm alone for the ten best.
func lexSearch(ix *Index, q string) ([]scored, error) {
	found, err := ix.cat.lexicalSearch(context.Background(), q, 10, nil)
	out := make([]scored, len(found))
	for i, f := range found {
		out[i] = scored{id: ix.cat.id(f.ord), score: f.score}
	}
	return out, err
}

func TestLexicalArm(t *testing.T) {
	ix := newTestIndex(t, corpus())
	cases := []struct {
		name, query, want string
	}{
		{"stemmed match", "migrating the database schema", "migrate-before-tests"},
		{"rare term wins", "postgres foreign key", "sql-index-on-fk"},
		{"title words", "race detector", "go-race-detector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := lexSearch(ix, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].id != tc.want {
				t.Fatalf("lexical(%q) = %v, want %s first", tc.query, hits, tc.want)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].score > hits[i-1].score {
					t.Fatalf("scores not descending: %v", hits)
				}
			}
		})
	}
	t.Run("no match", func(t *testing.T) {
		hits, err := lexSearch(ix, "kubernetes")
		if err != nil || len(hits) != 0 {
			t.Fatalf("got %v, %v; want no hits", hits, err)
		}
	})
	t.Run("tokens of 100 runes are dropped", func(t *testing.T) {
		long := strings.Repeat("x", 100)
		ix2 := newTestIndex(t, []domain.Lesson{lesson("long-token", "blob", "a blob", long), lesson("short-token", "blob", "a blob", strings.Repeat("y", 99))})
		if hits, _ := lexSearch(ix2, long); len(hits) != 0 {
			t.Fatalf("100-rune token indexed: %v", hits)
		}
		if hits, _ := lexSearch(ix2, strings.Repeat("y", 99)); len(hits) != 1 {
			t.Fatalf("99-rune token not indexed: %v", hits)
		}
	})
}

func TestNGramEmbedder(t *testing.T) {
	e := NewNGramEmbedder(NGramOptions{Dim: 256})
	texts := []string{"retry network calls with backoff", "retrying the network call with a backoff", "index foreign keys in postgres", ""}
	if err := e.Fit(texts); err != nil {
		t.Fatal(err)
	}
	v, err := e.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("unit length", func(t *testing.T) {
		for i, x := range v[:3] {
			if n := domain.Cosine(x, x); n < 0.999 {
				t.Fatalf("vector %d self-cosine %v", i, n)
			}
			if len(x) != 256 {
				t.Fatalf("dim %d", len(x))
			}
		}
	})
	t.Run("empty text is zero", func(t *testing.T) {
		for _, x := range v[3] {
			if x != 0 {
				t.Fatal("non-zero vector for empty text")
			}
		}
	})
	t.Run("morphology is near", func(t *testing.T) {
		near, far := domain.Cosine(v[0], v[1]), domain.Cosine(v[0], v[2])
		if !(near > far+0.2) {
			t.Fatalf("cos(near) %v, cos(far) %v", near, far)
		}
	})
	t.Run("deterministic and state round trip", func(t *testing.T) {
		e2 := NewNGramEmbedder(NGramOptions{Dim: 256})
		if err := e2.LoadState(e.State()); err != nil {
			t.Fatal(err)
		}
		v2, _ := e2.Embed(texts)
		if !reflect.DeepEqual(v, v2) {
			t.Fatal("restored embedder embeds differently")
		}
		if e2.FittedDocs() != 4 {
			t.Fatalf("fitted docs %d", e2.FittedDocs())
		}
	})
	t.Run("id names settings", func(t *testing.T) {
		a, b := NewNGramEmbedder(NGramOptions{}).ID(), NewNGramEmbedder(NGramOptions{NoIDF: true}).ID()
		if a == b || !strings.HasPrefix(a, "ngram-v1-d512") {
			t.Fatalf("ids %q %q", a, b)
		}
	})
}

func TestVectorArm(t *testing.T) {
	ix := newTestIndex(t, corpus())
	qv, _ := ix.emb.Embed([]string{"retrying flaky network requests"})
	hits := ix.vec.search(qv[0], 3, nil)
	if len(hits) != 3 || hits[0].id != "flaky-network-retry" {
		t.Fatalf("vector hits %v", hits)
	}
	t.Run("empty query finds nothing", func(t *testing.T) {
		qv, _ := ix.emb.Embed([]string{""})
		if hits := ix.vec.search(qv[0], 3, nil); len(hits) != 0 {
			t.Fatalf("hits for an empty query: %v", hits)
		}
		hits, err := ix.Search(context.Background(), Query{Text: "  "})
		if err != nil || len(hits) != 0 {
			t.Fatalf("Search(blank) = %v, %v", ids(hits), err)
		}
	})
	t.Run("allow filter", func(t *testing.T) {
		hits := ix.vec.search(qv[0], 10, func(id string) bool { return id != "flaky-network-retry" })
		if indexOf(idsOf(hits), "flaky-network-retry") >= 0 || len(hits) == 0 || len(hits) > 5 {
			t.Fatalf("filtered hits %v", hits)
		}
	})
	t.Run("a saved store's vectors read as the columns'", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), sidecarName)
		if err := ix.vec.base.save(path); err != nil {
			t.Fatal(err)
		}
		got, err := loadSidecar(path, ix.vec.base.embedderID, ix.vec.dim)
		if err != nil || got.rows == nil {
			t.Fatalf("load: %v (rows %v)", err, got.rows != nil)
		}
		defer got.close()
		for _, id := range ix.vec.base.ids {
			if !reflect.DeepEqual(got.vector(id), ix.vec.vector(id)) {
				t.Fatalf("%s reads differently from the file's rows", id)
			}
		}
	})
	t.Run("remove keeps rows aligned", func(t *testing.T) {
		s := newVectorStore("x", 2)
		s.put("a", "1", []float32{1, 0})
		s.put("b", "2", []float32{0, 1})
		s.put("c", "3", []float32{0.5, 0.75})
		s.remove("a")
		if got := s.vector("c"); !reflect.DeepEqual(got, []float32{0.5, 0.75}) {
			t.Fatalf("c = %v", got)
		}
		if h, _ := s.hash("c"); h != "3" || s.len() != 2 {
			t.Fatalf("hash %q len %d", h, s.len())
		}
	})
}

func idsOf(list []scored) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.id
	}
	return out
}

// fixedEmbedder is a deterministic embedder whose ID the test chooses.
type fixedEmbedder struct {
	id    string
	calls int
}

func (f *fixedEmbedder) ID() string { return f.id }
func (f *fixedEmbedder) Dim() int   { return 4 }
func (f *fixedEmbedder) Embed(texts []string) ([][]float32, error) {
	f.calls += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)%7) + 1, float32(strings.Count(t, "e")), 1, 0}
	}
	return out, nil
}

func TestSidecarEmbedderIDInvalidates(t *testing.T) {
	dir := t.TempDir()
	ls := corpus()
	open := func(id string) (*Index, *fixedEmbedder, SyncStats) {
		t.Helper()
		emb := &fixedEmbedder{id: id}
		ix, err := Open(dir, emb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := ix.Sync(ls)
		if err != nil {
			t.Fatal(err)
		}
		return ix, emb, st
	}
	ix, emb, st := open("model-a")
	if emb.calls != len(ls) || st.Embedded != len(ls) {
		t.Fatalf("first sync embedded %d (%d calls)", st.Embedded, emb.calls)
	}
	ix.Close()
	ix, emb, st = open("model-a")
	if emb.calls != 0 || st.Embedded != 0 || st.SidecarRebuilt {
		t.Fatalf("same embedder re-embedded %d (%+v)", emb.calls, st)
	}
	ix.Close()
	ix, emb, st = open("model-b")
	if emb.calls != len(ls) || !st.SidecarRebuilt {
		t.Fatalf("other embedder id: %d calls, stats %+v; want every lesson re-embedded", emb.calls, st)
	}
	ix.Close()
	raw, err := os.ReadFile(filepath.Join(dir, sidecarName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "model-b") || strings.Contains(string(raw), "model-a") {
		t.Fatal("sidecar mixes or keeps the old embedder")
	}
	damage := []struct {
		name string
		edit func([]byte) []byte
	}{
		{"flipped key byte", func(b []byte) []byte {
			c := append([]byte(nil), b...)
			c[strings.Index(string(c), "sql-index-on-fk")] ^= 0x20
			return c
		}},
		{"truncated", func(b []byte) []byte { return b[:len(b)-3] }},
		{"empty", func([]byte) []byte { return nil }},
	}
	for _, d := range damage {
		t.Run("damaged sidecar is rebuilt: "+d.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, sidecarName), d.edit(raw), 0o644); err != nil {
				t.Fatal(err)
			}
			ix, emb, st := open("model-b")
			defer ix.Close()
			if emb.calls != len(ls) || !st.SidecarRebuilt {
				t.Fatalf("damaged sidecar: %d calls, %+v", emb.calls, st)
			}
		})
	}
}

func TestSyncIncremental(t *testing.T) {
	dir := t.TempDir()
	ls := corpus()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.SyncStamp(ls, "tree-1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != len(ls) || !st.LexicalRebuilt || !st.Refit {
		t.Fatalf("first sync %+v", st)
	}
	steps := []struct {
		name   string
		edit   func([]domain.Lesson) []domain.Lesson
		want   SyncStats
		absent string
	}{
		{"unchanged", func(l []domain.Lesson) []domain.Lesson { return l }, SyncStats{}, ""},
		{"one edited", func(l []domain.Lesson) []domain.Lesson {
			l[1].Body = "Timeouts from the payment gateway resolve within seconds."
			return l
		}, SyncStats{Indexed: 1, Embedded: 1}, ""},
		{"one deleted", func(l []domain.Lesson) []domain.Lesson { return l[1:] }, SyncStats{Removed: 1}, "migrate-before-tests"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			ls = step.edit(ls)
			st, err := ix.Sync(ls)
			if err != nil {
				t.Fatal(err)
			}
			if st.Indexed != step.want.Indexed || st.Embedded != step.want.Embedded || st.Removed != step.want.Removed {
				t.Fatalf("stats %+v, want %+v", st, step.want)
			}
			if step.absent != "" {
				hits, _ := ix.Search(context.Background(), Query{Text: "migrations integration tests schema"})
				if indexOf(ids(hits), step.absent) >= 0 {
					t.Fatalf("deleted lesson still found: %v", ids(hits))
				}
			}
		})
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("reopened index searches without a sync", func(t *testing.T) {
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if ix.Len() != len(ls) || ix.Stamp() != "" {
			t.Fatalf("len %d stamp %q", ix.Len(), ix.Stamp())
		}
		hits, err := ix.Search(context.Background(), Query{Text: "postgres foreign key index", Explain: true})
		if err != nil || len(hits) == 0 || hits[0].ID != "sql-index-on-fk" {
			t.Fatalf("hits %v err %v", ids(hits), err)
		}
		if hits[0].Ranks.Lexical != 1 || hits[0].Title == "" {
			t.Fatalf("hit %+v", hits[0])
		}
		st, err := ix.Sync(ls)
		if err != nil || st.Indexed != 0 || st.Embedded != 0 {
			t.Fatalf("resync after reopen %+v %v", st, err)
		}
	})
	t.Run("version change rebuilds", func(t *testing.T) {
		path := filepath.Join(dir, catalogName)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Another lexical version of the same length, checksum recomputed:
		// only the version differs.
		old := append([]byte(nil), raw...)
		copy(old[bytes.Index(old, []byte(lexicalVersion)):], "borg-lexical-0")
		table := len(catalogMagic) + 16 + 16*numSections
		metaOff := binary.LittleEndian.Uint64(old[len(catalogMagic)+16:])
		metaLen := binary.LittleEndian.Uint64(old[len(catalogMagic)+24:])
		sum := crc32.NewIEEE()
		sum.Write(old[:table])
		sum.Write(old[metaOff : metaOff+metaLen])
		binary.LittleEndian.PutUint32(old[table:], sum.Sum32())
		if _, err := parseCatalog(old); err == nil || !strings.Contains(err.Error(), "version") {
			t.Fatalf("patched catalog: %v", err)
		}
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		st, err := ix.Sync(ls)
		if err != nil || !st.LexicalRebuilt || st.Indexed != len(ls) {
			t.Fatalf("rebuild %+v %v", st, err)
		}
	})
}

func TestFusion(t *testing.T) {
	ls := corpus()
	ls = append(ls,
		domain.Lesson{ID: "repo-only-migrate", Title: "Run migrations with the billing tool", Type: domain.TypeProcedural,
			Reach: "repo:billing", Gist: "In billing, migrations run through ./tool migrate.", Body: "The Makefile target is missing there."},
		domain.Lesson{ID: "migrate-v2", Title: "Run migrations before the integration tests (v2)", Type: domain.TypeProcedural,
			Gist: "Run make migrate-all before go test ./integration/...", Body: "The schema is not applied automatically.",
			Links: []domain.LessonLink{{Rel: domain.RelSupersedes, Target: "migrate-before-tests"}}},
		domain.Lesson{ID: "schema-fixtures", Title: "Load the fixtures after the schema", Type: domain.TypeProcedural,
			Gist: "Fixtures go in after the tables exist.", Body: "Order matters for the seed data.",
			Links: []domain.LessonLink{{Rel: domain.RelSupports, Target: "migrate-before-tests"}}},
	)
	ix := newTestIndex(t, ls)
	q := "run migrations before integration tests"
	search := func(t *testing.T, q Query) []Hit {
		t.Helper()
		hits, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	t.Run("reach", func(t *testing.T) {
		if got := ids(search(t, Query{Text: q, Repo: "web"})); indexOf(got, "repo-only-migrate") >= 0 {
			t.Fatalf("repo lesson recalled in another repo: %v", got)
		}
		if got := ids(search(t, Query{Text: q, Repo: "billing"})); indexOf(got, "repo-only-migrate") < 0 {
			t.Fatalf("repo lesson missing in its repo: %v", got)
		}
	})
	t.Run("a declared supersedes that rewrites no slot does not reorder", func(t *testing.T) {
		// migrate-v2 claims to supersede migrate-before-tests, but the two
		// do not state one slot: the claim is a plain link, not a demotion.
		for _, h := range search(t, Query{Text: "make migrate go test integration schema"}) {
			if len(h.SupersededBy) > 0 {
				t.Fatalf("%s superseded by %v on an unearned link", h.ID, h.SupersededBy)
			}
		}
	})
	t.Run("a dormant lesson stays a candidate", func(t *testing.T) {
		useful := map[string]Usefulness{"docker-layer-cache": {Mean: 0.5, Draw: 0.5, Dormant: true}}
		plain := ids(search(t, Query{Text: "Dockerfile layer cache builds", K: 20}))
		got := search(t, Query{Text: "Dockerfile layer cache builds", Useful: useful, K: 20})
		if !reflect.DeepEqual(ids(got), plain) {
			t.Fatalf("dormancy alone reordered the hits: %v, want %v", ids(got), plain)
		}
		for _, h := range got {
			if h.ID == "docker-layer-cache" && !h.Dormant {
				t.Fatalf("hit does not say it is dormant: %+v", h)
			}
		}
	})
	t.Run("a lesson without results ranks as its text matches", func(t *testing.T) {
		q := "tests fail when the race detector or the python tools are missing"
		base := ids(search(t, Query{Text: q, MMRLambda: 1, Bar: -1}))
		useful := map[string]Usefulness{}
		for i, id := range base {
			// Created long ago or just now, any draw: no results, no say.
			useful[id] = Usefulness{Uses: 1 + i, Mean: 0.5, Draw: float64(i%3) / 2, Dormant: i%2 == 0}
		}
		got := ids(search(t, Query{Text: q, MMRLambda: 1, Bar: -1, Useful: useful}))
		if !reflect.DeepEqual(got, base) {
			t.Fatalf("order moved without evidence: %v, want %v", got, base)
		}
	})
	t.Run("usefulness bar and session order", func(t *testing.T) {
		q := "tests fail when the race detector or the python tools are missing"
		base := search(t, Query{Text: q, MMRLambda: 1, Bar: -1})
		if len(base) < 2 {
			t.Fatalf("hits %v", ids(base))
		}
		first, second := base[0].ID, base[1].ID
		// A harmful first hit with enough results loses its place.
		harmful := Usefulness{Results: 30, Mean: 0.03, Draw: 0.03}
		hits := search(t, Query{Text: q, MMRLambda: 1, Useful: map[string]Usefulness{first: harmful}})
		if hits[0].ID == first {
			t.Fatalf("harmful lesson still first: %v", ids(hits))
		}
		for _, h := range hits {
			if h.ID == first && !(h.MeanWeight < 0.6) {
				t.Fatalf("harmful lesson's weight %v, want near the temper's 0.5: %+v", h.MeanWeight, h)
			}
		}
		// One result moves a lesson a third as far as thirty.
		once := search(t, Query{Text: q, MMRLambda: 1, Useful: map[string]Usefulness{first: {Results: 1, Mean: 0.03, Draw: 0.03}}})
		for _, h := range once {
			if h.ID == first && math.Abs(h.MeanWeight-(1-0.47/3)) > 1e-9 {
				t.Fatalf("weight after one result %v, want %v", h.MeanWeight, 1-0.47/3)
			}
		}
		// Over the bar, the session's draw orders the slots.
		draw := map[string]Usefulness{second: {Results: 6, Mean: 0.5, Draw: 0.95}, first: {Results: 6, Mean: 0.5, Draw: 0.1}}
		hits = search(t, Query{Text: q, MMRLambda: 1, Bar: 0.01, Useful: draw})
		if hits[0].ID != second {
			t.Fatalf("session draw ignored: %v (base %v)", ids(hits), ids(base))
		}
		only := search(t, Query{Text: q, OnlyOverBar: true, Bar: 0.99})
		for _, h := range only {
			if !h.OverBar {
				t.Fatalf("under-bar hit with OnlyOverBar: %+v", h)
			}
		}
	})
	t.Run("salience arm", func(t *testing.T) {
		useful := map[string]Usefulness{"schema-fixtures": {Uses: 9, Results: 8, Mean: 0.9, Draw: 0.9}}
		hits := search(t, Query{Text: q, Useful: useful, Explain: true, K: 20, Arms: ArmWeights{Lexical: 1, Vector: 0.1, Salience: 0.5}})
		for _, h := range hits {
			if h.ID == "schema-fixtures" && h.Ranks.Salience != 1 {
				t.Fatalf("salience rank %+v", h)
			}
			if h.ID != "schema-fixtures" && h.Ranks.Salience != 0 {
				t.Fatalf("unused lesson ranked by salience: %+v", h)
			}
		}
	})
	t.Run("lateral arm follows links", func(t *testing.T) {
		hits := search(t, Query{Text: "make migrate integration", Explain: true, K: 20,
			Arms: ArmWeights{Lexical: 1, Lateral: 1}})
		for _, h := range hits {
			if h.ID == "schema-fixtures" {
				if h.Ranks.Lateral == 0 {
					t.Fatalf("linked lesson without a lateral rank: %+v", h)
				}
				return
			}
		}
		t.Fatalf("linked lesson not reached: %v", ids(hits))
	})
	t.Run("explain fills ranks", func(t *testing.T) {
		hits := search(t, Query{Text: q, Explain: true})
		if hits[0].Ranks == (ArmRanks{}) {
			t.Fatalf("no ranks: %+v", hits[0])
		}
		raw, err := json.Marshal(hits[0])
		if err != nil || !strings.Contains(string(raw), `"ranks":{`) {
			t.Fatalf("json %s %v", raw, err)
		}
	})
}

func TestParseArms(t *testing.T) {
	cases := []struct {
		in      string
		want    ArmWeights
		wantErr bool
	}{
		{"", DefaultArmWeights(), false},
		{"all", DefaultArmWeights(), false},
		{"lexical", ArmWeights{Lexical: 1}, false},
		{"lexical,vector", ArmWeights{Lexical: 1, Vector: DefaultArmWeights().Vector}, false},
		{"lexical=2, lateral=0.25", ArmWeights{Lexical: 2, Lateral: 0.25}, false},
		{"lexical,salience", ArmWeights{Lexical: 1, Salience: NamedSalience}, false}, // named: on, though off by default
		{"salience", ArmWeights{Salience: NamedSalience}, false},
		{"bm25", ArmWeights{}, true},
		{"lexical=-1", ArmWeights{}, true},
		{"lexical=0", ArmWeights{}, true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got, err := ParseArms(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseArms(%q) = %+v, %v", tc.in, got, err)
			}
			if err == nil {
				back, err := ParseArms(got.String())
				if err != nil || back != got {
					t.Fatalf("round trip %q → %+v, %v", got.String(), back, err)
				}
			}
		})
	}
}

// TestSecondProcessDoesNotHang holds the on-disk index's write lock in
// another process (this test binary, re-executed, as if in a long Sync):
// here, Open and Search must not wait at all, and Sync must give up the lock
// after the wait and serve its result from memory, without writing.
func TestSecondProcessDoesNotHang(t *testing.T) {
	if os.Getenv("BORG_INDEX_HOLDER") != "" {
		t.Skip("holder process")
	}
	dir := t.TempDir()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(corpus()); err != nil {
		t.Fatal(err)
	}
	ix.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldIndex$", "-test.v")
	cmd.Env = append(os.Environ(), "BORG_INDEX_HOLDER="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "holding") {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatal("holder process never took the index")
	}
	go func() { // drain the holder's output
		for sc.Scan() {
		}
	}()

	ix2, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{LockWait: DefaultLockWait})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	// Searching never takes the lock.
	pre, err := ix2.Search(context.Background(), Query{Text: "retrying flaky network requests"})
	if err != nil || len(pre) == 0 || pre[0].ID != "flaky-network-retry" {
		t.Fatalf("search while another process writes: %v %v", ids(pre), err)
	}
	changed := append(corpus(), lesson("kube-probes", "Set readiness probes in Kubernetes",
		"Every deployment needs a readiness probe.", "Rollouts sent traffic to pods still starting."))
	before, _ := os.ReadFile(filepath.Join(dir, catalogName))
	start := time.Now()
	st, err := ix2.Sync(changed)
	if err != nil || !st.FallbackLexical || st.Indexed != 1 || !ix2.fallback {
		t.Fatalf("sync while held %+v %v", st, err)
	}
	if waited := time.Since(start); waited > 10*DefaultLockWait {
		t.Fatalf("sync waited %v for the lock", waited)
	}
	hits, err := ix2.Search(context.Background(), Query{Text: "kubernetes readiness probe"})
	if err != nil || len(hits) == 0 || hits[0].ID != "kube-probes" {
		t.Fatalf("search after the fallback sync %v %v", ids(hits), err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, catalogName)); !bytes.Equal(before, after) {
		t.Fatal("a sync without the lock rewrote the catalog")
	}
}

// TestHoldIndex is the holder half of TestSecondProcessDoesNotHang: it
// takes the write lock of the index named by BORG_INDEX_HOLDER and keeps it
// until stdin closes.
func TestHoldIndex(t *testing.T) {
	dir := os.Getenv("BORG_INDEX_HOLDER")
	if dir == "" {
		t.Skip("run by TestSecondProcessDoesNotHang")
	}
	unlock, err := fsutil.LockPath(filepath.Join(dir, "lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	fmt.Println("holding")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// TestEmbedFewEqualsMany: a query embedded alone (sparse counts, IDF read
// from a loaded state) gets the vector it gets among many texts (dense
// counts, the fitted table).
func TestEmbedFewEqualsMany(t *testing.T) {
	texts := []string{"payments gateway timeout", "retry with backoff and jitter", "aaaa aaaa aaaa aaaa",
		"Run make migrate before go test", "", "données et schéma", "x", "kafka consumer lag"}
	fitted := NewNGramEmbedder(NGramOptions{})
	if err := fitted.Fit(texts); err != nil {
		t.Fatal(err)
	}
	many, err := fitted.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	loaded := NewNGramEmbedder(NGramOptions{})
	if err := loaded.LoadState(fitted.State()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(loaded.State(), fitted.State()) {
		t.Fatal("state does not round-trip")
	}
	for i, text := range texts {
		for _, e := range []*NGramEmbedder{fitted, loaded} {
			one, err := e.Embed([]string{text})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one[0], many[i]) {
				t.Fatalf("%q alone embeds differently", text)
			}
		}
	}
}

// TestHalfPrecision: every half-precision value widens and narrows back to
// itself, and narrowing picks the nearest half (ties to even).
func TestHalfPrecision(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are not kept
		}
		if got := floatToHalf(halfToFloat(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x round-trips to %#04x", h, got)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		f := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-28)))
		h := floatToHalf(f)
		got := float64(halfToFloat(h))
		for _, n := range []uint16{h - 1, h + 1} {
			if n&0x7c00 == 0x7c00 {
				continue
			}
			if alt := float64(halfToFloat(n)); math.Abs(alt-float64(f)) < math.Abs(got-float64(f)) {
				t.Fatalf("%g narrows to %g, but %g is nearer", f, got, alt)
			}
		}
	}
}

// TestStale: an index whose sidecar or catalog is missing or unreadable says
// it must be synced, whatever the caller's stamp; a synced one does not.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	open := func() *Index {
		t.Helper()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix := open()
	if !ix.Stale() {
		t.Fatal("a new index is not stale")
	}
	if _, err := ix.SyncStamp(corpus(), "tree-1"); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for _, tc := range []struct {
		name  string
		spoil func()
		stale bool
	}{
		{"synced", func() {}, false},
		{"sidecar removed", func() { os.Remove(filepath.Join(dir, sidecarName)) }, true},
		{"catalog corrupt", func() { os.WriteFile(filepath.Join(dir, catalogName), []byte("junk"), 0o644) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spoil()
			ix := open()
			defer ix.Close()
			if ix.Stale() != tc.stale {
				t.Fatalf("stale %v, want %v", ix.Stale(), tc.stale)
			}
			if _, err := ix.SyncStamp(corpus(), "tree-1"); err != nil {
				t.Fatal(err)
			}
			if hits, err := ix.Search(context.Background(), Query{Text: "postgres foreign key"}); err != nil || len(hits) == 0 || hits[0].ID != "sql-index-on-fk" {
				t.Fatalf("after sync: %v %v", ids(hits), err)
			}
		})
	}
}

// writeCorpusIndex builds the index of corpus() in dir and closes it.
func writeCorpusIndex(t *testing.T, dir string) {
	t.Helper()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(corpus()); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyAndSelfHeal: a flipped byte in the postings goes unnoticed by
// Open and Search (they read a few pages) but not by Verify, and the next
// Sync analyses every lesson again instead of reusing what is corrupt.
func TestVerifyAndSelfHeal(t *testing.T) {
	dir := t.TempDir()
	emb := NewNGramEmbedder(NGramOptions{})
	if err := Verify(dir, emb); err != nil {
		t.Fatalf("a missing index: %v", err)
	}
	writeCorpusIndex(t, dir)
	if err := Verify(dir, NewNGramEmbedder(NGramOptions{})); err != nil {
		t.Fatalf("a fresh index: %v", err)
	}
	path := filepath.Join(dir, catalogName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-5] ^= 0x40 // inside the last postings
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, NewNGramEmbedder(NGramOptions{})); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Verify of a corrupt catalog: %v", err)
	}
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Sync(corpus())
	if err != nil || st.Indexed != len(corpus()) || !st.LexicalRebuilt {
		t.Fatalf("sync over a corrupt catalog: %+v %v", st, err)
	}
	if err := Verify(dir, NewNGramEmbedder(NGramOptions{})); err != nil {
		t.Fatalf("after the sync: %v", err)
	}
}

// TestSyncFiles: a sync from lesson files reads only the files whose stamp
// changed (all of them when asked to, or when their vectors are gone), and
// gives the same search results as a sync of every lesson.
func TestSyncFiles(t *testing.T) {
	dir := t.TempDir()
	set := newFileSet()
	lessons, stamps := set.lessons, set.stamps
	for i, l := range corpus() {
		lessons[l.ID] = l
		stamps[l.ID] = FileStamp{ID: l.ID, ModTime: int64(1000 + i), Size: int64(len(l.Body))}
	}
	files, read := set.listing, set.read
	sync := func(t *testing.T, reread bool) FileSync {
		t.Helper()
		ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		set.reads = nil
		fs, err := ix.SyncFiles(files(), read, "tree", reread)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(context.Background(), Query{Text: "postgres foreign key"})
		if err != nil || len(hits) == 0 || hits[0].ID != "sql-index-on-fk" {
			t.Fatalf("search after the sync: %v %v", ids(hits), err)
		}
		return fs
	}
	if fs := sync(t, false); len(set.reads) != len(corpus()) || fs.Indexed != len(corpus()) {
		t.Fatalf("first sync read %v, indexed %d", set.reads, fs.Indexed)
	}
	if fs := sync(t, false); len(set.reads) != 0 || fs.Indexed != 0 || fs.Embedded != 0 {
		t.Fatalf("unchanged files: read %v, %+v", set.reads, fs.SyncStats)
	}
	l := lessons["python-venv"]
	l.Gist = "Create a venv with uv before installing the linters."
	lessons[l.ID] = l
	stamps[l.ID] = FileStamp{ID: l.ID, ModTime: 5000, Size: 7}
	delete(lessons, "docker-layer-cache")
	delete(stamps, "docker-layer-cache")
	fs := sync(t, false)
	if !reflect.DeepEqual(set.reads, []string{"python-venv"}) || fs.Indexed != 1 || fs.Embedded != 1 ||
		!reflect.DeepEqual(fs.Removed, []string{"docker-layer-cache"}) || len(fs.Read) != 1 {
		t.Fatalf("one changed, one removed: read %v, %+v removed %v", set.reads, fs.SyncStats, fs.Removed)
	}
	if fs := sync(t, true); len(set.reads) != len(lessons) || fs.Indexed != 0 {
		t.Fatalf("reread: read %v, indexed %d", set.reads, fs.Indexed)
	}
	if err := os.Remove(filepath.Join(dir, sidecarName)); err != nil {
		t.Fatal(err)
	}
	if fs := sync(t, false); len(set.reads) != len(lessons) || fs.Indexed != 0 || fs.Embedded != len(lessons) {
		t.Fatalf("vectors gone: read %v, %+v", set.reads, fs.SyncStats)
	}
	// The same content synced as lessons searches the same.
	mem := newTestIndex(t, func() []domain.Lesson {
		var out []domain.Lesson
		for _, l := range lessons {
			out = append(out, l)
		}
		return out
	}())
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"virtual environment linters uv", "retry backoff", "race detector cache"} {
		a, _ := ix.Search(context.Background(), Query{Text: q})
		b, _ := mem.Search(context.Background(), Query{Text: q})
		if !reflect.DeepEqual(ids(a), ids(b)) {
			t.Fatalf("%q: from files %v, from lessons %v", q, ids(a), ids(b))
		}
	}
}

// TestIncrementalCatalogMatchesFullBuild: whatever lessons a sync changes,
// adds and removes, merging the kept lessons' postings gives the very bytes
// a build from scratch gives (random changes, seed printed).
func TestIncrementalCatalogMatchesFullBuild(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	words := strings.Fields("retry backoff payments gateway timeout migrate schema postgres index foreign key " +
		"race detector cache docker layer venv python linter kafka consumer lag alert redis session token")
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	current := map[string]domain.Lesson{}
	newLesson := func(i int) domain.Lesson {
		return domain.Lesson{ID: fmt.Sprintf("lesson-%03d", i), Type: "semantic", Title: text(3), Gist: text(6),
			Body: text(r.IntN(30)), Tags: strings.Fields(text(r.IntN(3)))}
	}
	for i := range 40 {
		current[newLesson(i).ID] = newLesson(i)
	}
	list := func() []domain.Lesson {
		var out []domain.Lesson
		for _, l := range current {
			out = append(out, l)
		}
		return out
	}
	inc, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer inc.Close()
	for round := range 6 {
		for i := range 60 {
			id := fmt.Sprintf("lesson-%03d", i)
			switch r.IntN(6) {
			case 0:
				delete(current, id)
			case 1:
				current[id] = newLesson(i)
			}
		}
		if _, err := inc.Sync(list()); err != nil {
			t.Fatal(err)
		}
		full, err := NewMemory(NewNGramEmbedder(NGramOptions{}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := full.Sync(list()); err != nil {
			t.Fatal(err)
		}
		sameLexical(t, inc, full, corpusQueries)
		// Merged, the segments are the full build's catalog, byte for byte.
		inc.forceMerge = true
		if _, err := inc.Sync(list()); err != nil {
			t.Fatal(err)
		}
		inc.forceMerge = false
		if !bytes.Equal(inc.cat.base.data, full.cat.base.data) || inc.cat.delta.len() != 0 {
			t.Fatalf("round %d: the merged incremental catalog differs from a full build", round)
		}
		full.Close()
	}
}

// TestPending: Pending counts the files a sync would read (all of them,
// full, for a new index).
func TestPending(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, NewNGramEmbedder(NGramOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var files []FileStamp
	byID := map[string]domain.Lesson{}
	for i, l := range corpus() {
		files = append(files, FileStamp{ID: l.ID, ModTime: int64(i + 1), Size: 10})
		byID[l.ID] = l
	}
	read := func(ids []string) []domain.Lesson {
		var out []domain.Lesson
		for _, id := range ids {
			out = append(out, byID[id])
		}
		return out
	}
	if n, full := ix.Pending(files); n != len(files) || !full {
		t.Fatalf("new index: %d, %v", n, full)
	}
	if _, err := ix.SyncFiles(files, read, "", false); err != nil {
		t.Fatal(err)
	}
	if n, full := ix.Pending(files); n != 0 || full {
		t.Fatalf("synced: %d, %v", n, full)
	}
	files[2].ModTime = 99
	files = append(files, FileStamp{ID: "brand-new-lesson", ModTime: 5, Size: 1})
	if n, full := ix.Pending(files); n != 2 || full {
		t.Fatalf("one changed, one new: %d, %v", n, full)
	}
}

// TestExploreAndExclude: with Explore, the best lesson no session has asked
// takes the last slot when proven lessons outrank it, never the first;
// without Explore the order is untouched; Exclude removes lessons
// from the candidates before anything ranks.
func TestExploreAndExclude(t *testing.T) {
	var ls []domain.Lesson
	for i := range 8 {
		ls = append(ls, lesson(fmt.Sprintf("retry-%d", i), "Retry payments calls",
			fmt.Sprintf("Retry the payments gateway calls with backoff, variant %d.", i), "Transient gateway errors."))
	}
	ix := newTestIndex(t, ls)
	const q = "retry the payments gateway calls with backoff"
	base, err := ix.Search(t.Context(), Query{Text: q, K: 8, Bar: -1, MMRLambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Every lesson has a good record except the second best text match and
	// the weakest.
	fresh, weak := base[1].ID, base[len(base)-1].ID
	proven := map[string]Usefulness{}
	for _, h := range base {
		if h.ID != fresh && h.ID != weak {
			proven[h.ID] = Usefulness{Results: 10, Asked: 10, Mean: 0.9, Draw: 0.9}
		}
	}
	run := func(q Query) []string {
		t.Helper()
		hits, err := ix.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}
	plain := run(Query{Text: q, K: 3, Bar: -1, MMRLambda: 1, Useful: proven, OnlyOverBar: true, Floor: -1})
	if slices.Contains(plain, fresh) || slices.Contains(plain, weak) {
		t.Fatalf("without Explore an untried lesson is asked: %v", plain)
	}
	explored := run(Query{Text: q, K: 3, Bar: -1, MMRLambda: 1, Useful: proven, OnlyOverBar: true, Floor: -1, Explore: true})
	if len(explored) != 3 || explored[2] != fresh || !slices.Equal(explored[:2], plain[:2]) {
		t.Fatalf("Explore = %v, want %v then %s", explored, plain[:2], fresh)
	}
	// A lesson asked before (even without a result) is tried: the next
	// untried one is explored in its place.
	proven[fresh] = Usefulness{Asked: 1}
	if got := run(Query{Text: q, K: 3, Bar: -1, MMRLambda: 1, Useful: proven, OnlyOverBar: true, Floor: -1, Explore: true}); len(got) != 3 || got[2] != weak {
		t.Fatalf("explored %v, want %v then %s", got, plain[:2], weak)
	}
	proven[weak] = Usefulness{Asked: 1}
	if got := run(Query{Text: q, K: 3, Bar: -1, MMRLambda: 1, Useful: proven, OnlyOverBar: true, Floor: -1, Explore: true}); !slices.Equal(got, plain) {
		t.Fatalf("nothing left to explore, yet %v, want %v", got, plain)
	}
	delete(proven, weak)
	// One slot: the best hit keeps it.
	delete(proven, fresh)
	if got := run(Query{Text: q, K: 1, Bar: -1, MMRLambda: 1, Useful: proven, OnlyOverBar: true, Floor: -1, Explore: true}); !slices.Equal(got, plain[:1]) {
		t.Fatalf("K=1 explored: %v, want %v", got, plain[:1])
	}
	// Excluded lessons are no candidates.
	got := run(Query{Text: q, K: 8, Bar: -1, MMRLambda: 1, Exclude: []string{base[0].ID, base[1].ID}})
	if slices.Contains(got, base[0].ID) || slices.Contains(got, base[1].ID) || len(got) != 6 {
		t.Fatalf("Exclude %v: got %v", ids(base[:2]), got)
	}
}

// TestSearchHugeK: a K past the store's size is the store's size (the arms
// size their buffers by K; 10^15 panicked in makeslice).
func TestSearchHugeK(t *testing.T) {
	ix := newTestIndex(t, corpus())
	for _, arms := range []string{"lexical", "lexical,vector"} {
		a, err := ParseArms(arms)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(t.Context(), Query{Text: "run the integration tests", K: 1e15, Arms: a})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || len(hits) > len(corpus()) {
			t.Errorf("%s: %d hits from %d lessons", arms, len(hits), len(corpus()))
		}
	}
}

// TestComposedText: a word with an accent matches whether it was typed
// composed (é) or decomposed (e and a combining accent, as macOS tools
// often write it), in the lesson or in the query.
func TestComposedText(t *testing.T) {
	const nfc, nfd = "r\u00e9sum\u00e9 parser na\u00efve", "re\u0301sume\u0301 parser nai\u0308ve"
	match := func(lessonText, query string) float64 {
		ix := newTestIndex(t, append(corpus(), lesson("resume-parser", "", "The "+lessonText+" service lives in the bayes repository", "")))
		hits, err := ix.Search(t.Context(), Query{Text: query, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "resume-parser" {
			t.Fatalf("lesson %q, query %q: hits %v", lessonText, query, ids(hits))
		}
		return hits[0].Match
	}
	want := match(nfc, nfc)
	for _, tc := range []struct{ lesson, query string }{{nfc, nfd}, {nfd, nfc}, {nfd, nfd}} {
		if got := match(tc.lesson, tc.query); got != want {
			t.Errorf("lesson %+q, query %+q: match %.4f, want %.4f as composed", tc.lesson, tc.query, got, want)
		}
	}
}

// TestSearchMatched: a listing's search (Query.Matched) holds only lessons
// that share a word with the query, before the cut to K, so those take the
// places of lessons the vector arm alone found near it.
func TestSearchMatched(t *testing.T) {
	ix := newTestIndex(t, corpus())
	for _, tc := range []struct {
		query string
		want  int // hits with K = 3
	}{
		{"zzzzqqqq xylophone", 0},
		{"integration tests retry", 3}, // migrations, retry, and the race detector (go test)
	} {
		hits, err := ix.Search(t.Context(), Query{Text: tc.query, K: 3, Matched: true, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Ranks.Lexical == 0 && h.Ranks.Lateral == 0 {
				t.Errorf("%q: %s shares no word with the query", tc.query, h.ID)
			}
		}
		if len(hits) != tc.want {
			t.Errorf("%q: %d hits %v, want %d", tc.query, len(hits), ids(hits), tc.want)
		}
		all, err := ix.Search(t.Context(), Query{Text: tc.query, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < len(hits) {
			t.Errorf("%q: %d hits without Matched, %d with", tc.query, len(all), len(hits))
		}
	}
}
