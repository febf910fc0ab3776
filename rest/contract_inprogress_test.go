package rest

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/datagen"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/types"
)

// A checkpoint in progress shows in /checkpoints as Flink shows it:
// counts.in_progress, a history entry IN_PROGRESS with the subtasks that
// acknowledged so far, and its details per vertex and subtask — here the
// source's one subtask acknowledged and the sink's, held in its barrier,
// not. Released, the same checkpoint completes and the counts move on.
func TestContractCheckpointInProgress(t *testing.T) {
	c := newCluster(t)
	env := weir.NewEnvironment().SetParallelism(1).EnableCheckpointing(50*time.Millisecond, weir.ExactlyOnce, filepath.Join(t.TempDir(), "ck"))
	gen, err := datagen.FromOptions([]types.Field{{Name: "n", Type: types.Type{Kind: types.BigInt}}},
		map[string]string{"rows-per-second": "50"})
	if err != nil {
		t.Fatal(err)
	}
	rows := weir.FromSource[event.Row](env, gen, "gen", weir.WithUID("gen"))
	sink := newHoldSink(t, 0)
	weir.SinkTo(weir.Reduce(weir.KeyBy(rows, func(event.Row) int { return 0 }), func(_, b event.Row) event.Row { return b }).UID("last"),
		sink, "gated").UID("gated")
	jg, err := env.JobGraph("gated")
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.m.SubmitGraph(jg, *env.RuntimeOptions())
	if err != nil {
		t.Fatal(err)
	}
	id := job.ID()
	cid := int64(sink.await(t))
	var st api.CheckpointingStatistics
	waitFor(t, "the source to acknowledge checkpoint "+fmt.Sprint(cid), func() bool {
		get(t, c, "/v1/jobs/"+id+"/checkpoints", &st)
		return len(st.History) > 0 && st.History[0].ID == cid && st.History[0].NumAcknowledgedSubtasks == 1
	})
	if st.Counts.InProgress != 1 || st.Counts.Total != st.Counts.Completed+st.Counts.Failed+1 {
		t.Errorf("counts %+v, want one in progress, counted in total", st.Counts)
	}
	h := st.History[0]
	if h.Status != api.CheckpointInProgress || h.ClassName != ".PendingCheckpointStatistics" || h.NumSubtasks != 2 ||
		h.LatestAckTimestamp < h.TriggerTimestamp || h.EndToEndDuration != h.LatestAckTimestamp-h.TriggerTimestamp {
		t.Errorf("checkpoint %d in progress: %+v; want IN_PROGRESS, 1 of 2 subtasks acknowledged", cid, h)
	}
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	var det api.CheckpointStatistics
	path := fmt.Sprintf("/v1/jobs/%s/checkpoints/details/%d", id, cid)
	get(t, c, path, &det)
	src, snk := d.Vertices[0], d.Vertices[1]
	if det.Status != api.CheckpointInProgress || det.Tasks[src.ID].NumAcknowledgedSubtasks != 1 || det.Tasks[snk.ID].NumAcknowledgedSubtasks != 0 ||
		det.Tasks[snk.ID].Status != api.CheckpointInProgress {
		t.Errorf("checkpoint %d details: %+v; want %s acknowledged, %s not", cid, det, src.Name, snk.Name)
	}
	var sub api.TaskCheckpointDetails
	get(t, c, path+"/subtasks/"+snk.ID, &sub)
	if len(sub.Subtasks) != 1 || sub.Subtasks[0].Status != "pending_or_failed" || sub.NumAcknowledgedSubtasks != 0 {
		t.Errorf("checkpoint %d, %s's subtasks: %+v; want its one subtask pending", cid, snk.Name, sub)
	}
	get(t, c, path+"/subtasks/"+src.ID, &sub)
	if len(sub.Subtasks) != 1 || sub.Subtasks[0].Status != "completed" || sub.NumAcknowledgedSubtasks != 1 {
		t.Errorf("checkpoint %d, %s's subtasks: %+v; want its one subtask acknowledged", cid, src.Name, sub)
	}
	checkPhases(t, c, path, d)
	var ph api.CheckpointPhases
	get(t, c, path+"/phases", &ph)
	if p := ph.Vertices[1].Pending; ph.NumAcknowledgedSubtasks != 1 || len(p) != 1 || p[0].Count != 1 || !slices.Equal(p[0].Subtasks, []int{0}) {
		t.Errorf("checkpoint %d phases: %+v; want %s's subtask 0 pending", cid, ph, snk.Name)
	}
	wantBadN(t, c, path+"/slowest")
	wantBadN(t, c, "/v1/jobs/"+id+"/vertices/"+src.ID+"/watermarks/summary")

	sink.release()
	waitFor(t, "checkpoint "+fmt.Sprint(cid)+" to complete", func() bool {
		get(t, c, "/v1/jobs/"+id+"/checkpoints", &st)
		return st.Counts.Completed > 0
	})
	for _, e := range st.History {
		if e.ID == cid && (e.Status != api.CheckpointCompleted || e.NumAcknowledgedSubtasks != 2) {
			t.Errorf("checkpoint %d after the release: %+v, want COMPLETED by both subtasks", cid, e)
		}
	}
	if st.Latest.Completed == nil || st.Latest.Completed.ID < cid || st.Counts.InProgress > 1 {
		t.Errorf("after the release: counts %+v, latest completed %+v", st.Counts, st.Latest.Completed)
	}
}
