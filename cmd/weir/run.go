package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/metrics/prom"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

type runFlags struct {
	restore, checkpointDir string
	metricsPort            string
	settings               []string
	explain, quiet         bool
	allowNonRestored       bool
	// savepointOnStop is the directory of the savepoint SIGTERM takes;
	// restPort the port of the control endpoint (0: any free one).
	savepointOnStop string
	restPort        int
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE.sql",
		Short: "Run a Flink SQL script as one job (all its INSERT INTO statements together)",
		Long: `Runs the script's SET, CREATE and INSERT statements. Every INSERT INTO becomes part of one
job, as in a Flink statement set. Checkpointing follows the script's SET statements
(execution.checkpointing.interval, execution.checkpointing.mode, execution.checkpointing.dir)
or -D key=value flags. With checkpointing on and no directory set, checkpoints go to
.weir/checkpoints/<job> under the current directory, <job> being the job's name:
'pipeline.name' when set, else the script's file name without .sql. --restore latest resumes from the newest completed checkpoint there.

Ctrl-C (SIGINT) or SIGTERM stops the job: exit status 130 or 143, as shells expect.
With --savepoint-on-stop DIR, SIGTERM stops the job with a savepoint under DIR (sources
stop, the savepoint is taken, sinks commit it) and prints its path; --restore PATH resumes
from it, at any parallelism and on either state backend.

While it runs, the job answers Flink's REST calls for savepoints on 127.0.0.1 (--rest-port;
its address is in <checkpoint dir>/_rest_address): weir savepoint FILE.sql [DIR] takes one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runScript(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.allowNonRestored, "allow-non-restored-state", "n", false, "let --restore drop the state of operators the job no longer has (as -D execution.savepoint.ignore-unclaimed-state=true)")
	fl.StringVarP(&f.restore, "restore", "s", "", `resume from "latest" (fails when there is no usable checkpoint), "latest-or-empty" (starts empty then), or a chk-N or savepoint directory (movable, restorable at any parallelism)`)
	fl.StringVar(&f.restore, "fromSavepoint", "", "Flink's name for --restore (flink run -s/--fromSavepoint)")
	fl.StringVar(&f.checkpointDir, "checkpoint-dir", "", "checkpoint directory (overrides execution.checkpointing.dir; default .weir/checkpoints/<job>)")
	fl.StringArrayVarP(&f.settings, "set", "D", nil, "a setting key=value, as SET 'key' = 'value' (repeatable)")
	fl.StringVar(&f.metricsPort, "metrics-port", "", "serve Prometheus metrics on this port of 127.0.0.1 (as -D "+prom.KeyPort+"=PORT; 0: any free port)")
	fl.BoolVar(&f.explain, "explain", false, "print the job's plan (as weir explain) and exit")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "log warnings and errors only")
	fl.StringVar(&f.savepointOnStop, "savepoint-on-stop", "", "on SIGTERM, stop the job with a savepoint under this directory and print its path")
	fl.IntVar(&f.restPort, "rest-port", 0, "port of the REST endpoint on 127.0.0.1 that weir savepoint talks to (0: any free port)")
	return cmd
}

// loadScript runs a script's statements in a new session; -D/--set
// settings override the script's SET statements.
func loadScript(cmd *cobra.Command, path string, settings []string) (*session.Session, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := session.New()
	s.Out = cmd.OutOrStdout()
	script, err := session.ExpandEnv(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Execute(script); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, kv := range settings {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-D/--set %q: want key=value", kv)
		}
		if err := s.Set(k, v); err != nil {
			return nil, fmt.Errorf("-D/--set %s: %w", kv, err)
		}
	}
	return s, nil
}

func runScript(cmd *cobra.Command, path string, f runFlags) error {
	if err := jobmanager.CheckPort(f.restPort); err != nil {
		return fmt.Errorf("--rest-port: %w", err)
	}
	s, err := loadScript(cmd, path, f.settings)
	if err != nil {
		return err
	}
	if f.checkpointDir != "" {
		s.Settings["execution.checkpointing.dir"] = f.checkpointDir
	}
	if f.explain {
		return explain(cmd.OutOrStdout(), s, path)
	}
	jg, opts, err := s.Job(session.JobName(path))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if f.restore != "" {
		opts.Restore = f.restore
	}
	from := "'execution.savepoint.path'"
	if f.restore != "" {
		from = "--restore"
	}
	if err := jobmanager.RestoreNeedsCheckpointing(opts, from); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	opts.IgnoreUnclaimedState = opts.IgnoreUnclaimedState || f.allowNonRestored
	opts.Logger = logger(f.quiet)
	mem, err := applyProcessMemory(s.Settings)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if mem != "" {
		opts.Logger.Info(mem)
	}
	var status *statusLine
	if isTerminal(os.Stderr) {
		status = newStatusLine(cmd.ErrOrStderr())
		opts.Progress = status.update
		opts.Logger = slog.New(logHandler(status.clearing(), f.quiet))
	}
	metricsSrv, err := startMetrics(s, f.metricsPort, &opts)
	if err != nil {
		return err
	}
	if metricsSrv != nil {
		defer metricsSrv.Close()
	}
	var onStop stopWithSavepoint
	var onTerm func(context.CancelFunc)
	if f.savepointOnStop != "" {
		onTerm = onStop.handler(f.savepointOnStop)
	}
	ctx, stop, cancel := notifyStop(cmd.Context(), onTerm)
	defer cancel()
	client, ctl, err := runJob(jg, opts, f.restPort, opts.Logger, onStop.set)
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-ctx.Done(): // a signal, or the job ended (cancel below)
			client.Cancel()
		case <-client.Done():
		}
	}()
	res, err := client.Wait()
	ctl.close()
	status.end()
	if path, serr := onStop.result(); path != "" || serr != nil {
		return stoppedWithSavepoint(cmd.ErrOrStderr(), jg.JobName, path, serr, err)
	}
	return jobEnded(cmd.ErrOrStderr(), jg.JobName, res, err, stop.signal())
}

// startMetrics starts the Prometheus reporter when the settings
// (metrics.reporter.prom.*) or --metrics-port ask for it: the job then
// reports to a registry served on /metrics until the server is closed.
// Off, it returns a nil server.
func startMetrics(s *session.Session, port string, opts *runtime.Options) (*prom.Server, error) {
	c, on, err := prom.FromConfig(func(k string) (string, bool) { v, ok := s.Settings[k]; return v, ok })
	if err != nil {
		return nil, err
	}
	if port != "" {
		if !on {
			c.Host = prom.DefaultHost
		}
		c.Ports, on = port, true
	}
	if !on {
		return nil, nil
	}
	r := metrics.NewRegistry()
	srv, err := prom.Listen(c, r)
	if err != nil {
		return nil, err
	}
	opts.Metrics = r
	opts.Logger.Info("serving Prometheus metrics", "url", "http://"+srv.Addr().String()+"/metrics")
	return srv, nil
}

// jobEnded reports how a job ended: finished, failed (err), or stopped by
// a signal (sig not nil), which exits with 128 + the signal's number.
func jobEnded(w io.Writer, name string, res *runtime.Result, err error, sig os.Signal) error {
	if sig != nil {
		fmt.Fprintf(w, "job %s stopped by %s\n", name, signalName(sig))
		return stoppedBy(sig)
	}
	if err != nil {
		return err
	}
	var late, future int64
	for _, m := range res.Metrics {
		late, future = late+m.LateDropped, future+m.FutureSkewed
	}
	fmt.Fprintf(w, "job %s finished: %d checkpoints, %d restarts", name, len(res.Checkpoints), res.Restarts)
	if late > 0 {
		fmt.Fprintf(w, ", %s dropped", count(late, "late record"))
	}
	if future > 0 {
		fmt.Fprintf(w, ", %s too far in the future to move the watermark (see the log)", count(future, "record"))
	}
	fmt.Fprintln(w)
	return nil
}

// count is "1 record", "2 records".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// statusLine redraws one line of live progress on a terminal; end moves
// past it, so what is printed next starts on a line of its own.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	last  runtime.Progress
	at    time.Time
	drawn bool
}

func newStatusLine(w io.Writer) *statusLine { return &statusLine{w: w} }

func (s *statusLine) update(p runtime.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	secs := now.Sub(s.at).Seconds()
	if s.at.IsZero() || secs <= 0 {
		secs = 1
	}
	fmt.Fprintf(s.w, "\r\033[K%s", statusText(p, s.last, secs))
	s.last, s.at, s.drawn = p, now, true
}

// end ends the drawn line with a newline; a nil or undrawn line does
// nothing.
func (s *statusLine) end() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drawn {
		fmt.Fprintln(s.w)
		s.drawn = false
	}
}

// clearing returns a writer for log lines: each first clears the drawn
// status line, so the two do not run into each other; the next update
// draws it again below.
func (s *statusLine) clearing() io.Writer { return clearingWriter{s} }

type clearingWriter struct{ s *statusLine }

func (c clearingWriter) Write(p []byte) (int, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.drawn {
		fmt.Fprint(c.s.w, "\r\033[K")
		c.s.drawn = false
	}
	return c.s.w.Write(p)
}

// statusText is the status line of p, with rates since last, secs ago.
func statusText(p, last runtime.Progress, secs float64) string {
	in := float64(p.RecordsRead-last.RecordsRead) / secs
	out := float64(p.RecordsWritten-last.RecordsWritten) / secs
	ck := "no checkpoint yet"
	if p.LastCheckpoint > 0 {
		ck = fmt.Sprintf("checkpoint %d (%v, committed output %.1fs behind)", p.LastCheckpoint,
			p.LastCheckpointDuration.Round(time.Millisecond), p.SinceCheckpoint.Seconds())
	}
	var warn strings.Builder
	if p.LateDropped > 0 {
		fmt.Fprintf(&warn, " · %s dropped", count(p.LateDropped, "late record"))
	}
	if p.FutureSkewed > 0 {
		fmt.Fprintf(&warn, " · %s too far in the future (see the log)", count(p.FutureSkewed, "record"))
	}
	if p.WatermarkStalls > 0 {
		fmt.Fprintf(&warn, " · %d watermark stalls (see the log)", p.WatermarkStalls)
	}
	return fmt.Sprintf("%d in (%.0f/s) · %d out (%.0f/s) · %s · %d restarts%s", p.RecordsRead, in, p.RecordsWritten, out, ck, p.Restarts, warn.String())
}

func newExplainCommand() *cobra.Command {
	var settings []string
	cmd := &cobra.Command{
		Use:   "explain FILE.sql",
		Short: "Print the plan of a SQL script: operators with changelog modes, then operator chains (as weir run --explain)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := loadScript(cmd, args[0], settings)
			if err != nil {
				return err
			}
			return explain(cmd.OutOrStdout(), s, args[0])
		},
	}
	cmd.Flags().StringArrayVarP(&settings, "set", "D", nil, "a setting key=value, as SET 'key' = 'value' (repeatable)")
	return cmd
}

// explain prints the plan of the script loaded in s, for weir explain and
// weir run --explain alike: each INSERT's operators with their changelog
// modes, then the job's operator chains.
func explain(w io.Writer, s *session.Session, path string) error {
	var plan bytes.Buffer // printed only whole: a failure prints nothing on stdout
	s.Out = &plan
	if err := s.ExplainInserts(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	jg, _, err := s.Job(session.JobName(path))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	plan.WriteString("\n" + jg.Explain())
	_, err = w.Write(plan.Bytes())
	return err
}
