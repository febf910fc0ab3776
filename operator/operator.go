// Package operator defines the lifecycle every stream operator follows
// (open, process, watermark, snapshot, notify, finish, close), the output an
// operator emits into, event- and processing-time timers, processing-time
// callbacks, and the contracts of sources (splits, readers) and sinks
// (writer + committer, Flink's Sink V2 shape, FLIP-191). One subtask's
// goroutine drives all of an operator's methods; none of them is called
// concurrently.
package operator

import (
	"context"
	"log/slog"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/state"
)

// Output receives what an operator emits. Inside an operator chain it calls
// the next operator directly; at the chain's end it feeds the record writers.
type Output interface {
	// Collect emits r on the main output.
	Collect(r event.Record)
	// CollectSide emits r on the side output named tag (Flink's OutputTag).
	CollectSide(tag string, r event.Record)
	// EmitWatermark forwards the operator's event-time clock.
	EmitWatermark(wm event.Timestamp)
}

// Context is what the runtime hands an operator when it opens.
type Context struct {
	Subtask        event.SubtaskID
	UID            string // stable operator id: state is matched by it on restore
	Parallelism    int
	MaxParallelism int
	Output         Output
	// Keyed is the keyed state backend, nil on a non-keyed operator.
	Keyed state.KeyedBackend
	// OperatorState holds non-keyed operator state (list state).
	OperatorState state.OperatorStateBackend
	// Timers is the timer service of a keyed operator, nil otherwise.
	Timers *TimerService
	// ProcessingTime runs callbacks at processing times, keyed operator or
	// not (Flink's ProcessingTimeService): not checkpointed, dropped when
	// the subtask stops. One per subtask, shared by its chain and set by
	// the subtask before Open; callbacks run on the subtask's goroutine.
	ProcessingTime *ProcessingTimeService
	// Context is cancelled when the subtask is cancelled (the job attempt
	// fails or is stopped): operators pass it to blocking I/O, so a cancel
	// aborts a query or a request that would otherwise hold the subtask.
	// Set by the subtask before Open; nil means context.Background().
	Context context.Context
	// Metrics counts what the operator drops or routes aside.
	Metrics *Metrics
	// Group is the operator's group in the job's metrics registry, for
	// values a connector publishes itself (metrics.Operator.Gauge); nil
	// when the job reports no metrics (Gauge still works). Set by the
	// subtask before Open.
	Group *metrics.Operator
	// Logger is the subtask's, its lines naming job, vertex and subtask,
	// with the operator's name as operator;
	// connectors log through it unless the user gave them a logger. Set by
	// the subtask before Open; nil outside a job.
	Logger *slog.Logger
	// Now returns processing time in ms since the epoch. Only the
	// subtask's goroutine may call it (see CachedNow): two calls within one
	// batch of work may return the same time.
	Now func() int64
	// CachedNow, when set, is what Now reads: the runtime sets both when
	// the job runs on the real clock, and the subtask drops its reading
	// whenever it takes up new work. Nil: Now reads its clock every call.
	CachedNow *CachedNow
	// Restored is true when the operator's state came from a checkpoint.
	Restored bool
	// JobID names the job (sinks derive transaction ids from it).
	JobID string
	// CheckpointInterval is the job's periodic checkpoint interval; 0 when
	// periodic checkpoints are off.
	CheckpointInterval time.Duration
	// CheckpointTimeout is how long a checkpoint may take before it
	// expires; 0 when the job takes no checkpoints (at-most-once).
	CheckpointTimeout time.Duration
	// RestoredCheckpoint is the checkpoint the job restored (0: fresh).
	RestoredCheckpoint event.CheckpointID
	// KeySelector is set on keyed operators.
	KeySelector KeySelector
	// Name is the operator's name in the job graph ("Sink: orders"), for
	// errors a user reads.
	Name string
	// Commit says when a sink's committables can be committed in this job
	// (see SinkOperator). Zero: CommitOnCheckpoint.
	Commit CommitTrigger
	// CommitRetries is how often a sink retries a failed commit in place
	// before the subtask fails (Flink's sink.committer.retries). Default 0:
	// DefaultCommitRetries. Negative: no retry, the first failure fails
	// the subtask.
	CommitRetries int
	// CommitBackoff is the wait before the first in-place commit retry,
	// doubling for each further one. Default 0: DefaultCommitBackoff.
	CommitBackoff time.Duration
	// Clock times a sink's commit retries and commit durations (the
	// runtime's Options.Clock). Default nil: clock.Real.
	Clock clock.Clock
}

