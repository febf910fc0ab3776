package runtime

import (
	"errors"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
)

// registerMetrics adds the job to Options.Metrics, if set.
func (j *job) registerMetrics() {
	if j.opts.Metrics != nil {
		j.metrics = j.opts.Metrics.AddJob(j.opts.JobID, j.jg.JobName)
	}
}

// subtaskMetrics returns the metrics group of subtask i of v, its
// operators the vertex's nodes (the source first), or nil when the job
// reports no metrics.
func (dp *deployer) subtaskMetrics(v *graph.Vertex, i int) *metrics.Subtask {
	if dp.opts.Metrics == nil {
		return nil
	}
	g := &metrics.Subtask{Task: v.Name, Index: i}
	for _, n := range v.Nodes {
		g.Operators = append(g.Operators, metrics.NewOperator(n.Name, n.UID))
	}
	dp.d.groups = append(dp.d.groups, g)
	return g
}

// attemptMetrics shows the new attempt's subtasks in place of the last's
// and, when it restored state from a checkpoint, when.
func (j *job) attemptMetrics(d *deployment, restored bool) {
	if j.metrics == nil {
		return
	}
	j.metrics.NewAttempt(d.groups)
	if restored {
		j.metrics.LastRestoreTimestamp.Store(j.opts.Now().UnixMilli())
	}
}

func (j *job) restartMetrics() {
	if j.metrics != nil {
		j.metrics.NumRestarts.Store(int64(j.res.Restarts))
	}
}

// checkpointCompletedMetrics records checkpoint id as the last completed:
// its duration, its size (bytes every subtask wrote) and each subtask's
// alignment time and start delay.
func (dr *driver) checkpointCompletedMetrics(id event.CheckpointID) {
	m := dr.j.metrics
	if m == nil {
		return
	}
	s := dr.findStats(id)
	// The id goes last: a scrape reads it before the others (the order of
	// metrics.JobDefs), so one that sees this id sees this checkpoint's
	// duration and size, never the one before's.
	defer m.LastCompletedCheckpointID.Store(int64(id))
	m.CompletedCheckpoints.Add(1)
	if s == nil {
		return
	}
	m.LastCheckpointDurationMs.Store(s.Duration.Milliseconds())
	var size, full, buffered int64
	for _, t := range s.Tasks {
		size += t.Metrics.Bytes
		full += t.Metrics.StateBytes
		buffered += t.Metrics.AlignmentBuffered
		if g := m.Subtask(t.Task.Vertex, t.Task.Index); g != nil {
			g.CheckpointAlignmentNanos.Store(t.Metrics.AlignmentDuration.Nanoseconds())
			g.CheckpointStartDelayNanos.Store(t.Metrics.StartDelay.Nanoseconds())
			g.CheckpointSize.Store(t.Metrics.Bytes)
			g.CheckpointFullSize.Store(t.Metrics.StateBytes)
		}
	}
	m.LastCheckpointSize.Store(size)
	m.LastCheckpointFullSize.Store(full)
	m.LastCheckpointAlignmentBuffered.Store(buffered)
}

// checkpointFailedMetrics counts a failed checkpoint; one subsumed by a
// newer one did not fail (Flink does not count it either).
func (dr *driver) checkpointFailedMetrics(reason error) {
	if dr.j.metrics != nil && !errors.Is(reason, checkpoint.ErrSubsumed) {
		dr.j.metrics.FailedCheckpoints.Add(1)
	}
}

// findStats returns the coordinator's record of checkpoint id, or nil.
func (dr *driver) findStats(id event.CheckpointID) *checkpoint.CheckpointStats {
	for _, s := range dr.coord.Stats() {
		if s.ID == id {
			return &s
		}
	}
	return nil
}
