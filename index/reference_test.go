package index

import (
	"encoding/binary"
	"math"
)

// Helpers only the tests call: the uncached, unbatched forms the product's
// fast paths are held to.

// analyze is analyze(text), by way of the cache.
func (c *termCache) analyze(text string) []string {
	if text == "" {
		return nil
	}
	return c.appendTerms(make([]string, 0, len(text)/6+1), text)
}

// analyzeDoc analyses d's text fields. The whole-text field is the
// concatenation of the others' token streams (with the body's), which is
// what analysing the joined text gives: the tokenizer splits at the joins.
func analyzeDoc(d lexDoc) docTerms { return analyzeDocWith(nil, d) }

// idfAt is bucket b's IDF weight.
func (e *NGramEmbedder) idfAt(b uint32) float32 {
	if e.idf != nil {
		return e.idf[b]
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(e.idfRaw[4*b:]))
}
