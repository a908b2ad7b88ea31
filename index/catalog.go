package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// The catalog (.borg/index/catalog.bin) is everything retrieval reads of
// the lessons besides their vectors: per lesson its id, content hash,
// title, gist, type, reach and links, the length of each text field, the
// link graph, and the lexical postings. It is written whole by Sync and
// replaced by rename, never changed in place, so a query maps it and reads
// only the pages it touches (a few term lists and the hits' records): a
// process searches 10,000 lessons right after Open without decoding
// anything. Lessons are numbered by id order (their ordinal).
//
// Little-endian, every section 4-byte aligned:
//
//	header: magic "BORGIDX1" | u32 format | u32 fields | u32 docs | u32 sections
//	        sections × (u64 offset, u64 length) | u32 CRC-32 (IEEE) of the header and the meta section
//	meta:   u32 len + lexical version | u32 len + stamp | u32 len + screen id
//	        | fields × f64 mean field length
//	        | u32 CRC-32 (IEEE) of every later section's bytes, in order
//	docs:   docs × 26 u32: (offset, length) into strs of id, hash, title, gist,
//	        type and reach; (first, count) of its links; (first, count) in adj
//	        of the lessons superseding it; (first, count) in adj of its
//	        neighbours in the link graph; the lesson file's modification time
//	        (Unix ns) and size as two u64 (0 when not synced from files);
//	        (offset, length) into strs of its screen verdict ("" when clean);
//	        its created time (Unix ms, 0 when unknown) as a u64
//	lens:   fields × docs u32 field lengths in terms
//	strs:   the strings' bytes
//	links:  links × 5 u32: rel (offset, length), target (offset, length), derived
//	adj:    u32 ordinals
//	then per field: terms (T+1 u32 offsets into the term bytes), term bytes
//	        (sorted terms), starts (T+1 u32 posting indexes), postings
//	        (u32 ordinal, u32 term frequency; by ordinal within a term)
//
// Readers check every offset they follow against the section it points
// into, so a corrupt file yields empty or wrong answers, never a crash; the
// header, section table and meta are checksummed, so a torn or foreign file
// is refused at Open and rebuilt. The rest is checksummed too, but checked
// only by Sync (before it reuses the postings) and Verify (borg doctor): a
// query reads a few pages, not the whole file.
//
// The format number also covers what the catalog derives by rule: each
// lesson's earned supersedes (domain.EarnedSupersedes). A change to that
// rule bumps it, so that a catalog built under the old rule is rebuilt, not
// read with links the rule no longer grants or lacking ones it now does.
const (
	catalogMagic  = "BORGIDX1"
	catalogFormat = 12
	catalogName   = "catalog.bin"
	maxCatalogStr = 1 << 24

	docRecord   = 26 * 4
	linkRecord  = 5 * 4
	postingSize = 8
)

// Section numbers.
const (
	secMeta = iota
	secDocs
	secLens
	secStrs
	secLinks
	secAdj
	secFields   // then 4 per field: terms, term bytes, starts, postings
	numSections = secFields + 4*int(numFields)
)

// Doc record slots (u32 indexes within a record).
const (
	slotID      = 0
	slotHash    = 2
	slotTitle   = 4
	slotGist    = 6
	slotType    = 8
	slotReach   = 10
	slotLinks   = 12
	slotSupBy   = 14
	slotNeighb  = 16
	slotMtime   = 18 // u64: two slots
	slotSize    = 20 // u64: two slots
	slotFlag    = 22 // the screen verdict: why the lesson is never quoted
	slotCreated = 24 // u64: two slots; Unix ms, 0 when unknown
)

// catalog is a read-only view of an encoded catalog: a mapped file, or the
// bytes Sync just built. Its strings alias those bytes: anything handed
// outside the index is copied first (strings.Clone), since the mapping is
// released when the index closes or syncs again.
type catalog struct {
	data    []byte
	release func()
	stamp   string
	screen  string // the screen id the verdicts were given by
	docs    int
	avgLen  [numFields]float64
	recs    []byte
	lens    [numFields][]byte
	strs    []byte
	links   []byte
	adj     []byte
	fields  [numFields]fieldView
	body    [][]byte // the sections after meta, for verify
	bodySum uint32
	headSum uint32 // the header's checksum (with bodySum, the base id)
	checked bool   // verify succeeded
}

