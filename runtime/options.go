// Package runtime runs a job in local mode, like Flink's MiniCluster: it
// deploys one goroutine per subtask of the JobGraph, drives the checkpoint
// coordinator (a pure state machine) with real time and real storage, and on
// any failure cancels every subtask and redeploys the job from the latest
// completed checkpoint, as the restart strategy allows.
package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/debloat"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/restart"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/task"
)

// Options configures a job run. Every field documents its default.
type Options struct {
	// JobID names the job in checkpoint metadata and sink transaction ids.
	// Default: the job's name.
	JobID string
	// Mode is the delivery guarantee. Default: task.ExactlyOnce.
	Mode task.Mode
	// Checkpoint configures the coordinator. Interval 0 disables periodic
	// checkpoints (a bounded job still takes its final checkpoint unless
	// Mode is AtMostOnce).
	Checkpoint checkpoint.Options
	// CheckpointDir is where checkpoints are stored: a directory path,
	// file:///path, or s3://bucket/prefix. Required unless Mode is
	// AtMostOnce.
	CheckpointDir string
	// CheckpointStorage configures the storage at CheckpointDir: S3
	// endpoint and credentials, upload concurrency, retries. Default: see
	// checkpointstorage.Options.
	CheckpointStorage checkpointstorage.Options
	// SavepointDir is where savepoints go when TriggerSavepoint or
	// StopWithSavepoint is given no directory (Flink's
	// execution.checkpointing.savepoint-dir, formerly state.savepoints.dir).
	// Default "": a savepoint then needs a directory.
	SavepointDir string
	// Retained is how many completed checkpoints are kept (Flink's
	// state.checkpoints.num-retained). Default 1.
	Retained int
	// Restore is "" (start fresh: but a failover inside this run always
	// restores), RestoreLatest ("latest": the newest valid checkpoint in
	// CheckpointDir; the job fails, saying what it found, when there is
	// none), RestoreLatestOrEmpty ("latest-or-empty": the same, but starts
	// empty when there is none) or the path of a chk-N or savepoint
	// directory (a savepoint restores wherever it was moved). A corrupt
	// checkpoint newer than the one restored is reported at error level and
	// moved aside (chk-N.corrupt), never deleted. Default "".
	Restore string
	// IgnoreUnclaimedState lets a restore drop the state of operators the
	// job no longer has (Flink's execution.savepoint.ignore-unclaimed-state);
	// without it such a restore fails with an *UnclaimedStateError.
	IgnoreUnclaimedState bool
	// Restart is the restart strategy. Default:
	// restart.DefaultExponentialDelay(), Flink 2.x's default with
	// checkpointing on (1 s, ×1.5 per restart up to 1 min, ±10 % jitter,
	// reset after 1 h without failure). Whatever the strategy, a failure
	// that recurs at the same position of the input or output fails the
	// job at once (see RecurringFailureError).
	Restart RestartStrategy
	// ChannelCredits is the number of batches in flight per channel
	// (credit-based flow control). Default 4.
	ChannelCredits int
	// BatchSize is the number of records per batch between subtasks.
	// Default 256.
	BatchSize int
	// MaxBuffersPerChannel is how many batches an output channel may queue,
	// waiting for credits, before its subtask stops processing input:
	// Flink's taskmanager.network.memory.max-buffers-per-channel, a
	// batch being Weir's network buffer. In every mode with checkpoints
	// (an unaligned barrier overtakes these queues, an aligned one queues
	// behind them); at most once a subtask waits in its send. Default 1 (Flink's is 10 buffers of 32 KiB; a Weir batch
	// holds up to BatchSize records): the subtask stops as soon as a
	// batch waits, as one without queues does. More lets a subtask run on
	// through short stalls of one receiver, at the price of more output
	// persisted by an unaligned checkpoint.
	MaxBuffersPerChannel int
	// Debloat is buffer debloating (Flink's
	// taskmanager.network.memory.buffer-debloat.*, off by default): each
	// subtask with inputs sizes the batches its senders cut to its
	// throughput, so that its ChannelCredits × channels batches in flight
	// take about Debloat.Target to process. Its MaxBatch is BatchSize.
	Debloat debloat.Options
	// Logger receives the job's events, and the subtasks' warnings. The
	// job adds the attribute job (its JobID) to every line, a subtask
	// vertex and subtask (its index); operators and connectors log through
	// the subtask's (operator.Context.Logger). Default: slog.Default().
	Logger *slog.Logger
	// WatermarkStallWarning is how long a source split without records may
	// hold back its subtask's watermark, while another split of the subtask
	// is ahead — or a source subtask without records the watermark of its
	// source, while another subtask is ahead (checked by the driver) —
	// before a warning names the split and the fix (an idle
	// timeout) and Metrics.WatermarkStalls counts it (Weir's
	// weir.source.watermark-stall-warning; Flink has none). Default 0:
	// watermark.DefaultStallThreshold, 1 minute. Negative: no warning. See
	// task.SourceSpec.StallWarning.
	WatermarkStallWarning time.Duration
	// StateBackend creates the keyed state backend of each subtask of a
	// keyed operator (Flink's state.backend.type). Default
	// heap.Factory{Incremental: true} ('hashmap' with incremental
	// checkpoints, as the configuration's default); pebble.Factory keeps
	// state on local disk.
	StateBackend state.BackendFactory
	// Clock is the source of time of everything on the runtime's path:
	// the driver's tick, the subtasks' processing-time wake-ups and time
	// accounting, sources' watermark intervals and polls, snapshot
	// durations, commit-retry backoffs and restart delays. A simulation
	// passes a clock.Fake. Default: clock.Real, the wall clock.
	Clock clock.Clock
	// Now is the job's processing time: the coordinator's, the operators'
	// and the restart strategy's clock. Default: Clock.Now.
	Now func() time.Time
	// CommitRetries is how often a sink subtask retries a failed commit in
	// place before it fails and the job restores (Flink's
	// sink.committer.retries; see operator.Context.CommitRetries). Default
	// 0: operator.DefaultCommitRetries (3). Negative: no retry.
	CommitRetries int
	// CommitBackoff is the wait before a sink's first in-place commit
	// retry, doubling for each further one. Default 0:
	// operator.DefaultCommitBackoff (50 ms).
	CommitBackoff time.Duration
	// Listener, if set, is called on the driver goroutine for every job
	// event (checkpoint completed or failed, failover, restore).
	Listener func(Event)
	// Progress, if set, is called about once a second with live figures.
	Progress func(Progress)
	// Metrics, if set, is the registry the job reports its metrics to
	// (Flink's job, task and operator metric groups; metrics/prom serves
	// them to Prometheus). The job stays registered after it ends, with
	// its final values. Default nil: no metrics.
	Metrics *metrics.Registry

	// cacheNow: Now is the real clock's, so operators may share a reading
	// of it (operator.CachedNow); with a clock of the caller's, every
	// call reads it.
	cacheNow bool
}

