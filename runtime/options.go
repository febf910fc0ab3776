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
	// CheckpointDir is where checkpoints are stored. Required unless Mode
	// is AtMostOnce.
	CheckpointDir string
	// Retained is how many completed checkpoints are kept (Flink's
	// state.checkpoints.num-retained). Default 1.
	Retained int
	// Restore is "" (start fresh: but a failover inside this run always
	// restores), RestoreLatest ("latest": the newest valid checkpoint in
	// CheckpointDir; the job fails, saying what it found, when there is
	// none), RestoreLatestOrEmpty ("latest-or-empty": the same, but starts
	// empty when there is none) or the path of a chk-N directory. A corrupt
	// checkpoint newer than the one restored is reported at error level and
	// moved aside (chk-N.corrupt), never deleted. Default "".
	Restore string
	// Restart is the restart strategy. Default: FixedDelay{Attempts: -1
	// (unlimited), Delay: 1s}, Flink's default with checkpointing on.
	Restart RestartStrategy
	// ChannelCredits is the number of batches in flight per channel
	// (credit-based flow control). Default 4.
	ChannelCredits int
	// BatchSize is the number of records per batch between subtasks.
	// Default 256.
	BatchSize int
	// Logger receives the job's events, and the subtasks' warnings.
	// Default: slog.Default().
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
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Listener, if set, is called on the driver goroutine for every job
	// event (checkpoint completed or failed, failover, restore).
	Listener func(Event)
	// Progress, if set, is called about once a second with live figures.
	Progress func(Progress)
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
		o.Restart = FixedDelay{Attempts: -1, Delay: time.Second}
	}
	if o.ChannelCredits == 0 {
		o.ChannelCredits = 4
	}
	if o.BatchSize == 0 {
		o.BatchSize = 256
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Checkpoint.EnsureDefaults()
}

// Validate reports an unusable configuration.
func (o *Options) Validate() error {
	if o.Mode != task.AtMostOnce && o.CheckpointDir == "" {
		return errors.New("runtime: CheckpointDir is required unless the delivery guarantee is at-most-once")
	}
	if o.ChannelCredits < 1 || o.BatchSize < 1 {
		return fmt.Errorf("runtime: ChannelCredits (%d) and BatchSize (%d) must be at least 1", o.ChannelCredits, o.BatchSize)
	}
	return o.Checkpoint.Validate()
}

// RestartStrategy decides whether and when a failed job restarts.
type RestartStrategy interface {
	// Next returns the delay before restart number attempt (1-based), or
	// false when the job must fail for good.
	Next(attempt int) (time.Duration, bool)
}

// FixedDelay restarts up to Attempts times (-1: unlimited) after Delay.
type FixedDelay struct {
	Attempts int
	Delay    time.Duration
}

// Next implements RestartStrategy.
func (f FixedDelay) Next(attempt int) (time.Duration, bool) {
	return f.Delay, f.Attempts < 0 || attempt <= f.Attempts
}

// ExponentialDelay doubles the delay from Initial up to Max, for at most
// Attempts restarts (-1: unlimited).
type ExponentialDelay struct {
	Initial, Max time.Duration
	Attempts     int
}

// Next implements RestartStrategy.
func (e ExponentialDelay) Next(attempt int) (time.Duration, bool) {
	d := e.Initial
	for i := 1; i < attempt && d < e.Max; i++ {
		d *= 2
	}
	if d > e.Max {
		d = e.Max
	}
	return d, e.Attempts < 0 || attempt <= e.Attempts
}

// NoRestart fails the job on the first failure.
type NoRestart struct{}

// Next implements RestartStrategy.
func (NoRestart) Next(int) (time.Duration, bool) { return 0, false }

// EventKind names a job event.
type EventKind int

const (
	EventCheckpointCompleted EventKind = iota
	EventCheckpointFailed
	EventFailover
	EventRestored
	EventCorruptCheckpointSkipped
	EventFinished
)

// Event is something that happened to the job.
type Event struct {
	Kind       EventKind
	Checkpoint int64
	Err        error
	Attempt    int
	// Stats is set on checkpoint events: per-subtask alignment, sync and
	// async durations and bytes, end-to-end duration, failure reason.
	Stats *checkpoint.CheckpointStats
}
