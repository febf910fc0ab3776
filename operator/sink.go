package operator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
)

// Sink is a sink in Flink's Sink V2 shape (FLIP-191): a writer per subtask
// that pre-commits on every checkpoint barrier and hands out committables,
// and a committer that commits them once the checkpoint is complete.
type Sink interface {
	CreateWriter(ctx WriterContext) (SinkWriter, error)
	// CreateCommitter returns nil for sinks without a commit phase
	// (at-least-once or idempotent sinks that write in Flush).
	CreateCommitter(ctx WriterContext) (Committer, error)
}

// WriterContext tells a sink writer where it runs.
type WriterContext struct {
	Subtask     event.SubtaskID
	Parallelism int
	JobID       string
	// CheckpointInterval is the job's periodic checkpoint interval (0:
	// off), so a sink can check its timeouts against it.
	CheckpointInterval time.Duration
	// CheckpointTimeout is how long a checkpoint may take before it expires
	// (0: unknown or off), so a sink can bound its own waits below it.
	CheckpointTimeout time.Duration
	Context           context.Context
	// RestoredCheckpoint is the id of the checkpoint restored from, 0 on a
	// fresh start. Transactional sinks abort anything newer.
	RestoredCheckpoint event.CheckpointID
	// WriterState is what the writer returned from SnapshotState in the
	// restored checkpoint, one entry per old subtask it inherits.
	WriterState [][]byte
	// Metrics are the sink operator's counts: the writer adds the bytes it
	// wrote out to Metrics.BytesOut (on the subtask goroutine). Nil when
	// the writer is made outside a job.
	Metrics *Metrics
	// Group is the sink's group in the job's metrics registry (see
	// Context.Group).
	Group *metrics.Operator
	// Logger is the subtask's (see Context.Logger); nil outside a job.
	Logger *slog.Logger
}

// SinkWriter writes records and, on each barrier, prepares a commit.
type SinkWriter interface {
	Write(r event.Record) error
	// Flush pushes buffered records out; endOfInput marks the final flush.
	Flush(endOfInput bool) error
	// PrepareCommit pre-commits everything written since the previous
	// barrier and returns the committables for checkpoint id (maybe none).
	PrepareCommit(id event.CheckpointID) ([][]byte, error)
	// SnapshotState returns the writer's own state (may be nil).
	SnapshotState(id event.CheckpointID) ([]byte, error)
	Close() error
}

// WatermarkWriter is a SinkWriter that reads the watermarks reaching the
// sink (the filesystem sink's partition-time commit trigger).
type WatermarkWriter interface {
	ProcessWatermark(wm event.Timestamp) error
}

// Committer commits committables of completed checkpoints. Commit must be
// idempotent: a committable that is already committed is a success.
type Committer interface {
	Commit(ctx context.Context, id event.CheckpointID, committables [][]byte) error
	Close() error
}

// ErrDataLoss marks a commit that cannot succeed because the prepared data
// is gone (a transaction aborted by timeout, a lost XA branch). Never retried,
// never reported as success, and the runtime does not restart the job on it
// (a restore would commit the same lost transaction again).
var ErrDataLoss = errors.New("operator: data loss")

// ErrReplay marks a restore of a checkpoint older than what a sink already
// committed (the newer checkpoint was deleted, or corrupt, after its
// commit): going on would write the output of the checkpoints in between a
// second time. Not restartable: a restart restores the same checkpoint.
var ErrReplay = errors.New("operator: sink committed past the restored checkpoint")

// ReplayError reports ErrReplay (and ErrNonRestartable, so the job fails at
// once). A sink that knows its last committed checkpoint compares it with
// the restored one when it opens and returns this unless the user accepted
// the replay.
type ReplayError struct {
	// Sink names the sink as the user knows it, e.g. `jdbc sink "orders"
	// (table "orders", subtask 0)`.
	Sink string
	// Restored is the checkpoint the job restored; Committed the newest one
	// the sink knows it committed (Committed > Restored).
	Restored, Committed event.CheckpointID
	// Evidence says where the sink found Committed, e.g. "weir_sink_checkpoints".
	Evidence string
	// Fix names the option that accepts the replay, in the user's terms.
	Fix string
}

