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
	read func(*metrics.Job) int64
}

type taskMetric struct {
	desc *prometheus.Desc
	read func(*metrics.Subtask) int64
}

type operatorMetric struct {
	desc *prometheus.Desc
	read func(*metrics.Operator) int64
}

func desc(scope, name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc(scope+name, help, labels, nil)
}

var jobMetrics = []jobMetric{
	{desc(jobScope, "numRestarts", "Failovers of the job.", jobLabels),
		func(j *metrics.Job) int64 { return j.NumRestarts.Load() }},
	{desc(jobScope, "numberOfCompletedCheckpoints", "Completed checkpoints.", jobLabels),
		func(j *metrics.Job) int64 { return j.CompletedCheckpoints.Load() }},
	{desc(jobScope, "numberOfFailedCheckpoints", "Failed checkpoints.", jobLabels),
		func(j *metrics.Job) int64 { return j.FailedCheckpoints.Load() }},
	{desc(jobScope, "lastCompletedCheckpointId", "Id of the last completed checkpoint (0: none).", jobLabels),
		func(j *metrics.Job) int64 { return j.LastCompletedCheckpointID.Load() }},
	{desc(jobScope, "lastCheckpointDuration", "End-to-end duration of the last completed checkpoint, ms.", jobLabels),
		func(j *metrics.Job) int64 { return j.LastCheckpointDurationMs.Load() }},
	{desc(jobScope, "lastCheckpointSize", "Bytes the last completed checkpoint wrote.", jobLabels),
		func(j *metrics.Job) int64 { return j.LastCheckpointSize.Load() }},
}

var taskMetrics = []taskMetric{
	{desc(taskScope, "numRecordsIn", "Records the subtask took from its input channels.", taskLabels),
		func(s *metrics.Subtask) int64 { return s.RecordsIn.Load() }},
	{desc(taskScope, "numRecordsOut", "Records the subtask's chain emitted.", taskLabels),
		func(s *metrics.Subtask) int64 { return s.RecordsOut.Load() }},
	{desc(taskScope, "checkpointAlignmentTime", "Barrier alignment of the last completed checkpoint, ns.", taskLabels),
		func(s *metrics.Subtask) int64 { return s.CheckpointAlignmentNanos.Load() }},
}

var operatorMetrics = []operatorMetric{
	{desc(operatorScope, "numRecordsIn", "Records the operator received.", operatorLabels),
		func(o *metrics.Operator) int64 { return o.RecordsIn.Load() }},
	{desc(operatorScope, "numRecordsOut", "Records the operator emitted.", operatorLabels),
		func(o *metrics.Operator) int64 { return o.RecordsOut.Load() }},
	{desc(operatorScope, "numLateRecordsDropped", "Late records the operator dropped.", operatorLabels),
		func(o *metrics.Operator) int64 { return o.LateRecordsDropped.Load() }},
	{desc(operatorScope, "currentInputWatermark", "Last watermark received, ms (Long.MIN_VALUE: none).", operatorLabels),
		func(o *metrics.Operator) int64 { return o.InputWatermark.Load() }},
	{desc(operatorScope, "currentOutputWatermark", "Last watermark emitted, ms (Long.MIN_VALUE: none).", operatorLabels),
		func(o *metrics.Operator) int64 { return o.OutputWatermark.Load() }},
}

// Collector is a prometheus.Collector over a metrics.Registry.
type Collector struct{ r *metrics.Registry }

// NewCollector returns a collector of r's jobs.
func NewCollector(r *metrics.Registry) *Collector { return &Collector{r: r} }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range jobMetrics {
		ch <- m.desc
	}
	for _, m := range taskMetrics {
		ch <- m.desc
	}
	for _, m := range operatorMetrics {
		ch <- m.desc
	}
}

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
	}
}

func gauge(d *prometheus.Desc, v int64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
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
