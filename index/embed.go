package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Embedder turns texts into fixed-length vectors. ID names the model and
// every setting that changes its output: vectors made under one ID are never
// compared with vectors made under another (the sidecar is dropped whole when
// the ID changes). Dim is the length of every vector Embed returns.
type Embedder interface {
	ID() string
	Dim() int
	Embed(texts []string) ([][]float32, error)
}

// lazyDimEmbedder is implemented by an embedder that calls its endpoint to
// learn its dimension unless it was told it: KnownDim is the dimension it
// has without a call (0: none yet), IDWith its ID at dimension dim. An
// index that defers its vectors reads the sidecar through them (vectorShape).
type lazyDimEmbedder interface {
	KnownDim() int
	IDWith(dim int) string
}

// CorpusFitter is implemented by an embedder whose weights depend on the
// corpus it embeds (document frequencies, for instance). The index fits it on
// the lessons when the sidecar holds no state or the corpus has drifted, and
// stores the state in the sidecar so a later process embeds queries and new
// lessons with the same weights.
type CorpusFitter interface {
	// Fit derives the corpus state from texts and starts using it.
	Fit(texts []string) error
	// State serialises the current corpus state (nil when unfitted).
	State() []byte
	// LoadState restores a state written by State. The embedder may keep
	// state itself rather than a copy: the caller must leave it unchanged
	// for as long as the embedder uses it (an Index unloads the state it
	// lent before it releases its files).
	LoadState(state []byte) error
	// FittedDocs is the number of texts the current state was fitted on.
	FittedDocs() int
}

// NGramOptions configures the default embedder. Zero values take the
// defaults noted on each field.
type NGramOptions struct {
	Dim  int // vector length (default 512)
	MinN int // shortest character n-gram (default 3)
	MaxN int // longest character n-gram (default 5)
	// NoIDF switches the corpus document-frequency weighting off, leaving a
	// sublinear term frequency alone. The default fits IDF on the corpus.
	NoIDF bool
}

// Default n-gram embedder settings, chosen by measurement on the shared
// evaluation sets (BENCHMARKS.md).
const (
	DefaultNGramDim  = 512
	DefaultNGramMinN = 3
	DefaultNGramMaxN = 5
	// idfBuckets is the size of the document-frequency table: larger than Dim
	// so the IDF of an n-gram is blurred far less than its vector component.
	idfBuckets = 1 << 18
	// maxWordRunes skips pathological tokens (hashes, base64) as the lexical
	// arm does.
	maxWordRunes = 99
)

// NGramEmbedder is the default embedder: character n-grams of every word
// (with boundary markers, "<word>"), feature-hashed into Dim signed buckets,
// weighted by sublinear term frequency times inverse document frequency, and
// L2-normalised. It needs no model file and no network, and is deterministic.
type NGramEmbedder struct {
	dim, minN, maxN int
	useIDF          bool
	idf             []float32 // idfBuckets weights from Fit; nil otherwise
	idfRaw          []byte    // or, after LoadState, the same little-endian, decoded on use
	docs            int       // texts the idf was fitted on
}

// NewNGramEmbedder returns the default embedder with opts applied.
func NewNGramEmbedder(opts NGramOptions) *NGramEmbedder {
	e := &NGramEmbedder{dim: opts.Dim, minN: opts.MinN, maxN: opts.MaxN, useIDF: !opts.NoIDF}
	if e.dim <= 0 {
		e.dim = DefaultNGramDim
	}
	if e.minN <= 0 {
		e.minN = DefaultNGramMinN
	}
	if e.maxN < e.minN {
		e.maxN = max(DefaultNGramMaxN, e.minN)
	}
	return e
}

// ID names the embedder and its settings, e.g. "ngram-v1-d512-n3-5-idf".
func (e *NGramEmbedder) ID() string {
	w := "tf"
	if e.useIDF {
		w = "idf"
	}
	return fmt.Sprintf("ngram-v1-d%d-n%d-%d-%s", e.dim, e.minN, e.maxN, w)
}

// Dim is the vector length.
func (e *NGramEmbedder) Dim() int { return e.dim }

