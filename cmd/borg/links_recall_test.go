package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// TestRecallWalksUsedLinks: the lesson → lesson links sessions made (the
// passings the Stop hook writes for lessons acted on together) reach
// recall's lateral arm through the log's summary: a lesson the query does
// not name, used together with the text hits, is recalled by the walk.
func TestRecallWalksUsedLinks(t *testing.T) {
	vars := adversarialStore(t)
	var ids []string
	for i := range 5 {
		code, out, stderr := inProcess(t, vars, "", "learn", "--json", fmt.Sprintf("Kafka consumer lag alert rule %d pages the on-call", i))
		if code != 0 {
			t.Fatal(stderr)
		}
		var l struct{ ID string }
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	code, out, stderr := inProcess(t, vars, "", "learn", "--json", "Grafana dashboards live in the observability repository")
	if code != 0 {
		t.Fatal(stderr)
	}
	var grafana struct{ ID string }
	if err := json.Unmarshal([]byte(out), &grafana); err != nil {
		t.Fatal(err)
	}
	query := func() int {
		code, out, stderr := inProcess(t, vars, "", "recall", "--json", "--explain", "--k", "10", "kafka consumer lag alert")
		if code != 0 {
			t.Fatal(stderr)
		}
		var hits []struct {
			ID    string `json:"id"`
			Ranks struct {
				Lateral int `json:"lateral"`
			} `json:"ranks"`
		}
		if err := json.Unmarshal([]byte(out), &hits); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, h := range hits {
			if h.ID == grafana.ID {
				return h.Ranks.Lateral
			}
		}
		return 0
	}
	if r := query(); r != 0 {
		t.Fatalf("the lateral arm reached %s before any session linked it (rank %d)", grafana.ID, r)
	}
	s, err := memfs.Open(vars["BORG_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Now().Add(-time.Hour).UnixMilli()
	var events []domain.Event
	for k := range 3 { // three sessions used them together
		session := memfs.HashSession(fmt.Sprintf("together-%d", k))
		events = append(events, domain.Event{MS: ms, Kind: domain.KindSession, Session: session})
		for i := range 4 {
			events = append(events, domain.Event{MS: ms + int64(i+1), Kind: domain.KindPassing, Session: session, Src: ids[i], SrcV: "c-00000001", Dst: ids[i+1], DstV: "c-00000001"})
		}
		events = append(events, domain.Event{MS: ms + 9, Kind: domain.KindPassing, Session: session, Src: ids[0], SrcV: "c-00000001", Dst: grafana.ID, DstV: "c-00000001"})
		ms += 60_000
	}
	if err := s.Append(events...); err != nil {
		t.Fatal(err)
	}
	if r := query(); r == 0 {
		t.Fatalf("the lessons used together did not reach recall's lateral arm")
	}
}