// Values of Options.Restore other than a checkpoint path.
const (
	// RestoreLatest restores the newest valid checkpoint, or fails.
	RestoreLatest = "latest"
	// RestoreLatestOrEmpty restores the newest valid checkpoint, or starts
	// empty when the directory has none (an explicit choice).
	RestoreLatestOrEmpty = "latest-or-empty"
)

// Progress is a live view of a running job.
type Progress struct {
	// RecordsRead counts records the sources emitted in this attempt;
	// RecordsWritten records that reached subtasks ending in a sink.
	RecordsRead, RecordsWritten int64
	// LastCheckpoint is the newest completed checkpoint (0: none yet),
	// LastCheckpointDuration its end-to-end time.
	LastCheckpoint         int64
	LastCheckpointDuration time.Duration
	// SinceCheckpoint is how long ago it completed: how far the committed
	// output lags behind what the job has processed.
	SinceCheckpoint time.Duration
	Restarts        int
	// WatermarkStalls counts the source watermark stalls of this attempt
	// (see Options.WatermarkStallWarning).
	WatermarkStalls int64
	// LateDropped counts the late records operators dropped in this attempt
	// (as of their last processing-time tick); FutureSkewed the source
	// records too far past the wall clock to move the watermark (see
	// watermark.Strategy.MaxFutureSkew), each split's first logged.
	LateDropped, FutureSkewed int64
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults(jobName string) {
	if o.JobID == "" {
		o.JobID = jobName
	}
	if o.Retained == 0 {
		o.Retained = 1
	}
	if o.Restart == nil {
		o.Restart = restart.DefaultExponentialDelay()
	}
	if o.ChannelCredits == 0 {
		o.ChannelCredits = 4
	}
	if o.BatchSize == 0 {
		o.BatchSize = 256
	}
	if o.MaxBuffersPerChannel == 0 {
		o.MaxBuffersPerChannel = 1
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StateBackend == nil {
		o.StateBackend = heap.Factory{Incremental: true}
	}
	o.Clock = clock.Or(o.Clock)
	if o.Now == nil {
		o.Now = o.Clock.Now
		o.cacheNow = o.Clock == clock.Real
	}
	o.Debloat.MaxBatch = o.BatchSize
	o.Debloat.EnsureDefaults()
	o.Checkpoint.EnsureDefaults()
}

// Validate reports an unusable configuration.
func (o *Options) Validate() error {
	if o.Mode != task.AtMostOnce && o.CheckpointDir == "" {
		return errors.New("runtime: CheckpointDir is required unless the delivery guarantee is at-most-once")
	}
	if o.MaxBuffersPerChannel < 1 {
		return fmt.Errorf("runtime: MaxBuffersPerChannel is %d; want at least 1 (taskmanager.network.memory.max-buffers-per-channel)", o.MaxBuffersPerChannel)
	}
	if o.ChannelCredits < 1 || o.BatchSize < 1 {
		return fmt.Errorf("runtime: ChannelCredits (%d) and BatchSize (%d) must be at least 1", o.ChannelCredits, o.BatchSize)
	}
	if o.Checkpoint.Unaligned && o.Mode != task.ExactlyOnce {
		return errors.New("runtime: unaligned checkpoints ('execution.checkpointing.unaligned.enabled') need the EXACTLY_ONCE checkpointing mode")
	}
	if err := o.Restart.Validate(); err != nil {
		return err
	}
	if err := o.Debloat.Validate(); err != nil {
		return err
	}
	return o.Checkpoint.Validate()
}

// RestartStrategy decides whether and when a failed job restarts (see
// package restart). The strategies, by Flink's names:
// restart.ExponentialDelay (the default), restart.FixedDelay,
// restart.FailureRate, restart.None.
type RestartStrategy = restart.Strategy

// Restart strategies, kept here for callers of the runtime's own names.
type (
	FixedDelay       = restart.FixedDelay
	ExponentialDelay = restart.ExponentialDelay
	FailureRate      = restart.FailureRate
	NoRestart        = restart.None
)

// EventKind names a job event.
type EventKind int

const (
	// EventCheckpointCompleted: a checkpoint completed (Checkpoint says which).
	EventCheckpointCompleted EventKind = iota
	// EventCheckpointFailed: a checkpoint was declined, expired or failed (Err says why).
	EventCheckpointFailed
	// EventFailover: attempt Attempt failed (Err) and the job restarts.
	EventFailover
	// EventRestored: an attempt restores its state from a checkpoint
	// (Checkpoint, Path).
	EventRestored
	// EventCorruptCheckpointSkipped: a restore skipped checkpoint
	// Checkpoint, which does not read (Err), for an older one.
	EventCorruptCheckpointSkipped
	// EventFinished: the job finished (all input read, every subtask done).
	EventFinished
	// EventSavepointCompleted: a savepoint completed; Path is its directory.
	EventSavepointCompleted
	// EventSavepointFailed: a savepoint failed (Err says why).
	EventSavepointFailed
	// EventCheckpointPending: a checkpoint or savepoint in progress moved
	// on — it was triggered, or subtasks acknowledged it or reported a
	// phase (at most once per driver tick, 10 ms); Stats is its record so
	// far. Sent once more, ended (Stats.Status failed, with
	// checkpoint.ErrSubsumed), when a newer checkpoint subsumed it: such
	// a checkpoint is no failure and has no EventCheckpointFailed. Its
	// other ends are the events above.
	EventCheckpointPending
)

// Event is something that happened to the job.
type Event struct {
	Kind       EventKind
	Checkpoint int64
	Err        error
	Attempt    int
	// Path is the directory of a savepoint, or of the checkpoint restored.
	Path string
	// Stats is set on checkpoint events: per-subtask alignment, sync and
	// async durations and bytes, end-to-end duration, failure reason.
	Stats *checkpoint.CheckpointStats
}
