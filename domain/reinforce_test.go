package domain

import (
	"reflect"
	"testing"
	"time"
)

func TestShouldBumpAccess(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { s := now.Add(-d); return &s }
	tests := []struct {
		name string
		last *time.Time
		want bool
	}{
		{"never accessed", nil, true},
		{"exactly 900 s old", at(900 * time.Second), true},
		{"a nanosecond short", at(900*time.Second - 1), false},
		{"long ago", at(24 * time.Hour), true},
		{"just now", at(0), false},
		{"in the future", at(-time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShouldBumpAccess(tt.last, now, ReinforceCooldown); got != tt.want {
				t.Fatalf("ShouldBumpAccess = %v, want %v", got, tt.want)
			}
		})
	}
	if ReinforceCooldown != 900*time.Second {
		t.Fatal("cooldown moved")
	}
	bumped, cool := PartitionByCooldown([]AccessEntry{
		{"c", at(time.Second)}, {"a", nil}, {"d", at(time.Minute)}, {"b", at(time.Hour)},
	}, now, ReinforceCooldown)
	if !reflect.DeepEqual(bumped, []string{"a", "b"}) || !reflect.DeepEqual(cool, []string{"c", "d"}) {
		t.Fatalf("PartitionByCooldown = %v, %v", bumped, cool)
	}
}