// fieldView is one text field's term dictionary and postings.
type fieldView struct {
	termOffs, termBytes, starts, post []byte
	terms                             int
}

func emptyCatalog() *catalog { return &catalog{} }

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// u32at is the i-th u32 of b, or 0 past its end.
func u32at(b []byte, i int) uint32 {
	if i < 0 || 4*i+4 > len(b) {
		return 0
	}
	return le32(b[4*i:])
}

func (c *catalog) len() int { return c.docs }

// close releases the mapping; the view is unusable afterwards.
func (c *catalog) close() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
	*c = catalog{}
}

// readCatalog maps the catalog at path; a missing, corrupt or other-version
// file yields an empty catalog and false (the caller rebuilds the index).
func readCatalog(path string) (*catalog, bool) {
	raw, release, err := fsutil.Map(path)
	if err != nil {
		return emptyCatalog(), false
	}
	c, err := parseCatalog(raw)
	if err != nil {
		release()
		return emptyCatalog(), false
	}
	c.release = release
	return c, true
}

// parseCatalog checks raw's header, section table and meta and returns a
// view over raw, which the caller must not modify afterwards.
func parseCatalog(raw []byte) (*catalog, error) {
	head := len(catalogMagic) + 16
	table := head + 16*numSections
	if len(raw) < table+4 || string(raw[:len(catalogMagic)]) != catalogMagic {
		return nil, errors.New("decode catalog: bad magic")
	}
	r := &sliceReader{b: raw, off: len(catalogMagic)}
	format, fields, docs, sections := r.u32(), r.u32(), r.u32(), r.u32()
	if format != catalogFormat || fields != uint32(numFields) || sections != uint32(numSections) {
		return nil, fmt.Errorf("decode catalog: format %d with %d fields and %d sections", format, fields, sections)
	}
	var secs [numSections][]byte
	var offs [numSections][2]uint64
	for i := range offs {
		lo := binary.LittleEndian.Uint64(raw[head+16*i:])
		n := binary.LittleEndian.Uint64(raw[head+16*i+8:])
		if lo%4 != 0 || lo > uint64(len(raw)) || n > uint64(len(raw))-lo {
			return nil, errors.New("decode catalog: section out of bounds")
		}
		offs[i] = [2]uint64{lo, n}
		secs[i] = raw[lo : lo+n : lo+n]
	}
	sum := crc32.NewIEEE()
	sum.Write(raw[:table])
	sum.Write(secs[secMeta])
	if sum.Sum32() != le32(raw[table:]) {
		return nil, errors.New("decode catalog: checksum mismatch")
	}
	c := &catalog{data: raw, docs: int(docs), recs: secs[secDocs], strs: secs[secStrs],
		links: secs[secLinks], adj: secs[secAdj], headSum: le32(raw[table:])}
	if uint64(docs)*docRecord != uint64(len(c.recs)) || uint64(len(secs[secLens])) != uint64(docs)*4*uint64(numFields) {
		return nil, errors.New("decode catalog: document table size")
	}
	for f := range c.lens {
		c.lens[f] = secs[secLens][4*int(docs)*f : 4*int(docs)*(f+1)]
	}
	m := &sliceReader{b: secs[secMeta]}
	if v := string(m.blob32(maxCatalogStr)); v != lexicalVersion {
		return nil, fmt.Errorf("decode catalog: lexical version %q", v)
	}
	c.stamp = string(m.blob32(maxCatalogStr))
	c.screen = string(m.blob32(maxCatalogStr))
	for f := range c.avgLen {
		if p := m.take(8); p != nil {
			c.avgLen[f] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		}
	}
	c.bodySum = m.u32()
	c.body = secs[secMeta+1:]
	if m.err != nil {
		return nil, errors.New("decode catalog: truncated meta")
	}
	for f := range c.fields {
		s := secs[secFields+4*f : secFields+4*f+4]
		fv := fieldView{termOffs: s[0], termBytes: s[1], starts: s[2], post: s[3]}
		if len(fv.termOffs) < 4 || len(fv.termOffs) != len(fv.starts) || len(fv.post)%postingSize != 0 {
			return nil, errors.New("decode catalog: term table size")
		}
		fv.terms = len(fv.termOffs)/4 - 1
		c.fields[f] = fv
	}
	return c, nil
}

