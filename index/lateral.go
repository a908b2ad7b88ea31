package index

// lateralOrder is the lateral arm: pending domain.Pagerank.
func (ix *Index) lateralOrder(fused map[string]float64, keep func(string) bool) []string {
	return nil
}
