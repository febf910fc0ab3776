package checkpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
)

// taskState is what the coordinator knows of one task in one checkpoint.
type taskState struct {
	phase    Phase
	since    time.Time // when the task reported entering phase
	reported bool      // whether the task reported any progress
	detail   string
	ackedAt  time.Time
	metrics  TaskMetrics
}

func (s *taskState) acked() bool { return s.phase == PhaseAcked }

// describe says where a task that has not acknowledged is stuck, e.g.
// "Window (1) aligning barriers for 9m12s (waiting for barrier on inputs 0,2)".
func (s *taskState) describe(task event.SubtaskID, now time.Time) string {
	if !s.reported {
		return fmt.Sprintf("%s %s", task, PhaseNotStarted)
	}
	d := fmt.Sprintf("%s %s for %s", task, s.phase, now.Sub(s.since))
	if s.detail != "" {
		d += " (" + s.detail + ")"
	}
	return d
}

// status is where a pending checkpoint is in its life.
type status int

const (
	waitingAcks status = iota // pending, not every task acknowledged
	persisting                // every task acknowledged; the driver is writing metadata
	ended                     // completed or failed; kept for Stats only
)

// pendingCheckpoint is one triggered checkpoint (Flink's PendingCheckpoint;
// the runtime's job attempt is Flink's execution attempt, a different
// thing), from trigger until it ends, and then its record in the stats
// history.
type pendingCheckpoint struct {
	id        event.CheckpointID
	triggered time.Time
	final     bool
	typ       event.SnapshotType
	tasks     map[event.SubtaskID]*taskState
	order     []event.SubtaskID // the keys of tasks, sorted
	states    map[event.SubtaskID][]byte
	acks      int
	status    status
	result    Status
	endedAt   time.Time
	failure   *FailedError
}

func newPendingCheckpoint(id event.CheckpointID, now time.Time, final bool, tasks []event.SubtaskID) *pendingCheckpoint {
	a := &pendingCheckpoint{id: id, triggered: now, final: final, order: tasks,
		tasks: make(map[event.SubtaskID]*taskState, len(tasks)), states: map[event.SubtaskID][]byte{}}
	for _, t := range tasks {
		a.tasks[t] = &taskState{}
	}
	return a
}

// progress records that task entered phase p. It keeps the start time when
// the task repeats its phase, so durations count from the first report.
func (a *pendingCheckpoint) progress(now time.Time, task event.SubtaskID, p Phase, detail string) {
	s := a.tasks[task]
	if s == nil || s.acked() || p == PhaseAcked || a.status != waitingAcks {
		return
	}
	if !s.reported || s.phase != p {
		s.since = now
	}
	s.phase, s.reported, s.detail = p, true, detail
}

// ack records an acknowledgement and reports whether it was new.
func (a *pendingCheckpoint) ack(now time.Time, task event.SubtaskID, ack Ack) bool {
	s := a.tasks[task]
	if s == nil || s.acked() || a.status != waitingAcks {
		return false
	}
	s.phase, s.reported, s.since, s.ackedAt, s.metrics = PhaseAcked, true, now, now, ack.Metrics
	a.states[task] = ack.State
	a.acks++
	return true
}

// endsJob: after this checkpoint completes nothing is triggered again — a
// final checkpoint, or the savepoint of a stop-with-savepoint.
func (a *pendingCheckpoint) endsJob() bool { return a.final || a.typ == event.SnapshotSuspend }

func (a *pendingCheckpoint) fullyAcked() bool { return a.acks == len(a.tasks) }

func (a *pendingCheckpoint) notAcked() []event.SubtaskID {
	var out []event.SubtaskID
	for _, t := range a.order {
		if !a.tasks[t].acked() {
			out = append(out, t)
		}
	}
	return out
}

func (a *pendingCheckpoint) expiredAt(now time.Time, timeout time.Duration) bool {
	return a.status == waitingAcks && !now.Before(a.triggered.Add(timeout))
}

// expiredNamed is how many late subtasks an expiry's message names, with
// their phase: at thousands of subtasks the full list made a log line of
// hundreds of KB (FLINK-35902). The REST timeline keeps every subtask.
const expiredNamed = 10

func (a *pendingCheckpoint) expiredError(now time.Time) *FailedError {
	late := a.notAcked()
	named := late[:min(len(late), expiredNamed)]
	parts := make([]string, len(named))
	for i, t := range named {
		parts[i] = a.tasks[t].describe(t, now)
	}
	msg := fmt.Sprintf("checkpoint %d expired after %s: %d of %d subtasks did not acknowledge: %s",
		a.id, now.Sub(a.triggered), len(late), len(a.tasks), strings.Join(parts, "; "))
	if rest := len(late) - len(named); rest > 0 {
		msg += fmt.Sprintf("; and %d more (each subtask's phase: REST .../checkpoints/details/%d/timeline)", rest, a.id)
	}
	return &FailedError{ID: a.id, Cause: ErrExpired, Message: msg}
}

// end closes the pending checkpoint and drops the state blobs, which only the
// PersistCheckpoint action needed.
func (a *pendingCheckpoint) end(now time.Time, result Status, failure *FailedError) {
	a.status, a.result, a.endedAt, a.failure, a.states = ended, result, now, failure, nil
}
