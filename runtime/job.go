package runtime

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/restart"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/task"
)

// Result describes a finished job.
type Result struct {
	// Restarts is the number of failovers.
	Restarts int
	// RestoredFrom is the checkpoint the last attempt started from (0: fresh).
	RestoredFrom event.CheckpointID
	// Checkpoints is the coordinator's history of the last attempt.
	Checkpoints []checkpoint.CheckpointStats
	// Metrics sums each operator's metrics over its subtasks, by UID.
	Metrics map[string]operator.Metrics
	// Failures lists the error of each failed attempt, in order.
	Failures []error
}

// ErrJobFailed wraps the error of the attempt the restart strategy gave up on.
var ErrJobFailed = errors.New("runtime: job failed")

// Run executes the job until it finishes (bounded sources), ctx is
// cancelled, or a failure exhausts the restart strategy.
// It is Start followed by Wait.
func Run(ctx context.Context, jg *graph.JobGraph, opts Options) (*Result, error) {
	c, err := Start(ctx, jg, opts)
	if err != nil {
		return nil, err
	}
	return c.Wait()
}

// restoreDirExists fails a "latest" restore from a directory that does not
// exist (mistyped?) before OpenFS creates it and it looks merely empty.
func restoreDirExists(restore, dir string) error {
	if restore != RestoreLatest {
		return nil
	}
	local, ok := checkpointstorage.LocalPath(dir)
	if !ok {
		return nil // a bucket has no directories: an empty prefix reads as empty
	}
	if _, err := os.Stat(local); !errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	return noCheckpointError(restore, &checkpointstorage.NoCheckpointError{Dir: dir, Missing: true})
}

func noCheckpointError(which string, err error) error {
	return fmt.Errorf("runtime: restore %q: %w; to start empty when there is no usable checkpoint, restore %q",
		which, err, RestoreLatestOrEmpty)
}

type job struct {
	jg   *graph.JobGraph
	opts *Options
	fs   *checkpointstorage.FS
	res  *Result
	// positions holds source split positions handed over at exit, for
	// at-most-once restarts.
	positions *positions
	// startedFrom is the chk-N directory the run first restored ("" for a
	// fresh start); lastOwn is the newest checkpoint this run completed.
	startedFrom string
	lastOwn     event.CheckpointID
	pinned      bool
	// started is what the run first restored, by id when it lies in fs
	// (0: elsewhere, or nothing), and whether a "latest" restore chose it;
	// own lists the checkpoints this run completed, oldest first; corrupt
	// holds the locations of checkpoints found corrupt as they were
	// restored, never tried again (see fallback.go).
	startedID     event.CheckpointID
	startedLatest bool
	own           []event.CheckpointID
	corrupt       map[string]error
	// verified holds the files of incremental snapshots whose checksums a
	// restore verified (by location), never read again (see loadState).
	verified map[string]bool
	// stoppedAt is the savepoint of a stop-with-savepoint that completed:
	// a failover while the job finishes restores it, not an older
	// checkpoint whose replay its sinks already committed.
	stoppedAt string
	// requests carries savepoint requests from JobClients to the driver;
	// savepoints maps pending savepoints to their directories.
	requests   chan *savepointRequest
	savepoints *savepointDirs
	// recur remembers the positions of failures, rnd draws restart jitter.
	recur restart.Recurrence
	rnd   *rand.Rand
	// metrics is the job's group in Options.Metrics (nil without).
	metrics *metrics.Job
}

func (j *job) emit(e Event) {
	if j.opts.Listener != nil {
		j.opts.Listener(e)
	}
}

