// Package prom serves a metrics.Registry to Prometheus, as Flink's
// PrometheusReporter does: the same metric names and labels under the
// prefix weir_ (flink_taskmanager_job_task_operator_numRecordsIn is
// weir_taskmanager_job_task_operator_numRecordsIn), every value read from
// the registry's atomics at scrape time. Like Flink's reporter it exports
// counts as gauges (a restarted task counts from zero again).
package prom

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirstream/weir/metrics"
)

// The scopes of Flink's default scope formats, with Weir's prefix.
const (
	jobScope      = "weir_jobmanager_job_"
	taskScope     = "weir_taskmanager_job_task_"
	operatorScope = "weir_taskmanager_job_task_operator_"
)

var (
	jobLabels      = []string{"job_id", "job_name"}
	taskLabels     = append(jobLabels[:2:2], "task_name", "subtask_index")
	operatorLabels = append(taskLabels[:4:4], "operator_id", "operator_name")
)

// jobMetric reads one value of a job group.
type jobMetric struct {
	desc *prometheus.Desc
	read func(*metrics.Job) float64
}

type taskMetric struct {
	desc *prometheus.Desc
	read func(*metrics.Subtask) float64
}

type operatorMetric struct {
	desc *prometheus.Desc
	read func(*metrics.Operator) float64
}

func desc(scope, name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc(scope+name, help, labels, nil)
}

// i64 and f64 read an atomic as a sample value.
func i64(v interface{ Load() int64 }) float64   { return float64(v.Load()) }
func f64(v interface{ Load() float64 }) float64 { return v.Load() }

func job(name, help string, read func(*metrics.Job) float64) jobMetric {
	return jobMetric{desc(jobScope, name, help, jobLabels), read}
}

func task(name, help string, read func(*metrics.Subtask) float64) taskMetric {
	return taskMetric{desc(taskScope, name, help, taskLabels), read}
}

func op(name, help string, read func(*metrics.Operator) float64) operatorMetric {
	return operatorMetric{desc(operatorScope, name, help, operatorLabels), read}
}

var jobMetrics = []jobMetric{
	job("numRestarts", "Failovers of the job.", func(j *metrics.Job) float64 { return i64(&j.NumRestarts) }),
	job("fullRestarts", "Failovers of the job (each restarts the whole job; Flink's deprecated name).",
		func(j *metrics.Job) float64 { return i64(&j.NumRestarts) }),
	job("numberOfCompletedCheckpoints", "Completed checkpoints.", func(j *metrics.Job) float64 { return i64(&j.CompletedCheckpoints) }),
	job("numberOfFailedCheckpoints", "Failed checkpoints.", func(j *metrics.Job) float64 { return i64(&j.FailedCheckpoints) }),
	job("lastCompletedCheckpointId", "Id of the last completed checkpoint (0: none).",
		func(j *metrics.Job) float64 { return i64(&j.LastCompletedCheckpointID) }),
	job("lastCheckpointDuration", "End-to-end duration of the last completed checkpoint, ms.",
		func(j *metrics.Job) float64 { return i64(&j.LastCheckpointDurationMs) }),
	job("lastCheckpointSize", "Bytes the last completed checkpoint wrote.", func(j *metrics.Job) float64 { return i64(&j.LastCheckpointSize) }),
	job("lastCheckpointFullSize", "Full size of the last completed checkpoint, bytes (every checkpoint is full).",
		func(j *metrics.Job) float64 { return i64(&j.LastCheckpointSize) }),
	job("lastCheckpointAlignmentBuffered", "Records held on blocked channels while aligning the last completed checkpoint.",
		func(j *metrics.Job) float64 { return i64(&j.LastCheckpointAlignmentBuffered) }),
	job("lastCheckpointRestoreTimestamp", "When the running attempt restored a checkpoint, ms since the epoch (-1: none).",
		func(j *metrics.Job) float64 { return i64(&j.LastRestoreTimestamp) }),
}

