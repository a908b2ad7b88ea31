package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// The forged log (testdata/adversarial/forged_log.txtar, run by
// TestAdversarialScripts with the real borg binary and real git): one
// pusher commits a log file of made-up sessions, authors and repos that
// consolidates a teammate's lesson. The prompt hook must not deliver the
// lesson unprompted to anyone but the forger, and doctor must flag the
// file and name the commit; evidence from two engineers, each committing
// their own sessions, must still deliver it.

// writeLogCmd: writelog FILE LESSON N FIRST EMAIL... writes N sessions
// numbered from FIRST in which LESSON was asked and changed, each under
// the next email of the list (hashed), in repos api and web alternately,
// dated the last minutes.
func writeLogCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 5 {
		ts.Fatalf("usage: writelog FILE LESSON N FIRST EMAIL...")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	first, err := strconv.Atoi(args[3])
	ts.Check(err)
	emails := args[4:]
	ms := time.Now().Add(-30 * time.Minute).UnixMilli()
	var b strings.Builder
	for i := range n {
		k := first + i
		s := fmt.Sprintf("s-%016x", 0xf0f0_0000+k)
		repo := []string{"api", "web"}[k%2]
		by := memfs.HashEngineer(emails[i%len(emails)])
		at := ms + int64(k)*1000
		for j, kind := range []domain.EventKind{domain.KindSession, domain.KindAsked, domain.KindChanged} {
			e := domain.Event{MS: at + int64(j), Kind: kind, Session: s, Repo: repo, Author: by}
			if kind != domain.KindSession {
				e.Lesson = args[1]
			}
			line, err := json.Marshal(e.WithID())
			ts.Check(err)
			b.Write(append(line, '\n'))
		}
	}
	p := ts.MkAbs(args[0])
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	ts.Check(err)
	_, err = f.WriteString(b.String())
	ts.Check(err)
	ts.Check(f.Close())
}