// FittedDocs is the number of texts the IDF table was fitted on.
func (e *NGramEmbedder) FittedDocs() int {
	if !e.useIDF {
		return 0
	}
	return e.docs
}

// Fit computes the document frequency of every hashed n-gram over texts and
// weights later embeddings by its smoothed IDF, ln(1 + N/df). A no-op when
// IDF is off. The texts are split over two goroutines.
func (e *NGramEmbedder) Fit(texts []string) error {
	e.fit(len(texts), func(g *gramScratch, hs []uint32, i int) []uint32 { return e.appendGrams(g, hs, texts[i]) })
	return nil
}

// gramsOf appends the n-gram hashes of text i of a batch to hs (g is the
// calling goroutine's scratch).
type gramsOf func(g *gramScratch, hs []uint32, i int) []uint32

// fit is Fit over n texts whose n-grams grams gives.
func (e *NGramEmbedder) fit(texts int, grams gramsOf) {
	if !e.useIDF {
		return
	}
	parts := make([][]uint32, parallelParts)
	lasts := make([][]uint32, parallelParts) // 1 + the index of the last text that counted
	var gs [parallelParts]gramScratch
	parallel(texts, func(part, lo, hi int) {
		if parts[part] == nil {
			parts[part], lasts[part] = make([]uint32, idfBuckets), make([]uint32, idfBuckets)
		}
		df, last, g := parts[part], lasts[part], &gs[part]
		g.remember()
		for i := lo; i < hi; i++ {
			stamp := uint32(i + 1)
			g.hs0 = grams(g, g.hs0[:0], i)
			for _, h := range g.hs0 {
				if b := h & (idfBuckets - 1); last[b] != stamp {
					last[b] = stamp
					df[b]++
				}
			}
		}
	})
	n := float64(texts)
	idf := make([]float32, idfBuckets)
	for i := range idf {
		var d uint32
		for _, df := range parts {
			if df != nil {
				d += df[i]
			}
		}
		idf[i] = float32(math.Log(1 + n/float64(d+1)))
	}
	e.idf, e.idfRaw, e.docs = idf, nil, texts
}

// parallelParts is how many goroutines parallel runs.
const parallelParts = 2

// parallel runs fn over [0, n) on parallelParts goroutines (one when n is
// small), each taking the next chunk of [0, n) when it is done with its
// last: a part whose goroutine is slowed (a busy machine, a costly stretch
// of texts) leaves the rest to the other instead of holding the whole
// call back, as fixed halves did. fn is called with its goroutine's part,
// one call at a time per part, so per-part state needs no lock.
func parallel(n int, fn func(part, lo, hi int)) {
	if n < 64 || serialForTest {
		fn(0, 0, n)
		return
	}
	chunk := max(32, n/(16*parallelParts))
	var next atomic.Int64
	work := func(part int) {
		for {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= n {
				return
			}
			fn(part, lo, min(lo+chunk, n))
		}
	}
	var wg sync.WaitGroup
	for part := 1; part < parallelParts; part++ {
		wg.Go(func() { work(part) })
	}
	work(0)
	wg.Wait()
}

// serialForTest runs every parallel part (the stripes, the catalog beside
// the vectors, the catalog's whole-text field) on one goroutine
// (TestBuildSameAsSerial).
var serialForTest = false

// State serialises the IDF table: a doc count then idfBuckets float32s.
func (e *NGramEmbedder) State() []byte {
	if !e.useIDF || !e.fitted() {
		return nil
	}
	buf := make([]byte, 8+4*idfBuckets)
	binary.LittleEndian.PutUint64(buf, uint64(e.docs))
	if e.idf == nil {
		copy(buf[8:], e.idfRaw)
		return buf
	}
	for i, v := range e.idf {
		binary.LittleEndian.PutUint32(buf[8+4*i:], math.Float32bits(v))
	}
	return buf
}

// LoadState restores a table written by State. An empty state unfits. The
// table is kept as given, neither copied nor decoded: a query reads a few
// dozen of its weights, not all of them.
func (e *NGramEmbedder) LoadState(state []byte) error {
	if len(state) == 0 {
		e.idf, e.idfRaw, e.docs = nil, nil, 0
		return nil
	}
	if len(state) != 8+4*idfBuckets {
		return errors.New("load n-gram state: wrong length")
	}
	e.idf, e.idfRaw = nil, state[8:]
	e.docs = int(binary.LittleEndian.Uint64(state))
	return nil
}