// verify checks the sections after meta against their checksum.
func (c *catalog) verify() error {
	if c.checked {
		return nil
	}
	sum := crc32.NewIEEE()
	for _, b := range c.body {
		sum.Write(b)
	}
	if sum.Sum32() != c.bodySum {
		return errors.New("catalog checksum mismatch")
	}
	c.checked = true
	return nil
}

// mapped is a string read in place from a catalog's bytes, which may be a
// file mapping released when the index syncs or closes: it is valid only
// while its catalog is. It is a distinct type so that nothing holds one by
// mistake: its one way out is String, a copy. The segment code compares .s
// in place and never keeps it.
type mapped struct{ s string }

// String copies m out of the catalog's bytes.
func (m mapped) String() string { return strings.Clone(m.s) }

// str reads the string at (offset, length) slots k, k+1 of rec, in place
// ("" when out of bounds).
func (c *catalog) str(rec []byte, k int) mapped {
	off, n := u32at(rec, k), u32at(rec, k+1)
	if uint64(off)+uint64(n) > uint64(len(c.strs)) || n == 0 {
		return mapped{}
	}
	return mapped{unsafe.String(&c.strs[off], int(n))}
}

// rec is the ordinal's document record (nil when out of range).
func (c *catalog) rec(ord int) []byte {
	if ord < 0 || ord >= c.docs {
		return nil
	}
	return c.recs[ord*docRecord : (ord+1)*docRecord]
}

func (c *catalog) id(ord int) mapped    { return c.str(c.rec(ord), slotID) }
func (c *catalog) hash(ord int) mapped  { return c.str(c.rec(ord), slotHash) }
func (c *catalog) reach(ord int) mapped { return c.str(c.rec(ord), slotReach) }
func (c *catalog) flag(ord int) mapped  { return c.str(c.rec(ord), slotFlag) }

// fileStamp is the ordinal's file modification time and size.
func (c *catalog) fileStamp(ord int) [2]int64 {
	rec := c.rec(ord)
	return [2]int64{u64at(rec, slotMtime), u64at(rec, slotSize)}
}

// created is the ordinal's created time in Unix ms (0: unknown).
func (c *catalog) created(ord int) int64 { return u64at(c.rec(ord), slotCreated) }

// u64at reads the u64 at slots k, k+1 of a record.
func u64at(rec []byte, k int) int64 {
	return int64(uint64(u32at(rec, k)) | uint64(u32at(rec, k+1))<<32)
}

// find is the ordinal of id.
func (c *catalog) find(id string) (int, bool) {
	i := sort.Search(c.docs, func(i int) bool { return c.id(i).s >= id })
	return i, i < c.docs && c.id(i).s == id
}

// fieldLen is the ordinal's length in terms of field f.
func (c *catalog) fieldLen(f textField, ord int) uint32 { return u32at(c.lens[f], ord) }

// ordinals reads the (first, count) run of adj at slot k of rec.
func (c *catalog) ordinals(rec []byte, k int) []int {
	first, n := int(u32at(rec, k)), int(u32at(rec, k+1))
	if n == 0 || first < 0 || first+n > len(c.adj)/4 {
		return nil
	}
	out := make([]int, 0, n)
	for i := range n {
		if o := int(u32at(c.adj, first+i)); o < c.docs {
			out = append(out, o)
		}
	}
	return out
}

// supersededBy lists the ordinals of the lessons superseding ord.
func (c *catalog) supersededBy(ord int) []int { return c.ordinals(c.rec(ord), slotSupBy) }

// neighbours lists ord's neighbours in the undirected link graph.
func (c *catalog) neighbours(ord int) []int { return c.ordinals(c.rec(ord), slotNeighb) }

// hasGraph reports whether any lesson links to another.
func (c *catalog) hasGraph() bool { return len(c.adj) > 0 }

// lessonLinks decodes the ordinal's links (strings copied).
func (c *catalog) lessonLinks(ord int) []domain.LessonLink {
	rec := c.rec(ord)
	first, n := int(u32at(rec, slotLinks)), int(u32at(rec, slotLinks+1))
	if n == 0 || first < 0 || (first+n)*linkRecord > len(c.links) {
		return nil
	}
	out := make([]domain.LessonLink, n)
	for i := range out {
		l := c.links[(first+i)*linkRecord : (first+i+1)*linkRecord]
		out[i] = domain.LessonLink{Rel: c.str(l, 0).String(), Target: c.str(l, 2).String(), Derived: u32at(l, 4) == 1}
	}
	return out
}

