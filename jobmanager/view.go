package jobmanager

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/rest/api"
)

// The methods here render the job in Flink's REST shapes (package
// rest/api). Subtask status follows the job's: the runtime restarts all
// subtasks together (Flink's full-restart failover), so every subtask of
// an attempt is in the job's state.

// subtaskState maps a job state to its subtasks' execution state.
func subtaskState(job string) string {
	switch job {
	case api.StateRunning, api.StateFinished, api.StateFailed, api.StateCreated:
		return job
	case api.StateCancelling:
		return "CANCELING"
	case api.StateCanceled, api.StateSuspended:
		return api.StateCanceled
	}
	return api.StateRunning
}

func countState(c *api.TaskCounts, st string, n int) {
	switch st {
	case api.StateRunning:
		c.Running += n
	case api.StateFinished:
		c.Finished += n
	case api.StateFailed:
		c.Failed += n
	case "CANCELING":
		c.Canceling += n
	case api.StateCanceled:
		c.Canceled += n
	default:
		c.Created += n
	}
}

func durationOf(start, end, now int64) int64 {
	if end > 0 {
		return end - start
	}
	return now - start
}

func endOrNone(end int64) int64 {
	if end == 0 {
		return -1
	}
	return end
}

// Overview renders the job's entry of GET /jobs/overview.
func (j *Job) Overview() api.JobOverview {
	r := j.record()
	now := time.Now().UnixMilli()
	o := api.JobOverview{JID: j.id, Name: j.name, State: r.State, StartTime: r.StartTime, EndTime: endOrNone(r.EndTime),
		Duration: durationOf(r.StartTime, r.EndTime, now), LastModification: lastModification(r)}
	if j.graph != nil {
		st := subtaskState(r.State)
		for _, v := range j.graph.Vertices {
			o.Tasks.Total += v.Parallelism
			countState(&o.Tasks, st, v.Parallelism)
		}
	}
	return o
}

func lastModification(r record) int64 {
	var last int64
	for _, t := range r.Timestamps {
		last = max(last, t)
	}
	return last
}

// Details renders GET /jobs/:jobid: the job, its vertices with their
// subtasks and record counts, and its plan.
func (j *Job) Details() api.JobDetails {
	r := j.record()
	now := time.Now().UnixMilli()
	d := api.JobDetails{JID: j.id, Name: j.name, State: r.State, JobType: "STREAMING", StartTime: r.StartTime,
		EndTime: endOrNone(r.EndTime), Duration: durationOf(r.StartTime, r.EndTime, now), Now: now,
		IsStoppable: !api.Terminal(r.State) && j.client != nil, Timestamps: map[string]int64{},
		Vertices: []api.JobVertex{}, Plan: api.Plan{JID: j.id, Name: j.name, Type: "STREAMING", Nodes: []api.PlanNode{}}}
	for k, v := range r.Timestamps {
		d.Timestamps[k] = v
	}
	if j.graph == nil {
		return d
	}
	// Flink's job-level maxParallelism is the configured one (its
	// ExecutionConfig's, -1 unset), not a vertex's parallelism; each
	// vertex reports its own number of key groups.
	d.MaxParallelism = j.graph.MaxParallelism()
	for _, v := range j.graph.Vertices {
		jv := j.vertex(v, r, now)
		d.Vertices = append(d.Vertices, jv)
		countState(&d.StatusCounts, jv.Status, 1)
		d.Plan.Nodes = append(d.Plan.Nodes, j.planNode(v))
	}
	return d
}

func (j *Job) vertex(v *graph.Vertex, r record, now int64) api.JobVertex {
	jv := api.JobVertex{ID: j.vertexID[v.Name], Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: vertexMaxParallelism(v),
		Status: subtaskState(r.State), StartTime: r.StartTime, EndTime: endOrNone(r.EndTime),
		Duration: durationOf(r.StartTime, r.EndTime, now), Subtasks: j.subtasks(v, r, now)}
	jv.Metrics = ioComplete(api.Terminal(r.State))
	for _, s := range jv.Subtasks {
		jv.Metrics.ReadRecords += s.Metrics.ReadRecords
		jv.Metrics.WriteRecords += s.Metrics.WriteRecords
		jv.Metrics.ReadBytes += s.Metrics.ReadBytes
		jv.Metrics.WriteBytes += s.Metrics.WriteBytes
	}
	countState(&jv.Tasks, jv.Status, v.Parallelism)
	return jv
}