// Error names both checkpoints, the evidence and both ways out.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("%s: data integrity: the job restored checkpoint %d, but the sink already committed the output "+
		"of checkpoint %d (%s); going on would write the output after checkpoint %d again. Restore checkpoint %d or later "+
		"(it was deleted or is corrupt?), or accept the duplicates with %s",
		e.Sink, e.Restored, e.Committed, e.Evidence, e.Restored, e.Committed, e.Fix)
}

// Unwrap returns ErrReplay and ErrNonRestartable.
func (e *ReplayError) Unwrap() []error { return []error{ErrReplay, ErrNonRestartable} }

// CommitLog is the pure two-phase-commit bookkeeping of one sink subtask:
// committables by checkpoint id, from pre-commit until a completed
// checkpoint at or after their id is committed. It does no I/O.
type CommitLog struct {
	pending map[event.CheckpointID][][]byte
}

// NewCommitLog returns an empty log.
func NewCommitLog() *CommitLog { return &CommitLog{pending: map[event.CheckpointID][][]byte{}} }

// Add records the committables pre-committed for checkpoint id.
func (l *CommitLog) Add(id event.CheckpointID, c [][]byte) {
	if len(c) > 0 {
		l.pending[id] = append(l.pending[id], c...)
	}
}

// Due returns the ids (ascending) whose committables a completion of
// checkpoint id makes committable: every pending id ≤ id.
func (l *CommitLog) Due(id event.CheckpointID) []event.CheckpointID {
	var ids []event.CheckpointID
	for p := range l.pending {
		if p <= id {
			ids = append(ids, p)
		}
	}
	sortIDs(ids)
	return ids
}

// Get returns the committables of id.
func (l *CommitLog) Get(id event.CheckpointID) [][]byte { return l.pending[id] }

// Committed forgets id after a successful commit.
func (l *CommitLog) Committed(id event.CheckpointID) { delete(l.pending, id) }

// Len is the number of checkpoint ids with pending committables.
func (l *CommitLog) Len() int { return len(l.pending) }

// Encode writes the log for a checkpoint.
func (l *CommitLog) Encode() []byte {
	ids := make([]event.CheckpointID, 0, len(l.pending))
	for id := range l.pending {
		ids = append(ids, id)
	}
	sortIDs(ids)
	buf := binary.AppendUvarint(nil, uint64(len(ids)))
	for _, id := range ids {
		buf = binary.AppendVarint(buf, int64(id))
		buf = binary.AppendUvarint(buf, uint64(len(l.pending[id])))
		for _, c := range l.pending[id] {
			buf = binary.AppendUvarint(buf, uint64(len(c)))
			buf = append(buf, c...)
		}
	}
	return buf
}

// DecodeInto adds the entries of an encoded log to l.
func (l *CommitLog) DecodeInto(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return errors.New("operator: corrupt commit log")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		var err error
		if b, err = l.decodeEntry(b); err != nil {
			return fmt.Errorf("operator: corrupt commit log entry %d: %w", i, err)
		}
	}
	return nil
}

func (l *CommitLog) decodeEntry(b []byte) ([]byte, error) {
	id, k := binary.Varint(b)
	if k <= 0 {
		return nil, errors.New("bad id")
	}
	b = b[k:]
	cnt, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad count")
	}
	b = b[k:]
	for j := uint64(0); j < cnt; j++ {
		ln, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < ln {
			return nil, errors.New("bad committable")
		}
		c := append([]byte(nil), b[k:k+int(ln)]...)
		l.pending[event.CheckpointID(id)] = append(l.pending[event.CheckpointID(id)], c)
		b = b[k+int(ln):]
	}
	return b, nil
}

func sortIDs(ids []event.CheckpointID) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}
