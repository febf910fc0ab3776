package weir

import (
	"context"
	"errors"
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

// Environment declares a job — its sources, operators and sinks — and runs
// it (Flink's StreamExecutionEnvironment). Make one with NewEnvironment.
// An Environment is not safe for concurrent use while declaring.
type Environment struct {
	graph       *graph.StreamGraph
	parallelism int
	opts        runtime.Options
	errs        []error // construction errors, returned by Execute
}

// NewEnvironment returns an environment configured by opts: Parallelism,
// CheckpointInterval, CheckpointDir, Guarantee, Restore, StateBackend, …
// Without options it runs operators with parallelism 1, exactly-once —
// which needs CheckpointDir, or Execute says so — and takes no periodic
// checkpoints.
func NewEnvironment(opts ...EnvOpt) *Environment {
	e := &Environment{graph: &graph.StreamGraph{}, parallelism: 1}
	for _, o := range opts {
		o.applyEnv(e)
	}
	return e
}

// fail records a construction error: Execute, ExecuteAsync, JobGraph and
// Explain return it (with every other one) instead of running the job.
func (e *Environment) fail(err error) { e.errs = append(e.errs, err) }

// SetParallelism sets the default parallelism of operators declared after it.
//
// Deprecated: use NewEnvironment(Parallelism(n)), or Parallelism(n) on an
// operator. Kept while other packages' tests still call it.
func (e *Environment) SetParallelism(n int) *Environment { e.parallelism = n; return e }

// SetMaxParallelism sets the number of key groups (default 128).
//
// Deprecated: use NewEnvironment(MaxParallelism(n)).
func (e *Environment) SetMaxParallelism(n int) *Environment { e.graph.MaxParallelism = n; return e }

// EnableCheckpointing takes a checkpoint every interval into dir with the
// given guarantee.
//
// Deprecated: use NewEnvironment(CheckpointInterval(interval),
// CheckpointDir(dir), Guarantee(mode)). Kept while other packages' tests
// still call it.
func (e *Environment) EnableCheckpointing(interval time.Duration, mode DeliveryGuarantee, dir string) *Environment {
	e.opts.Checkpoint.Interval = interval
	e.opts.Mode = mode
	e.opts.CheckpointDir = dir
	return e
}

// CheckpointOptions gives access to timeout, min pause, max concurrent and
// tolerable failures.
//
// Deprecated: use NewEnvironment(Checkpointing(checkpoint.Options{…})).
func (e *Environment) CheckpointOptions() *checkpoint.Options { return &e.opts.Checkpoint }

// SetWatermarkStallWarning sets the watermark stall warning.
//
// Deprecated: use NewEnvironment(WatermarkStallWarning(d)).
func (e *Environment) SetWatermarkStallWarning(d time.Duration) *Environment {
	WatermarkStallWarning(d).applyEnv(e)
	return e
}

// RuntimeOptions gives access to every runtime option (restart strategy,
// restore, retained checkpoints, buffer sizes, listener).
//
// Deprecated: use the EnvOpt for the setting (Restarts, Restore,
// RetainedCheckpoints, Metrics, …) or Runtime(func(*runtime.Options)).
// Kept while other packages' tests still call it.
func (e *Environment) RuntimeOptions() *runtime.Options { return &e.opts }

// JobGraph chains the declared operators (Flink's JobGraph), or returns the
// construction errors of the declaration, joined.
func (e *Environment) JobGraph(name string) (*graph.JobGraph, error) {
	if err := errors.Join(e.errs...); err != nil {
		return nil, err
	}
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

// Result is what Execute reports of a finished job: its completed
// checkpoints, restarts and per-operator metrics.
type Result = runtime.Result

// JobClient controls a job started by ExecuteAsync (Flink's JobClient).
type JobClient = runtime.JobClient

// Execute runs the job until its bounded sources end, ctx is cancelled, or
// it fails beyond its restart strategy. A mistake in the declaration (an
// invalid window size, a negative parallelism) is returned here, before
// anything runs, each error naming the operator.
func (e *Environment) Execute(ctx context.Context, name string) (*Result, error) {
	jg, err := e.JobGraph(name)
	if err != nil {
		return nil, err
	}
	return runtime.Run(ctx, jg, e.opts)
}

// SetStateBackend chooses the keyed state backend.
//
// Deprecated: use NewEnvironment(StateBackend(f)).
func (e *Environment) SetStateBackend(f state.BackendFactory) *Environment {
	e.opts.StateBackend = f
	return e
}

// ExecuteAsync starts the job and returns its client at once (Flink's
// executeAsync): JobClient.Wait waits for the end, TriggerSavepoint and
// StopWithSavepoint take savepoints of the running job.
func (e *Environment) ExecuteAsync(ctx context.Context, name string) (*JobClient, error) {
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
// the Metrics option's registry, created here when unset; a finished job's
// final values stay.
func (e *Environment) MetricsHandler() http.Handler {
	if e.opts.Metrics == nil {
		e.opts.Metrics = metrics.NewRegistry()
	}
	return prom.Handler(e.opts.Metrics)
}
