package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func debugCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "debug",
		Usage: "look inside borg's derived state",
		Subcommands: []*cli.Command{
			{
				Name:      "memory",
				Usage:     "every lesson's memory derived from the outcome log",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					storeFlag(), jsonFlag(),
					&cli.StringFlag{Name: "session", Usage: "derive as of this session's tick, with its Thompson draw"},
				},
				Action: func(c *cli.Context) error {
					if err := flagsOnly(c); err != nil {
						return err
					}
					s, err := openStore(c, e)
					if err != nil {
						return err
					}
					return runDebugMemory(e, s, c.String("session"), c.Bool("json"))
				},
			},
			{
				Name:      "ope",
				Usage:     "replay the belief under other weights: how each lesson's mean would move",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					storeFlag(), jsonFlag(),
					&cli.StringFlag{Name: "weights", Usage: "`k=v,…` with k among " + strings.Join(weightKeys(), ", ") + " (required)"},
				},
				Action: func(c *cli.Context) error {
					if err := flagsOnly(c); err != nil {
						return err
					}
					if !c.IsSet("weights") {
						// Said as every usage error is, in one line on
						// stderr (urfave/cli's own check printed the help).
						return usageErr("debug ope needs --weights k=v,… with k among %s", strings.Join(weightKeys(), ", "))
					}
					w, err := parseWeights(c.String("weights"), domain.DefaultWeights)
					if err != nil {
						return usageErr("--weights: %v", err)
					}
					s, err := openStore(c, e)
					if err != nil {
						return err
					}
					return runDebugOPE(e, s, w, c.Bool("json"))
				},
			},
			debugJudgeCommand(e),
		},
	}
}

// storeMemories derives every readable lesson's memory.
func storeMemories(e *env, s *memfs.Store, session string, w domain.Weights) ([]domain.Lesson, []domain.Memory, error) {
	lessons, errs := s.Lessons()
	for _, err := range errs {
		fmt.Fprintf(e.err, "borg: skipped %v (run borg doctor)\n", err)
	}
	mems, err := s.Memories(lessons, session, w)
	return lessons, mems, err
}

// runDebugMemory prints every lesson's memory.
func runDebugMemory(e *env, s *memfs.Store, session string, asJSON bool) error {
	_, mems, err := storeMemories(e, s, session, domain.DefaultWeights)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]jsonMemory, 0, len(mems))
		for _, m := range mems {
			out = append(out, toJSONMemory(m))
		}
		return writeJSON(e, out)
	}
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tuses\tactivation\talpha\tbeta\tmean\tweight\tconsolidated\tdormant")
	for _, m := range mems {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%g\t%g\t%.4f\t%.4f\t%v\t%v\n", m.ID, m.Uses, fmtFloat(m.Activation),
			m.Alpha, m.Beta, m.Mean, m.Weight, m.Consolidated, m.Dormant)
	}
	return tw.Flush()
}

// weightFields maps the --weights keys to the fields of domain.Weights.
func weightFields(w *domain.Weights) map[string]any {
	return map[string]any{
		"d": &w.D, "d_consolidated": &w.DConsolidated, "tested_w": &w.TestedW,
		"corrected_w": &w.CorrectedW, "vetoed_w": &w.VetoedW, "regret": &w.Regret,
		"regret_max": &w.RegretMax, "consolidate_sessions": &w.ConsolidateSessions,
		"consolidate_mean": &w.ConsolidateMean, "consolidate_z": &w.ConsolidateZ,
		"dormant_below": &w.DormantBelow, "novel_words": &w.NovelWords,
	}
}

func weightKeys() []string {
	var w domain.Weights
	var keys []string
	for k := range weightFields(&w) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseWeights applies "k=v,k=v" to base.
func parseWeights(spec string, base domain.Weights) (domain.Weights, error) {
	w := base
	fields := weightFields(&w)
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return base, fmt.Errorf("%q is not k=v", kv)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		switch p := fields[k].(type) {
		case *float64:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return base, fmt.Errorf("%s=%q is not a number", k, v)
			}
			if !(f >= 0) || math.IsInf(f, 0) {
				// Every weight is a rate or an amount of evidence: a
				// negative one turns evidence around.
				return base, fmt.Errorf("%s=%q: a weight is a finite number ≥ 0", k, v)
			}
			*p = f
		case *int:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return base, fmt.Errorf("%s=%q is not an integer", k, v)
			}
			if n < 0 {
				return base, fmt.Errorf("%s=%q: a count is ≥ 0", k, v)
			}
			*p = n
		default:
			return base, fmt.Errorf("unknown weight %q (known: %s)", k, strings.Join(weightKeys(), ", "))
		}
	}
	return w, nil
}

type opeRow struct {
	ID           string   `json:"id"`
	MeanBefore   float64  `json:"mean_before"`
	MeanAfter    float64  `json:"mean_after"`
	WeightBefore *float64 `json:"weight_before"`
	WeightAfter  *float64 `json:"weight_after"`
}

// runDebugOPE derives memory under the weights in force and under w, and
// prints how each lesson's belief mean (and mean weight) would move.
func runDebugOPE(e *env, s *memfs.Store, w domain.Weights, asJSON bool) error {
	lessons, before, err := storeMemories(e, s, "", domain.DefaultWeights)
	if err != nil {
		return err
	}
	after, err := s.Memories(lessons, "", w)
	if err != nil {
		return err
	}
	rows := make([]opeRow, 0, len(before))
	for i := range before {
		rows = append(rows, opeRow{
			ID: before[i].ID, MeanBefore: before[i].Mean, MeanAfter: after[i].Mean,
			WeightBefore: finite(before[i].MeanWeight), WeightAfter: finite(after[i].MeanWeight),
		})
	}
	if asJSON {
		return writeJSON(e, rows)
	}
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tmean before → after\tweight before → after")
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t%.4f → %.4f\t%s → %s\n", r.ID, r.MeanBefore, r.MeanAfter,
			fmtFloat(before[i].MeanWeight), fmtFloat(after[i].MeanWeight))
	}
	return tw.Flush()
}
