package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/sim"
)

func evalCommand(e *env) *cli.Command {
	// The flags of eval learning show the simulator's default scenario
	// (built with the command tree, which a hook never builds).
	simDefaults := sim.DefaultOptions()
	return &cli.Command{
		Name:  "eval",
		Usage: "measure borg: retrieval on BEIR-layout data, learning in a simulated team",
		Subcommands: []*cli.Command{
			{
				Name:      "retrieval",
				Usage:     "nDCG@10, Recall@10/100 and MRR@10 of the recall pipeline on BEIR-layout folders",
				ArgsUsage: "DIR…",
				Flags: []cli.Flag{
					jsonFlag(),
					&cli.StringFlag{Name: "arms", Usage: "arms to fuse, e.g. lexical or lexical,vector (default " + index.DefaultArmsText() + ")"},
					&cli.StringFlag{Name: "split", Value: "test", Usage: "qrels split: qrels/<split>.tsv"},
					&cli.BoolFlag{Name: "product", Usage: "the product path: learn each folder into a real throwaway store and query it as borg recall does"},
					&cli.BoolFlag{Name: "sleep", Usage: "with --product: run one borg sleep --apply before the queries"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the product path's throwaway stores and say where they are"},
					&cli.BoolFlag{Name: "replay", Usage: "replay half the judged queries as agent sessions (asks and an honest judge's results) and score the other half"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return usageErr("eval retrieval takes BEIR folders: borg eval retrieval ../shared/data/beir/scifact")
					}
					for _, dir := range c.Args().Slice() {
						if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
							return usageErr("%s is no BEIR folder (it has no corpus.jsonl; a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/)", dir)
						}
						if _, err := os.Stat(filepath.Join(dir, "qrels", c.String("split")+".tsv")); err != nil {
							return usageErr("%s has no split %q (no qrels/%s.tsv): --split names a file of its qrels/", dir, c.String("split"), c.String("split"))
						}
					}
					opts := index.EvalOptions{Split: c.String("split"), Terminal: isTerminal(e.err)}
					if _, err := newEmbedder(); err != nil { // BORG_EMBEDDER: measure another embedder
						return err
					}
					opts.NewEmbedder = newEmbedder
					if c.IsSet("arms") {
						a, err := index.ParseArms(c.String("arms"))
						if err != nil {
							return usageErr("%v", err)
						}
						opts.Arms = a
					}
					opts.Replay = c.Bool("replay")
					if c.Bool("sleep") && !c.Bool("product") {
						return usageErr("--sleep needs --product: the lab path has no store to sleep on")
					}
					if c.Bool("keep") && !c.Bool("product") {
						return usageErr("--keep needs --product: the lab path makes no store to keep")
					}
					if c.Bool("product") {
						opts.Build = productBuilder(e, opts.Arms, e.err, opts.Terminal, c.Bool("keep"), c.Bool("sleep"))
						opts.Path = "product"
					}
					rep, err := index.EvalRetrieval(c.Context, c.Args().Slice(), opts, e.err)
					if err != nil {
						return fail(exitFail, "%v", err)
					}
					if c.Bool("json") {
						return writeJSON(e, rep)
					}
					return writeEvalTable(e.out, rep)
				},
			},
			{
				Name:      "asks",
				Usage:     "abstention, session recall, precision and stale asks of the Stop hook on labelled ask sets",
				ArgsUsage: "SET-DIR…",
				Flags: []cli.Flag{
					jsonFlag(),
					&cli.StringFlag{Name: "locomo", Usage: "also a set built from two BEIR LoCoMo folders: OWN,OTHER (OWN's turns are the lessons; OTHER's questions bear on none)"},
					&cli.IntFlag{Name: "questions", Value: 50, Usage: "with --locomo: questions about OWN (twice as many about OTHER)"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the throwaway stores and say where they are"},
					&cli.BoolFlag{Name: "margins", Usage: "also recall each session's work and count the sessions by their best relevance, in bands under the floor"},
				},
				Action: func(c *cli.Context) error {
					var sets []askSet
					for _, dir := range c.Args().Slice() {
						set, err := loadAskSet(dir)
						if err != nil {
							return usageErr("%v", err)
						}
						sets = append(sets, set)
					}
					if v := c.String("locomo"); v != "" {
						if c.Int("questions") < 1 {
							return usageErr("--questions must be at least 1")
						}
						own, other, ok := strings.Cut(v, ",")
						if !ok {
							return usageErr("--locomo takes two folders: OWN,OTHER")
						}
						set, err := locomoAskSet(own, other, c.Int("questions"))
						if err != nil {
							return usageErr("%v", err)
						}
						sets = append(sets, set)
					}
					if len(sets) == 0 {
						return usageErr("%v", errNoAskSets)
					}
					reps, err := runAskEvals(c.Context, e, sets, c.Bool("keep"), c.Bool("margins"))
					if err != nil {
						return fail(exitFail, "%v", err)
					}
					if c.Bool("json") {
						return writeJSON(e, reps)
					}
					return writeAskTable(e.out, reps)
				},
			},
			{
				Name:  "learning",
				Usage: "simulate a team and compare borg's ranking with baselines (cumulative regret)",
				Flags: []cli.Flag{
					jsonFlag(),
					&cli.IntFlag{Name: "engineers", Value: simDefaults.Engineers, Usage: "engineers in the team"},
					&cli.IntFlag{Name: "repos", Value: simDefaults.Repos, Usage: "repositories"},
					&cli.IntFlag{Name: "lessons", Value: simDefaults.Lessons, Usage: "lessons at the start"},
					&cli.IntFlag{Name: "sessions", Value: simDefaults.Sessions, Usage: "sessions simulated"},
					&cli.Uint64Flag{Name: "seed", Value: simDefaults.Seed, Usage: "random seed (same seed, same output)"},
					&cli.StringFlag{Name: "plot", Usage: "also write a PNG plot of cumulative regret to FILE"},
					&cli.StringFlag{Name: "judge", Value: sim.JudgeDefault, Usage: "how verdicts are read: default (the hooks' judge without BORG_JUDGE) or perfect (the hidden truth, an upper bound)"},
					&cli.StringFlag{Name: "agent", Value: sim.AgentOverDeclaring, Usage: "how the simulated agent declares: over-declaring or yes-sayer (says applies of everything)"},
					&cli.Float64Flag{Name: "uncovered", Value: simDefaults.Uncovered, Usage: "fraction of sessions about work no lesson covers"},
					&cli.Float64Flag{Name: "floor", DefaultText: fmt.Sprintf("the hooks', %g", index.DefaultFloor), Usage: "borg's relevance floor (0: none, as BORG_FLOOR=0)"},
				},
				Action: func(c *cli.Context) error {
					if err := flagsOnly(c); err != nil {
						return err
					}
					return runEvalLearning(c, e)
				},
			},
		},
	}
}

// runEvalLearning is borg eval learning: the simulator's default scenario
// under the flags' changes.
func runEvalLearning(c *cli.Context, e *env) error {
	opts := sim.DefaultOptions()
	if c.IsSet("engineers") {
		opts.Engineers = c.Int("engineers")
	}
	if c.IsSet("repos") {
		opts.Repos = c.Int("repos")
	}
	if c.IsSet("lessons") {
		opts.Lessons = c.Int("lessons")
	}
	if c.IsSet("sessions") {
		opts = opts.WithSessions(c.Int("sessions"))
	}
	if c.IsSet("seed") {
		opts.Seed = c.Uint64("seed")
	}
	if c.IsSet("uncovered") {
		opts.Uncovered = c.Float64("uncovered")
	}
	if c.IsSet("floor") {
		opts.Floor = c.Float64("floor")
		if opts.Floor <= 0 {
			opts.Floor = -1 // none, as BORG_FLOOR=0 (index.Query.Floor)
		}
	}
	opts.Judge, opts.Agent = c.String("judge"), c.String("agent")
	var progress io.Writer
	if isTerminal(e.err) {
		progress = e.err
	}
	rep, err := sim.Run(c.Context, opts, progress)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if p := c.String("plot"); p != "" {
		if err := rep.WritePNG(p); err != nil {
			return fail(exitFail, "write plot %s: %v", p, err)
		}
	}
	if c.Bool("json") {
		return writeJSON(e, rep)
	}
	return rep.WriteTable(e.out)
}

func writeEvalTable(w io.Writer, rep index.EvalReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "folder\tqueries\tnDCG@10\tRecall@10\tRecall@100\tMRR@10\t")
	row := func(name string, m index.EvalMetrics) {
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t\n", name, m.Queries, m.NDCG10, m.Recall10, m.Recall100, m.MRR10)
	}
	for _, f := range rep.Folders {
		row(f.Name, f.EvalMetrics)
	}
	row("all (micro)", rep.All)
	for _, c := range rep.Categories {
		row("category "+c.Category, c.EvalMetrics)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "arms: %s; embedder: %s\n", rep.Arms, rep.Embedder)
	return err
}

// isTerminal reports whether f, a reader or a writer, is a character
// device: a person watching, or typing.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
