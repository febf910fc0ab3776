package checkpoint

// This file holds what a task reports to the coordinator: its phase, its
// acknowledgement and its metrics.

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/event"
)

// Phase is how far a task has got with one checkpoint, as it reports with
// Coordinator.Progress. Failure messages name it.
type Phase int

const (
	// PhaseNotStarted: the task has not yet received any barrier.
	PhaseNotStarted Phase = iota
	// PhaseAlignment: some, not all, input barriers have arrived.
	PhaseAlignment
	// PhaseSync: the synchronous part of the snapshot is running.
	PhaseSync
	// PhaseAsync: the snapshot is being uploaded to checkpoint storage.
	PhaseAsync
	// PhaseAcked: the task acknowledged the checkpoint.
	PhaseAcked
)

// String returns the text failure messages use, e.g. "aligning barriers".
func (p Phase) String() string {
	switch p {
	case PhaseNotStarted:
		return "no barrier received yet"
	case PhaseAlignment:
		return "aligning barriers"
	case PhaseSync:
		return "synchronous snapshot"
	case PhaseAsync:
		return "asynchronous upload"
	case PhaseAcked:
		return "acknowledged"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// TaskMetrics are what a task measured while taking its snapshot.
type TaskMetrics struct {
	AlignmentDuration time.Duration // first barrier to last barrier
	SyncDuration      time.Duration // synchronous snapshot
	AsyncDuration     time.Duration // asynchronous upload
	Bytes             int64         // bytes written to checkpoint storage (Flink's checkpointed_size)
	// StateBytes is the size of the whole state the checkpoint names: what
	// it wrote and the shared files of earlier checkpoints it reuses
	// (Flink's state_size; equal to Bytes for a full checkpoint).
	StateBytes int64
	// AlignmentBuffered counts the records held back on blocked input
	// channels when the barriers were aligned (what alignment buffered).
	AlignmentBuffered int64
	// Unaligned: the task took this checkpoint unaligned (from its first
	// barrier, or after the aligned-checkpoint timeout); PersistedBytes is
	// the size of the input channel state it persisted (Flink's
	// persisted_data), included in Bytes.
	Unaligned      bool
	PersistedBytes int64
	// PersistedOutputBytes is the part of PersistedBytes that is output
	// channel state: batches the barrier overtook in the task's output
	// queues.
	PersistedOutputBytes int64
	// StartDelay is the time from the checkpoint's trigger to its first
	// barrier at the task (Flink's checkpointStartDelayNanos; on a source,
	// to its trigger; zero when the barrier carries no trigger time).
	StartDelay time.Duration
}

// Ack is what a task hands in when it acknowledges a checkpoint.
type Ack struct {
	// State is the task's opaque state handle blob, stored in the
	// checkpoint metadata as is; nil for a stateless task. The coordinator
	// keeps the slice: do not modify it afterwards.
	State   []byte
	Metrics TaskMetrics
}

func compareTasks(a, b event.SubtaskID) int {
	return cmp.Or(cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Index, b.Index))
}

// sortedUnique returns a sorted copy of ids without duplicates.
func sortedUnique(ids []event.SubtaskID) []event.SubtaskID {
	out := slices.Clone(ids)
	slices.SortFunc(out, compareTasks)
	return slices.Compact(out)
}
