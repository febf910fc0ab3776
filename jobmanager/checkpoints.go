package jobmanager

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/rest/api"
)

// Checkpoints renders GET /jobs/:jobid/checkpoints from the checkpoints
// this JobManager process saw: in progress (as the runtime reports their
// acknowledgements, runtime.EventCheckpointPending), completed or failed.
func (j *Job) Checkpoints() api.CheckpointingStatistics {
	j.mu.Lock()
	defer j.mu.Unlock()
	h := &j.mu.checkpoints
	out := api.CheckpointingStatistics{History: []api.CheckpointStatistics{}}
	inProgress := h.inProgress()
	out.Counts = api.CheckpointCounts{Restored: h.restoredN, Completed: h.nCompleted, Failed: h.nFailed,
		InProgress: inProgress, Total: h.nCompleted + h.nFailed + inProgress}
	var sizes, checkpointed, durations, persisted []int64
	for i := len(h.stats) - 1; i >= 0; i-- {
		s := &h.stats[i]
		cs := j.statsLocked(s, false)
		out.History = append(out.History, cs)
		if s.Status == checkpoint.StatusCompleted {
			sizes, durations = append(sizes, cs.StateSize), append(durations, cs.EndToEndDuration)
			checkpointed = append(checkpointed, cs.CheckpointedSize)
			persisted = append(persisted, cs.PersistedData)
		}
	}
	out.Latest = j.latestLocked(out.History)
	out.Summary.StateSize, out.Summary.CheckpointedSize = summarize(sizes), summarize(checkpointed)
	out.Summary.EndToEndDuration = summarize(durations)
	out.Summary.PersistedData = summarize(persisted)
	return out
}

func (j *Job) latestLocked(hist []api.CheckpointStatistics) api.LatestCheckpoints {
	h := &j.mu.checkpoints
	l := api.LatestCheckpoints{Restored: h.lastRestored}
	for i := range hist {
		c := hist[i]
		switch {
		case c.ID == h.lastCompleted && c.Status == api.CheckpointCompleted && l.Completed == nil:
			l.Completed = &c
		case c.ID == h.lastSavepnt && c.Status == api.CheckpointCompleted && l.Savepoint == nil:
			l.Savepoint = &c
		case c.ID == h.lastFailed && c.Status == api.CheckpointFailed && l.Failed == nil:
			l.Failed = &c
		}
	}
	return l
}

// statsLocked renders one checkpoint; with tasks, its per-vertex parts.
func (j *Job) statsLocked(s *checkpoint.CheckpointStats, tasks bool) api.CheckpointStatistics {
	h := &j.mu.checkpoints
	c := api.CheckpointStatistics{ID: int64(s.ID), IsSavepoint: s.Type.IsSavepoint(), TriggerTimestamp: s.TriggerTime.UnixMilli(),
		EndToEndDuration: s.Duration.Milliseconds(), NumSubtasks: s.Total, NumAcknowledgedSubtasks: s.Acked,
		CheckpointType: checkpointType(s.Type), ExternalPath: h.paths[int64(s.ID)]}
	if c.IsSavepoint {
		c.SavepointFormat = "CANONICAL"
	}
	switch s.Status {
	case checkpoint.StatusCompleted:
		c.ClassName, c.Status = ".CompletedCheckpointStatistics", api.CheckpointCompleted
	case checkpoint.StatusFailed:
		c.ClassName, c.Status = ".FailedCheckpointStatistics", api.CheckpointFailed
		c.FailureTimestamp = h.failedAt[int64(s.ID)]
		if s.Failure != nil {
			c.FailureMessage = s.Failure.Error()
		}
	default:
		c.ClassName, c.Status = ".PendingCheckpointStatistics", api.CheckpointInProgress
	}
	for _, t := range s.Tasks {
		c.StateSize += t.Metrics.StateBytes
		c.CheckpointedSize += t.Metrics.Bytes
		c.PersistedData += t.Metrics.PersistedBytes
		if t.Metrics.Unaligned && c.CheckpointType == api.TypeCheckpoint {
			c.CheckpointType = api.TypeUnaligned // as Flink: some subtask took it unaligned
		}
		if t.Phase == checkpoint.PhaseAcked {
			c.LatestAckTimestamp = max(c.LatestAckTimestamp, s.TriggerTime.Add(t.AckLatency).UnixMilli())
		}
	}
	if s.Status == checkpoint.StatusPending && c.LatestAckTimestamp > 0 {
		// Flink's pending end-to-end duration: up to the latest ack.
		c.EndToEndDuration = c.LatestAckTimestamp - c.TriggerTimestamp
	}
	if tasks {
		c.Tasks = map[string]api.TaskCheckpointStatistics{}
		for _, v := range j.graph.Vertices {
			c.Tasks[j.vertexID[v.Name]] = taskStats(s, v.Name, v.Parallelism)
		}
	}
	return c
}