// fitted reports whether the embedder has IDF weights.
func (e *NGramEmbedder) fitted() bool { return e.idf != nil || e.idfRaw != nil }

// Embed returns one L2-normalised vector per text. An empty text (or one
// without a word) embeds to the zero vector, which Cosine reads as 0.
func (e *NGramEmbedder) Embed(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	block := make([]float32, len(texts)*e.dim)
	for i := range out {
		out[i] = block[i*e.dim : (i+1)*e.dim : (i+1)*e.dim]
	}
	e.embedRows(out, func(g *gramScratch, hs []uint32, i int) []uint32 { return e.appendGrams(g, hs, texts[i]) })
	return out, nil
}

// embedRows fills each of rows (Dim long, zeroed) with the vector of the
// text whose n-grams grams gives, on both cores.
func (e *NGramEmbedder) embedRows(rows [][]float32, grams gramsOf) {
	var scs [parallelParts]*embedScratch
	parallel(len(rows), func(part, lo, hi int) {
		if scs[part] == nil {
			scs[part] = newEmbedScratch(len(rows))
			if scs[part].count != nil { // a batch, not a query's few texts
				scs[part].grams.remember()
			}
		}
		sc := scs[part]
		for i := lo; i < hi; i++ {
			sc.grams.hs0 = grams(&sc.grams, sc.grams.hs0[:0], i)
			e.embedGrams(sc.grams.hs0, rows[i], sc)
		}
	})
	for _, sc := range scs {
		if sc != nil && sc.count != nil {
			denseScratch.Put(sc)
		}
	}
}

// lessonGrams appends the n-gram hashes of lessonText(title, gist, body,
// tags) to hs without building the text: its parts are joined by
// separators, so its grams are theirs one after the other.
func (e *NGramEmbedder) lessonGrams(g *gramScratch, hs []uint32, title, gist, body string, tags []string) []uint32 {
	hs = e.appendGrams(g, hs, title)
	if gist != "" && gist != title {
		hs = e.appendGrams(g, hs, gist)
	}
	hs = e.appendGrams(g, hs, body)
	for _, t := range tags {
		hs = e.appendGrams(g, hs, t)
	}
	return hs
}

// denseScratch keeps dense scratch tables between Embed calls (a sync
// embeds in batches: a fresh 512 KiB table per batch and part was 400 MB of
// garbage in a rebuild of 100,000 lessons). A table is clean after every
// text (embedOne takes every count it added).
var denseScratch = sync.Pool{New: func() any { return &embedScratch{count: make([]uint16, idfBuckets)} }}

// embedScratch counts n-gram occurrences per feature bucket: in a dense
// table when it embeds many texts, in a map for a few (a query: the table
// is 512 KiB of fresh memory for a few dozen n-grams).
type embedScratch struct {
	count   []uint16
	sparse  map[uint32]uint16
	touched []uint32
	grams   gramScratch
}

func newEmbedScratch(texts int) *embedScratch {
	if texts <= 4 {
		return &embedScratch{sparse: map[uint32]uint16{}}
	}
	return denseScratch.Get().(*embedScratch)
}

// add counts one occurrence of bucket b.
func (sc *embedScratch) add(b uint32) {
	if sc.count == nil {
		n := sc.sparse[b]
		if n == 0 {
			sc.touched = append(sc.touched, b)
		}
		if n < math.MaxUint16 {
			sc.sparse[b] = n + 1
		}
		return
	}
	if sc.count[b] == 0 {
		sc.touched = append(sc.touched, b)
	}
	if sc.count[b] < math.MaxUint16 {
		sc.count[b]++
	}
}

// take returns bucket b's count and clears it.
func (sc *embedScratch) take(b uint32) uint16 {
	if sc.count == nil {
		n := sc.sparse[b]
		delete(sc.sparse, b)
		return n
	}
	n := sc.count[b]
	sc.count[b] = 0
	return n
}

