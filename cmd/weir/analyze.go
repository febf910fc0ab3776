package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/rest/api"
)

func newExplainAnalyzeCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "explain-analyze JOB_ID",
		Short: "Show a running job's plan with each operator chain's rows/s, busy and back-pressured time, state size and watermark",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			ea, err := c.ExplainAnalyze(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), ea.Plan)
			return err
		},
	}
	f.add(cmd)
	return cmd
}

func newHotSubtasksCommand() *cobra.Command {
	var f clientFlags
	var by string
	var n int
	cmd := &cobra.Command{
		Use:   "hot-subtasks JOB_ID",
		Short: "Show a job's hottest subtasks over the last 5 s, by busy time, back-pressure or source lag",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			hot, err := c.HotSubtasks(cmd.Context(), args[0], by, n)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERTEX\tSUBTASK\tBUSY\tBACK-PRESSURED\tIDLE\tSOURCE LAG\tIN/S\tOUT/S")
			for _, s := range hot.Subtasks {
				fmt.Fprintf(tw, "%s\t%d\t%.0f%%\t%.0f%%\t%.0f%%\t%d\t%.1f\t%.1f\n", s.VertexName, s.Subtask, 100*s.BusyRatio,
					100*s.BackPressuredRatio, 100*s.IdleRatio, s.SourceLag, s.ReadRecordsPerSecond, s.WriteRecordsPerSecond)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&by, "by", api.HotByBusy, "rank by busy, backpressure or lag")
	cmd.Flags().IntVarP(&n, "number", "n", 10, "how many subtasks")
	return cmd
}

func newTailCommand() *cobra.Command {
	var f clientFlags
	var rate, limit int
	cmd := &cobra.Command{
		Use:   "tail JOB_ID VERTEX",
		Short: "Print rows a job's vertex emits (a sink: receives) as they flow, sampled, with their RowKind",
		Long: "Print rows a job's vertex emits (a sink vertex: the rows it receives) as they flow, as the print\n" +
			"connector does (SUBTASK> +I[…]), sampled at most --rate a second; never slows the job. VERTEX is\n" +
			"the vertex's id, its number in weir explain-analyze ([0], [1], …) or a part of its name.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			vid, err := findVertex(cmd.Context(), c, args[0], args[1])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			return c.Tail(cmd.Context(), args[0], vid, rate, limit, func(e api.TailEvent) error {
				if r := e.Row; r != nil {
					_, err := fmt.Fprintf(out, "%d> %s[%s]\n", r.Subtask, r.Kind, strings.Join(r.Fields, ", "))
					return err
				}
				if s := e.Stats; s != nil && s.Ended != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "tail ended (%s): %d rows seen, %d sampled, %d dropped\n", s.Ended, s.Seen, s.Sampled, s.Dropped)
				}
				return nil
			})
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&rate, "rate", 10, "rows a second at most (the server allows up to 1000)")
	cmd.Flags().IntVar(&limit, "limit", 0, "stop after this many rows (0: until the job ends or Ctrl-C)")
	return cmd
}

// findVertex resolves what names a vertex of job: its id, its number in
// the plan, or a part of its name that only one vertex has.
func findVertex(ctx context.Context, c *rest.Client, job, what string) (string, error) {
	ea, err := c.ExplainAnalyze(ctx, job)
	if err != nil {
		return "", err
	}
	var names, matches []string
	for i, v := range ea.Vertices {
		if v.ID == what || strings.Trim(what, "[]") == strconv.Itoa(i) {
			return v.ID, nil
		}
		names = append(names, fmt.Sprintf("[%d] %s", i, v.Name))
		if strings.Contains(strings.ToLower(v.Name), strings.ToLower(what)) {
			matches = append(matches, v.ID)
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	return "", fmt.Errorf("job %s: %q names %d of its vertices; give an id, a number or a part of one name: %s",
		job, what, len(matches), strings.Join(names, "; "))
}
