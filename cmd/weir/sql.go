package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/chzyer/readline"
	"github.com/spf13/cobra"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/sql/client"
)

type sqlFlags struct {
	client                  clientFlags
	file, init, historyFile string
	settings                []string
}

func newSQLCommand() *cobra.Command {
	var f sqlFlags
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "The SQL client (Flink's sql-client.sh): an interactive shell, or -f FILE to run a script",
		Long: `Opens a shell reading Flink SQL statements ended by ';' (multi-line, with history in
--history). SET, RESET, SHOW, DESCRIBE and CREATE work on the session; a SELECT runs in this
process and shows its result live in the result mode of
SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau' (Ctrl-C cancels it);
an INSERT INTO is submitted as a job to the JobManager of --jobmanager/-m (or -D rest.address
and rest.port), else runs in this process in the background. HELP; lists the commands,
QUIT; (or Ctrl-D) leaves. -f FILE runs a script instead and exits non-zero at its first
failing statement; -i FILE runs a script first (CREATE and SET statements, say).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSQLClient(cmd, f) },
	}
	f.client.add(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "run this script and exit (non-zero at the first failing statement)")
	fl.StringVarP(&f.init, "init", "i", "", "run this script first (its failure ends the client)")
	fl.StringVar(&f.historyFile, "history", "", "the history file (default $XDG_STATE_HOME/weir/sql-client.history, else ~/.local/state/weir/sql-client.history)")
	fl.StringArrayVarP(&f.settings, "set", "D", nil, "a setting key=value, as SET 'key' = 'value' (repeatable); rest.address and rest.port name the JobManager")
	return cmd
}

func runSQLClient(cmd *cobra.Command, f sqlFlags) error {
	settings := map[string]string{}
	for _, kv := range f.settings {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-D/--set %q: want key=value", kv)
		}
		settings[k] = v
	}
	stateDir, err := sqlStateDir()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(stateDir, "sql-client.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := slog.New(logs.handler(logFile, false))
	slog.SetDefault(log) // the session's warnings too: the screen is the result's
	cluster, where, err := sqlCluster(f.client, settings, log)
	if err != nil {
		return err
	}
	defer cluster.close()
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	out := cmd.OutOrStdout()
	opts := client.Options{Out: out, Cluster: cluster, Settings: settings, Interrupt: interrupt, Logger: log}
	if isTerminal(os.Stdout) {
		opts.TermSize = func() (int, int) {
			w, h, err := readline.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 80, 24
			}
			return w, h
		}
	}
	sh := client.New(opts)
	ctx := cmd.Context()
	if f.init != "" {
		if err := runSQLFile(ctx, sh, f.init); err != nil {
			return err
		}
	}
	switch {
	case f.file != "":
		return runSQLFile(ctx, sh, f.file)
	case !isTerminal(os.Stdin):
		return runSQLStdin(ctx, sh)
	}
	fmt.Fprintf(out, "Weir SQL client %s. Statements end with ';'. HELP; lists the commands, QUIT; leaves.\n"+
		"INSERT jobs run %s; logs go to %s.\n\n", version, where, logFile.Name())
	hist := f.historyFile
	if hist == "" {
		hist = filepath.Join(stateDir, "sql-client.history")
	}
	return sh.Interactive(ctx, hist)
}

// sqlStateDir is where the SQL client keeps its history and log:
// $XDG_STATE_HOME/weir, else ~/.local/state/weir.
func sqlStateDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("the SQL client keeps its history under $XDG_STATE_HOME or ~/.local/state: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	dir := filepath.Join(base, "weir")
	return dir, os.MkdirAll(dir, 0o755)
}

// runSQLFile runs a script; a failing statement was printed as [ERROR]
// with its file:line:col, and ends the client with status 1.
func runSQLFile(ctx context.Context, sh *client.Shell, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := sh.RunScript(ctx, path, string(src)); err != nil {
		return &exitError{code: 1}
	}
	return nil
}

func runSQLStdin(ctx context.Context, sh *client.Shell) error {
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := os.Stdin.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if err := sh.RunScript(ctx, "<stdin>", b.String()); err != nil {
		return &exitError{code: 1}
	}
	return nil
}

// sqlCluster is where INSERT jobs run: the JobManager that --jobmanager
// or -D rest.address / rest.port name (those keys are the client's, not
// the session's), else a JobManager in this process.
func sqlCluster(f clientFlags, settings map[string]string, log *slog.Logger) (sqlJobs, string, error) {
	addr, port := settings["rest.address"], settings["rest.port"]
	delete(settings, "rest.address")
	delete(settings, "rest.port")
	if f.jobManager == "" && addr != "" {
		if port == "" {
			port = "8081"
		}
		f.jobManager = addr + ":" + port
	}
	if f.jobManager != "" {
		c, err := f.client()
		if err != nil {
			return nil, "", err
		}
		return remoteJobs{c}, "on the JobManager at " + c.Base, nil
	}
	m, err := jobmanager.Open(jobmanager.Options{Config: jobmanager.Config{jobmanager.KeySlots: "-1"}, Logger: log})
	if err != nil {
		return nil, "", err
	}
	return localJobs{m}, "in this process (no --jobmanager: they end when the client does)", nil
}

// sqlJobs is a client.Cluster the command closes when the shell ends.
type sqlJobs interface {
	client.Cluster
	close()
}

type remoteJobs struct{ c *rest.Client }

func (r remoteJobs) Submit(ctx context.Context, j client.Job) (string, error) {
	return r.c.Submit(ctx, api.JobSubmitRequest{Script: j.Script, Name: j.Name, Settings: j.Settings})
}

func (r remoteJobs) Jobs(ctx context.Context) ([]client.JobInfo, error) {
	jobs, err := r.c.JobsOverview(ctx)
	return jobInfos(jobs), err
}

func (r remoteJobs) ExplainAnalyze(ctx context.Context, job string) (string, error) {
	ea, err := r.c.ExplainAnalyze(ctx, job)
	return ea.Plan, err
}

func (remoteJobs) close() {}

type localJobs struct{ m *jobmanager.Manager }

func (l localJobs) Submit(_ context.Context, j client.Job) (string, error) {
	job, err := l.m.SubmitSQL(api.JobSubmitRequest{Script: j.Script, Name: j.Name, Settings: j.Settings})
	if err != nil {
		return "", err
	}
	return job.ID(), nil
}

func (l localJobs) Jobs(context.Context) ([]client.JobInfo, error) {
	var out []api.JobOverview
	for _, j := range l.m.Jobs() {
		out = append(out, j.Overview())
	}
	return jobInfos(out), nil
}

func (l localJobs) ExplainAnalyze(_ context.Context, job string) (string, error) {
	j, err := l.m.Job(job)
	if err != nil {
		return "", err
	}
	return j.ExplainAnalyze().Plan, nil
}

// close stops the jobs still running: they live in this process.
func (l localJobs) close() { l.m.Close() }

func jobInfos(jobs []api.JobOverview) []client.JobInfo {
	out := make([]client.JobInfo, len(jobs))
	for i, j := range jobs {
		out[i] = client.JobInfo{ID: j.JID, Name: j.Name, Status: j.State, Start: time.UnixMilli(j.StartTime)}
	}
	return out
}