// term is the t-th term of field view fv, in place.
func (c *catalog) term(fv *fieldView, t int) mapped {
	lo, hi := u32at(fv.termOffs, t), u32at(fv.termOffs, t+1)
	if lo > hi || uint64(hi) > uint64(len(fv.termBytes)) || lo == hi {
		return mapped{}
	}
	return mapped{unsafe.String(&fv.termBytes[lo], int(hi-lo))}
}

// postingsAt is the t-th term's postings in fv.
func postingsAt(fv *fieldView, t int) []byte {
	lo, hi := uint64(u32at(fv.starts, t))*postingSize, uint64(u32at(fv.starts, t+1))*postingSize
	if lo > hi || hi > uint64(len(fv.post)) {
		return nil
	}
	return fv.post[lo:hi]
}

// postings is term's postings in field f (nil when absent).
func (c *catalog) postings(f textField, term string) []byte {
	fv := &c.fields[f]
	t := sort.Search(fv.terms, func(i int) bool { return c.term(fv, i).s >= term })
	if t >= fv.terms || c.term(fv, t).s != term {
		return nil
	}
	return postingsAt(fv, t)
}

// catalogDoc is one lesson as Sync hands it to encodeCatalog.
type catalogDoc struct {
	id, hash, title, gist, typ, reach string
	flag                              string // the screen verdict ("" clean)
	links                             []domain.LessonLink
	// from is the lesson's ordinal + 1 in the catalog encodeCatalog is
	// given as base, whose postings and field lengths it keeps; 0 for a
	// lesson analysed anew, whose terms are set.
	from        int
	terms       docTerms
	mtime, size int64 // the lesson file's, when synced from files
	created     int64 // Unix ms (0: unknown)
}

// encodeCatalog builds the catalog of docs, which must be sorted by id with
// no duplicates. The docs taken from base (from > 0) keep their postings
// and field lengths: base's term lists are merged with the new docs', so an
// update costs a pass over the postings, not a re-analysis or a regrouping.
func encodeCatalog(docs []catalogDoc, stamp, screen string, base *catalog) ([]byte, error) {
	var secs [numSections][]byte
	ord := make(map[string]int, len(docs))
	for i, d := range docs {
		if i > 0 && docs[i-1].id >= d.id {
			return nil, fmt.Errorf("encode catalog: lessons out of order at %q", d.id)
		}
		ord[d.id] = i
	}
	length := func(d *catalogDoc, f textField) uint32 {
		if d.from > 0 {
			return base.fieldLen(f, d.from-1)
		}
		return d.terms[f].length
	}
	moved := movedOrdinals(docs, base)
	field := func(f textField) error {
		sec := secFields + 4*int(f)
		var err error
		secs[sec], secs[sec+1], secs[sec+2], secs[sec+3], err = encodeField(docs, base, f, moved)
		return err
	}
	// The whole-text field, most of the postings, is encoded beside the
	// rest (each fills its own sections).
	var allErr error
	done := make(chan struct{})
	encodeAll := func() {
		defer close(done)
		allErr = field(fieldAll)
	}
	if serialForTest {
		encodeAll()
	} else {
		go encodeAll()
	}
	err := func() error {
		var err error
		if secs[secMeta], err = encodeMeta(docs, stamp, screen, length); err != nil {
			return err
		}
		if err := encodeRecords(&secs, docs, ord, base); err != nil {
			return err
		}
		lens := make([]byte, 0, 4*len(docs)*int(numFields))
		for f := textField(0); f < numFields; f++ {
			for i := range docs {
				lens = binary.LittleEndian.AppendUint32(lens, length(&docs[i], f))
			}
		}
		secs[secLens] = lens
		for f := fieldAll + 1; f < numFields; f++ {
			if err := field(f); err != nil {
				return err
			}
		}
		return nil
	}()
	<-done
	if err == nil {
		err = allErr
	}
	if err != nil {
		return nil, err
	}
	return assembleCatalog(secs, len(docs)), nil
}

