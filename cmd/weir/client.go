package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

// clientFlags are the flags of the verbs that talk to a JobManager.
type clientFlags struct {
	jobManager, token, caCert string
}

func (f *clientFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.jobManager, "jobmanager", "m", os.Getenv("WEIR_JOBMANAGER"), "the JobManager's REST address, host:port or a URL (default $WEIR_JOBMANAGER, else 127.0.0.1:8081)")
	fl.StringVar(&f.token, "token", os.Getenv("WEIR_REST_TOKEN"), "the JobManager's token for state-changing calls (weir.rest.auth-token; default $WEIR_REST_TOKEN)")
	fl.StringVar(&f.caCert, "ca-cert", "", "PEM certificate(s) to trust for an https JobManager (default: the system's)")
}

// client returns the REST client the flags describe.
func (f *clientFlags) client() (*rest.Client, error) {
	addr := f.jobManager
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	c := &rest.Client{Base: addr, Token: f.token}
	if f.caCert != "" {
		pem, err := os.ReadFile(f.caCert)
		if err != nil {
			return nil, fmt.Errorf("--ca-cert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-cert %s: no PEM certificate in it", f.caCert)
		}
		c.HTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	}
	return c, nil
}

func newSubmitCommand() *cobra.Command {
	var f clientFlags
	var settings []string
	var restore, name string
	cmd := &cobra.Command{
		Use:   "submit FILE.sql",
		Short: "Submit a Flink SQL script as a job to a JobManager (weir jobmanager)",
		Long: `Sends the script (its ${NAME} references replaced from this environment) to the JobManager,
which runs its INSERT INTO statements as one job, and prints the job's id. -D settings
override the script's SET statements; --name NAME is -D pipeline.name=NAME, so it names the
job even when the script SETs pipeline.name (and wins over a -D pipeline.name); --restore
starts from a savepoint.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			script, err := session.ExpandEnv(string(src))
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			req := api.JobSubmitRequest{Script: script, Name: name, SavepointPath: restore, Settings: map[string]string{}}
			if req.Name == "" {
				req.Name = session.JobName(args[0])
			}
			for _, kv := range settings {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("-D/--set %q: want key=value", kv)
				}
				req.Settings[k] = v
			}
			if name != "" {
				// --name is -D pipeline.name=NAME: like every -D, it
				// overrides the script's SET 'pipeline.name'.
				req.Settings["pipeline.name"] = name
			}
			if restore == runtime.RestoreLatest || restore == runtime.RestoreLatestOrEmpty {
				return fmt.Errorf("--restore %q is weir run's: a job submitted to a JobManager gets a new job id and checkpoint directory, "+
					"so it has no latest checkpoint; give the path of a savepoint or of a chk-N directory (weir list, then weir checkpoints JOB-ID)", restore)
			}
			if restore != "" && !strings.Contains(restore, "://") {
				if req.SavepointPath, err = filepath.Abs(restore); err != nil {
					return err
				}
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			id, err := c.Submit(cmd.Context(), req)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Job has been submitted with JobID %s\n", id)
			return err
		},
	}
	f.add(cmd)
	cmd.Flags().StringArrayVarP(&settings, "set", "D", nil, "a setting key=value, as SET 'key' = 'value' (repeatable)")
	cmd.Flags().StringVarP(&restore, "restore", "s", "", "start from this savepoint or checkpoint directory")
	cmd.Flags().StringVar(&restore, "fromSavepoint", "", "Flink's name for --restore (flink run -s/--fromSavepoint)")
	cmd.Flags().StringVar(&name, "name", "", "the job's name, overriding the script's SET 'pipeline.name' (default: pipeline.name, else the file's name without .sql)")
	return cmd
}

func newListCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List a JobManager's jobs: running ones, then ended ones, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			jobs, err := c.JobsOverview(cmd.Context())
			if err != nil {
				return err
			}
			printJobs(cmd, jobs)
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// printJobs prints Flink's flink list layout: start time, id, name, state.
func printJobs(cmd *cobra.Command, jobs []api.JobOverview) {
	w := cmd.OutOrStdout()
	section := func(title string, ended bool) {
		fmt.Fprintf(w, "------------------ %s ------------------\n", title)
		n := 0
		for i := len(jobs) - 1; i >= 0; i-- {
			j := jobs[i]
			if api.Terminal(j.State) != ended {
				continue
			}
			n++
			fmt.Fprintf(w, "%s : %s : %s (%s)\n", time.UnixMilli(j.StartTime).Format("02.01.2006 15:04:05"), j.JID, j.Name, j.State)
		}
		if n == 0 {
			fmt.Fprintln(w, "No jobs.")
		}
	}
	section("Running/Restarting Jobs", false)
	section("Terminated Jobs", true)
}

func newCancelCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "cancel JOB_ID",
		Short: "Cancel a job of a JobManager (no savepoint; weir stop takes one)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if err := c.Cancel(cmd.Context(), args[0]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cancelled job %s.\n", args[0])
			return err
		},
	}
	f.add(cmd)
	return cmd
}

func newStopCommand() *cobra.Command {
	var f clientFlags
	var dir string
	var drain bool
	cmd := &cobra.Command{
		Use:   "stop JOB_ID",
		Short: "Stop a job of a JobManager with a savepoint (--drain: end its input first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return savepointVia(cmd, f, args[0], dir, true, drain)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVarP(&dir, "savepoint-path", "p", "", "directory of the savepoint (default: the job's execution.checkpointing.savepoint-dir)")
	cmd.Flags().BoolVarP(&drain, "drain", "d", false, "end the input first, firing every event-time window and timer")
	return cmd
}

// savepointVia takes a savepoint of job through the JobManager (stop: and
// stops it) and prints the path.
func savepointVia(cmd *cobra.Command, f clientFlags, job, dir string, stop, drain bool) error {
	var err error
	if dir != "" && !checkpointstorage.IsURL(dir) {
		if dir, err = filepath.Abs(dir); err != nil {
			return err
		}
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var trigger string
	if stop {
		trigger, err = c.Stop(ctx, job, dir, drain)
	} else {
		trigger, err = c.TriggerSavepoint(ctx, job, dir, false)
	}
	if err != nil {
		return err
	}
	path, err := c.AwaitSavepoint(ctx, job, trigger)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "Savepoint completed. Path: %s\n", path)
	return err
}

func newCheckpointsCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "checkpoints JOB_ID",
		Short: "Show a job's checkpoints: counts, then the history, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			st, err := c.Checkpoints(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			printCheckpoints(cmd, st)
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func printCheckpoints(cmd *cobra.Command, st api.CheckpointingStatistics) {
	w := cmd.OutOrStdout()
	c := st.Counts
	fmt.Fprintf(w, "completed %d, failed %d, in progress %d, restored %d\n", c.Completed, c.Failed, c.InProgress, c.Restored)
	if r := st.Latest.Restored; r != nil {
		fmt.Fprintf(w, "restored from %d: %s\n", r.ID, r.ExternalPath)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tTYPE\tTRIGGERED\tDURATION\tSIZE\tACKED\tPATH / FAILURE")
	for _, h := range st.History {
		where := h.ExternalPath
		if h.Status == api.CheckpointFailed {
			where = h.FailureMessage
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%dms\t%d\t%d/%d\t%s\n", h.ID, h.Status, h.CheckpointType,
			time.UnixMilli(h.TriggerTimestamp).Format("15:04:05.000"), h.EndToEndDuration, h.StateSize,
			h.NumAcknowledgedSubtasks, h.NumSubtasks, where)
	}
	_ = tw.Flush()
}