func checkpointType(t event.SnapshotType) string {
	switch t {
	case event.SnapshotCheckpoint:
		return api.TypeCheckpoint
	case event.SnapshotSavepoint:
		return api.TypeSavepoint
	}
	return api.TypeSyncSavepoint // a stop-with-savepoint's
}

// taskStats sums one vertex's subtasks in checkpoint s.
func taskStats(s *checkpoint.CheckpointStats, vertex string, parallelism int) api.TaskCheckpointStatistics {
	ts := api.TaskCheckpointStatistics{ID: int64(s.ID), Status: statusOf(s.Status), NumSubtasks: parallelism}
	for _, t := range s.Tasks {
		if t.Task.Vertex != vertex || t.Phase != checkpoint.PhaseAcked {
			continue
		}
		ts.NumAcknowledgedSubtasks++
		ts.StateSize += t.Metrics.StateBytes
		ts.CheckpointedSize += t.Metrics.Bytes
		ts.PersistedData += t.Metrics.PersistedBytes
		ts.EndToEndDuration = max(ts.EndToEndDuration, t.AckLatency.Milliseconds())
		ts.LatestAckTimestamp = max(ts.LatestAckTimestamp, s.TriggerTime.Add(t.AckLatency).UnixMilli())
	}
	return ts
}

func statusOf(s checkpoint.Status) string {
	switch s {
	case checkpoint.StatusCompleted:
		return api.CheckpointCompleted
	case checkpoint.StatusFailed:
		return api.CheckpointFailed
	}
	return api.CheckpointInProgress
}

// findStatsLocked returns checkpoint id of the history.
func (j *Job) findStatsLocked(id int64) (*checkpoint.CheckpointStats, error) {
	for i := range j.mu.checkpoints.stats {
		if int64(j.mu.checkpoints.stats[i].ID) == id {
			return &j.mu.checkpoints.stats[i], nil
		}
	}
	return nil, fmt.Errorf("%w: job %s has no checkpoint %d in its history (GET /jobs/%s/checkpoints lists them)", ErrJobNotFound, j.id, id, j.id)
}

// Checkpoint renders GET /jobs/:jobid/checkpoints/details/:checkpointid.
func (j *Job) Checkpoint(id int64) (api.CheckpointStatistics, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s, err := j.findStatsLocked(id)
	if err != nil || j.graph == nil {
		return api.CheckpointStatistics{}, cmp.Or(err, fmt.Errorf("%w: job %s has no graph", ErrJobNotFound, j.id))
	}
	return j.statsLocked(s, true), nil
}

