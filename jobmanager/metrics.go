package jobmanager

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// The methods here serve a job's live metrics as Flink's REST API does:
// back-pressure, vertex metrics and their aggregation over subtasks. Every
// value is read from the metric groups the runtime's subtasks publish
// (package metrics); nothing is computed from data here.

// Metrics is the job's metric group (the current attempt's subtasks), nil
// for a job known from the store only.
func (j *Job) Metrics() *metrics.Job { return j.group }

// subtaskGroup returns the metric group of subtask i of v, or nil.
func (j *Job) subtaskGroup(v *graph.Vertex, i int) *metrics.Subtask {
	if j.group == nil {
		return nil
	}
	return j.group.Subtask(v.Name, i)
}

// BackPressure renders GET /jobs/:jobid/vertices/:vertexid/backpressure
// from each subtask's busy, back-pressured and idle time over its last
// rate window (task.RateWindow, 5 s), as the runtime measured them. The
// vertex's level is its most back-pressured subtask's. Until every
// subtask has measured a window (the first 5 s of an attempt), the status
// is Flink's "deprecated": no sample yet.
func (j *Job) BackPressure(id string) (api.BackPressure, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return api.BackPressure{}, err
	}
	j.mu.Lock()
	attempt := j.mu.attempt
	j.mu.Unlock()
	out := api.BackPressure{Status: "ok", EndTimestamp: time.Now().UnixMilli(), Subtasks: []api.SubtaskBackPressure{}}
	worst := 0.0
	for i := range v.Parallelism {
		g := j.subtaskGroup(v, i)
		if g == nil {
			return api.BackPressure{Status: "deprecated"}, nil
		}
		bp, idle, busy := g.BackPressuredMsPerSecond.Load()/1000, g.IdleMsPerSecond.Load()/1000, g.BusyMsPerSecond.Load()/1000
		if bp+idle+busy == 0 { // no window measured yet
			return api.BackPressure{Status: "deprecated"}, nil
		}
		level := api.BackPressureLevel(bp)
		out.Subtasks = append(out.Subtasks, api.SubtaskBackPressure{Subtask: i, AttemptNumber: attempt,
			BackpressureLevel: level, BackpressureLevelOld: level, Ratio: bp, IdleRatio: idle, BusyRatio: busy})
		worst = max(worst, bp)
	}
	out.BackpressureLevel = api.BackPressureLevel(worst)
	out.BackpressureLevelOld = out.BackpressureLevel
	return out, nil
}

// namedValue is one metric of a subtask: its name in the vertex's scope
// (without the subtask index) and value.
type namedValue struct {
	name  string
	value float64
}

// subtaskValues lists subtask g's metrics as Flink's metric store names
// them in a vertex: the task's (numRecordsIn, busyTimeMsPerSecond, …,
// currentInputWatermark), then each operator's as
// <operator name>.<metric>, its connector's gauges included
// (<operator name>.KafkaSourceReader.topic.<t>.partition.<p>.records-lag).
func subtaskValues(v *graph.Vertex, g *metrics.Subtask) []namedValue {
	var out []namedValue
	for _, d := range metrics.TaskDefs {
		out = append(out, namedValue{d.Name, d.Read(g)})
	}
	out = append(out, namedValue{"currentInputWatermark", float64(inputWatermark(v, g))})
	for _, o := range g.Operators {
		for _, d := range metrics.OperatorDefs {
			out = append(out, namedValue{o.Name + "." + d.Name, d.Read(o)})
		}
		for _, c := range o.Gauges() {
			out = append(out, namedValue{o.Name + "." + c.Identifier(), float64(c.Load())})
		}
	}
	return out
}

// inputWatermark is a subtask's current input watermark: its chain
// head's (a source's: the watermark it emits), Long.MIN_VALUE before the
// first.
func inputWatermark(v *graph.Vertex, g *metrics.Subtask) int64 {
	if g == nil || len(g.Operators) == 0 {
		return math.MinInt64
	}
	if v.IsSource() {
		return g.Operators[0].OutputWatermark.Load()
	}
	return g.Operators[0].InputWatermark.Load()
}

// formatValue renders a metric's value as Flink's REST API does: a
// string, integers without a fraction.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// VertexMetrics renders GET /jobs/:jobid/vertices/:vertexid/metrics: the
// ids of every subtask's metrics (<subtask>.<name>) when get is empty,
// else the values of those get names, in its order; names the vertex
// does not have are left out, as Flink does.
//
// With get, only the subtasks get names are read: the dashboard asks for
// a few ids of a vertex that may have thousands of subtasks.
func (j *Job) VertexMetrics(id string, get []string) ([]api.Metric, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return nil, err
	}
	if len(get) == 0 {
		return j.metricIDs(v, 0, v.Parallelism), nil
	}
	out := []api.Metric{}
	read := map[int]map[string]float64{} // subtask → its values by name
	for _, mid := range get {
		i, name, ok := splitMetricID(mid, v.Parallelism)
		if !ok {
			continue
		}
		if read[i] == nil {
			read[i] = map[string]float64{}
			if g := j.subtaskGroup(v, i); g != nil {
				for _, nv := range subtaskValues(v, g) {
					read[i][nv.name] = nv.value
				}
			}
		}
		if val, ok := read[i][name]; ok {
			out = append(out, api.Metric{ID: mid, Value: formatValue(val)})
		}
	}
	return out, nil
}

// MetricIDs lists the ids of the metrics of the vertex's subtasks from
// to from+limit-1 (limit < 0: to the last), as VertexMetrics without get
// does for all of them (about 40 per subtask: 7 MB at 5,000 subtasks).
func (j *Job) MetricIDs(id string, from, limit int) ([]api.Metric, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return nil, err
	}
	to := v.Parallelism
	if limit >= 0 {
		to = min(to, from+limit)
	}
	return j.metricIDs(v, from, to), nil
}

