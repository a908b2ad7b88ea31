package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/borg-memory/borg/domain"
)

// The catalog (.borg/index/catalog.bin) is what retrieval needs of every
// lesson besides its text: id, content hash, title, gist, type, reach,
// links and the length in terms of each lexical field. It lets a warm
// process search right after Open without reading the lessons, and it is
// the record of which content the lexical index holds. Little-endian:
//
//	magic "BORGCAT1" | u32 format | u32 len + lexical version | u32 len + stamp | u32 count
//	count × (id, hash, title, gist, type, reach: u32 len + bytes;
//	         u32 links × (rel, target: u32 len + bytes, u8 derived);
//	         u32 × len(lexFields) field lengths)
//	u32 CRC-32 (IEEE) of all before
const (
	catalogMagic  = "BORGCAT1"
	catalogFormat = 1
	catalogName   = "catalog.bin"
	maxCatalogStr = 1 << 24
)

// lessonInfo is one catalog entry.
type lessonInfo struct {
	id, hash, title, gist, typ, reach string
	repo                              string // derived from reach
	links                             []domain.LessonLink
	lens                              []uint32 // per lexFields
}

// catalog is the set of lessonInfo plus the caller's freshness stamp.
type catalog struct {
	stamp   string
	lessons map[string]*lessonInfo
	// order holds the lessons sorted by id when known (a decoded catalog is
	// written in id order; Sync builds it in id order), nil otherwise.
	order []*lessonInfo
}

func newCatalog() *catalog { return &catalog{lessons: map[string]*lessonInfo{}} }

// avgLens is each lexical field's mean length over the catalog (at least 1).
func (c *catalog) avgLens() []float64 {
	sums := make([]float64, len(lexFields))
	for _, li := range c.lessons {
		for i := range sums {
			if i < len(li.lens) {
				sums[i] += float64(li.lens[i])
			}
		}
	}
	n := float64(max(len(c.lessons), 1))
	for i := range sums {
		sums[i] = max(sums[i]/n, 1)
	}
	return sums
}

// readCatalog reads the catalog at path; a missing, corrupt or other-version
// file yields an empty catalog and false (the caller rebuilds the index).
func readCatalog(path string) (*catalog, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return newCatalog(), false
	}
	c, err := decodeCatalog(raw)
	if err != nil {
		return newCatalog(), false
	}
	return c, true
}

// decodeCatalog decodes raw; the catalog's strings alias raw, which the
// caller must not modify afterwards.
func decodeCatalog(raw []byte) (*catalog, error) {
	if len(raw) < len(catalogMagic)+8 || string(raw[:len(catalogMagic)]) != catalogMagic {
		return nil, errors.New("decode catalog: bad magic")
	}
	body, sum := raw[:len(raw)-4], binary.LittleEndian.Uint32(raw[len(raw)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("decode catalog: checksum mismatch")
	}
	r := &sliceReader{b: body, off: len(catalogMagic)}
	if f := r.u32(); f != catalogFormat {
		return nil, fmt.Errorf("decode catalog: format %d", f)
	}
	if v := string(r.blob32(maxCatalogStr)); v != lexicalVersion {
		return nil, fmt.Errorf("decode catalog: lexical version %q", v)
	}
	c := newCatalog()
	c.stamp = string(r.blob32(maxCatalogStr))
	count := r.u32()
	if int64(count)*int64(8+len(lexFields)*4) > int64(len(body)) {
		return nil, errors.New("decode catalog: count exceeds file")
	}
	// Strings alias raw (never modified after the read): 10,000 lessons
	// decode without 60,000 small copies.
	str := func() string {
		b := r.blob32(maxCatalogStr)
		if len(b) == 0 {
			return ""
		}
		return unsafe.String(&b[0], len(b))
	}
	c.lessons = make(map[string]*lessonInfo, count)
	slab := make([]lessonInfo, count)
	lens := make([]uint32, int(count)*len(lexFields))
	for i := 0; i < int(count) && r.err == nil; i++ {
		li := &slab[i]
		*li = lessonInfo{id: str(), hash: str(), title: str(), gist: str(), typ: str(), reach: str()}
		li.repo = repoTag(li.reach)
		nl := r.u32()
		if int64(nl) > int64(len(body)) {
			return nil, errors.New("decode catalog: link count exceeds file")
		}
		for j := 0; j < int(nl) && r.err == nil; j++ {
			k := domain.LessonLink{Rel: str(), Target: str()}
			if d := r.take(1); d != nil {
				k.Derived = d[0] == 1
			}
			li.links = append(li.links, k)
		}
		li.lens = lens[i*len(lexFields) : (i+1)*len(lexFields) : (i+1)*len(lexFields)]
		for j := range li.lens {
			li.lens[j] = r.u32()
		}
		if _, dup := c.lessons[li.id]; dup {
			return nil, fmt.Errorf("decode catalog: duplicate id %q", li.id)
		}
		c.lessons[li.id] = li
	}
	if r.err != nil || r.off != len(body) {
		return nil, errors.New("decode catalog: truncated")
	}
	c.order = make([]*lessonInfo, len(slab))
	for i := range slab {
		if i > 0 && slab[i-1].id >= slab[i].id {
			c.order = nil // not in id order: derive sorts
			break
		}
		c.order[i] = &slab[i]
	}
	return c, nil
}

// write saves the catalog atomically, lessons in id order.
func (c *catalog) write(path string) error {
	var b bytes.Buffer
	le := binary.LittleEndian
	u32 := func(v uint32) { b.Write(le.AppendUint32(nil, v)) }
	str := func(s string) {
		u32(uint32(len(s)))
		b.WriteString(s)
	}
	b.WriteString(catalogMagic)
	u32(catalogFormat)
	str(lexicalVersion)
	str(c.stamp)
	ids := make([]string, 0, len(c.lessons))
	for id := range c.lessons {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	u32(uint32(len(ids)))
	for _, id := range ids {
		li := c.lessons[id]
		for _, s := range []string{li.id, li.hash, li.title, li.gist, li.typ, li.reach} {
			if len(s) > maxCatalogStr {
				return fmt.Errorf("write catalog: lesson %s: field too long", id)
			}
			str(s)
		}
		u32(uint32(len(li.links)))
		for _, k := range li.links {
			str(k.Rel)
			str(k.Target)
			if k.Derived {
				b.WriteByte(1)
			} else {
				b.WriteByte(0)
			}
		}
		for j := range lexFields {
			var n uint32
			if j < len(li.lens) {
				n = li.lens[j]
			}
			u32(n)
		}
	}
	u32(crc32.ChecksumIEEE(b.Bytes()))
	return writeFileAtomic(path, b.Bytes())
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so a reader sees the old or the new file, never half.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// repoTag is the repo tag of a reach value ("" for team reach).
func repoTag(reach string) string {
	return domain.Lesson{Reach: reach}.RepoTag()
}

// clampU32 converts a count to uint32, saturating.
func clampU32(n int) uint32 {
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}