// encodeMeta is the meta section, but for the body checksum that
// assembleCatalog appends.
func encodeMeta(docs []catalogDoc, stamp, screen string, length func(*catalogDoc, textField) uint32) ([]byte, error) {
	le := binary.LittleEndian
	var meta []byte
	meta = le.AppendUint32(meta, uint32(len(lexicalVersion)))
	meta = append(meta, lexicalVersion...)
	if len(stamp) > maxCatalogStr {
		return nil, errors.New("encode catalog: stamp too long")
	}
	meta = le.AppendUint32(meta, uint32(len(stamp)))
	meta = append(meta, stamp...)
	if len(screen) > maxCatalogStr {
		return nil, errors.New("encode catalog: screen id too long")
	}
	meta = le.AppendUint32(meta, uint32(len(screen)))
	meta = append(meta, screen...)
	for f := textField(0); f < numFields; f++ {
		var sum float64
		for i := range docs {
			sum += float64(length(&docs[i], f))
		}
		meta = le.AppendUint64(meta, math.Float64bits(max(sum/float64(max(len(docs), 1)), 1)))
	}
	return meta, nil
}

// tagHolds is domain.TagHolds for d, read from its analysed tags, or from
// base's tags postings for a doc kept from base (from > 0).
func (d *catalogDoc) tagHolds(base *catalog) func(word string) bool {
	if d.from > 0 {
		return tagWord(func(t string) bool { return holds(base.postings(fieldTags, t), d.from-1) })
	}
	return tagWord(func(t string) bool {
		_, ok := slices.BinarySearchFunc(d.terms[fieldTags].terms, t, func(tf termFreq, t string) int { return strings.Compare(tf.term, t) })
		return ok
	})
}

// linkGraph is supersededBy and neighbours by ordinal, from the links in id
// order (base: the catalog the docs with from > 0 are kept from). A supersedes link counts toward supersededBy only when it is
// earned (domain.EarnedSupersedes); every link is a neighbour.
func linkGraph(docs []catalogDoc, ord map[string]int, base *catalog) (supBy, neighb [][]uint32) {
	supBy = make([][]uint32, len(docs))
	neighb = make([][]uint32, len(docs))
	for i, d := range docs {
		for _, k := range d.links {
			j, ok := ord[k.Target]
			if !ok || j == i {
				continue
			}
			if k.Rel == domain.RelSupersedes && domain.EarnedSupersedes(d.gist, docs[j].gist, docs[i].tagHolds(base)) {
				supBy[j] = append(supBy[j], uint32(i))
			}
			neighb[i] = append(neighb[i], uint32(j))
			neighb[j] = append(neighb[j], uint32(i))
		}
	}
	return supBy, neighb
}

// encodeRecords fills the docs, strs, links and adj sections.
func encodeRecords(secs *[numSections][]byte, docs []catalogDoc, ord map[string]int, base *catalog) error {
	le := binary.LittleEndian
	u32 := func(b []byte, v uint32) []byte { return le.AppendUint32(b, v) }
	supBy, neighb := linkGraph(docs, ord, base)
	// The sections sized up front (grown by appending, they were copied
	// over and over: 100 MB of garbage in a rebuild of 100,000 lessons).
	nstrs, nlinks, nadj := 0, 0, 0
	for i, d := range docs {
		nstrs += len(d.id) + len(d.hash) + len(d.title) + len(d.gist) + len(d.typ) + len(d.reach) + len(d.flag)
		for _, k := range d.links {
			nstrs += len(k.Rel) + len(k.Target)
		}
		nlinks += len(d.links)
		nadj += len(supBy[i]) + len(neighb[i])
	}
	recs := make([]byte, 0, docRecord*len(docs))
	links := make([]byte, 0, linkRecord*nlinks)
	adj := make([]byte, 0, 4*nadj)
	var strs []byte
	if nstrs <= math.MaxUint32 {
		strs = make([]byte, 0, nstrs)
	}
	putStr := func(rec []byte, s string) ([]byte, error) {
		if len(s) > maxCatalogStr {
			return nil, errors.New("encode catalog: field too long")
		}
		rec = u32(rec, uint32(len(strs)))
		strs = append(strs, s...)
		return u32(rec, uint32(len(s))), nil
	}
	putRun := func(rec []byte, run []uint32) []byte {
		rec = u32(rec, uint32(len(adj)/4))
		for _, o := range run {
			adj = u32(adj, o)
		}
		return u32(rec, uint32(len(run)))
	}
	var err error
	for i, d := range docs {
		for _, s := range []string{d.id, d.hash, d.title, d.gist, d.typ, d.reach} {
			if recs, err = putStr(recs, s); err != nil {
				return fmt.Errorf("lesson %s: %w", d.id, err)
			}
		}
		recs = u32(recs, uint32(len(links)/linkRecord))
		for _, k := range d.links {
			if links, err = putStr(links, k.Rel); err == nil {
				links, err = putStr(links, k.Target)
			}
			if err != nil {
				return fmt.Errorf("lesson %s: %w", d.id, err)
			}
			var derived uint32
			if k.Derived {
				derived = 1
			}
			links = u32(links, derived)
		}
		recs = u32(recs, uint32(len(d.links)))
		recs = putRun(recs, supBy[i])
		recs = putRun(recs, neighb[i])
		recs = le.AppendUint64(recs, uint64(d.mtime))
		recs = le.AppendUint64(recs, uint64(d.size))
		if recs, err = putStr(recs, d.flag); err != nil {
			return fmt.Errorf("lesson %s: %w", d.id, err)
		}
		recs = le.AppendUint64(recs, uint64(d.created))
	}
	if uint64(len(strs)) > math.MaxUint32 {
		return errors.New("encode catalog: strings exceed 4 GiB")
	}
	secs[secDocs], secs[secStrs], secs[secLinks], secs[secAdj] = recs, strs, links, adj
	return nil
}

