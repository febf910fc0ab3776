package jobmanager

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
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

// An unaligned checkpoint's REST JSON, as Flink's: checkpoint_type
// UNALIGNED_CHECKPOINT and persisted_data in the history and the
// checkpoint's details (per vertex), and per subtask in
// /checkpoints/details/:cid/subtasks/:vid whether it took it unaligned
// and the bytes of in-flight data it persisted (alignment.persisted, with
// their summary). Subtask 0 took it aligned: false and 0.
func TestUnalignedCheckpointSubtaskJSON(t *testing.T) {
	j := &Job{id: "j", name: "j", vertexID: map[string]string{"v": "vid"},
		graph: &graph.JobGraph{Vertices: []*graph.Vertex{{Name: "v", Parallelism: 3}}}}
	j.mu.rec.Timestamps = map[string]int64{}
	s := pendingStats(1, 3, checkpoint.StatusCompleted, time.UnixMilli(1_000_000))
	s.Tasks[1].Metrics = checkpoint.TaskMetrics{Unaligned: true, PersistedBytes: 1200}
	s.Tasks[2].Metrics = checkpoint.TaskMetrics{Unaligned: true, PersistedBytes: 300}
	j.listen(runtime.Event{Kind: runtime.EventCheckpointCompleted, Checkpoint: 1, Stats: s})

	var hist map[string]any
	jsonRoundTrip(t, j.Checkpoints(), &hist)
	h := hist["history"].([]any)[0].(map[string]any)
	if h["checkpoint_type"] != "UNALIGNED_CHECKPOINT" || h["persisted_data"] != 1500.0 {
		t.Errorf("history: checkpoint_type %v, persisted_data %v; want UNALIGNED_CHECKPOINT, 1500", h["checkpoint_type"], h["persisted_data"])
	}
	c, err := j.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	var det map[string]any
	jsonRoundTrip(t, c, &det)
	if v := det["tasks"].(map[string]any)["vid"].(map[string]any); v["persisted_data"] != 1500.0 {
		t.Errorf("details: vertex persisted_data %v, want 1500", v["persisted_data"])
	}
	d, err := j.CheckpointSubtasks(1, "vid")
	if err != nil {
		t.Fatal(err)
	}
	var sub map[string]any
	jsonRoundTrip(t, d, &sub)
	var got []string
	for _, x := range sub["subtasks"].([]any) {
		m := x.(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v/%v", m["index"], m["unaligned_checkpoint"], m["alignment"].(map[string]any)["persisted"]))
	}
	if want := "0:false/0 1:true/1200 2:true/300"; strings.Join(got, " ") != want {
		t.Errorf("subtasks index:unaligned_checkpoint/alignment.persisted = %s, want %s", strings.Join(got, " "), want)
	}
	p := sub["summary"].(map[string]any)["alignment"].(map[string]any)["persisted"].(map[string]any)
	if p["min"] != 0.0 || p["max"] != 1200.0 || p["avg"] != 500.0 || sub["persisted_data"] != 1500.0 {
		t.Errorf("summary alignment.persisted %v, vertex persisted_data %v; want min 0, max 1200, avg 500; 1500", p, sub["persisted_data"])
	}
}

func jsonRoundTrip(t *testing.T, v, into any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}
