package index

import "sort"

// bestKept returns the (at most) n best of cands, best first by better,
// that keep accepts (nil keeps all). It ranks the 2n+16 best first and asks
// keep about those in order; only when keep rejects too many does it rank
// them all: keep (reach) is asked of few candidates. The vector arm uses
// it; the lexical arm streams the same rule (lexicalSearchBlocks).
func bestKept(cands []int, n int, better func(a, b int) bool, keep func(int) bool) []int {
	if n <= 0 {
		return nil
	}
	for want := 2*n + 16; ; want = len(cands) {
		top := best(cands, want, better)
		out := make([]int, 0, n)
		for _, c := range top {
			if keep != nil && !keep(c) {
				continue
			}
			out = append(out, c)
			if len(out) == n {
				return out
			}
		}
		if len(top) < want || want >= len(cands) {
			return out
		}
	}
}

// best returns the m best of cands, best first, in O(len(cands) · log m).
func best(cands []int, m int, better func(a, b int) bool) []int {
	t := newTopK(min(m, len(cands)), better)
	for _, c := range cands {
		t.offer(c)
	}
	return t.sorted()
}

// topK keeps the m best of the values offered to it, by better (a strict
// total order), in a min-heap on the worst kept: O(log m) an offer that
// enters, one comparison one that does not.
type topK[T any] struct {
	h      []T
	m      int
	better func(a, b T) bool
}

func newTopK[T any](m int, better func(a, b T) bool) *topK[T] {
	return &topK[T]{h: make([]T, 0, max(m, 0)), m: m, better: better}
}

// wouldKeep reports whether offering c now would keep it.
func (t *topK[T]) wouldKeep(c T) bool {
	return len(t.h) < t.m || (len(t.h) > 0 && t.better(c, t.h[0]))
}

// offer keeps c if it is among the m best offered so far.
func (t *topK[T]) offer(c T) {
	if !t.wouldKeep(c) {
		return
	}
	h, better := t.h, t.better
	if len(h) < t.m {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(h[p], h[i]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.h = h
		return
	}
	h[0] = c
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r := l + 1; r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			break
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// sorted returns what t kept, best first; t is spent.
func (t *topK[T]) sorted() []T {
	h := t.h
	if len(h) == 0 {
		return nil
	}
	sort.Slice(h, func(i, j int) bool { return t.better(h[i], h[j]) })
	return h
}