// CheckpointSubtasks renders GET
// /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid: each
// subtask's acknowledgement, sync and async time, alignment and bytes.
func (j *Job) CheckpointSubtasks(id int64, vertexID string) (api.TaskCheckpointDetails, error) {
	v, err := j.findVertex(vertexID)
	if err != nil {
		return api.TaskCheckpointDetails{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s, err := j.findStatsLocked(id)
	if err != nil {
		return api.TaskCheckpointDetails{}, err
	}
	d := api.TaskCheckpointDetails{TaskCheckpointStatistics: taskStats(s, v.Name, v.Parallelism),
		Subtasks: make([]api.SubtaskCheckpointStatistics, v.Parallelism)}
	var e2e, size, checkpointed, syncs, asyncs, aligns, delays, persisted []int64
	for i := range d.Subtasks {
		d.Subtasks[i] = api.SubtaskCheckpointStatistics{Index: i, Status: "pending_or_failed"}
	}
	for _, t := range s.Tasks {
		if t.Task.Vertex != v.Name || t.Phase != checkpoint.PhaseAcked || t.Task.Index >= v.Parallelism {
			continue
		}
		m := t.Metrics
		st := api.SubtaskCheckpointStatistics{Index: t.Task.Index, Status: "completed",
			AckTimestamp: s.TriggerTime.Add(t.AckLatency).UnixMilli(), EndToEndDuration: t.AckLatency.Milliseconds(),
			StateSize: m.StateBytes, CheckpointedSize: m.Bytes,
			Checkpoint: &api.CheckpointDuration{Sync: m.SyncDuration.Milliseconds(), Async: m.AsyncDuration.Milliseconds()},
			Alignment: &api.CheckpointAlignment{Duration: m.AlignmentDuration.Milliseconds(),
				Persisted: m.PersistedBytes},
			StartDelay: m.StartDelay.Milliseconds(), UnalignedCheckpoint: m.Unaligned}
		d.Subtasks[t.Task.Index] = st
		e2e, size = append(e2e, st.EndToEndDuration), append(size, st.StateSize)
		checkpointed = append(checkpointed, st.CheckpointedSize)
		syncs, asyncs = append(syncs, st.Checkpoint.Sync), append(asyncs, st.Checkpoint.Async)
		aligns, delays = append(aligns, st.Alignment.Duration), append(delays, st.StartDelay)
		persisted = append(persisted, m.PersistedBytes)
	}
	d.Summary.Alignment.Persisted = summarize(persisted)
	d.Summary.EndToEndDuration, d.Summary.StateSize, d.Summary.CheckpointedSize = summarize(e2e), summarize(size), summarize(checkpointed)
	d.Summary.CheckpointDuration.Sync, d.Summary.CheckpointDuration.Async = summarize(syncs), summarize(asyncs)
	d.Summary.Alignment.Duration, d.Summary.StartDelay = summarize(aligns), summarize(delays)
	return d, nil
}

// barrierIn places the subtask's first barrier on the timeline: what is
// left of the acknowledgement latency after alignment, sync and async
// (never negative), so that the timeline's steps add up to the latency.
// The measured start delay (REST start_delay) can exceed it by the
// rounding of the trigger time to ms, which would order the steps wrong.
func barrierIn(t checkpoint.TaskStats) time.Duration {
	m := t.Metrics
	return max(0, t.AckLatency-m.AlignmentDuration-m.SyncDuration-m.AsyncDuration)
}

// Timeline renders Weir's per-subtask timeline of checkpoint id (see
// api.TimelineEntry); slowest > 0 keeps the slowest subtasks only —
// those that have not acknowledged first, then by acknowledgement
// latency, longest first.
func (j *Job) Timeline(id int64, slowest int) (api.CheckpointTimeline, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s, err := j.findStatsLocked(id)
	if err != nil {
		return api.CheckpointTimeline{}, err
	}
	tl := api.CheckpointTimeline{ID: id, Status: statusOf(s.Status), TriggerTimestamp: s.TriggerTime.UnixMilli(),
		EndToEndDuration: s.Duration.Milliseconds(), Subtasks: []api.TimelineEntry{}}
	completed := int64(-1)
	if s.Status == checkpoint.StatusCompleted {
		completed = s.Duration.Milliseconds()
	}
	for _, t := range s.Tasks {
		tl.Subtasks = append(tl.Subtasks, j.timelineEntry(t, completed))
	}
	if slowest > 0 {
		sort.SliceStable(tl.Subtasks, func(a, b int) bool { return slower(tl.Subtasks[a], tl.Subtasks[b]) })
		tl.Subtasks = tl.Subtasks[:min(slowest, len(tl.Subtasks))]
	}
	return tl, nil
}

func (j *Job) timelineEntry(t checkpoint.TaskStats, completed int64) api.TimelineEntry {
	e := api.TimelineEntry{VertexID: j.vertexID[t.Task.Vertex], VertexName: t.Task.Vertex, Subtask: t.Task.Index,
		Phase: t.Phase.String(), BarrierIn: -1, Aligned: -1, SyncDone: -1, AsyncDone: -1, Acknowledged: -1, Completed: completed}
	if t.Phase != checkpoint.PhaseAcked {
		return e
	}
	m := t.Metrics
	barrier := barrierIn(t)
	e.BarrierIn = barrier.Milliseconds()
	e.Aligned = (barrier + m.AlignmentDuration).Milliseconds()
	e.SyncDone = (barrier + m.AlignmentDuration + m.SyncDuration).Milliseconds()
	e.AsyncDone = t.AckLatency.Milliseconds()
	e.Acknowledged = t.AckLatency.Milliseconds()
	e.StateSize = m.StateBytes
	return e
}

// slower orders an unacknowledged subtask first, then the longer
// acknowledgement latency, then by vertex and index.
func slower(a, b api.TimelineEntry) bool {
	if (a.Acknowledged < 0) != (b.Acknowledged < 0) {
		return a.Acknowledged < 0
	}
	if a.Acknowledged != b.Acknowledged {
		return a.Acknowledged > b.Acknowledged
	}
	return cmp.Or(cmp.Compare(a.VertexName, b.VertexName), cmp.Compare(a.Subtask, b.Subtask)) < 0
}

// summarize is Flink's min/max/avg/percentiles of vs (all 0 when empty);
// percentiles are nearest-rank.
func summarize(vs []int64) api.MinMaxAvg {
	if len(vs) == 0 {
		return api.MinMaxAvg{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	var sum int64
	for _, v := range s {
		sum += v
	}
	p := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return float64(s[min(max(i, 0), len(s)-1)])
	}
	return api.MinMaxAvg{Min: s[0], Max: s[len(s)-1], Avg: sum / int64(len(s)), P50: p(0.5), P90: p(0.9), P95: p(0.95),
		P99: p(0.99), P999: p(0.999)}
}
