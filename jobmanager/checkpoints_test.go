package jobmanager

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/runtime"
)

// pendingStats is checkpoint id of three subtasks, acked of them
// acknowledged, in status st.
func pendingStats(id event.CheckpointID, acked int, st checkpoint.Status, trigger time.Time) *checkpoint.CheckpointStats {
	s := &checkpoint.CheckpointStats{ID: id, Status: st, TriggerTime: trigger, Total: 3, Acked: acked}
	for i := range 3 {
		t := checkpoint.TaskStats{Task: event.SubtaskID{Vertex: "v", Index: i}}
		if i < acked {
			t.Phase, t.AckLatency = checkpoint.PhaseAcked, time.Duration(i+1)*time.Millisecond
		}
		s.Tasks = append(s.Tasks, t)
	}
	return s
}

// summary prints counts and history as "counts in_progress/completed/failed/total: id STATUS acked/total, …".
func summary(j *Job) string {
	st := j.Checkpoints()
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d/%d/%d:", st.Counts.InProgress, st.Counts.Completed, st.Counts.Failed, st.Counts.Total)
	for _, h := range st.History {
		fmt.Fprintf(&b, " %d %s %d/%d", h.ID, h.Status, h.NumAcknowledgedSubtasks, h.NumSubtasks)
		if h.FailureMessage != "" {
			fmt.Fprintf(&b, " (%s)", h.FailureMessage)
		}
	}
	return b.String()
}

// The runtime's pending events show a checkpoint in progress with its
// acknowledgements so far; its completion replaces it; a subsumed one
// leaves the history; one still pending when the attempt fails over is
// failed, as Flink aborts it.
func TestCheckpointsInProgress(t *testing.T) {
	j := &Job{id: "j", name: "j"}
	j.mu.rec.Timestamps = map[string]int64{}
	t0 := time.UnixMilli(1_000_000)
	for _, step := range []struct {
		e    runtime.Event
		want string
	}{
		{runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 1, Stats: pendingStats(1, 0, checkpoint.StatusPending, t0)},
			"1/0/0/1: 1 IN_PROGRESS 0/3"},
		{runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 1, Stats: pendingStats(1, 2, checkpoint.StatusPending, t0)},
			"1/0/0/1: 1 IN_PROGRESS 2/3"},
		{runtime.Event{Kind: runtime.EventCheckpointCompleted, Checkpoint: 1, Stats: pendingStats(1, 3, checkpoint.StatusCompleted, t0)},
			"0/1/0/1: 1 COMPLETED 3/3"},
		{runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 2, Stats: pendingStats(2, 1, checkpoint.StatusPending, t0)},
			"1/1/0/2: 2 IN_PROGRESS 1/3 1 COMPLETED 3/3"},
		{runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 2, Err: checkpoint.ErrSubsumed,
			Stats: pendingStats(2, 1, checkpoint.StatusFailed, t0)}, "0/1/0/1: 1 COMPLETED 3/3"},
		{runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 3, Stats: pendingStats(3, 1, checkpoint.StatusPending, t0)},
			"1/1/0/2: 3 IN_PROGRESS 1/3 1 COMPLETED 3/3"},
		{runtime.Event{Kind: runtime.EventFailover, Attempt: 1, Err: fmt.Errorf("boom")},
			"0/1/1/2: 3 FAILED 1/3 (checkpoint 3 never completed: the job failed over) 1 COMPLETED 3/3"},
	} {
		j.listen(step.e)
		if got := summary(j); got != step.want {
			t.Errorf("after event %d of checkpoint %d:\n got %s\nwant %s", step.e.Kind, step.e.Checkpoint, got, step.want)
		}
	}
	// In progress, the end-to-end duration runs to the latest
	// acknowledgement, as Flink's pending checkpoint reports it.
	j.listen(runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: 4, Stats: pendingStats(4, 2, checkpoint.StatusPending, t0)})
	if h := j.Checkpoints().History[0]; h.EndToEndDuration != 2 || h.LatestAckTimestamp != t0.UnixMilli()+2 || h.Status != api.CheckpointInProgress {
		t.Errorf("checkpoint 4 in progress: %+v, want end_to_end_duration 2 (its latest ack)", h)
	}
}
