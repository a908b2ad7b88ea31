package gitobj

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPackReader reads every object of packs git itself wrote, with
// offset deltas and with reference deltas, and compares each with git
// cat-file.
func TestPackReader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config []string
		delta  byte // the kind of delta the pack must hold
	}{
		{"offset deltas", nil, packOfsDelta},
		{"reference deltas", []string{"-c", "pack.useDeltaBaseOffset=false", "-c", "repack.useDeltaBaseOffset=false"}, packRefDelta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := newRepo(t)
			// Versions of files that differ a little: git deltifies them.
			for rev := range 6 {
				for i := range 40 {
					body := strings.Repeat(fmt.Sprintf("Line %d of the body, version %d. ", i, rev), 20+i)
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				gitT(t, dir, "add", "-A")
				gitT(t, dir, "commit", "-q", "-m", fmt.Sprint("rev ", rev))
			}
			gitT(t, dir, append(tc.config, "gc", "-q", "--aggressive", "--prune=now")...)
			if loose := gitT(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
				t.Fatalf("objects left loose: %s", loose)
			}
			want := catAll(t, dir)
			ps := newPackSet(filepath.Join(dir, ".git", "objects", "pack"))
			defer ps.close()
			deltas := 0
			for h, obj := range want {
				typ, data, found, err := ps.read(h)
				if err != nil || !found {
					t.Fatalf("%x: found %v, %v", h, found, err)
				}
				if typ.String() != obj.typ || !bytes.Equal(data, obj.data) {
					t.Fatalf("%x: a %s of %d bytes, want a %s of %d", h, typ, len(data), obj.typ, len(obj.data))
				}
				if n, found, err := ps.size(h); err != nil || !found || n != uint64(len(obj.data)) {
					t.Fatalf("%x: size %d, %v, %v; want %d", h, n, found, err, len(obj.data))
				}
				deltas += obj.delta
			}
			if deltas == 0 {
				t.Fatal("git wrote no deltas: the test proved nothing about them")
			}
			kinds := map[byte]int{}
			for _, p := range ps.packs {
				for k, n := range entryTypes(t, p) {
					kinds[k] += n
				}
			}
			if kinds[tc.delta] == 0 {
				t.Fatalf("the packs hold entries of types %v, none of type %d: the case proved nothing", kinds, tc.delta)
			}
			if _, _, found, err := ps.read([20]byte{1, 2, 3}); found || err != nil {
				t.Errorf("a missing object: found %v, %v", found, err)
			}
			if _, found, err := ps.size([20]byte{1, 2, 3}); found || err != nil {
				t.Errorf("the size of a missing object: found %v, %v", found, err)
			}
		})
	}
}

type catObject struct {
	typ   string
	data  []byte
	delta int // 1 when git stored it as a delta
}

// catAll is every object of the repository in dir, as git cat-file reads it.
func catAll(t *testing.T, dir string) map[[20]byte]catObject {
	t.Helper()
	check := gitT(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(deltabase)")
	out := map[[20]byte]catObject{}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(check), "\n") {
		f := strings.Fields(line)
		h := parseID(t, f[0])
		o := catObject{}
		if strings.Trim(f[1], "0") != "" {
			o.delta = 1
		}
		out[h] = o
		names = append(names, f[0])
	}
	// git cat-file --batch: "<name> <type> <size>\n<content>\n" each.
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	for range names {
		head, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(head)
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		h := parseID(t, f[0])
		o := out[h]
		o.typ, o.data = f[1], data[:n]
		out[h] = o
	}
	return out
}

// FuzzApplyDelta: any delta over any base either fails or builds exactly
// the size it declares, without a panic.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello, world"), []byte{12, 5, 0x91, 0, 5})         // copy 5 bytes from 0
	f.Add([]byte("abc"), []byte{3, 4, 0x90, 2, 2, 'x', 'y'})         // a bad copy size
	f.Add([]byte(""), []byte{0, 3, 3, 'a', 'b', 'c'})                // insert only
	f.Add([]byte("0123456789"), []byte{10, 10, 0x80, 0x91, 9, 1, 0}) // copy of 0x10000
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, rest, _ := deltaSize(delta)
		want, _, _ := deltaSize(rest)
		if uint64(len(out)) != want {
			t.Fatalf("built %d bytes, the delta declares %d", len(out), want)
		}
	})
}

// entryTypes counts the pack entry types of p (1-4 objects, 6 offset
// deltas, 7 reference deltas), reading each entry's first byte at the
// offset its index gives.
func entryTypes(t *testing.T, p *packFile) map[byte]int {
	t.Helper()
	out := map[byte]int{}
	names := 8 + 256*4
	for i := range p.n {
		var h [20]byte
		copy(h[:], p.idx[names+20*i:])
		off, ok := p.find(h)
		if !ok {
			t.Fatalf("%x: listed in the index, not found by find", h)
		}
		var b [1]byte
		if _, err := p.pack.ReadAt(b[:], off); err != nil {
			t.Fatal(err)
		}
		out[b[0]>>4&7]++
	}
	return out
}
