package operator

import (
	"context"
	"hash/fnv"
	"log/slog"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
)

// SplitState is one split of a source (a Kafka partition, a file, a range of
// a generator) with its position: the next element to read, encoded by the
// source itself. Split states are what a source checkpoints (FLIP-27).
type SplitState struct {
	ID       string
	Position []byte
}

// Source is a split-based source (FLIP-27): an enumerator finds the splits
// and assigns each to one reader; readers read their splits and report their
// positions at every checkpoint.
type Source interface {
	// Bounded reports whether the source ends (then the job ends with a
	// final checkpoint).
	Bounded() bool
	// Enumerate returns the initial splits with their start positions. It
	// is not called when restoring: the checkpoint holds the splits.
	Enumerate(ctx context.Context) ([]SplitState, error)
	// CreateReader returns the reader of one source subtask.
	CreateReader(ctx ReaderContext) (SourceReader, error)
}

// SplitAssigner is implemented by sources that place splits themselves;
// otherwise splits go to readers by hash of the split id.
type SplitAssigner interface {
	AssignSplit(splitID string, numReaders int) int
}

// HashSplit is the placement of a split of a source without a
// SplitAssigner: FNV-1a of the split id modulo the number of readers.
func HashSplit(splitID string, numReaders int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(splitID))
	return int(h.Sum32() % uint32(numReaders))
}

// ReaderContext tells a reader where it runs.
type ReaderContext struct {
	Subtask     event.SubtaskID
	Parallelism int
	Context     context.Context // cancelled when the subtask stops
	// Metrics are the source's counts: the reader adds the bytes it read
	// to Metrics.BytesIn (from Poll, on the subtask goroutine). Never nil
	// when the runtime makes the reader.
	Metrics *Metrics
	// Group is the source's group in the job's metrics registry, for
	// values the reader publishes itself (partition lag, pendingRecords);
	// nil when the job reports no metrics (Gauge still works).
	Group *metrics.Operator
	// Logger is the subtask's (see Context.Logger); nil outside a job.
	Logger *slog.Logger
}

// ReaderStatus is what one Poll found.
type ReaderStatus uint8

const (
	// MoreAvailable: call Poll again soon.
	MoreAvailable ReaderStatus = iota
	// NothingAvailable: wait for Available() before polling again.
	NothingAvailable
	// EndOfInput: every split is finished (bounded sources only).
	EndOfInput
)

// ReaderOutput receives records from a reader, tagged with their split so
// the runtime can keep a watermark per split.
type ReaderOutput interface {
	Collect(split string, r event.Record)
}

// SplitListener is implemented by the runtime's ReaderOutput, which keeps a
// watermark generator per split (Flink's SourceOperator with its per-split
// outputs). A reader that changes its set of splits by itself tells it,
// asserting out.(SplitListener):
//
//   - SplitAdded before the first record of a split the runtime did not
//     hand it through AddSplits (a discovered partition): the split gets its
//     own generator and from then on takes part in the subtask's minimum,
//     like Flink's ReaderOutput.createOutputForSplit;
//   - SplitFinished after the last record of a split that ended (a bounded
//     split at its stopping offset, also one that was already there when
//     added): it leaves the minimum, like releaseOutputForSplit.
//
// Both are called from Poll, on the subtask goroutine. Adding a split the
// output already tracks, or finishing one it does not, changes nothing.
type SplitListener interface {
	SplitAdded(id string)
	SplitFinished(id string)
}

// ReportSplitAdded tells out that the reader started split id by itself,
// if out keeps per-split state (implements SplitListener).
func ReportSplitAdded(out ReaderOutput, id string) {
	if l, ok := out.(SplitListener); ok {
		l.SplitAdded(id)
	}
}

// ReportSplitFinished tells out that split id ended, if out keeps per-split
// state (implements SplitListener). A reader calls it right after the
// split's last record, or, for a split that had nothing left to read when
// added (empty, or restored at its end), when a Poll first comes to it:
// until then the runtime keeps the split in the subtask's watermark
// minimum.
func ReportSplitFinished(out ReaderOutput, id string) {
	if l, ok := out.(SplitListener); ok {
		l.SplitFinished(id)
	}
}

// MapOutput returns a ReaderOutput that hands each record through fn on to
// out, for a reader that wraps another. It passes split changes on to out
// when out takes them (SplitListener): a wrapper that hid them would keep
// every finished split in the runtime's watermark minimum.
func MapOutput(out ReaderOutput, fn func(event.Record) event.Record) ReaderOutput {
	return mappedOutput{out: out, fn: fn}
}

type mappedOutput struct {
	out ReaderOutput
	fn  func(event.Record) event.Record
}

func (o mappedOutput) Collect(split string, r event.Record) { o.out.Collect(split, o.fn(r)) }
func (o mappedOutput) SplitAdded(id string)                 { ReportSplitAdded(o.out, id) }
func (o mappedOutput) SplitFinished(id string)              { ReportSplitFinished(o.out, id) }

// FinishedSplits remembers which splits a reader reported finished, for a
// reader that sees a split's end in its position and so may find the same
// split at its end on every Poll. The zero value holds none.
type FinishedSplits struct{ ids map[string]bool }

// Finish reports split id finished to out (ReportSplitFinished), once.
func (f *FinishedSplits) Finish(out ReaderOutput, id string) {
	if f.ids[id] {
		return
	}
	if f.ids == nil {
		f.ids = map[string]bool{}
	}
	f.ids[id] = true
	ReportSplitFinished(out, id)
}

// SourceReader reads the splits of one source subtask. All methods are
// called from the subtask's goroutine; the reader may run its own fetch
// goroutines and hand data over through Poll.
type SourceReader interface {
	// AddSplits starts reading splits from their positions.
	AddSplits(splits []SplitState) error
	// Poll emits what is ready into out without blocking for long.
	Poll(out ReaderOutput) (ReaderStatus, error)
	// Available is signalled when Poll has something after NothingAvailable.
	Available() <-chan struct{}
	// SnapshotState returns the position of every split: exactly after the
	// last record emitted through Poll.
	SnapshotState(id event.CheckpointID) ([]SplitState, error)
	// NotifyCheckpointComplete lets a reader commit offsets for monitoring.
	NotifyCheckpointComplete(id event.CheckpointID) error
	Close() error
}

// TimestampAssigner extracts an event time (ms) from a value.
type TimestampAssigner func(v any) event.Timestamp
