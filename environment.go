package weir

import (
	"context"
	"net/http"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/metrics/prom"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
)

// DeliveryGuarantee is the guarantee a job gives for its state and, with
// transactional sinks, its output (package delivery, Flink's
// DeliveryGuarantee; the runtime and connectors use the same type).
type DeliveryGuarantee = delivery.Guarantee

const (
	// ExactlyOnce aligns checkpoint barriers: every record is in exactly
	// one checkpoint (the default).
	ExactlyOnce = delivery.ExactlyOnce
	// AtLeastOnce does not align barriers: a restore may replay records.
	AtLeastOnce = delivery.AtLeastOnce
	// AtMostOnce takes no checkpoints: a restart starts afresh (Flink's
	// delivery guarantee NONE, delivery.None).
	AtMostOnce = delivery.None
)

// Environment collects the job's operators and runs them.
type Environment struct {
	graph       *graph.StreamGraph
	parallelism int
	opts        runtime.Options
}

// NewEnvironment returns an environment with parallelism 1, exactly-once
// mode and checkpoints off (call EnableCheckpointing).
func NewEnvironment() *Environment {
	return &Environment{graph: &graph.StreamGraph{}, parallelism: 1}
}

// SetParallelism sets the default parallelism of operators declared after it.
func (e *Environment) SetParallelism(n int) *Environment { e.parallelism = n; return e }

// SetMaxParallelism sets the number of key groups (default 128). Keyed state
// can be rescaled up to this parallelism.
func (e *Environment) SetMaxParallelism(n int) *Environment { e.graph.MaxParallelism = n; return e }

// EnableCheckpointing takes a checkpoint every interval into dir with the
// given guarantee (Flink's execution.checkpointing.interval and mode).
func (e *Environment) EnableCheckpointing(interval time.Duration, mode DeliveryGuarantee, dir string) *Environment {
	e.opts.Checkpoint.Interval = interval
	e.opts.Mode = mode
	e.opts.CheckpointDir = dir
	return e
}

// CheckpointOptions gives access to timeout, min pause, max concurrent and
// tolerable failures.
func (e *Environment) CheckpointOptions() *checkpoint.Options { return &e.opts.Checkpoint }

// SetWatermarkStallWarning sets how long a source split without records may
// hold back event time, while the source's other splits move on, before a
// warning names the split and the fix (Weir's
// weir.source.watermark-stall-warning; the default is 1 minute). 0 or a
// negative duration turns the warning off.
func (e *Environment) SetWatermarkStallWarning(d time.Duration) *Environment {
	if d == 0 {
		d = -1 // runtime.Options: 0 is the default, negative is off
	}
	e.opts.WatermarkStallWarning = d
	return e
}

// RuntimeOptions gives access to every runtime option (restart strategy,
// restore, retained checkpoints, buffer sizes, listener).
func (e *Environment) RuntimeOptions() *runtime.Options { return &e.opts }

// JobGraph chains the declared operators.
func (e *Environment) JobGraph(name string) (*graph.JobGraph, error) {
	e.graph.JobName = name
	return e.graph.JobGraph()
}

// Explain prints the plan: operator chains, parallelism and partitioning.
func (e *Environment) Explain(name string) (string, error) {
	jg, err := e.JobGraph(name)
	if err != nil {
		return "", err
	}
	return jg.Explain(), nil
}

// Execute runs the job until its bounded sources end, ctx is cancelled, or
// it fails beyond its restart strategy.
func (e *Environment) Execute(ctx context.Context, name string) (*runtime.Result, error) {
	jg, err := e.JobGraph(name)
	if err != nil {
		return nil, err
	}
	return runtime.Run(ctx, jg, e.opts)
}

// SetStateBackend chooses the keyed state backend (Flink's
// env.setStateBackend): heap.Factory{} — the default, Flink's 'hashmap' —
// or pebble.Factory{Options: …} to keep state on local disk.
func (e *Environment) SetStateBackend(f state.BackendFactory) *Environment {
	e.opts.StateBackend = f
	return e
}

// ExecuteAsync starts the job and returns its client at once (Flink's
// executeAsync): JobClient.Wait waits for the end, TriggerSavepoint and
// StopWithSavepoint take savepoints of the running job.
func (e *Environment) ExecuteAsync(ctx context.Context, name string) (*runtime.JobClient, error) {
	jg, err := e.JobGraph(name)
	if err != nil {
		return nil, err
	}
	return runtime.Start(ctx, jg, e.opts)
}

// MetricsHandler returns an http.Handler serving the metrics of the jobs
// this environment executes in Prometheus's text format, with Flink's
// PrometheusReporter names under the prefix weir_ (see package
// metrics/prom): mount it on your server's /metrics. The jobs report to
// RuntimeOptions().Metrics, created here when unset; a finished job's
// final values stay.
func (e *Environment) MetricsHandler() http.Handler {
	if e.opts.Metrics == nil {
		e.opts.Metrics = metrics.NewRegistry()
	}
	return prom.Handler(e.opts.Metrics)
}
