package domain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func sumScores(m map[string]float64) float64 {
	var vs []float64
	for _, v := range m {
		vs = append(vs, v)
	}
	return CompensatedSum(vs)
}

func TestPagerank(t *testing.T) {
	e := func(s, d string, w float64) GraphEdge { return GraphEdge{Src: s, Dst: d, Strength: w} }
	tests := []struct {
		name  string
		nodes []string
		edges []GraphEdge
		opts  PagerankOptions
		want  map[string]float64
	}{
		{"empty", nil, nil, PagerankOptions{}, map[string]float64{}},
		{"single node", []string{"a"}, nil, PagerankOptions{}, map[string]float64{"a": 1}},
		{"cycle is uniform", []string{"a", "b", "c"}, []GraphEdge{e("a", "b", 1), e("b", "c", 1), e("c", "a", 1)}, PagerankOptions{},
			map[string]float64{"a": 1.0 / 3, "b": 1.0 / 3, "c": 1.0 / 3}},
		{"dangling mass goes over the prior", []string{"a", "b"}, []GraphEdge{e("a", "b", 1)}, PagerankOptions{},
			map[string]float64{"a": 0.5 / 1.425, "b": 1 - 0.5/1.425}},
		{"edges to absent nodes are dropped", []string{"a", "b"}, []GraphEdge{e("a", "b", 1), e("a", "zz", 1), e("zz", "a", 1)}, PagerankOptions{},
			map[string]float64{"a": 0.5 / 1.425, "b": 1 - 0.5/1.425}},
		{"absent seeds fall back to uniform", []string{"a", "b"}, []GraphEdge{e("a", "b", 1)}, PagerankOptions{Seeds: map[string]float64{"zz": 1}},
			map[string]float64{"a": 0.5 / 1.425, "b": 1 - 0.5/1.425}},
		// Personalized on a: x_a = 0.15 + 0.85·x_b (b dangles back to a), x_b = 0.85·x_a.
		{"personalized", []string{"a", "b"}, []GraphEdge{e("a", "b", 1)}, PagerankOptions{Seeds: map[string]float64{"a": 2, "zz": 5, "b": -1}},
			map[string]float64{"a": 0.15 / (1 - 0.85*0.85), "b": 0.85 * 0.15 / (1 - 0.85*0.85)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Pagerank(tt.nodes, tt.edges, tt.opts)
			if len(got) != len(tt.want) {
				t.Fatalf("Pagerank = %v, want %v", got, tt.want)
			}
			for k, w := range tt.want {
				if math.Abs(got[k]-w) > 1e-5 {
					t.Fatalf("Pagerank[%s] = %v, want %v (all %v)", k, got[k], w, got)
				}
			}
			if len(got) > 0 && math.Abs(sumScores(got)-1) > 1e-12 {
				t.Fatalf("scores sum to %v", sumScores(got))
			}
		})
	}
}

func TestPagerankParallelEdgesFoldToMax(t *testing.T) {
	got := Pagerank([]string{"a", "b", "c"}, []GraphEdge{
		{"a", "b", 0.2}, {"a", "b", 0.9}, {"a", "c", 0.9}, {"a", "c", math.NaN()}, {"b", "a", 7},
	}, PagerankOptions{})
	if got["b"] != got["c"] {
		t.Fatalf("b %v and c %v should tie", got["b"], got["c"])
	}
}

func randomGraph(r *rand.Rand, nNodes, nEdges int) ([]string, []GraphEdge) {
	nodes := make([]string, nNodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%05d", i)
	}
	edges := make([]GraphEdge, nEdges)
	for i := range edges {
		edges[i] = GraphEdge{Src: nodes[r.IntN(nNodes)], Dst: nodes[r.IntN(nNodes)], Strength: r.Float64()}
	}
	return nodes, edges
}

func TestGraphOrderInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 2))
	for round := 0; round < 30; round++ {
		nodes, edges := randomGraph(r, 2+r.IntN(30), r.IntN(80))
		seeds := map[string]float64{nodes[0]: 1, nodes[len(nodes)-1]: 0.5}
		pr := Pagerank(nodes, edges, PagerankOptions{Seeds: seeds})
		lp := LabelPropagation(nodes, edges, LabelPropagationOptions{})
		bc := BridgeCounts(nodes, edges, lp)
		r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		if got := Pagerank(nodes, edges, PagerankOptions{Seeds: seeds}); !reflect.DeepEqual(got, pr) {
			t.Fatalf("round %d: Pagerank depends on input order", round)
		}
		if math.Abs(sumScores(pr)-1) > 1e-12 {
			t.Fatalf("round %d: sum %v", round, sumScores(pr))
		}
		if got := LabelPropagation(nodes, edges, LabelPropagationOptions{}); !reflect.DeepEqual(got, lp) {
			t.Fatalf("round %d: LabelPropagation depends on input order", round)
		}
		if got := BridgeCounts(nodes, edges, lp); !reflect.DeepEqual(got, bc) {
			t.Fatalf("round %d: BridgeCounts depends on input order", round)
		}
	}
}

func TestLabelPropagationAndBridges(t *testing.T) {
	nodes := []string{"a", "b", "c", "d", "e", "f", "p", "q", "z"}
	edges := []GraphEdge{
		{"a", "b", 1}, {"b", "c", 1}, {"c", "a", 1}, // triangle 1
		{"d", "e", 1}, {"e", "f", 1}, {"f", "d", 1}, // triangle 2
		{"c", "d", 0.1},                 // bridge
		{"p", "q", 1},                   // a pair is no community
		{"q", "c", 0.1},                 // edge from a non-community node
		{"z", "z", 1}, {"a", "gone", 1}, // self-loop and absent node
	}
	lp := LabelPropagation(nodes, edges, LabelPropagationOptions{})
	want := map[string]string{"a": "a", "b": "a", "c": "a", "d": "d", "e": "d", "f": "d", "p": "", "q": "", "z": ""}
	if !reflect.DeepEqual(lp, want) {
		t.Fatalf("LabelPropagation = %v, want %v", lp, want)
	}
	bc := BridgeCounts(nodes, edges, lp)
	wantBC := map[string]int{"a": 0, "b": 0, "c": 2, "d": 1, "e": 0, "f": 0, "p": 0, "q": 0, "z": 0}
	if !reflect.DeepEqual(bc, wantBC) {
		t.Fatalf("BridgeCounts = %v, want %v", bc, wantBC)
	}
	if got := LabelPropagation(nodes, edges, LabelPropagationOptions{MinCommunitySize: 2}); got["p"] != "p" || got["q"] != "p" {
		t.Fatalf("MinCommunitySize 2: %v", got)
	}
}

func BenchmarkPagerank10kNodes50kEdges(b *testing.B) {
	nodes, edges := randomGraph(rand.New(rand.NewPCG(3, 4)), 10_000, 50_000)
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		if len(Pagerank(nodes, edges, PagerankOptions{})) != len(nodes) {
			b.Fatal("size")
		}
	}
}