func (j *Job) metricIDs(v *graph.Vertex, from, to int) []api.Metric {
	out := []api.Metric{}
	for i := from; i < to; i++ {
		if g := j.subtaskGroup(v, i); g != nil {
			for _, nv := range subtaskValues(v, g) {
				out = append(out, api.Metric{ID: fmt.Sprintf("%d.%s", i, nv.name)})
			}
		}
	}
	return out
}

// splitMetricID cuts a vertex metric id <subtask>.<name> into its parts;
// false when the subtask is not one of the vertex's parallelism.
func splitMetricID(id string, parallelism int) (int, string, bool) {
	idx, name, ok := strings.Cut(id, ".")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i < 0 || i >= parallelism || strconv.Itoa(i) != idx {
		return 0, "", false
	}
	return i, name, true
}

// Aggregations are the aggregations GET …/subtasks/metrics takes (?agg=).
var Aggregations = []string{"min", "max", "avg", "sum"}

// SubtaskMetrics renders GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics:
// each metric's aggregations (aggs; all of them when empty) over the
// subtasks asked for (all when nil). Without get it lists the names the
// subtasks have; names not found are left out, as in Flink. A subtask
// index beyond the vertex's parallelism is refused.
func (j *Job) SubtaskMetrics(id string, get, aggs []string, subtasks []int) ([]api.AggregatedMetric, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return nil, err
	}
	if subtasks == nil {
		for i := range v.Parallelism {
			subtasks = append(subtasks, i)
		}
	}
	var names []string
	values := map[string][]float64{}
	for _, i := range subtasks {
		if i >= v.Parallelism {
			return nil, fmt.Errorf("%w: subtask %d of vertex %q: it has %d subtasks, 0 to %d", ErrBadRequest, i, v.Name, v.Parallelism, v.Parallelism-1)
		}
		if g := j.subtaskGroup(v, i); g != nil {
			for _, nv := range subtaskValues(v, g) {
				if _, ok := values[nv.name]; !ok {
					names = append(names, nv.name)
				}
				values[nv.name] = append(values[nv.name], nv.value)
			}
		}
	}
	out := []api.AggregatedMetric{}
	if len(get) == 0 {
		for _, n := range names {
			out = append(out, api.AggregatedMetric{ID: n})
		}
		return out, nil
	}
	if len(aggs) == 0 {
		aggs = Aggregations
	}
	for _, n := range get {
		if vs, ok := values[n]; ok {
			out = append(out, aggregate(n, vs, aggs))
		}
	}
	return out, nil
}

func aggregate(name string, vs []float64, aggs []string) api.AggregatedMetric {
	lo, hi, sum := vs[0], vs[0], 0.0
	for _, v := range vs {
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
	}
	avg := sum / float64(len(vs))
	m := api.AggregatedMetric{ID: name}
	if slices.Contains(aggs, "min") {
		m.Min = &lo
	}
	if slices.Contains(aggs, "max") {
		m.Max = &hi
	}
	if slices.Contains(aggs, "avg") {
		m.Avg = &avg
	}
	if slices.Contains(aggs, "sum") {
		m.Sum = &sum
	}
	return m
}

// MetricJob is a running job's metric group and the id and name it is
// exported under.
type MetricJob struct {
	ID, Name string
	Group    *metrics.Job
}

// RunningMetrics returns the metric groups of the jobs that have not
// ended, in submission order: what the JobManager's /metrics serves. A
// job that ends drops out (Flink unregisters an ended job's metrics).
func (m *Manager) RunningMetrics() []MetricJob {
	var out []MetricJob
	for _, j := range m.Jobs() {
		if j.group != nil && !api.Terminal(j.State()) {
			out = append(out, MetricJob{ID: j.id, Name: j.name, Group: j.group})
		}
	}
	return out
}

// jobMetrics are the job-scope metrics, by Flink's names, read from the
// job's group.
var jobMetrics = []struct {
	id   string
	read func(*metrics.Job) int64
}{
	{"numRestarts", func(g *metrics.Job) int64 { return g.NumRestarts.Load() }},
	{"fullRestarts", func(g *metrics.Job) int64 { return g.NumRestarts.Load() }},
	{"lastCheckpointRestoreTimestamp", func(g *metrics.Job) int64 { return g.LastRestoreTimestamp.Load() }},
	{"numberOfCompletedCheckpoints", func(g *metrics.Job) int64 { return g.CompletedCheckpoints.Load() }},
	{"numberOfFailedCheckpoints", func(g *metrics.Job) int64 { return g.FailedCheckpoints.Load() }},
	{"lastCheckpointDuration", func(g *metrics.Job) int64 { return g.LastCheckpointDurationMs.Load() }},
	{"lastCheckpointSize", func(g *metrics.Job) int64 { return g.LastCheckpointSize.Load() }},
}

// JobMetrics renders GET /jobs/:jobid/metrics: the job-scope metrics'
// ids, or with get their values (ids it does not have are left out, as
// Flink). A job known from the store only has none.
func (j *Job) JobMetrics(get []string) []api.Metric {
	out := []api.Metric{}
	if j.group == nil {
		return out
	}
	for _, m := range jobMetrics {
		switch {
		case len(get) == 0:
			out = append(out, api.Metric{ID: m.id})
		case slices.Contains(get, m.id):
			out = append(out, api.Metric{ID: m.id, Value: strconv.FormatInt(m.read(j.group), 10)})
		}
	}
	return out
}