// embedGrams fills v (zeroed) with the vector of the text whose n-gram
// hashes are hs. Each n-gram hashes to one of idfBuckets features; a
// feature's weight is its sublinear count times its IDF, and a
// multiplicative hash of the feature picks its component and sign (so
// collisions cancel in expectation).
func (e *NGramEmbedder) embedGrams(hs []uint32, v []float32, sc *embedScratch) {
	sc.touched = sc.touched[:0]
	if sc.count != nil {
		count := sc.count[:idfBuckets]
		for _, h := range hs {
			b := h & (idfBuckets - 1)
			switch n := count[b]; n {
			case 0:
				sc.touched = append(sc.touched, b)
				count[b] = 1
			case math.MaxUint16:
			default:
				count[b] = n + 1
			}
		}
	} else {
		for _, h := range hs {
			sc.add(h & (idfBuckets - 1))
		}
	}
	idf, raw := e.idf, e.idfRaw
	weighted := e.useIDF && e.fitted()
	dim := uint32(len(v))
	for _, b := range sc.touched {
		tf := sc.take(b)
		w := float32(1)
		if tf > 1 {
			w = tfWeight(tf)
		}
		if weighted {
			if idf != nil {
				w *= idf[b]
			} else {
				w *= math.Float32frombits(binary.LittleEndian.Uint32(raw[4*b:]))
			}
		}
		m := b * 0x9e3779b1
		if m&(1<<31) != 0 {
			w = -w
		}
		v[(m>>8)%dim] += w
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}

// tfWeights holds tfWeight's answers for the common counts.
var tfWeights = func() (t [256]float32) {
	for n := range t {
		t[n] = 1 + float32(math.Log(float64(n)))
	}
	return t
}()

// tfWeight is the sublinear weight 1 + ln tf of a feature counted tf > 1
// times.
func tfWeight(tf uint16) float32 {
	if int(tf) < len(tfWeights) {
		return tfWeights[tf]
	}
	return 1 + float32(math.Log(float64(tf)))
}

// gramScratch is the word buffers appendGrams reuses from text to text.
type gramScratch struct {
	word   []byte   // the padded word's UTF-8: '<', the word lower-cased, '>'
	starts []uint32 // the byte offset of each of its runes, then its length
	hs     []uint32 // its n-gram hashes by start, for each n
	ascii  bool     // word holds no multi-byte rune (starts not kept)
	hs0    []uint32 // a text's hashes, for the caller to reuse
	// known, when set, holds the grams of the words met so far (a batch
	// repeats its words over and over), as spans of arena.
	known map[string]gramSpan
	arena []uint32
}

// gramSpan is where a word's grams are in gramScratch.arena.
type gramSpan struct{ at, n uint32 }

// Bounds of a gramScratch's word cache: past them, words are hashed every
// time (same grams).
const (
	maxKnownWords = 1 << 17
	maxKnownGrams = 1 << 22
)

// remember has g cache the grams of the words it hashes (for a batch of
// many texts: a query's few words would only pay for the cache).
func (g *gramScratch) remember() {
	if g.known == nil {
		g.known = make(map[string]gramSpan)
	}
}

// appendGrams appends to hs the hash of every character n-gram (minN to
// maxN runes) of every word of text: a word is a run of letters and digits,
// lower-cased and wrapped in '<' and '>'; words of more than maxWordRunes
// runes are skipped, and a padded word shorter than minN counts as itself.
// Each word's n-grams come by length, then by start. The hash is FNV-1a
// over the n-gram's UTF-8 with a murmur3 finaliser (fmix). Texts
// joined by a separator give the concatenation of their grams.
func (e *NGramEmbedder) appendGrams(g *gramScratch, hs []uint32, text string) []uint32 {
	g.word, g.starts, g.ascii = append(g.word[:0], '<'), g.starts[:0], true
	runes := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			default:
				if runes > 0 {
					hs = e.wordGrams(g, hs, runes)
					g.word, runes = g.word[:1], 0
				}
				continue
			}
			if !g.ascii {
				g.starts = append(g.starts, uint32(len(g.word)))
			}
			g.word = append(g.word, c)
			runes++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if runes > 0 {
				hs = e.wordGrams(g, hs, runes)
				g.word, runes = g.word[:1], 0
			}
			continue
		}
		if g.ascii {
			// The word's first multi-byte rune: its runes so far are
			// bytes, one each (and '<').
			g.ascii = false
			for k := 0; k < len(g.word); k++ {
				g.starts = append(g.starts, uint32(k))
			}
		}
		g.starts = append(g.starts, uint32(len(g.word)))
		g.word = utf8.AppendRune(g.word, unicode.ToLower(r))
		runes++
	}
	if runes > 0 {
		hs = e.wordGrams(g, hs, runes)
	}
	g.word, g.starts, g.ascii = g.word[:0], g.starts[:0], true
	return hs
}

