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

// described is a scope's metric with its Prometheus description.
type described[G any] struct {
	desc *prometheus.Desc
	read func(G) float64
}

func describe[G any](scope string, labels []string, defs []metrics.Def[G]) []described[G] {
	out := make([]described[G], len(defs))
	for i, d := range defs {
		out[i] = described[G]{prometheus.NewDesc(scope+d.Name, d.Help, labels, nil), d.Read}
	}
	return out
}

var (
	jobMetrics      = describe(jobScope, jobLabels, metrics.JobDefs)
	taskMetrics     = describe(taskScope, taskLabels, metrics.TaskDefs)
	operatorMetrics = describe(operatorScope, operatorLabels, metrics.OperatorDefs)
)

// Job is a job group to export and the job_id and job_name its series
// carry (a JobManager names its jobs by its own ids).
type Job struct {
	ID, Name string
	Group    *metrics.Job
}

// Collector is a prometheus.Collector over the jobs a function lists.
type Collector struct{ jobs func() []Job }

// NewCollector returns a collector of r's jobs, labelled by their groups'
// ids and names.
func NewCollector(r *metrics.Registry) *Collector {
	return NewJobsCollector(func() []Job {
		var out []Job
		for _, j := range r.Jobs() {
			out = append(out, Job{ID: j.ID, Name: j.Name, Group: j})
		}
		return out
	})
}

// NewJobsCollector returns a collector of the jobs jobs lists at each
// scrape: a job it no longer lists has no series any more.
func NewJobsCollector(jobs func() []Job) *Collector { return &Collector{jobs: jobs} }

// Describe implements prometheus.Collector. It describes nothing, which
// makes the collector unchecked: the connectors' gauges (Operator.Gauge)
// are known only at scrape time.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: it reads every job's values now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, j := range c.jobs() {
		for _, m := range jobMetrics {
			ch <- gauge(m.desc, m.read(j.Group), j.ID, j.Name)
		}
		for _, s := range j.Group.Subtasks() {
			collectSubtask(ch, j, s)
		}
	}
}

func collectSubtask(ch chan<- prometheus.Metric, j Job, s *metrics.Subtask) {
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
func Handler(r *metrics.Registry) http.Handler { return CollectorHandler(NewCollector(r)) }

// CollectorHandler serves c's metrics, with the Go runtime's and the
// process's, in Prometheus's text format.
func CollectorHandler(c *Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
