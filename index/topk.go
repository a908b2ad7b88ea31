package index

import "sort"

// bestKept returns the (at most) n best of cands, best first by better,
// that keep accepts (nil keeps all). It ranks the 2n+16 best first and asks
// keep about those in order; only when keep rejects too many does it rank
// them all. Both arms use it: keep (reach) is asked of few candidates.
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

// best returns the m best of cands, best first, in O(len(cands) · log m)
// with a min-heap on the worst kept.
func best(cands []int, m int, better func(a, b int) bool) []int {
	m = min(m, len(cands))
	if m <= 0 {
		return nil
	}
	h := make([]int, 0, m)
	for _, c := range cands {
		if len(h) < m {
			h = append(h, c)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !better(h[p], h[i]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if !better(c, h[0]) {
			continue
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
	sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) })
	return h
}
