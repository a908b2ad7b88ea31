package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// plotMarks are the policies' marks in the ASCII plot, in PolicyNames order.
var plotMarks = []byte{'B', 'r', 'c', 't', 'x', 'u', 'w', 'o'}

// WriteTable writes the report for a terminal: the scenario, a table of the
// policies, borg against each baseline, an ASCII plot of cumulative regret
// over sessions, and the spacing and holiday figures.
func (r Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	sc := r.Scenario
	fmt.Fprintf(&b, "borg eval learning: %d engineers, repos %s, %d lessons (+%d new at session %d), %d sessions, seed %d\n",
		sc.Engineers, strings.Join(sc.Repos, ","), sc.Lessons, sc.NewLessons, sc.NewAt, sc.Sessions, sc.Seed)
	fmt.Fprintf(&b, "corpus: %d helps, %d neutral, %d harms, %d repo-only (%d scoped); %d slots of %d candidates; %.0f%% censored; %.0f%% of sessions about work no lesson covers\n",
		sc.Effects.Helps, sc.Effects.Neutral, sc.Effects.Harms, sc.Effects.Repo, sc.Effects.Scoped,
		sc.Slots, sc.Candidates, 100*sc.Censored, 100*sc.Uncovered)
	fmt.Fprintf(&b, "judge: %s, agent: %s\n\n", sc.Judge, sc.Agent)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tregret\tper session\tneedless/100\tasks\thelps\tharms\tmisplaced\tharmful late rate\tnew: 1st ask\tnew: consolidated\tconsolidated: helps/neutral/harms/repo\t")
	for _, p := range r.Policies {
		ec := p.EverConsolidated
		fmt.Fprintf(tw, "%s\t%.1f\t%.3f\t%.1f\t%d\t%d\t%d\t%d\t%.2f\t%s\t%s\t%d/%d/%d/%d\t\n", p.Name, p.Regret, p.RegretPerSession,
			p.NeedlessPer100, p.Asks, p.AsksByEffect.Helps+p.AsksByEffect.Repo-p.AsksByEffect.Misplaced, p.AsksByEffect.Harms,
			p.AsksByEffect.Misplaced, p.Harmful.AskRateLate,
			ofN(p.NewLessons.MedianSessionsToFirstAsk, p.NewLessons.Asked, p.NewLessons.Lessons),
			ofN(p.NewLessons.MedianSessionsToConsolidate, p.NewLessons.Consolidated, p.NewLessons.Lessons),
			ec.Helps, ec.Neutral, ec.Harms, ec.Repo)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	b.WriteString("\n")
	for _, v := range r.Versus {
		verdict := "borg lower"
		if !v.BorgLower {
			verdict = "borg NOT lower"
		}
		fmt.Fprintf(&b, "borg %.1f vs %s %.1f: %s\n", v.BorgRegret, v.Baseline, v.BaselineRegret, verdict)
	}
	b.WriteString("\ncumulative regret over sessions\n")
	b.WriteString(r.plot(64, 14))
	sp := r.Spacing
	fmt.Fprintf(&b, "\nspacing (%d uses, massed at %v, spaced at %v): activation massed/spaced", sp.Uses, sp.Massed, sp.Spaced)
	for _, p := range sp.Points {
		fmt.Fprintf(&b, "  @%d %.2f/%.2f", p.Session, p.Massed, p.Spaced)
	}
	fmt.Fprintf(&b, "\n  dormant from session: massed %s, spaced %s\n", orDash(sp.MassedDormantAt), orDash(sp.SpacedDormantAt))
	if h := r.Holiday; h.Days > 0 {
		fmt.Fprintf(&b, "holiday (%d days before session %d): mean activation %.3f before, %.3f after, %.3f without the holiday (max diff %g); dormant %d → %d\n",
			h.Days, h.AtSession, h.MeanActivationBefore, h.MeanActivationAfter, h.MeanActivationWithoutHoliday,
			h.MaxActivationDiff, h.DormantBefore, h.DormantAfter)
		fmt.Fprintf(&b, "  a use just before it: activation %.2f after it on the session clock, %.2f if the clock counted wall time\n",
			h.SingleUseSessionClock, h.SingleUseWallClock)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// ofN is a median with how many of n lessons it is over: "12 (3/4)".
func ofN(median, k, n int) string {
	return fmt.Sprintf("%s (%d/%d)", orDash(median), k, n)
}

func orDash(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// plot draws every policy's cumulative regret curve on a width × height
// character grid with axes; later policies overdraw earlier ones, so borg
// (drawn last) stays visible.
func (r Report) plot(width, height int) string {
	var top float64
	n := 0
	for _, p := range r.Policies {
		for _, v := range p.RegretCurve {
			top = math.Max(top, v)
		}
		n = max(n, len(p.RegretCurve))
	}
	if n == 0 {
		return "(no sessions)\n"
	}
	if top <= 0 {
		top = 1
	}
	grid := make([][]byte, height)
	for i := range grid {
		grid[i] = []byte(strings.Repeat(" ", width))
	}
	for pi := len(r.Policies) - 1; pi >= 0; pi-- {
		p := r.Policies[pi]
		mark := byte('?')
		if pi < len(plotMarks) {
			mark = plotMarks[pi]
		}
		for x := 0; x < width; x++ {
			s := min(len(p.RegretCurve)-1, (x+1)*n/width-1)
			if s < 0 {
				continue
			}
			y := int(math.Round(p.RegretCurve[s] / top * float64(height-1)))
			grid[height-1-y][x] = mark
		}
	}
	var b strings.Builder
	label := fmt.Sprintf("%.0f", top)
	pad := len(label)
	for i, row := range grid {
		l := ""
		switch i {
		case 0:
			l = label
		case height - 1:
			l = "0"
		}
		fmt.Fprintf(&b, "%*s |%s\n", pad, l, row)
	}
	fmt.Fprintf(&b, "%*s +%s\n", pad, "", strings.Repeat("-", width))
	fmt.Fprintf(&b, "%*s  0%*d sessions\n", pad, "", width-1, n)
	var legend []string
	for i, p := range r.Policies {
		if i < len(plotMarks) {
			legend = append(legend, fmt.Sprintf("%c %s", plotMarks[i], p.Name))
		}
	}
	fmt.Fprintf(&b, "%*s  %s\n", pad, "", strings.Join(legend, "  "))
	return b.String()
}
