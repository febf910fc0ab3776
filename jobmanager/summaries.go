package jobmanager

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/rest/api"
)

// The summaries here keep the dashboard's pages small at thousands of
// subtasks (FLINK-35902): the server reduces the per-subtask lists, the
// page fetches details a page at a time.

// WatermarkSummary renders GET .../vertices/:vertexid/watermarks/summary:
// the vertex's watermarks' min, max and average and its n lowest
// subtasks.
func (j *Job) WatermarkSummary(id string, n int) (api.WatermarkSummary, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return api.WatermarkSummary{}, err
	}
	type sw struct {
		subtask int
		wm      int64
	}
	all := make([]sw, 0, v.Parallelism)
	out := api.WatermarkSummary{SubtasksTotal: v.Parallelism, Min: math.MaxInt64, Max: math.MinInt64, Lowest: []api.Metric{}}
	var sum float64
	for i := range v.Parallelism {
		wm := inputWatermark(v, j.subtaskGroup(v, i))
		all = append(all, sw{i, wm})
		if wm == math.MinInt64 {
			out.NoWatermark++
			continue
		}
		out.Min, out.Max = min(out.Min, wm), max(out.Max, wm)
		sum += float64(wm)
	}
	if set := v.Parallelism - out.NoWatermark; set > 0 {
		out.Avg = sum / float64(set)
	} else {
		out.Min, out.Max = 0, 0
	}
	slices.SortStableFunc(all, func(a, b sw) int { return cmp.Compare(a.wm, b.wm) })
	for _, s := range all[:min(n, len(all))] {
		out.Lowest = append(out.Lowest, api.Metric{ID: fmt.Sprintf("%d.currentInputWatermark", s.subtask), Value: fmt.Sprint(s.wm)})
	}
	return out, nil
}

// pendingShown is how many subtask indexes a PendingPhase lists.
const pendingShown = 20

// CheckpointPhases renders GET .../checkpoints/details/:checkpointid/phases.
func (j *Job) CheckpointPhases(id int64) (api.CheckpointPhases, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s, err := j.findStatsLocked(id)
	if err != nil {
		return api.CheckpointPhases{}, err
	}
	out := api.CheckpointPhases{ID: id, Status: statusOf(s.Status), TriggerTimestamp: s.TriggerTime.UnixMilli(),
		EndToEndDuration: s.Duration.Milliseconds(), Vertices: []api.VertexPhases{}}
	if j.graph == nil {
		return out, nil
	}
	for _, v := range j.graph.Vertices {
		vp := j.vertexPhases(s, v.Name)
		out.NumSubtasks += vp.NumSubtasks
		out.NumAcknowledgedSubtasks += vp.NumAcknowledgedSubtasks
		out.Vertices = append(out.Vertices, vp)
	}
	return out, nil
}

// vertexPhases summarises the subtasks of vertex name in s.
func (j *Job) vertexPhases(s *checkpoint.CheckpointStats, name string) api.VertexPhases {
	vp := api.VertexPhases{VertexID: j.vertexID[name], VertexName: name, Pending: []api.PendingPhase{}}
	var delays, aligns, syncs, asyncs, e2e []int64
	pending := map[string]int{} // phase → index in vp.Pending
	for _, t := range s.Tasks {
		if t.Task.Vertex != name {
			continue
		}
		vp.NumSubtasks++
		if t.Phase != checkpoint.PhaseAcked {
			addPending(&vp, pending, t.Phase.String(), t.Task.Index)
			continue
		}
		m := t.Metrics
		vp.NumAcknowledgedSubtasks++
		vp.StateSize += m.StateBytes
		delays, aligns = append(delays, m.StartDelay.Milliseconds()), append(aligns, m.AlignmentDuration.Milliseconds())
		syncs, asyncs = append(syncs, m.SyncDuration.Milliseconds()), append(asyncs, m.AsyncDuration.Milliseconds())
		e2e = append(e2e, t.AckLatency.Milliseconds())
	}
	vp.StartDelay, vp.Alignment, vp.Sync, vp.Async = summarize(delays), summarize(aligns), summarize(syncs), summarize(asyncs)
	vp.EndToEndDuration = summarize(e2e)
	return vp
}

// addPending counts subtask index as pending in phase; the first
// pendingShown are listed (s.Tasks is sorted by vertex then index).
func addPending(vp *api.VertexPhases, byPhase map[string]int, phase string, index int) {
	i, ok := byPhase[phase]
	if !ok {
		i = len(vp.Pending)
		vp.Pending = append(vp.Pending, api.PendingPhase{Phase: phase, Subtasks: []int{}})
		byPhase[phase] = i
	}
	p := &vp.Pending[i]
	p.Count++
	if len(p.Subtasks) < pendingShown {
		p.Subtasks = append(p.Subtasks, index)
	}
}