// movedOrdinals is where each base lesson went in docs (−1: gone or
// analysed anew); nil without a base.
func movedOrdinals(docs []catalogDoc, base *catalog) []int32 {
	if base == nil {
		return nil
	}
	moved := make([]int32, base.len())
	for i := range moved {
		moved[i] = -1
	}
	for i, d := range docs {
		if d.from > 0 && d.from <= len(moved) {
			moved[d.from-1] = int32(i)
		}
	}
	return moved
}

// newPosting is one posting of a lesson analysed anew.
type newPosting struct {
	term    string
	ord, tf uint32
}

// encodeField builds field f's four sections (term offsets, term bytes,
// posting starts, postings): base's term lists merged, term by term, with
// the postings of the docs analysed anew.
func encodeField(docs []catalogDoc, base *catalog, f textField, moved []int32) (offs, blob, starts, post []byte, err error) {
	fresh, freshTerms, freshBytes := groupPostings(docs, f)
	var fv *fieldView
	nb := 0
	if base != nil {
		fv = &base.fields[f]
		nb = fv.terms
	}
	// The postings sized to their bound (every old posting kept): grown by
	// appending they were copied again and again (0.8 s of a rebuild of
	// 100,000 lessons).
	postCap := len(fresh) * postingSize
	if fv != nil {
		postCap += len(fv.post)
	}
	post = make([]byte, 0, postCap)
	// The term tables sized to their bound too: the base's terms and the
	// distinct fresh ones.
	terms, termBytes := nb+freshTerms, freshBytes
	if fv != nil {
		termBytes += len(fv.termBytes)
	}
	offs, starts, blob = make([]byte, 0, 4*(terms+1)), make([]byte, 0, 4*(terms+1)), make([]byte, 0, termBytes)
	u32 := binary.LittleEndian.AppendUint32
	emit := func(term string, old []byte, add []newPosting) {
		begin := len(post)
		post = mergePostings(post, old, add, moved)
		if len(post) == begin {
			return // every lesson holding it is gone
		}
		offs = u32(offs, uint32(len(blob)))
		starts = u32(starts, uint32(begin/postingSize))
		blob = append(blob, term...)
	}
	for t, j := 0, 0; t < nb || j < len(fresh); {
		var term string
		switch {
		case t >= nb:
			term = fresh[j].term
		case j >= len(fresh):
			term = base.term(fv, t).s
		default:
			term = min(base.term(fv, t).s, fresh[j].term)
		}
		var old []byte
		if t < nb && base.term(fv, t).s == term {
			old = postingsAt(fv, t)
			t++
		}
		k := j
		for k < len(fresh) && fresh[k].term == term {
			k++
		}
		emit(term, old, fresh[j:k])
		j = k
	}
	offs = u32(offs, uint32(len(blob)))
	starts = u32(starts, uint32(len(post)/postingSize))
	if uint64(len(blob)) > math.MaxUint32 || uint64(len(post)/postingSize) > math.MaxUint32 {
		return nil, nil, nil, nil, errors.New("encode catalog: postings exceed the format")
	}
	return offs, blob, starts, post, nil
}

