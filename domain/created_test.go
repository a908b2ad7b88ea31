package domain

import (
	"testing"
	"time"
)

// TestBelievedCreated: a date up to FutureSlack past the reader's instant
// is believed; one further on, like none, is unknown (zero).
func TestBelievedCreated(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		created time.Time
		want    time.Time
	}{
		{"none", time.Time{}, time.Time{}},
		{"past", at.AddDate(0, -2, 0), at.AddDate(0, -2, 0)},
		{"within the slack", at.Add(FutureSlack), at.Add(FutureSlack)},
		{"past the slack", at.Add(FutureSlack + time.Millisecond), time.Time{}},
		{"far future", at.AddDate(70, 0, 0), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BelievedCreated(tt.created, at); !got.Equal(tt.want) {
				t.Errorf("BelievedCreated(%v) = %v, want %v", tt.created, got, tt.want)
			}
		})
	}
}