// wordGrams appends the n-gram hashes of the word in g (runes long,
// without its markers) and resets g for the next word.
func (e *NGramEmbedder) wordGrams(g *gramScratch, hs []uint32, runes int) []uint32 {
	defer func() { g.starts, g.ascii = g.starts[:0], true }()
	if runes > maxWordRunes {
		return hs
	}
	if g.known != nil {
		if sp, ok := g.known[string(g.word[1:])]; ok {
			return append(hs, g.arena[sp.at:sp.at+sp.n]...)
		}
		if len(g.known) < maxKnownWords && len(g.arena) < maxKnownGrams {
			first := len(hs)
			key := string(g.word[1:])
			hs = e.hashWord(g, hs, runes)
			g.known[key] = gramSpan{uint32(len(g.arena)), uint32(len(hs) - first)}
			g.arena = append(g.arena, hs[first:]...)
			return hs
		}
	}
	return e.hashWord(g, hs, runes)
}

// hashWord is wordGrams without the cache.
func (e *NGramEmbedder) hashWord(g *gramScratch, hs []uint32, runes int) []uint32 {
	g.word = append(g.word, '>')
	m := runes + 2 // runes of the padded word
	if !g.ascii {
		g.starts = append(g.starts, uint32(len(g.word)-1), uint32(len(g.word)))
	}
	word, starts, ascii := g.word, g.starts, g.ascii
	if m < e.minN {
		return append(hs, fmix(fnvBytes(fnvOffset, word)))
	}
	// One pass per start hashes its n-grams of every length, each the
	// last one's hash carried one rune further; they are then handed out
	// by length, as the order of the grams is part of the vector.
	widths := e.maxN - e.minN + 1
	if need := widths * m; cap(g.hs) < need {
		g.hs = make([]uint32, need)
	}
	tab := g.hs[:widths*m]
	for i := 0; i+e.minN <= m; i++ {
		h := uint32(fnvOffset)
		var from, to int
		if ascii {
			from = i
		} else {
			from = int(starts[i])
		}
		for n := 1; n <= e.maxN && i+n <= m; n++ {
			if ascii {
				to = i + n
			} else {
				to = int(starts[i+n])
			}
			h = fnvBytes(h, word[from:to])
			from = to
			if n >= e.minN {
				tab[(n-e.minN)*m+i] = fmix(h)
			}
		}
	}
	for n := e.minN; n <= e.maxN && n <= m; n++ {
		hs = append(hs, tab[(n-e.minN)*m:(n-e.minN)*m+m-n+1]...)
	}
	return hs
}

// FNV-1a's 32-bit parameters.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// fnvBytes continues the FNV-1a hash h over b.
func fnvBytes(h uint32, b []byte) uint32 {
	for _, c := range b {
		h ^= uint32(c)
		h *= fnvPrime
	}
	return h
}

// fmix is murmur3's finaliser: it spreads FNV's weak low bits over the
// buckets.
func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// lessonText is the text a lesson is embedded from.
func lessonText(title, gist, body string, tags []string) string {
	var b strings.Builder
	b.WriteString(title)
	b.WriteString("\n")
	if gist != "" && gist != title {
		b.WriteString(gist)
		b.WriteString("\n")
	}
	b.WriteString(body)
	if len(tags) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(tags, " "))
	}
	return b.String()
}
