package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// MaxSweepSeeds bounds Sweep's seed count.
const MaxSweepSeeds = 100

// SweepReport is the default scenario (or any) run under several seeds: one
// seed's win can be luck, a count of wins over seeds is evidence.
type SweepReport struct {
	Seeds    []uint64      `json:"seeds"`
	Policies []SweepPolicy `json:"policies"`
	// Versus counts, per baseline, the seeds on which borg's regret was
	// strictly lower.
	Versus []SweepVersus `json:"versus"`
}

// SweepPolicy is one policy's cumulative regret on each seed and its mean.
type SweepPolicy struct {
	Name    string    `json:"name"`
	Regret  float64   `json:"regret"` // mean over seeds
	Regrets []float64 `json:"regrets"`
}

// SweepVersus is borg against one baseline over the seeds.
type SweepVersus struct {
	Baseline  string `json:"baseline"`
	BorgLower int    `json:"borg_lower"`
	Seeds     int    `json:"seeds"`
}

// Sweep runs opts under n seeds, opts.Seed to opts.Seed+n-1, and gathers
// every policy's cumulative regret. progress gets one line per seed.
func Sweep(ctx context.Context, opts Options, n int, progress io.Writer) (SweepReport, error) {
	if n < 1 || n > MaxSweepSeeds {
		return SweepReport{}, fmt.Errorf("sweep: %d seeds not in [1, %d]", n, MaxSweepSeeds)
	}
	if progress == nil {
		progress = io.Discard
	}
	var sr SweepReport
	for i := 0; i < n; i++ {
		o := opts
		o.Seed = opts.Seed + uint64(i)
		rep, err := Run(ctx, o, nil)
		if err != nil {
			return SweepReport{}, fmt.Errorf("sweep seed %d: %w", o.Seed, err)
		}
		sr.Seeds = append(sr.Seeds, o.Seed)
		if sr.Policies == nil {
			for _, p := range rep.Policies {
				sr.Policies = append(sr.Policies, SweepPolicy{Name: p.Name})
			}
			for _, v := range rep.Versus {
				sr.Versus = append(sr.Versus, SweepVersus{Baseline: v.Baseline})
			}
		}
		for j, p := range rep.Policies {
			sr.Policies[j].Regrets = append(sr.Policies[j].Regrets, p.Regret)
		}
		for j, v := range rep.Versus {
			sr.Versus[j].Seeds++
			if v.BorgLower {
				sr.Versus[j].BorgLower++
			}
		}
		fmt.Fprintf(progress, "seed %d: borg %.1f\n", o.Seed, rep.Policies[0].Regret)
	}
	for j := range sr.Policies {
		var s float64
		for _, r := range sr.Policies[j].Regrets {
			s += r
		}
		sr.Policies[j].Regret = round4(s / float64(n))
	}
	return sr, nil
}

// WriteTable writes the sweep as a table: mean and per-seed regret per
// policy, then borg's wins against each baseline.
func (sr SweepReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "policy\tmean regret\t")
	for _, s := range sr.Seeds {
		fmt.Fprintf(tw, "seed %d\t", s)
	}
	fmt.Fprintln(tw)
	for _, p := range sr.Policies {
		fmt.Fprintf(tw, "%s\t%.1f\t", p.Name, p.Regret)
		for _, r := range p.Regrets {
			fmt.Fprintf(tw, "%.1f\t", r)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	for _, v := range sr.Versus {
		fmt.Fprintf(&b, "borg lower than %s on %d of %d seeds\n", v.Baseline, v.BorgLower, v.Seeds)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	return nil
}