// groupPostings is the postings of field f of the docs analysed anew (from
// 0), by term, then ordinal: each distinct term is numbered as met, the
// numbers ranked by term, and the postings placed by a counting sort, which
// keeps them in ordinal order within a term. (A comparison sort of every
// posting cost a rebuild of 100,000 lessons 8 s of CPU.) It also returns
// the distinct terms' count and their summed length.
func groupPostings(docs []catalogDoc, f textField) ([]newPosting, int, int) {
	n := 0
	for i := range docs {
		if docs[i].from == 0 {
			n += len(docs[i].terms[f].terms)
		}
	}
	if n == 0 {
		return nil, 0, 0
	}
	num := make(map[string]int32)
	bytes := 0
	var names []string // by number
	var count []int32  // postings per term number
	nums := make([]int32, 0, n)
	for i := range docs {
		if docs[i].from != 0 {
			continue
		}
		for _, tf := range docs[i].terms[f].terms {
			k, ok := num[tf.term]
			if !ok {
				k = int32(len(names))
				num[tf.term] = k
				names = append(names, tf.term)
				bytes += len(tf.term)
				count = append(count, 0)
			}
			count[k]++
			nums = append(nums, k)
		}
	}
	byTerm := make([]int32, len(names))
	for k := range byTerm {
		byTerm[k] = int32(k)
	}
	slices.SortFunc(byTerm, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	next := make([]int32, len(names)) // where term number k's next posting goes
	at := int32(0)
	for _, k := range byTerm {
		next[k] = at
		at += count[k]
	}
	out := make([]newPosting, n)
	p := 0
	for i := range docs {
		if docs[i].from != 0 {
			continue
		}
		for _, tf := range docs[i].terms[f].terms {
			k := nums[p]
			p++
			out[next[k]] = newPosting{tf.term, uint32(i), tf.tf}
			next[k]++
		}
	}
	return out, len(names), bytes
}

// mergePostings appends to post one term's postings: old's (a base term
// list, its ordinals renumbered by moved, those gone or analysed anew
// dropped) merged by ordinal with add's.
func mergePostings(post, old []byte, add []newPosting, moved []int32) []byte {
	u32 := binary.LittleEndian.AppendUint32
	for len(old) >= postingSize || len(add) > 0 {
		n := int32(-1)
		if len(old) >= postingSize {
			if d := int(le32(old)); d < len(moved) {
				n = moved[d]
			}
			if n < 0 { // gone, or re-analysed: its new postings are in add
				old = old[postingSize:]
				continue
			}
		}
		if len(add) > 0 && (n < 0 || add[0].ord < uint32(n)) {
			post = u32(u32(post, add[0].ord), add[0].tf)
			add = add[1:]
			continue
		}
		post = u32(u32(post, uint32(n)), le32(old[4:]))
		old = old[postingSize:]
	}
	return post
}

// assembleCatalog lays the sections out behind the header and section
// table, with the checksums.
func assembleCatalog(secs [numSections][]byte, docs int) []byte {
	le := binary.LittleEndian
	body := crc32.NewIEEE()
	for _, b := range secs[secMeta+1:] {
		body.Write(b)
	}
	secs[secMeta] = le.AppendUint32(secs[secMeta], body.Sum32())
	head := len(catalogMagic) + 16
	table := head + 16*numSections
	out := make([]byte, 0, table+4+sectionsSize(secs))
	out = append(out, catalogMagic...)
	out = le.AppendUint32(out, catalogFormat)
	out = le.AppendUint32(out, uint32(numFields))
	out = le.AppendUint32(out, uint32(docs))
	out = le.AppendUint32(out, uint32(numSections))
	off := uint64(table + 4)
	for _, s := range secs {
		out = le.AppendUint64(out, off)
		out = le.AppendUint64(out, uint64(len(s)))
		off += uint64(len(s)+3) &^ 3
	}
	sum := crc32.NewIEEE()
	sum.Write(out)
	sum.Write(secs[secMeta])
	out = le.AppendUint32(out, sum.Sum32())
	for _, s := range secs {
		out = append(out, s...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

func sectionsSize(secs [numSections][]byte) int {
	n := 0
	for _, s := range secs {
		n += (len(s) + 3) &^ 3
	}
	return n
}

// repoTag is the repo tag of a reach value ("" for team reach).
func repoTag(reach string) string {
	return domain.Lesson{Reach: reach}.RepoTag()
}

func clampU32(n int) uint32 {
	if n < 0 {
		return 0
	}
	if uint64(n) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}