func (j *job) run(ctx context.Context) error {
	which := j.opts.Restore
	backoff := j.opts.Restart.NewBackoff()
	for attempt := 0; ; {
		restore, err := j.pickRestore(which)
		if bad, ok := corruptRestore(err, which, restore); ok && j.pinned {
			// A failover's checkpoint whose state files fail as read (a
			// first restore of a path the user named fails instead).
			if which, err = j.fallBack(bad); err == nil {
				continue
			}
		}
		if err == nil && attempt == 0 {
			err = j.checkUnclaimed(restore)
		}
		if err == nil {
			err = j.checkSchemas(restore)
		}
		if err == nil {
			err = j.checkBackend(restore)
		}
		if err != nil {
			return err
		}
		err = j.runAttempt(ctx, restore)
		restore.close()
		if err == nil || ctx.Err() != nil {
			j.gc()
			if err == nil {
				j.emit(Event{Kind: EventFinished})
			}
			return err
		}
		if bad, ok := corruptRestore(err, "", restore); ok {
			// A subtask found a file of the restored checkpoint corrupt:
			// restoring it again would fail again, whatever the restart
			// strategy; an older checkpoint is restored at once.
			j.res.Restarts++
			if which, err = j.fallBack(bad); err != nil {
				j.gc()
				return err
			}
			continue
		}
		j.res.Failures = append(j.res.Failures, err)
		delay, err := j.decide(backoff, attempt, err)
		if err != nil {
			j.gc()
			return err
		}
		j.opts.Logger.Warn("job failed; restarting from the latest completed checkpoint",
			"attempt", attempt+1, "delay", delay, "err", j.res.Failures[len(j.res.Failures)-1])
		j.emit(Event{Kind: EventFailover, Err: j.res.Failures[len(j.res.Failures)-1], Attempt: attempt + 1})
		attempt++
		j.res.Restarts++
		j.restartMetrics()
		if which, err = j.failoverPoint(); err != nil {
			j.gc()
			return err
		}
		if !clock.Sleep(ctx, j.opts.Clock, delay) {
			return ctx.Err()
		}
	}
}

// decide returns the delay before the restart after a failure, or the
// error that fails the job: a failure no restart can fix (see
// Restartable), one that recurred at the same position of the input or
// output (RecurringFailureError), or the restart strategy's limit.
func (j *job) decide(backoff restart.Backoff, attempt int, err error) (time.Duration, error) {
	if !Restartable(err) {
		return 0, fmt.Errorf("%w after %d restarts: %w", ErrJobFailed, attempt, err)
	}
	now := j.opts.Now()
	var pe operator.PositionedError
	if errors.As(err, &pe) && j.recur.Failed(now, pe.Position(), pe.Error()) {
		return 0, fmt.Errorf("%w after %d restarts: %w", ErrJobFailed, attempt,
			&RecurringFailureError{Position: pe.Position(), Restored: j.res.RestoredFrom, Err: err})
	}
	d := backoff.Failed(now, j.rnd.Float64())
	if !d.Restart {
		if attempt > 0 {
			return 0, fmt.Errorf("%w after %d restarts (%s): %w", ErrJobFailed, attempt, d.Reason, err)
		}
		return 0, fmt.Errorf("%w after %d restarts: %w", ErrJobFailed, attempt, err)
	}
	return d.Delay, nil
}

// RecurringFailureError fails a job whose failure recurred after a restart
// at the same position of its input or output (a source split and offset,
// a file line, a sink record, a checkpoint directory) with the same error:
// every restart resumes from the last checkpoint, reaches the same place
// and fails the same way — and repeats the output since the checkpoint on
// the way. Flink restarts such a job forever. The error (Err) names what to
// change to get past it.
type RecurringFailureError struct {
	Position string
	// Restored is the checkpoint the failed attempt had restored (0: none).
	Restored event.CheckpointID
	Err      error
}

