package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
)

// reindexCommand brings the search index up to date with the lessons, and
// the log's summary cache with the log: what recall and the hooks do on
// demand, run ahead of them. Hooks start it in the background when either
// is too large a job for their deadline.
func reindexCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "reindex",
		Usage:     "bring the search index and the log's summary up to date (hooks run it in the background after large changes)",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.BoolFlag{Name: "all", Usage: "re-read every lesson file, not only those that changed"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("reindex takes no arguments")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			start := time.Now()
			r, err := openRetrieval(c.Context, s, c.Bool("all"), e.err, nil, -1)
			if err != nil {
				return fail(exitFail, "%v", err)
			}
			defer r.Close()
			_, err = fmt.Fprintf(e.out, "index up to date: %d lessons, log summary cached (%s)\n", r.ix.Len(), time.Since(start).Round(time.Millisecond))
			return err
		},
	}
}
