package rest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/weirstream/weir/rest/api"
)

// checkWatermarkSummary checks a vertex's /watermarks/summary against its
// /watermarks list (which the caller checked against the job's truth):
// the count without a watermark, min, max and mean of the others, and the
// ?n=2 lowest, those without first, ties by subtask.
func checkWatermarkSummary(t testing.TB, c *cluster, job string, v api.JobVertex) {
	base := "/v1/jobs/" + job + "/vertices/" + v.ID + "/watermarks"
	var list []api.Metric
	get(t, c, base, &list)
	var sum api.WatermarkSummary
	get(t, c, base+"/summary?n=2", &sum)
	want := api.WatermarkSummary{SubtasksTotal: len(list)}
	var set []int64
	for _, m := range list {
		wm, err := strconv.ParseInt(m.Value, 10, 64)
		if err != nil {
			t.Fatalf("watermark %+v: %v", m, err)
		}
		if wm == math.MinInt64 {
			want.NoWatermark++
			continue
		}
		set = append(set, wm)
	}
	if len(set) > 0 {
		want.Min, want.Max = slices.Min(set), slices.Max(set)
		var total float64
		for _, wm := range set {
			total += float64(wm)
		}
		want.Avg = total / float64(len(set))
	}
	sorted := slices.Clone(list)
	slices.SortStableFunc(sorted, func(a, b api.Metric) int {
		x, _ := strconv.ParseInt(a.Value, 10, 64)
		y, _ := strconv.ParseInt(b.Value, 10, 64)
		return cmp.Compare(x, y)
	})
	want.Lowest = sorted[:min(2, len(sorted))]
	if fmt.Sprint(sum) != fmt.Sprint(want) {
		t.Errorf("watermark summary of %s: %+v; its /watermarks give %+v", v.Name, sum, want)
	}
}

// checkPhases checks a checkpoint's /phases against Flink's per-vertex
// subtask details (/subtasks/:vertexid): counts, the phase summaries
// (Flink's start_delay, alignment, sync, async, end to end) and state
// size; and the subtasks not acknowledged, by phase, against the
// timeline.
func checkPhases(t testing.TB, c *cluster, path string, d api.JobDetails) {
	var ph api.CheckpointPhases
	get(t, c, path+"/phases", &ph)
	var tl api.CheckpointTimeline
	get(t, c, path+"/timeline", &tl)
	if ph.ID != tl.ID || ph.Status != tl.Status || ph.TriggerTimestamp != tl.TriggerTimestamp || ph.EndToEndDuration != tl.EndToEndDuration ||
		len(ph.Vertices) != len(d.Vertices) || ph.NumSubtasks != len(tl.Subtasks) {
		t.Fatalf("phases %+v; the timeline: id %d, %s, %d subtasks", ph, tl.ID, tl.Status, len(tl.Subtasks))
	}
	acked := 0
	for i, v := range d.Vertices {
		var sd api.TaskCheckpointDetails
		get(t, c, path+"/subtasks/"+v.ID, &sd)
		s := sd.Summary
		want := api.VertexPhases{VertexID: v.ID, VertexName: v.Name, NumSubtasks: v.Parallelism, NumAcknowledgedSubtasks: sd.NumAcknowledgedSubtasks,
			StartDelay: s.StartDelay, Alignment: s.Alignment.Duration, Sync: s.CheckpointDuration.Sync, Async: s.CheckpointDuration.Async,
			EndToEndDuration: s.EndToEndDuration, StateSize: sd.StateSize, Pending: pendingOf(tl, v.ID)}
		if got := ph.Vertices[i]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("phases of %s:\n%+v\nits subtask details and timeline give\n%+v", v.Name, got, want)
		}
		acked += sd.NumAcknowledgedSubtasks
	}
	if ph.NumAcknowledgedSubtasks != acked {
		t.Errorf("phases: %d acknowledged, the vertices' %d", ph.NumAcknowledgedSubtasks, acked)
	}
}

// pendingOf groups the timeline's unacknowledged subtasks of vertex vid
// by phase, in the order met, listing the first 20.
func pendingOf(tl api.CheckpointTimeline, vid string) []api.PendingPhase {
	out := []api.PendingPhase{}
	for _, e := range tl.Subtasks {
		if e.VertexID != vid || e.Phase == "acknowledged" {
			continue
		}
		i := slices.IndexFunc(out, func(p api.PendingPhase) bool { return p.Phase == e.Phase })
		if i < 0 {
			out, i = append(out, api.PendingPhase{Phase: e.Phase, Subtasks: []int{}}), len(out)
		}
		out[i].Count++
		if len(out[i].Subtasks) < 20 {
			out[i].Subtasks = append(out[i].Subtasks, e.Subtask)
		}
	}
	return out
}

// wantBadN: ?n= of the summaries must be a positive number.
func wantBadN(t *testing.T, c *cluster, path string) {
	for _, n := range []string{"0", "x", "-3"} {
		code, body := c.call("GET", path+"?n="+n, "", "")
		wantError(t, path+"?n="+n, code, body, 400, `n "`+n+`": want a positive number`)
	}
}
