package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// ErrJobNotRunning is returned by a JobClient's savepoint calls once the
// job has ended.
var ErrJobNotRunning = errors.New("runtime: job is not running")

// JobClient is the handle of a job started with Start (Flink's
// JobClient): wait for its end, cancel it, take savepoints, stop it with
// a savepoint. Its methods are safe for concurrent use, so a REST server
// can serve them.
type JobClient struct {
	id     string
	j      *job
	cancel context.CancelFunc
	done   chan struct{}
	res    *Result
	err    error
}

// Start deploys the job and returns at once; the job runs until it
// finishes (bounded sources), ctx is cancelled, Cancel or a stop-with-
// savepoint ends it, or a failure exhausts the restart strategy.
func Start(ctx context.Context, jg *graph.JobGraph, opts Options) (*JobClient, error) {
	opts.EnsureDefaults(jg.JobName)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	// Every line the job logs, its subtasks' too, names it.
	opts.Logger = opts.Logger.With("job", opts.JobID)
	fs, lock, err := openCheckpoints(opts)
	if err != nil {
		return nil, err
	}
	j := &job{jg: jg, opts: &opts, fs: fs, res: &Result{Metrics: map[string]operator.Metrics{}}, positions: newPositions(), verified: map[string]bool{},
		rnd: rand.New(rand.NewPCG(uint64(opts.Clock.Now().UnixNano()), 0)), requests: make(chan *savepointRequest),
		savepoints: newSavepointDirs()}
	j.registerMetrics()
	ctx, cancel := context.WithCancel(ctx)
	c := &JobClient{id: opts.JobID, j: j, cancel: cancel, done: make(chan struct{}), res: j.res}
	clock.Go(clock.SchedulerOf(opts.Clock), "job "+opts.JobID, func() {
		defer close(c.done)
		defer cancel()
		if fs != nil {
			defer fs.Close()
			defer func() {
				if err := lock.Release(); err != nil {
					opts.Logger.Warn("releasing the checkpoint directory's lock", "dir", opts.CheckpointDir, "err", err)
				}
			}()
		}
		c.err = j.run(ctx)
	})
	return c, nil
}

// openCheckpoints opens the job's checkpoint storage, none at most once,
// and locks it for the job: a directory holds one job's checkpoints.
func openCheckpoints(opts Options) (*checkpointstorage.FS, *checkpointstorage.Lock, error) {
	if opts.Mode == task.AtMostOnce {
		return nil, nil, nil
	}
	if err := restoreDirExists(opts.Restore, opts.CheckpointDir); err != nil {
		return nil, nil, err
	}
	fs, err := checkpointstorage.Open(opts.CheckpointDir, opts.CheckpointStorage)
	if err != nil {
		return nil, nil, err
	}
	lock, err := fs.Lock(opts.JobID)
	if err != nil {
		_ = fs.Close()
		return nil, nil, fmt.Errorf("runtime: job %q: %w", opts.JobID, err)
	}
	return fs, lock, nil
}

// JobID is the job's id (Options.JobID).
func (c *JobClient) JobID() string { return c.id }

// Done is closed when the job has ended.
func (c *JobClient) Done() <-chan struct{} { return c.done }

// Wait waits for the job to end and returns what Run returns.
func (c *JobClient) Wait() (*Result, error) {
	<-c.done
	return c.res, c.err
}

// Cancel stops the job without a savepoint, as cancelling Start's context
// does; Wait then returns the context's error.
func (c *JobClient) Cancel() { c.cancel() }

// TriggerSavepoint takes a savepoint of the running job into a new
// directory under dir (Options.SavepointDir when dir is ""), and returns
// that directory once the savepoint completed. The job runs on. Like
// Flink's, the savepoint is in the canonical format (restorable into either
// state backend, at another parallelism), self-contained (it restores
// after being moved), never deleted by checkpoint retention, and commits
// nothing: sinks commit its data with the next checkpoint. ctx bounds the
// wait, not the savepoint, which completes or fails by itself.
func (c *JobClient) TriggerSavepoint(ctx context.Context, dir string) (string, error) {
	return c.request(ctx, &savepointRequest{typ: event.SnapshotSavepoint, target: dir})
}

// StopWithSavepoint stops the job with a final savepoint into a new
// directory under dir (Options.SavepointDir when dir is "") and returns
// that directory (Flink's stop-with-savepoint): sources stop reading, the
// savepoint is taken, sinks commit its transactions, and the job finishes
// (Wait returns nil). With drain (Flink's --drain), the sources end their
// input first — the max watermark fires every event-time window and timer
// and operators finish — so what they emit is in the savepoint; use it to
// end a job for good. Without drain, event time stops where it is and a
// restore carries on as if nothing happened. If the savepoint fails, the
// job runs on (without drain) and the error says why.
func (c *JobClient) StopWithSavepoint(ctx context.Context, dir string, drain bool) (string, error) {
	typ := event.SnapshotSuspend
	if drain {
		typ = event.SnapshotTerminate
	}
	return c.request(ctx, &savepointRequest{typ: typ, target: dir})
}

func (c *JobClient) request(ctx context.Context, r *savepointRequest) (string, error) {
	r.reply = make(chan savepointResult, 1) // room for the one answer: answer never blocks the driver
	select {
	case c.j.requests <- r:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.done:
		return "", fmt.Errorf("%w: %s %q ended before the %s was taken", ErrJobNotRunning, "job", c.id, r.typ)
	}
	select {
	case res := <-r.reply:
		return res.path, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.done:
		select {
		case res := <-r.reply:
			return res.path, res.err
		default:
			return "", fmt.Errorf("%w: job %q ended before the %s completed", ErrJobNotRunning, c.id, r.typ)
		}
	}
}

// savepointRequest is one TriggerSavepoint or StopWithSavepoint call on
// its way to, and in, the driver.
type savepointRequest struct {
	typ    event.SnapshotType
	target string
	// storage is the savepoint's directory, created when the request is
	// accepted (and again for each retry of a drain's final savepoint).
	storage *checkpointstorage.FS
	reply   chan savepointResult
}

type savepointResult struct {
	path string
	err  error
}

func (r *savepointRequest) answer(path string, err error) {
	select {
	case r.reply <- savepointResult{path, err}:
	default: // answered already
	}
}

// savepointDirs maps the id of each pending savepoint to its storage, for
// subtasks to write into (task.Spec.Savepoints). The driver adds an id
// before it triggers the savepoint and removes it when the savepoint ends.
type savepointDirs struct {
	mu struct {
		sync.Mutex
		byID map[event.CheckpointID]*checkpointstorage.FS
	}
}

func newSavepointDirs() *savepointDirs {
	d := &savepointDirs{}
	d.mu.byID = map[event.CheckpointID]*checkpointstorage.FS{}
	return d
}

func (d *savepointDirs) put(id event.CheckpointID, s *checkpointstorage.FS) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.byID[id] = s
}

func (d *savepointDirs) get(id event.CheckpointID) *checkpointstorage.FS {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.byID[id]
}

func (d *savepointDirs) remove(id event.CheckpointID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.mu.byID, id)
}
