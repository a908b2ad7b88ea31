// Command pagetouch times the first touch of pages of a file mapped into
// the process, the cost every hook pays for each page of an index, a cache
// or its own heap it reads for the first time: n random pages read from a
// fresh mapping, then n others of a second fresh mapping, each first
// mapped in by fsutil.Prefault (MADV_POPULATE_READ on Linux), which is
// timed apart. It prints the three times and the cost per page.
//
//	go run ./scripts/pagetouch [-n 200] FILE
//
// On a machine where the second read costs about what the first does,
// mapping pages in ahead saves nothing: only touching fewer pages does
// (BENCHMARKS.md, issue 29).
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"time"

	"github.com/borg-memory/borg/memfs/fsutil"
)

func main() {
	n := flag.Int("n", 200, "pages to touch in each mapping")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: pagetouch [-n pages] FILE")
	}
	path := flag.Arg(0)
	page := os.Getpagesize()
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	pick := func(data []byte) []int {
		at := make([]int, *n)
		for i := range at {
			at[i] = r.IntN(len(data)/page) * page
		}
		return at
	}
	touch := func(data []byte, at []int) (time.Duration, int) {
		sum := 0
		start := time.Now()
		for _, o := range at {
			sum += int(data[o])
		}
		return time.Since(start), sum
	}
	mapped := func() ([]byte, func()) {
		data, unmap, err := fsutil.Map(path)
		if err != nil {
			log.Fatal(err)
		}
		if len(data) < page {
			log.Fatalf("%s: smaller than a page", path)
		}
		return data, unmap
	}

	data, unmap := mapped()
	cold, s1 := touch(data, pick(data))
	unmap()

	data, unmap = mapped()
	at := pick(data)
	start := time.Now()
	for _, o := range at {
		fsutil.Prefault(data[o : o+1])
	}
	prefault := time.Since(start)
	warm, s2 := touch(data, at)
	unmap()

	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(*n) }
	fmt.Printf("%d pages of %s (checksum %d)\n", *n, path, (s1+s2)%2)
	fmt.Printf("  first touch:                 %8.2f ms  %6.1f µs a page\n", ms(cold), per(cold))
	fmt.Printf("  mapped in ahead (Prefault):  %8.2f ms  %6.1f µs a page\n", ms(prefault), per(prefault))
	fmt.Printf("  then their first touch:      %8.2f ms  %6.1f µs a page\n", ms(warm), per(warm))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
