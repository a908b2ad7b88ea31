// Command learning-matrix runs `borg eval learning` over the scenarios
// BENCHMARKS.md reports (seeds and team sizes, each judge and agent) and
// prints one markdown row per run: borg's regret, the best baseline's, the
// margin, how soon each new lesson was first asked and which lessons were
// ever consolidated by hidden effect.
//
//	go run ./scripts/learning-matrix [-quick] [-j N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/borg-memory/borg/sim"
)

type scenario struct {
	name string
	opts sim.Options
}

func scenarios(quick bool) []scenario {
	var out []scenario
	add := func(name string, o sim.Options) { out = append(out, scenario{name, o}) }
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if quick {
		seeds = seeds[:3]
	}
	for _, seed := range seeds {
		o := sim.DefaultOptions()
		o.Seed = seed
		add(fmt.Sprintf("default, seed %d", seed), o)
	}
	medium := sim.DefaultOptions().WithSessions(1200)
	medium.Seed, medium.Engineers, medium.Repos, medium.Lessons = 4, 8, 4, 120
	add("8 engineers, 4 repos, 120 lessons, 1200 sessions, seed 4", medium)
	if !quick {
		large := sim.DefaultOptions().WithSessions(2500)
		large.Seed, large.Engineers, large.Repos, large.Lessons = 7, 10, 4, 250
		add("10 engineers, 4 repos, 250 lessons, 2500 sessions, seed 7", large)
		team := sim.DefaultOptions().WithSessions(3000)
		team.Seed, team.Engineers, team.Repos, team.Lessons = 11, 30, 6, 300
		add("30 engineers, 6 repos, 300 lessons, 3000 sessions, seed 11", team)
	}
	var all []scenario
	for _, judge := range []struct{ judge, agent string }{
		{sim.JudgeDefault, sim.AgentOverDeclaring}, {sim.JudgeDefault, sim.AgentYesSayer}, {sim.JudgePerfect, sim.AgentOverDeclaring},
	} {
		for _, s := range out {
			s.opts.Judge, s.opts.Agent = judge.judge, judge.agent
			all = append(all, s)
		}
	}
	return all
}

func main() {
	quick := flag.Bool("quick", false, "three default seeds and the medium team only")
	jobs := flag.Int("j", runtime.NumCPU(), "scenarios run at once")
	flag.Parse()
	list := scenarios(*quick)
	rows := make([]string, len(list))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, *jobs))
	var failed bool
	var mu sync.Mutex
	for i, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rep, err := sim.Run(context.Background(), s.opts, nil)
			if err != nil {
				mu.Lock()
				failed = true
				fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
				mu.Unlock()
				return
			}
			rows[i] = row(s, rep)
			fmt.Fprintf(os.Stderr, "done: %s (%s, %s)\n", s.name, s.opts.Judge, s.opts.Agent)
		}()
	}
	wg.Wait()
	fmt.Println("| scenario | judge, agent | borg | best baseline | borg below it by | new lessons first asked after (sessions) | ever consolidated: helps/neutral/harms/repo-only |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		if r != "" {
			fmt.Println(r)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func row(s scenario, rep sim.Report) string {
	regret := map[string]float64{}
	var borg sim.PolicyReport
	for _, p := range rep.Policies {
		regret[p.Name] = p.Regret
		if p.Name == sim.PolicyBorg {
			borg = p
		}
	}
	best, bestName := 0.0, ""
	for _, b := range []string{sim.PolicyRelevance, sim.PolicyCount, sim.PolicyRecency, sim.PolicyRandom, sim.PolicyLastUse} {
		if bestName == "" || regret[b] < best {
			best, bestName = regret[b], b
		}
	}
	var firsts []string
	for _, nl := range borg.NewLessons.PerLesson {
		if nl.FirstAsk < 0 {
			firsts = append(firsts, "never")
		} else {
			firsts = append(firsts, fmt.Sprint(nl.FirstAsk))
		}
	}
	ec := borg.EverConsolidated
	return fmt.Sprintf("| %s | %s, %s | %.1f | %.1f (%s) | %.1f%% | %s | %d/%d/%d/%d |", s.name, s.opts.Judge, s.opts.Agent,
		regret[sim.PolicyBorg], best, bestName, 100*(1-regret[sim.PolicyBorg]/best), strings.Join(firsts, ", "),
		ec.Helps, ec.Neutral, ec.Harms, ec.Repo)
}
