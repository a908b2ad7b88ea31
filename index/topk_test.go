package index

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// TestBestKept: bestKept gives what sorting every candidate and filtering
// gives, whatever the ties, the filter and n (random cases).
func TestBestKept(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 500 {
		scores := make([]int, r.IntN(300))
		cands := make([]int, len(scores))
		for i := range scores {
			scores[i] = r.IntN(20) // many ties
			cands[i] = i
		}
		r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		better := func(a, b int) bool {
			if scores[a] != scores[b] {
				return scores[a] > scores[b]
			}
			return a < b
		}
		mod := 1 + r.IntN(40) // keep rejects all but one in mod
		keep := func(c int) bool { return c%mod == 0 }
		n := r.IntN(30)
		var want []int
		all := append([]int(nil), cands...)
		sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
		for _, c := range all {
			if len(want) < n && keep(c) {
				want = append(want, c)
			}
		}
		if got := bestKept(cands, n, better, keep); !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (n %d, mod %d): got %v, want %v", trial, n, mod, got, want)
		}
	}
}
