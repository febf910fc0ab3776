package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/durable"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

// restAddressFile, in the checkpoint directory, holds the address of the
// running weir run's REST endpoint for weir savepoint to find. Checkpoint
// garbage collection never touches it (it is no chk-N).
const restAddressFile = "_rest_address"

// control is weir run's REST endpoint: a JobManager without a store
// holding the one job, served as weir jobmanager serves its jobs.
type control struct {
	ep       *rest.Endpoint
	addrFile string
}

// runJob starts the job under a store-less JobManager, hands its client to
// started, and then serves its REST API on 127.0.0.1:port, writing the
// address into the checkpoint directory (when it is a local one): once the
// address is there, started has run (a SIGTERM handler set by it finds the
// client).
func runJob(jg *graph.JobGraph, opts runtime.Options, port int, log *slog.Logger, started func(*runtime.JobClient)) (*runtime.JobClient, *control, error) {
	cfg := jobmanager.Config{jobmanager.KeySlots: "-1", jobmanager.KeyRestPort: strconv.Itoa(port),
		jobmanager.KeyRestBindAddress: "127.0.0.1"}
	m, err := jobmanager.Open(jobmanager.Options{Config: cfg, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	// Listen before the job starts: a port in use fails the run before any
	// record is read or written.
	ep, err := rest.Listen(m, cfg)
	if le := (*rest.ListenError)(nil); errors.As(err, &le) {
		return nil, nil, fmt.Errorf("--rest-port %d: %w (choose another --rest-port; 0 picks a free one)", port, le.Err)
	}
	if err != nil {
		return nil, nil, err
	}
	j, err := m.SubmitGraph(jg, opts)
	if err != nil {
		_ = ep.Close()
		return nil, nil, err
	}
	started(j.Client())
	ctl := &control{ep: ep}
	log.Info("REST endpoint", "address", ep.URL(), "jid", j.ID())
	if local, ok := checkpointstorage.LocalPath(opts.CheckpointDir); ok && opts.CheckpointDir != "" {
		ctl.addrFile = filepath.Join(local, restAddressFile)
		if err := durable.WriteFile(ctl.addrFile, []byte(ep.URL()+"\n")); err != nil {
			log.Warn("cannot write the REST address for weir savepoint; pass it --address", "file", ctl.addrFile, "err", err)
			ctl.addrFile = ""
		}
	}
	return j.Client(), ctl, nil
}

// fetchGrace bounds how long weir run, its job ended, waits for a client
// to fetch the result of the savepoint it asked for (weir savepoint
// --stop polls every 100 ms).
const fetchGrace = 10 * time.Second

func (c *control) close() {
	ctx, cancel := context.WithTimeout(context.Background(), fetchGrace)
	c.ep.AwaitFetched(ctx)
	cancel()
	if c.addrFile != "" {
		_ = os.Remove(c.addrFile)
	}
	_ = c.ep.Close()
}

// stopWithSavepoint carries out weir run --savepoint-on-stop on SIGTERM.
type stopWithSavepoint struct {
	mu     sync.Mutex
	client *runtime.JobClient
	path   string
	err    error
}

func (s *stopWithSavepoint) set(c *runtime.JobClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client = c
}

// handler is notifyStop's onTerm: it stops the job with a savepoint under
// dir, or cancels it when that fails.
func (s *stopWithSavepoint) handler(dir string) func(context.CancelFunc) {
	return func(cancel context.CancelFunc) {
		s.mu.Lock()
		c := s.client
		s.mu.Unlock()
		if c == nil { // SIGTERM before the job started
			cancel()
			return
		}
		path, err := c.StopWithSavepoint(context.Background(), dir, false)
		s.mu.Lock()
		s.path, s.err = path, err
		s.mu.Unlock()
		if err != nil {
			cancel()
		}
	}
}

func (s *stopWithSavepoint) result() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path, s.err
}

// stoppedWithSavepoint reports a SIGTERM stop-with-savepoint: the path and
// exit status 143 when it worked; the error otherwise.
func stoppedWithSavepoint(w io.Writer, name, path string, serr, jobErr error) error {
	if serr != nil {
		return fmt.Errorf("job %s: stop-with-savepoint on SIGTERM failed, job cancelled: %w", name, serr)
	}
	if jobErr != nil {
		return fmt.Errorf("job %s failed after its savepoint %s: %w", name, path, jobErr)
	}
	fmt.Fprintf(w, "job %s stopped by SIGTERM with a savepoint: %s\n", name, path)
	return stoppedBy(syscall.SIGTERM)
}

type savepointFlags struct {
	jm                     clientFlags
	address, checkpointDir string
	settings               []string
	stop, drain            bool
}

func newSavepointCommand() *cobra.Command {
	var f savepointFlags
	cmd := &cobra.Command{
		Use:   "savepoint (JOB_ID | FILE.sql) [TARGET_DIR]",
		Short: "Take a savepoint of a JobManager's job, or of a running weir run (with --stop, stop it with the savepoint)",
		Long: `With a job id, asks the JobManager (--jobmanager) for a savepoint of that job under
TARGET_DIR and prints its path.

With a script, asks the weir run of FILE.sql for a savepoint under TARGET_DIR (default: the job's
execution.checkpointing.savepoint-dir) and prints its path once it completed. weir run's
address is read from <checkpoint dir>/_rest_address, the checkpoint directory being found
as weir run finds it (the script's SET, -D, --checkpoint-dir); or give --address.

--stop stops the job with the savepoint: sources stop, the savepoint is taken, sinks commit
it, the job finishes. --drain (with --stop) first ends the input, so event-time windows and
timers fire into the savepoint; use it to end a job for good. Resume with
weir run FILE.sql --restore PATH, at any parallelism.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			target := ""
			if len(args) == 2 {
				target = args[1]
			}
			if isJobID(args[0]) {
				return savepointVia(cmd, f.jm, args[0], target, f.stop, f.drain)
			}
			return takeSavepoint(cmd, args[0], target, f)
		},
	}
	f.jm.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.address, "address", "", "weir run's REST address, e.g. http://127.0.0.1:8081 (default: read from the checkpoint directory)")
	fl.StringVar(&f.checkpointDir, "checkpoint-dir", "", "the job's checkpoint directory, as given to weir run")
	fl.StringArrayVarP(&f.settings, "set", "D", nil, "a setting key=value, as given to weir run (repeatable)")
	fl.BoolVar(&f.stop, "stop", false, "stop the job with the savepoint")
	fl.BoolVar(&f.drain, "drain", false, "with --stop: end the input first, firing every event-time window and timer")
	return cmd
}

// isJobID reports whether s is a job id (32 hex digits) rather than a
// script's path.
func isJobID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func takeSavepoint(cmd *cobra.Command, script, target string, f savepointFlags) error {
	if f.drain && !f.stop {
		return errors.New("--drain needs --stop: only a stop-with-savepoint drains the job")
	}
	addr, err := controlAddress(cmd, script, f)
	if err != nil {
		return err
	}
	if target != "" && !checkpointstorage.IsURL(target) { // a URL (s3://…) is the job's to resolve
		if target, err = filepath.Abs(target); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	c := &rest.Client{Base: addr}
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("%w (is weir run of %s running?)", err, script)
	}
	if len(jobs) != 1 {
		return fmt.Errorf("%s serves %d jobs; want one", addr, len(jobs))
	}
	var trigger string
	if f.stop {
		trigger, err = c.Stop(ctx, jobs[0].ID, target, f.drain)
	} else {
		trigger, err = c.TriggerSavepoint(ctx, jobs[0].ID, target, false)
	}
	if err != nil {
		return err
	}
	path, err := c.AwaitSavepoint(ctx, jobs[0].ID, trigger)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "Savepoint completed. Path: %s\n", path)
	return err
}

// controlAddress finds weir run's REST address: --address, or the file
// in the job's checkpoint directory.
func controlAddress(cmd *cobra.Command, script string, f savepointFlags) (string, error) {
	if f.address != "" {
		if !strings.Contains(f.address, "://") {
			return "http://" + f.address, nil
		}
		return f.address, nil
	}
	dir := f.checkpointDir
	if dir == "" {
		s, err := loadScript(cmd, script, f.settings)
		if err != nil {
			return "", err
		}
		opts, err := s.Settings.RuntimeOptions(s.JobName(session.JobName(script)))
		if err != nil {
			return "", err
		}
		dir = opts.CheckpointDir
	}
	if dir == "" {
		return "", fmt.Errorf("%s takes no checkpoints, so it has no savepoints: turn checkpointing on "+
			"(SET 'execution.checkpointing.interval' = '10 s')", script)
	}
	local, ok := checkpointstorage.LocalPath(dir)
	if !ok {
		return "", fmt.Errorf("the checkpoint directory of %s is %s, a bucket: weir run writes its REST address "+
			"only into a local one; pass --address (weir run logs it as \"REST endpoint\")", script, dir)
	}
	b, err := os.ReadFile(filepath.Join(local, restAddressFile))
	if err != nil {
		return "", fmt.Errorf("no running weir run of %s found: %w (start it first, or pass --address)", script, err)
	}
	return strings.TrimSpace(string(b)), nil
}