// Error implements error.
func (e *RecurringFailureError) Error() string {
	from := "from the start"
	if e.Restored > 0 {
		from = fmt.Sprintf("from checkpoint %d", e.Restored)
	}
	return fmt.Sprintf("the same failure recurred at %s after a restart %s; restarting again cannot get past it, "+
		"so the job stops: %v", e.Position, from, e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *RecurringFailureError) Unwrap() error { return e.Err }

// gc removes what no retained checkpoint references (aborted checkpoints
// whose late writers recreated files, crashes mid-checkpoint) and moves
// corrupt checkpoints aside. Every subtask has stopped, so nothing is being
// written.
func (j *job) gc() {
	if j.fs == nil {
		return
	}
	c, err := j.fs.GC()
	j.reportCleanup(c, err)
}

// tidy brings the storage back to the retention bound before the first
// attempt: GC, then Retain keeping pin (the checkpoint being restored; 0
// for none, and then nothing valid is deleted: a fresh start does not
// throw away an earlier run's checkpoints before it has one of its own).
// Without it, runs killed right after each checkpoint (before its Retain)
// pile up checkpoints.
func (j *job) tidy(pin event.CheckpointID) {
	c, err := j.fs.GC()
	j.reportCleanup(c, err)
	if pin > 0 && err == nil {
		c, err = j.fs.Retain(j.opts.Retained, pin)
		j.reportCleanup(c, err)
	}
}

// reportCleanup logs what GC or Retain did: corrupt checkpoints loudly.
func (j *job) reportCleanup(c checkpointstorage.Cleanup, err error) {
	for _, q := range c.Corrupt {
		if q.To == "" {
			j.opts.Logger.Error("CORRUPT CHECKPOINT kept in place: a valid checkpoint references files in it",
				"checkpoint", q.ID, "dir", j.fs.Dir(), "err", q.Err)
			continue
		}
		j.opts.Logger.Error("CORRUPT CHECKPOINT moved aside (not deleted; inspect or delete it)",
			"checkpoint", q.ID, "to", j.fs.Where(q.To), "err", q.Err)
	}
	if len(c.Removed) > 0 {
		j.opts.Logger.Debug("checkpoint garbage collection", "removed", c.Removed, "checkpoints", c.Deleted)
	}
	if err != nil {
		j.opts.Logger.Warn("checkpoint garbage collection failed", "dir", j.fs.Dir(), "err", err)
	}
}

// pickRestore loads the checkpoint to restore, or nil for a fresh start.
// A corrupt newer checkpoint is reported loudly and skipped. The first call
// pins what the run started from, for failovers before its own checkpoint.
func (j *job) pickRestore(which string) (*restoredState, error) {
	if j.fs == nil {
		return j.positions.restored(), nil
	}
	r, path, err := j.resolve(which)
	if !j.pinned && err == nil {
		j.startedFrom, j.pinned = path, true
		j.startedLatest = which == RestoreLatest || which == RestoreLatestOrEmpty
		if r != nil && path == j.fs.Location(r.id) {
			j.startedID = r.id
		}
	}
	return r, err
}

func (j *job) resolve(which string) (*restoredState, string, error) {
	switch which {
	case "":
		return nil, "", nil
	case RestoreLatest, RestoreLatestOrEmpty:
		return j.resolveLatest(which)
	}
	m, storage, _, err := j.fs.Resolve(which)
	other := storage != nil && storage != j.fs
	if err != nil {
		if other {
			_ = storage.Close()
		}
		return nil, "", fmt.Errorf("runtime: restore %q: %w", which, err)
	}
	r, err := loadState(storage, m, j.verified)
	if err != nil {
		if other {
			_ = storage.Close()
		}
		return nil, "", fmt.Errorf("runtime: restore %q: %w", which, err)
	}
	if other {
		// Keyed backends fetch the files of incremental snapshots from
		// it while the attempt starts: closed after the attempt.
		r.closer = storage
	}
	return j.restored(storage, m, r)
}

// resolveLatest restores the newest checkpoint whose metadata and state
// files verify, reporting every newer one it skips loudly. A checkpoint
// whose state files fail their checksums (which only reading them shows)
// is moved aside once the restore is decided: a refused restore touches
// nothing. When none is usable, "latest" fails with what was found and
// "latest-or-empty" starts empty.
func (j *job) resolveLatest(which string) (*restoredState, string, error) {
	var skipped []error
	var unreadable []checkpointstorage.MovedAside // failed as read: the catalog takes them for valid
	var before event.CheckpointID
	for {
		m, more, err := j.fs.LatestBefore(before)
		skipped = append(skipped, more...)
		if errors.Is(err, checkpointstorage.ErrNoCheckpoint) {
			if err := j.noCheckpoint(which, skipped, err); err != nil {
				return nil, "", err
			}
			j.moveAside(unreadable)
			j.tidy(0)
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("runtime: restore %q: %w", which, err)
		}
		r, err := loadState(j.fs, m, j.verified)
		if errors.Is(err, checkpointstorage.ErrCorrupt) {
			var re *checkpointstorage.RestoreError
			if errors.As(err, &re) {
				err = re.Err // the id is said once, by SkippedError
			}
			skipped = append(skipped, &checkpointstorage.SkippedError{ID: m.ID, Err: err})
			unreadable = append(unreadable, checkpointstorage.MovedAside{ID: m.ID, Err: err})
			before = m.ID
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("runtime: restore %q: %w", which, err)
		}
		j.reportSkipped(skipped, m.ID)
		j.moveAside(unreadable)
		return j.restored(j.fs, m, r)
	}
}

// moveAside moves the checkpoints whose state files failed as a restore
// read them to chk-N.corrupt, loudly.
func (j *job) moveAside(bad []checkpointstorage.MovedAside) {
	for _, b := range bad {
		q, err := j.fs.MoveAside(b.ID, b.Err)
		j.reportCleanup(checkpointstorage.Cleanup{Corrupt: []checkpointstorage.MovedAside{q}}, err)
	}
}

// noCheckpoint handles a latest restore that found nothing usable: an
// error for "latest", nil for "latest-or-empty" (said loudly), which then
// starts empty.
func (j *job) noCheckpoint(which string, skipped []error, err error) error {
	var ne *checkpointstorage.NoCheckpointError
	if errors.As(err, &ne) {
		ne.Rejected = skipped // with those skipped in earlier rounds
	}
	if which == RestoreLatest {
		return noCheckpointError(which, err)
	}
	j.reportSkipped(skipped, 0)
	j.opts.Logger.Warn("no usable checkpoint; starting empty as restore \"latest-or-empty\" allows",
		"err", err)
	return nil
}

// restored finishes a restore: it brings this directory back to the
// retention bound (keeping the restored checkpoint), then reports the
// restore.
func (j *job) restored(storage *checkpointstorage.FS, m checkpointstorage.Metadata, r *restoredState) (*restoredState, string, error) {
	pin := event.CheckpointID(0)
	if storage == j.fs { // Resolve returns j.fs for a checkpoint in it
		pin = m.ID
	}
	j.tidy(pin)
	what := "checkpoint"
	if m.Savepoint {
		what = "savepoint"
	}
	j.opts.Logger.Info("restoring "+what, "checkpoint", m.ID, "dir", storage.Dir())
	j.emit(Event{Kind: EventRestored, Checkpoint: int64(m.ID), Path: storage.Location(m.ID)})
	return r, storage.Location(m.ID), nil
}

// reportSkipped logs every corrupt checkpoint a latest restore passed over,
// at error level, naming the checkpoint, the file and the reason, and what
// is restored instead (restoring; 0: nothing, an empty start).
func (j *job) reportSkipped(skipped []error, restoring event.CheckpointID) {
	for _, s := range skipped {
		if !errors.Is(s, checkpointstorage.ErrCorrupt) {
			// A checkpoint that never completed (no _metadata): normal
			// after a crash mid-checkpoint; garbage collection removes it.
			j.opts.Logger.Debug("ignoring incomplete checkpoint", "err", s)
			continue
		}
		var id int64
		var se *checkpointstorage.SkippedError
		if errors.As(s, &se) {
			id = int64(se.ID)
		}
		var file, reason string
		var ce *checkpointstorage.CorruptError
		if errors.As(s, &ce) {
			file, reason = ce.Path, ce.Reason
		}
		msg := fmt.Sprintf("CORRUPT CHECKPOINT skipped; restoring older checkpoint %d", restoring)
		if restoring == 0 {
			msg = "CORRUPT CHECKPOINT skipped; no older usable checkpoint"
		}
		j.opts.Logger.Error(msg, "checkpoint", id, "file", file, "reason", reason, "err", s)
		j.emit(Event{Kind: EventCorruptCheckpointSkipped, Checkpoint: id, Err: s})
	}
}

// reportsCapacity is the size of the one channel on which all subtasks of
// an attempt report to the driver (acks, checkpoint phases, end of input).
// A checkpoint sends several reports per subtask at about the same moment,
// while the driver may be persisting the previous checkpoint's metadata or
// posting mail; 4096 takes that burst for a few hundred subtasks, so a
// subtask seldom waits in report (which gives up when the attempt is
// cancelled) and the driver's posts and the subtasks' reports do not wait
// on each other.
const reportsCapacity = 4096

// runAttempt deploys the job once and drives it until it ends or fails.
func (j *job) runAttempt(parent context.Context, restore *restoredState) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	j.res.RestoredFrom = 0
	j.res.Metrics = map[string]operator.Metrics{}
	if restore != nil {
		j.res.RestoredFrom = restore.id
	}
	reports := make(chan task.Report, reportsCapacity)
	dp := &deployer{ctx: ctx, jg: j.jg, opts: j.opts, fs: j.fs, restore: restore, reports: reports, positions: j.positions,
		savepoints: j.savepoints}
	d := dp.deploy()
	defer d.close()
	j.attemptMetrics(d, restore != nil && restore.id != 0)
	if d.err != nil {
		return d.err
	}
	exits := make(chan exit, len(d.subtasks))
	var wg sync.WaitGroup
	var running atomic.Int64 // for a simulation's scheduler, which wg cannot tell
	sched := clock.SchedulerOf(j.opts.Clock)
	for i, st := range d.subtasks {
		wg.Add(1)
		running.Add(1)
		id := d.ids[i]
		clock.Go(sched, id.String(), func() {
			defer wg.Done()
			defer running.Add(-1)
			exits <- exit{id, st.Run(ctx)}
		})
	}
	dr, err := newDriver(j, d, reports, exits, restore)
	if err == nil {
		err = dr.loop(ctx)
		dr.endSavepoints(err)
	}
	cancel()
	if sched != nil {
		// Cancelled subtasks give up their reports (task.Subtask.report)
		// and exit; a simulation's goroutines run only when scheduled.
		sched.Wait(func() bool { return running.Load() == 0 })
	} else {
		// Drain reports so subtasks blocked on them can exit.
		go func() {
			for range reports {
			}
		}()
	}
	wg.Wait()
	close(reports)
	j.collectMetrics(d)
	if dr != nil {
		j.res.Checkpoints = dr.coord.Stats()
	}
	return err
}

