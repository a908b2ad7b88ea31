package index

import (
	"reflect"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestSalienceArmTies: the salience arm only reorders lessons it can tell
// apart (docs/design.md, "Choosing a lesson").
func TestSalienceArmTies(t *testing.T) {
	young := Usefulness{Uses: 1, Mean: 0.5, Draw: 0.5} // created, no outcome
	proven := Usefulness{Uses: 4, Results: 4, Mean: 0.8, Draw: 0.8}
	lex := []scored{{id: "c"}, {id: "a"}, {id: "d"}, {id: "b"}}
	vec := []scored{{id: "e"}, {id: "a"}}
	tests := []struct {
		name   string
		useful map[string]Usefulness
		want   []domain.ArmHit
	}{
		{"empty log: silent", map[string]Usefulness{}, nil},
		{"a young store (every lesson used once, at creation): silent",
			map[string]Usefulness{"a": young, "b": young, "c": young, "d": young, "e": young}, nil},
		{"one lesson with evidence, the rest tied below it",
			map[string]Usefulness{"a": young, "b": proven, "c": young, "d": young, "e": young},
			[]domain.ArmHit{{Path: "b", Rank: 1}, {Path: "a", Rank: 2}, {Path: "c", Rank: 2}, {Path: "d", Rank: 2}, {Path: "e", Rank: 2}}},
		{"lessons without a use stay out of the arm",
			map[string]Usefulness{"c": young, "d": young},
			[]domain.ArmHit{{Path: "c", Rank: 1}, {Path: "d", Rank: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useful := func(id string) Usefulness {
				if u, ok := tt.useful[id]; ok {
					return u
				}
				return neutral
			}
			if got := salienceArm(lex, vec, useful); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