// CommitTrigger says what lets a sink commit in a job.
type CommitTrigger uint8

const (
	// CommitOnCheckpoint: committables are committed when their checkpoint
	// completes (periodic checkpoints, or a bounded job's final one).
	CommitOnCheckpoint CommitTrigger = iota
	// CommitAtEndOfInput: the job takes no checkpoints but its input ends,
	// so a sink commits everything at the end of input (what Flink's
	// CommitterOperator does in endInput when checkpointing is off).
	CommitAtEndOfInput
	// CommitNever: the job takes no checkpoints and its input never ends.
	// A sink with a committer could never write anything, so it refuses to
	// start (ErrNeverCommits).
	CommitNever
)

// SetCurrentKeyOf makes the key of v the current key of the keyed backend
// and returns it.
func (c *Context) SetCurrentKeyOf(v any) any {
	k := c.KeySelector(v)
	c.Keyed.SetCurrentKey(k, keygroup.ForKey(k, c.MaxParallelism))
	return k
}

// Operator is a one-input stream operator. Implementations usually embed
// Base and override what they need.
type Operator interface {
	Open(ctx *Context) error
	ProcessElement(r event.Record) error
	ProcessWatermark(wm event.Timestamp) error
	// PrepareSnapshotPreBarrier runs right before the barrier is forwarded:
	// sinks flush and pre-commit here.
	PrepareSnapshotPreBarrier(id event.CheckpointID) error
	// SnapshotState captures the operator's state synchronously; the
	// returned parts are encoded asynchronously.
	SnapshotState(id event.CheckpointID) ([]Part, error)
	// InitializeState hands the operator the parts of every old subtask of
	// this operator (by part name), before Open. Not called on a fresh start.
	InitializeState(parts map[string][][]byte) error
	NotifyCheckpointComplete(id event.CheckpointID) error
	NotifyCheckpointAborted(id event.CheckpointID) error
	// Finish is called once at the end of all input: flush buffered results.
	Finish() error
	Close() error
}

// TwoInput is an operator with two inputs (Flink's TwoInputStreamOperator).
// ProcessElement of the Operator interface is input 1.
type TwoInput interface {
	Operator
	ProcessElement2(r event.Record) error
}

// Prefetcher is an operator that prefetches the state a batch of
// records will touch. The subtask calls Prefetch with each batch that
// reaches the head of its chain (input 1 or 2) before processing its
// records one by one: the lookups of a batch, made back to back, wait for
// memory together instead of one after another (state of millions of keys
// lives out of the CPU's caches). It is a hint: it changes no state and
// reports nothing.
type Prefetcher interface {
	Prefetch(rs []event.Record, input int)
}

// Part is one named piece of an operator's snapshot ("keyed", "operator",
// "timers", …) whose Write is called off the task goroutine.
type Part struct {
	Name string
	Snap state.Snapshot
}

// Metrics counts records an operator does not pass on normally. Each field is
// read by the runtime after the job; increments happen on the owning goroutine.
type Metrics struct {
	LateDropped  int64 // late records dropped (no side output configured)
	LateSide     int64 // late records sent to a side output
	Filtered     int64 // records removed by a filter (informational)
	ExpiredState int64 // state entries found expired by TTL
	RecordsIn    int64
	RecordsOut   int64
	// FutureSkewed counts source records whose timestamp was too far past
	// the wall clock to advance the watermark (they still flow).
	FutureSkewed int64
	// WatermarkStalls counts the times a source split without records
	// held back its subtask's watermark for the stall-warning threshold
	// (each logged once as a warning).
	WatermarkStalls int64
	// BytesIn counts the bytes a source's reader read from outside (a
	// Kafka record's key, value and headers); BytesOut those a sink's
	// writer wrote out. Connectors add to them on the subtask goroutine.
	BytesIn, BytesOut int64
	// Commits counts a sink's commits of completed checkpoints;
	// LastCommitDuration is how long the last took, retries included.
	Commits            int64
	LastCommitDuration time.Duration
}

// KeySelector extracts the key of a value on a keyed stream. Keys must be
// comparable and hash stably (see keygroup.HashKey).
type KeySelector func(v any) any

// KeyHasher returns keygroup.HashKey of the key a KeySelector extracts
// from v, without making the key: a hash exchange needs the key's group
// only, and a SQL key is a string made for each row, and boxed.
type KeyHasher func(v any) uint64