type exit struct {
	id  event.SubtaskID
	err error
}

func (j *job) collectMetrics(d *deployment) {
	for _, om := range d.opMetric {
		sum := j.res.Metrics[om.uid]
		sum.LateDropped += om.m.LateDropped
		sum.LateSide += om.m.LateSide
		sum.Filtered += om.m.Filtered
		sum.ExpiredState += om.m.ExpiredState
		sum.RecordsIn += om.m.RecordsIn
		sum.RecordsOut += om.m.RecordsOut
		sum.FutureSkewed += om.m.FutureSkewed
		sum.WatermarkStalls += om.m.WatermarkStalls
		sum.BytesIn += om.m.BytesIn
		sum.BytesOut += om.m.BytesOut
		sum.Commits += om.m.Commits
		sum.LastCommitDuration = max(sum.LastCommitDuration, om.m.LastCommitDuration)
		j.res.Metrics[om.uid] = sum
	}
}

// Restartable reports whether a restart from the latest checkpoint may
// get past err (franz-go's kerr.IsRetriable, for a job). It is false for a
// failure a restart would only repeat: a sink that can never commit
// (operator.ErrNeverCommits), a misconfiguration
// (operator.ErrNonRestartable), data loss (operator.ErrDataLoss) — the
// restore would commit the same lost transaction again, so the job stops
// and the error says what was lost, instead of looping — and state the
// operators cannot read (state.ErrIncompatible), which the restore would
// hand them again. Every other error
// is restartable; the restart strategy and the recurring-failure check
// still bound how often. err is matched with errors.Is, so wrapping keeps
// the class.
func Restartable(err error) bool {
	return !errors.Is(err, operator.ErrNeverCommits) && !errors.Is(err, operator.ErrNonRestartable) &&
		!errors.Is(err, operator.ErrDataLoss) && !errors.Is(err, state.ErrIncompatible)
}
