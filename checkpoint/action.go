package checkpoint

import (
	"time"

	"github.com/weirstream/weir/event"
)

// Action is a decision the Coordinator returns for its driver to carry out,
// in the order returned. The concrete types are TriggerCheckpoint,
// PersistCheckpoint, NotifyComplete, AbortCheckpoint and FailJob; the set is
// sealed, so a type switch over them is exhaustive.
type Action interface {
	isAction()
}

// TriggerCheckpoint starts checkpoint ID. The driver must first persist
// "next checkpoint id = ID+1" durably, so that ids never repeat across
// restarts, and only then send the trigger to every subtask in Sources.
type TriggerCheckpoint struct {
	ID event.CheckpointID
	// Timestamp is the trigger time; it goes into the barrier.
	Timestamp time.Time
	// Final marks the last checkpoint of a bounded job.
	Final bool
	// Type is SnapshotCheckpoint, or the kind of savepoint; it goes into
	// the barrier.
	Type event.SnapshotType
	// Sources are the subtasks to trigger, sorted by vertex then index.
	Sources []event.SubtaskID
}

// PersistCheckpoint says every task acknowledged checkpoint ID. The driver
// writes its metadata atomically (temp file, fsync, rename) and then calls
// Coordinator.Persisted or Coordinator.PersistFailed. Until then the
// checkpoint is neither completed nor expirable.
type PersistCheckpoint struct {
	ID        event.CheckpointID
	Timestamp time.Time // trigger time
	Final     bool
	Type      event.SnapshotType
	// States holds the state handle blob of every task, nil for a task that
	// acknowledged without state. The map is handed over: the coordinator
	// keeps no reference.
	States map[event.SubtaskID][]byte
}

// NotifyComplete says checkpoint ID is completed: the driver tells every
// task NotifyCheckpointComplete(ID), upon which sinks commit.
//
// For a savepoint (Type.IsSavepoint) the driver reports it to whoever asked
// for it; it tells the tasks only for a SnapshotSuspend or SnapshotTerminate
// savepoint, which ends the job: as in Flink, an intermediate savepoint
// commits nothing (its sinks' transactions commit with the next checkpoint).
type NotifyComplete struct {
	ID   event.CheckpointID
	Type event.SnapshotType
}

// AbortCheckpoint says checkpoint ID will never complete: the driver tells
// every task NotifyCheckpointAborted(ID) so that they stop aligning on it
// (sources emit a cancel barrier). Reason is a *FailedError.
type AbortCheckpoint struct {
	ID     event.CheckpointID
	Reason error
}

// FailJob says more checkpoints failed in a row than tolerated. Err wraps
// ErrTooManyFailures and the last *FailedError. The driver fails the job
// over and then calls Coordinator.AbortAll.
type FailJob struct {
	Err error
}

func (TriggerCheckpoint) isAction() {}
func (PersistCheckpoint) isAction() {}
func (NotifyComplete) isAction()    {}
func (AbortCheckpoint) isAction()   {}
func (FailJob) isAction()           {}
