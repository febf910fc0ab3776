package checkpoint

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
)

// HistorySize is how many checkpoints, the newest, Stats reports.
const HistorySize = 100

// Status is the outcome of a checkpoint as Stats reports it.
type Status int

const (
	// StatusPending: triggered, not yet completed or failed.
	StatusPending Status = iota
	// StatusCompleted: every task acknowledged and the metadata is durable.
	StatusCompleted
	// StatusFailed: expired, declined, not persisted, aborted or subsumed.
	StatusFailed
)

// String returns "pending", "completed" or "failed".
func (s Status) String() string {
	switch s {
	case StatusPending:
		return "pending"
	case StatusCompleted:
		return "completed"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// CheckpointStats describes one checkpoint for monitoring.
type CheckpointStats struct {
	ID          event.CheckpointID
	Status      Status
	Final       bool
	Type        event.SnapshotType
	TriggerTime time.Time
	// Duration is the end-to-end time from trigger to completion or
	// failure; zero while pending.
	Duration time.Duration
	// Acked of Total tasks acknowledged.
	Acked, Total int
	// Tasks has one entry per task, sorted by vertex then index.
	Tasks []TaskStats
	// Failure is the *FailedError of a failed checkpoint, else nil.
	Failure error
}

// TaskStats describes one task's part in one checkpoint.
type TaskStats struct {
	Task event.SubtaskID
	// Phase is the last phase the task reported; PhaseAcked once it
	// acknowledged.
	Phase Phase
	// AckLatency is the time from trigger to acknowledgement; zero if the
	// task has not acknowledged.
	AckLatency time.Duration
	// Metrics are those the task sent with its acknowledgement.
	Metrics TaskMetrics
}

// PendingInfo describes a checkpoint that has not ended yet.
type PendingInfo struct {
	ID          event.CheckpointID
	TriggerTime time.Time
	Final       bool
	// Acked of Total tasks acknowledged.
	Acked, Total int
	// Persisting: every task acknowledged and the driver is writing the
	// metadata; Persisted or PersistFailed will end it.
	Persisting bool
	// Waiting are the tasks that have not acknowledged, sorted.
	Waiting []event.SubtaskID
}

func (a *pendingCheckpoint) stats() CheckpointStats {
	s := CheckpointStats{ID: a.id, Status: a.result, Final: a.final, Type: a.typ, TriggerTime: a.triggered,
		Acked: a.acks, Total: len(a.tasks), Tasks: make([]TaskStats, len(a.order))}
	if a.status == ended {
		s.Duration = a.endedAt.Sub(a.triggered)
	}
	if a.failure != nil {
		s.Failure = a.failure
	}
	for i, t := range a.order {
		s.Tasks[i] = a.taskStats(t)
	}
	return s
}

func (a *pendingCheckpoint) taskStats(t event.SubtaskID) TaskStats {
	ts := a.tasks[t]
	s := TaskStats{Task: t, Phase: ts.phase, Metrics: ts.metrics}
	if ts.acked() {
		s.AckLatency = ts.ackedAt.Sub(a.triggered)
	}
	return s
}

func (a *pendingCheckpoint) pendingInfo() PendingInfo {
	return PendingInfo{ID: a.id, TriggerTime: a.triggered, Final: a.final, Acked: a.acks,
		Total: len(a.tasks), Persisting: a.status == persisting, Waiting: a.notAcked()}
}

// history keeps the newest HistorySize checkpoints in trigger order.
type history struct {
	checkpoints []*pendingCheckpoint
}

func (h *history) add(a *pendingCheckpoint) {
	if len(h.checkpoints) == HistorySize {
		h.checkpoints[0] = nil // let the collector have it
		h.checkpoints = h.checkpoints[1:]
	}
	h.checkpoints = append(h.checkpoints, a)
}
