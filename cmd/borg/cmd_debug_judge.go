package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func debugJudgeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "judge",
		Usage: "the judge's \"changed\" rate on placebo lessons against real asks: its false-positive rate, measured in the field",
		Flags: []cli.Flag{storeFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			if err := flagsOnly(c); err != nil {
				return err
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runDebugJudge(e, s, c.Bool("json"))
		},
	}
}

// judgeRates compares verdicts on placebos (lessons picked for their low
// relevance, whose verdicts stay on this machine) with verdicts on real asks.
type judgeRates struct {
	Judge          string  `json:"judge"`
	Placebos       int     `json:"placebos"`
	PlaceboChanged int     `json:"placebo_changed"`
	PlaceboRate    float64 `json:"placebo_changed_rate"`
	Asks           int     `json:"asks"` // judged real asks: changed + ignored + unclear
	AskChanged     int     `json:"ask_changed"`
	AskRate        float64 `json:"ask_changed_rate"`
	// Tally is this machine's default-judge tally (readings of "acted" on
	// real asks and placebos) and Credit the share of a reading it vouches
	// for: the w its changed results carry.
	Tally  domain.JudgeTally `json:"tally"`
	Credit float64           `json:"credit"`
}

func runDebugJudge(e *env, s *memfs.Store, asJSON bool) error {
	events, _, err := s.ReadEvents()
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	r := judgeRates{Judge: e.getenv("BORG_JUDGE")}
	if r.Judge == "" {
		r.Judge = "default (the lesson's words new in the work since the ask, unless declined; credited by the placebos)"
	}
	tally, err := s.JudgeTally()
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	r.Tally, r.Credit = tally, tally.Credit()
	for _, ev := range events {
		switch ev.Kind {
		case domain.KindPlacebo:
			r.Placebos++
			if ev.W > 0 {
				r.PlaceboChanged++
			}
		case domain.KindChanged:
			r.Asks++
			r.AskChanged++
		case domain.KindIgnored, domain.KindUnclear:
			r.Asks++
		}
	}
	if r.Placebos > 0 {
		r.PlaceboRate = float64(r.PlaceboChanged) / float64(r.Placebos)
	}
	if r.Asks > 0 {
		r.AskRate = float64(r.AskChanged) / float64(r.Asks)
	}
	if asJSON {
		return writeJSON(e, r)
	}
	fmt.Fprintf(e.out, "judge: %s\n", r.Judge)
	fmt.Fprintf(e.out, "real asks: %d judged, %d changed (%.0f%%)\n", r.Asks, r.AskChanged, 100*r.AskRate)
	fmt.Fprintf(e.out, "placebos:  %d judged, %d changed (%.0f%%)\n", r.Placebos, r.PlaceboChanged, 100*r.PlaceboRate)
	switch {
	case r.Placebos < 20:
		fmt.Fprintln(e.out, "too few placebos to read a rate yet (each ask carries one with probability BORG_PLACEBO_RATE, default 5%)")
	case r.PlaceboRate >= r.AskRate:
		fmt.Fprintln(e.out, "the judge says \"changed\" as often for irrelevant lessons as for real ones: its verdicts carry no signal")
	default:
		fmt.Fprintf(e.out, "the judge's false-positive rate is about %.0f%%; real asks exceed it by %.0f points\n", 100*r.PlaceboRate, 100*(r.AskRate-r.PlaceboRate))
	}
	t := r.Tally
	fmt.Fprintf(e.out, "default judge on this machine: %d/%d asks and %d/%d placebos read as acted on; a change counts %.2f toward consolidation\n",
		t.AsksActed, t.Asks, t.PlacebosActed, t.Placebos, r.Credit)
	return nil
}