func (j *Job) subtasks(v *graph.Vertex, r record, now int64) []api.Subtask {
	j.mu.Lock()
	attempt := j.mu.attempt
	j.mu.Unlock()
	out := make([]api.Subtask, v.Parallelism)
	for i := range out {
		out[i] = api.Subtask{Subtask: i, Status: subtaskState(r.State), Attempt: attempt, Endpoint: "localhost",
			TaskManagerID: "local", StartTime: r.StartTime, EndTime: endOrNone(r.EndTime),
			Duration: durationOf(r.StartTime, r.EndTime, now)}
		out[i].Metrics = ioComplete(api.Terminal(r.State))
		if g := j.subtaskGroup(v, i); g != nil {
			out[i].Metrics.ReadRecords, out[i].Metrics.WriteRecords = g.RecordsIn.Load(), g.RecordsOut.Load()
			out[i].Metrics.ReadBytes, out[i].Metrics.WriteBytes = g.BytesIn.Load(), g.BytesOut.Load()
		}
	}
	return out
}

// ioComplete is IOMetrics with every -complete flag set to done.
func ioComplete(done bool) api.IOMetrics {
	return api.IOMetrics{ReadBytesComplete: done, WriteBytesComplete: done, ReadRecordsComplete: done, WriteRecordsComplete: done}
}

func (j *Job) planNode(v *graph.Vertex) api.PlanNode {
	n := api.PlanNode{ID: j.vertexID[v.Name], Parallelism: v.Parallelism, Operator: "", Description: v.Name}
	for i, e := range j.graph.InEdges(v) {
		n.Inputs = append(n.Inputs, api.PlanInput{Num: i, ID: j.vertexID[e.From.Name],
			ShipStrategy: fmt.Sprint(e.Edge.Partitioning), Exchange: "pipelined_bounded"})
	}
	return n
}

// findVertex returns the vertex with id.
func (j *Job) findVertex(id string) (*graph.Vertex, error) {
	if j.graph != nil {
		for _, v := range j.graph.Vertices {
			if j.vertexID[v.Name] == id {
				return v, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: job %s has no vertex %q (GET /jobs/%s lists its vertices)", ErrJobNotFound, j.id, id, j.id)
}

// Vertex renders GET /jobs/:jobid/vertices/:vertexid.
func (j *Job) Vertex(id string) (api.VertexDetails, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return api.VertexDetails{}, err
	}
	now := time.Now().UnixMilli()
	return api.VertexDetails{ID: id, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: vertexMaxParallelism(v), Now: now,
		Subtasks: j.subtasks(v, j.record(), now)}, nil
}

// Watermarks renders GET /jobs/:jobid/vertices/:vertexid/watermarks: each
// subtask's current input watermark (its chain head's), ms, as Flink's
// metric {"id": "<subtask>.currentInputWatermark", "value"}; a subtask
// without a watermark yet shows Long.MIN_VALUE, as in Flink.
func (j *Job) Watermarks(id string) ([]api.Metric, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return nil, err
	}
	out := []api.Metric{}
	for i := range v.Parallelism {
		wm := inputWatermark(v, j.subtaskGroup(v, i))
		out = append(out, api.Metric{ID: fmt.Sprintf("%d.currentInputWatermark", i), Value: fmt.Sprint(wm)})
	}
	return out, nil
}

// Exceptions renders GET /jobs/:jobid/exceptions, newest first.
func (j *Job) Exceptions() api.JobExceptions {
	r := j.record()
	out := api.JobExceptions{AllExceptions: []api.Exception{}, ExceptionHistory: api.ExceptionHistory{Entries: []api.Exception{}}}
	out.AllExceptions = append(out.AllExceptions, r.Exceptions...)
	out.ExceptionHistory.Entries = append(out.ExceptionHistory.Entries, r.Exceptions...)
	if len(r.Exceptions) > 0 {
		out.RootException, out.Timestamp = r.Exceptions[0].Stacktrace, r.Exceptions[0].Timestamp
	}
	return out
}

// vertexMaxParallelism is the number of key groups of the vertex's
// operators (Flink's max parallelism, 128 unless set), the bound on its
// parallelism when rescaled.
func vertexMaxParallelism(v *graph.Vertex) int {
	if m := v.Head().MaxParallelism; m > 0 {
		return m
	}
	return v.Parallelism
}
