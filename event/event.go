// Package event is Weir's leaf vocabulary: the elements that travel on a
// stream (records, watermarks, checkpoint barriers, end-of-input and cancel
// markers), the changelog RowKind, and the ids that name jobs, operators and
// subtasks. It imports nothing of Weir's, and everything may import it.
package event

import (
	"fmt"
	"math"
)

// CheckpointID names one checkpoint. Ids start at 1, are persisted by the
// checkpoint coordinator and only ever increase, across restarts.
type CheckpointID int64

// Timestamp is an event-time or processing-time instant in milliseconds since
// the Unix epoch, as in Flink.
type Timestamp = int64

// Well-known watermark values.
const (
	// MinWatermark is the watermark before any event time is known.
	MinWatermark Timestamp = math.MinInt64
	// MaxWatermark is emitted only at the end of a bounded input: it fires
	// every pending event-time timer. An idle input never emits it.
	MaxWatermark Timestamp = math.MaxInt64
	// NoTimestamp marks a record that carries no event time.
	NoTimestamp Timestamp = math.MinInt64
)

// Record is one element of a stream: a value and its event time
// (NoTimestamp when the stream has none).
type Record struct {
	Value     any
	Timestamp Timestamp
}

// ControlKind tells which control element a Control carries.
type ControlKind uint8

const (
	// KindNone marks a batch that carries only records.
	KindNone ControlKind = iota
	// KindWatermark carries Control.Watermark: no later record on this
	// channel has an event time at or below it.
	KindWatermark
	// KindBarrier carries Control.Barrier: a checkpoint barrier. Records
	// before it belong to the checkpoint's state; records after it do not.
	KindBarrier
	// KindCancelBarrier tells the receiver that the checkpoint in
	// Control.Barrier.ID was aborted upstream, so alignment on it ends.
	KindCancelBarrier
	// KindIdle and KindActive carry the watermark status of a channel: an
	// idle channel is left out of the minimum watermark until it turns active.
	KindIdle
	// KindActive: the channel is active again (see KindIdle).
	KindActive
	// KindEndOfInput: the channel's producer has finished; nothing follows.
	KindEndOfInput
)

// String implements fmt.Stringer.
func (k ControlKind) String() string {
	switch k {
	case KindNone:
		return "none"
	case KindWatermark:
		return "watermark"
	case KindBarrier:
		return "barrier"
	case KindCancelBarrier:
		return "cancel-barrier"
	case KindIdle:
		return "idle"
	case KindActive:
		return "active"
	case KindEndOfInput:
		return "end-of-input"
	}
	return fmt.Sprintf("ControlKind(%d)", uint8(k))
}

// CheckpointBarrier is the marker a source injects into its output when the
// coordinator triggers checkpoint ID (Chandy–Lamport, as in Carbone et al.,
// "Lightweight Asynchronous Snapshots for Distributed Dataflows", 2015).
type CheckpointBarrier struct {
	ID CheckpointID
	// Timestamp is the trigger time in ms since the epoch.
	Timestamp Timestamp
	// Final marks the checkpoint taken at the end of a bounded input (and
	// the savepoint of a stop-with-savepoint with drain).
	Final bool
	// Type tells a checkpoint from a savepoint (Flink's SnapshotType in
	// the barrier's CheckpointOptions). Subtasks write a savepoint's state
	// to its own directory, and stop after a SnapshotSuspend.
	Type SnapshotType
}

// SnapshotType is what a barrier asks for: a checkpoint, or one of the
// kinds of savepoint (Flink's CHECKPOINT, SAVEPOINT, SAVEPOINT_SUSPEND,
// SAVEPOINT_TERMINATE).
type SnapshotType uint8

const (
	// SnapshotCheckpoint is a periodic or final checkpoint.
	SnapshotCheckpoint SnapshotType = iota
	// SnapshotSavepoint is a savepoint taken on demand: the job runs on.
	SnapshotSavepoint
	// SnapshotSuspend is the savepoint of a stop-with-savepoint: sources
	// stop after emitting its barrier, every subtask after snapshotting
	// stops processing, and the job ends once it completed.
	SnapshotSuspend
	// SnapshotTerminate is the savepoint of a stop-with-savepoint with
	// drain: the sources ended their input first (max watermark, end of
	// input), so it is also the job's final checkpoint.
	SnapshotTerminate
)

// IsSavepoint reports whether t is a savepoint of any kind.
func (t SnapshotType) IsSavepoint() bool { return t != SnapshotCheckpoint }

// String returns "checkpoint", "savepoint", "savepoint (stop)" or
// "savepoint (stop, drain)".
func (t SnapshotType) String() string {
	switch t {
	case SnapshotCheckpoint:
		return "checkpoint"
	case SnapshotSavepoint:
		return "savepoint"
	case SnapshotSuspend:
		return "savepoint (stop)"
	case SnapshotTerminate:
		return "savepoint (stop, drain)"
	}
	return fmt.Sprintf("SnapshotType(%d)", uint8(t))
}

// Control is an in-band control element. It travels on the same channel as
// records and in order with them.
type Control struct {
	Kind      ControlKind
	Watermark Timestamp
	Barrier   CheckpointBarrier
}

// Batch is the unit that moves between subtasks: some records, then at most
// one control element, which logically follows every record in the batch.
type Batch struct {
	Records []Record
	Control Control
}

// RowKind is the kind of change a changelog row describes, with Flink's
// short strings: +I insert, -U update-before, +U update-after, -D delete.
type RowKind uint8

const (
	// Insert (+I) adds a row.
	Insert RowKind = iota
	// UpdateBefore (-U) retracts a row's previous content; an UpdateAfter
	// of the same key follows it.
	UpdateBefore
	// UpdateAfter (+U) is a row's new content.
	UpdateAfter
	// Delete (-D) removes a row.
	Delete
)

// String gives Flink's short form: "+I", "-U", "+U" or "-D".
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("RowKind(%d)", uint8(k))
}

// IsAccumulate reports whether rows of this kind add to a result (+I, +U)
// rather than retract from it (-U, -D).
func (k RowKind) IsAccumulate() bool { return k == Insert || k == UpdateAfter }

// Row is a changelog row: a RowKind and positional field values.
type Row struct {
	Kind   RowKind
	Fields []any
}

// String prints the row as Flink's print connector does, e.g. "+I[1, a]".
func (r Row) String() string {
	s := r.Kind.String() + "["
	for i, f := range r.Fields {
		if i > 0 {
			s += ", "
		}
		if f == nil {
			s += "NULL"
		} else {
			s += fmt.Sprint(f)
		}
	}
	return s + "]"
}

// SubtaskID names one parallel instance of a job vertex.
type SubtaskID struct {
	Vertex string // job vertex name, e.g. "Source: bills -> Map"
	Index  int    // 0-based subtask index
}

// String implements fmt.Stringer.
func (s SubtaskID) String() string { return fmt.Sprintf("%s (%d)", s.Vertex, s.Index) }