var taskMetrics = []taskMetric{
	task("numRecordsIn", "Records the subtask took from its input channels (a source subtask: read by its source).",
		func(s *metrics.Subtask) float64 { return i64(&s.RecordsIn) }),
	task("numRecordsOut", "Records the subtask's chain emitted.", func(s *metrics.Subtask) float64 { return i64(&s.RecordsOut) }),
	task("numBytesIn", "Bytes the subtask's source read from outside.", func(s *metrics.Subtask) float64 { return i64(&s.BytesIn) }),
	task("numBytesOut", "Bytes the subtask's sinks wrote out.", func(s *metrics.Subtask) float64 { return i64(&s.BytesOut) }),
	task("numRecordsInPerSecond", "numRecordsIn per second over the last 5 s.", func(s *metrics.Subtask) float64 { return f64(&s.RecordsInPerSecond) }),
	task("numRecordsOutPerSecond", "numRecordsOut per second over the last 5 s.", func(s *metrics.Subtask) float64 { return f64(&s.RecordsOutPerSecond) }),
	task("numBytesInPerSecond", "numBytesIn per second over the last 5 s.", func(s *metrics.Subtask) float64 { return f64(&s.BytesInPerSecond) }),
	task("numBytesOutPerSecond", "numBytesOut per second over the last 5 s.", func(s *metrics.Subtask) float64 { return f64(&s.BytesOutPerSecond) }),
	task("busyTimeMsPerSecond", "Ms per second the subtask was busy, over the last 5 s.", func(s *metrics.Subtask) float64 { return f64(&s.BusyMsPerSecond) }),
	task("backPressuredTimeMsPerSecond", "Ms per second the subtask waited for an output credit, over the last 5 s.",
		func(s *metrics.Subtask) float64 { return f64(&s.BackPressuredMsPerSecond) }),
	task("idleTimeMsPerSecond", "Ms per second the subtask waited for input, over the last 5 s.",
		func(s *metrics.Subtask) float64 { return f64(&s.IdleMsPerSecond) }),
	task("accumulateBusyTime", "Ms the subtask was busy since it started.", func(s *metrics.Subtask) float64 { return i64(&s.AccumulateBusyMs) }),
	task("accumulateBackPressuredTime", "Ms the subtask waited for an output credit since it started.",
		func(s *metrics.Subtask) float64 { return i64(&s.AccumulateBackPressuredMs) }),
	task("accumulateIdleTime", "Ms the subtask waited for input since it started.", func(s *metrics.Subtask) float64 { return i64(&s.AccumulateIdleMs) }),
	task("isBackPressured", "1 while the subtask waits for an output credit.", func(s *metrics.Subtask) float64 {
		if s.BackPressured.Load() {
			return 1
		}
		return 0
	}),
	task("checkpointAlignmentTime", "Barrier alignment of the last completed checkpoint, ns.",
		func(s *metrics.Subtask) float64 { return i64(&s.CheckpointAlignmentNanos) }),
	task("lastCheckpointSize", "Bytes the subtask wrote for the last completed checkpoint: its state size.",
		func(s *metrics.Subtask) float64 { return i64(&s.CheckpointSize) }),
}

var operatorMetrics = []operatorMetric{
	op("numRecordsIn", "Records the operator received (a source: read).", func(o *metrics.Operator) float64 { return i64(&o.RecordsIn) }),
	op("numRecordsOut", "Records the operator emitted.", func(o *metrics.Operator) float64 { return i64(&o.RecordsOut) }),
	op("numBytesIn", "Bytes a source read from outside.", func(o *metrics.Operator) float64 { return i64(&o.BytesIn) }),
	op("numBytesOut", "Bytes a sink wrote out.", func(o *metrics.Operator) float64 { return i64(&o.BytesOut) }),
	op("numLateRecordsDropped", "Late records the operator dropped.", func(o *metrics.Operator) float64 { return i64(&o.LateRecordsDropped) }),
	op("currentInputWatermark", "Last watermark received, ms (Long.MIN_VALUE: none).",
		func(o *metrics.Operator) float64 { return i64(&o.InputWatermark) }),
	op("currentOutputWatermark", "Last watermark emitted, ms (Long.MIN_VALUE: none).",
		func(o *metrics.Operator) float64 { return i64(&o.OutputWatermark) }),
	op("numCommits", "Commits of completed checkpoints by a sink.", func(o *metrics.Operator) float64 { return i64(&o.Commits) }),
	op("lastCommitDuration", "How long a sink's last commit took, ms, retries included.",
		func(o *metrics.Operator) float64 { return i64(&o.LastCommitMs) }),
}

// Collector is a prometheus.Collector over a metrics.Registry.
type Collector struct{ r *metrics.Registry }

// NewCollector returns a collector of r's jobs.
func NewCollector(r *metrics.Registry) *Collector { return &Collector{r: r} }

// Describe implements prometheus.Collector. It describes nothing, which
// makes the collector unchecked: the connectors' gauges (Operator.Gauge)
// are known only at scrape time.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: it reads every job's values now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, j := range c.r.Jobs() {
		for _, m := range jobMetrics {
			ch <- gauge(m.desc, m.read(j), j.ID, j.Name)
		}
		for _, s := range j.Subtasks() {
			c.collectSubtask(ch, j, s)
		}
	}
}

func (c *Collector) collectSubtask(ch chan<- prometheus.Metric, j *metrics.Job, s *metrics.Subtask) {
	idx := strconv.Itoa(s.Index)
	for _, m := range taskMetrics {
		ch <- gauge(m.desc, m.read(s), j.ID, j.Name, s.Task, idx)
	}
	for _, o := range s.Operators {
		for _, m := range operatorMetrics {
			ch <- gauge(m.desc, m.read(o), j.ID, j.Name, s.Task, idx, o.UID, o.Name)
		}
		for _, g := range o.Gauges() {
			ch <- custom(g, j.ID, j.Name, s.Task, idx, o.UID, o.Name)
		}
	}
}

// custom exports a connector's gauge: its name (Flink's group names joined
// by _, characters Prometheus does not take replaced by _, as Flink's
// reporter does) in the operator scope, its labels after the operator's.
func custom(g *metrics.Gauge, labels ...string) prometheus.Metric {
	names := operatorLabels
	for i := 0; i+1 < len(g.Labels); i += 2 {
		names = append(names[:len(names):len(names)], g.Labels[i])
		labels = append(labels, g.Labels[i+1])
	}
	d := prometheus.NewDesc(operatorScope+sanitize(g.Name), "Published by the operator's connector.", names, nil)
	return gauge(d, float64(g.Load()), labels...)
}

// sanitize replaces every character a Prometheus name does not take by _.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// Handler serves r's metrics in Prometheus's text format, with the Go
// runtime's and the process's (go_*, process_*): mount it on /metrics of
// any server.
func Handler(r *metrics.Registry) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(r), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
