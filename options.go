package weir

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/watermark"
)

// EnvOpt configures an Environment; pass them to NewEnvironment. Each
// option's doc names the Flink setting it mirrors and its default.
type EnvOpt interface{ applyEnv(*Environment) }

// OperatorOpt configures one operator — a source, a transformation or a
// sink; pass them last to FromSource, FromSlice, Map, KeyedProcess,
// SinkTo and the other functions that add an operator. A mistake (a
// non-positive parallelism, watermarks on an operator that is not a
// source) is returned by Execute.
type OperatorOpt interface{ applyNode(*graph.Node) error }

// EnvOperatorOpt is an option that applies both to an Environment, as
// the default of its operators, and to one operator (Parallelism).
type EnvOperatorOpt interface {
	EnvOpt
	OperatorOpt
}

type envOpt func(*Environment)

func (f envOpt) applyEnv(e *Environment) { f(e) }

type nodeOpt func(*graph.Node) error

func (f nodeOpt) applyNode(n *graph.Node) error { return f(n) }

// ---------------------------------------------------------------- both

type parallelismOpt int

func (p parallelismOpt) applyEnv(e *Environment) {
	if p < 1 {
		e.fail(fmt.Errorf("weir: Parallelism(%d): use 1 or more", int(p)))
		return
	}
	e.parallelism = int(p)
}

func (p parallelismOpt) applyNode(n *graph.Node) error {
	if p < 1 {
		return fmt.Errorf("weir: Parallelism(%d) on %q: use 1 or more", int(p), n.Name)
	}
	n.Parallelism = int(p)
	return nil
}

// Parallelism sets how many subtasks run an operator (Flink's
// parallelism.default for an Environment, setParallelism for an operator).
// The default is 1.
func Parallelism(n int) EnvOperatorOpt { return parallelismOpt(n) }

// ---------------------------------------------------------------- environment

// MaxParallelism sets the number of key groups (Flink's
// pipeline.max-parallelism, default 128): keyed state can be rescaled up to
// this parallelism, and it must not change between a checkpoint and its
// restore.
func MaxParallelism(n int) EnvOpt {
	return envOpt(func(e *Environment) { e.graph.MaxParallelism = n })
}

// CheckpointInterval takes a checkpoint every d (Flink's
// execution.checkpointing.interval). The default, 0, takes periodic
// checkpoints never; a bounded job still takes its final one. Checkpoints
// need CheckpointDir.
func CheckpointInterval(d time.Duration) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Checkpoint.Interval = d })
}

// CheckpointDir is where checkpoints are written (Flink's
// state.checkpoints.dir): a local directory or an s3://bucket/prefix URL.
func CheckpointDir(dir string) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.CheckpointDir = dir })
}

// Guarantee sets the job's delivery guarantee (Flink's
// execution.checkpointing.mode, with NONE for no checkpoints). The default
// is ExactlyOnce.
func Guarantee(g DeliveryGuarantee) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Mode = g })
}

// Checkpointing sets every checkpointing option at once from Flink's
// execution.checkpointing.* (timeout, min pause, max concurrent,
// tolerable failures, unaligned): see checkpoint.Options for each field
// and its default. Its Interval replaces CheckpointInterval's.
func Checkpointing(o checkpoint.Options) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Checkpoint = o })
}

// RetainedCheckpoints keeps the newest n completed checkpoints (Flink's
// state.checkpoints.num-retained, default 1).
func RetainedCheckpoints(n int) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Retained = n })
}

// Restore starts the job from a checkpoint or savepoint: its directory,
// RestoreLatest or RestoreLatestOrEmpty (Flink's
// execution.savepoint.path). The default starts empty.
func Restore(path string) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Restore = path })
}

// The Restore values that pick the newest completed checkpoint in
// CheckpointDir: RestoreLatest fails when there is none,
// RestoreLatestOrEmpty starts empty then.
const (
	RestoreLatest        = runtime.RestoreLatest
	RestoreLatestOrEmpty = runtime.RestoreLatestOrEmpty
)

// RestartStrategy decides whether and when a failed job restarts from its
// latest checkpoint (Flink's restart-strategy.type): FixedDelay,
// ExponentialDelay, FailureRate or NoRestart.
type RestartStrategy = runtime.RestartStrategy

// The restart strategies, Flink's (see package restart for their fields
// and defaults).
type (
	FixedDelay       = runtime.FixedDelay
	ExponentialDelay = runtime.ExponentialDelay
	FailureRate      = runtime.FailureRate
	NoRestart        = runtime.NoRestart
)

// Restarts sets the restart strategy. The default is Flink's with
// checkpointing on: exponential delay (see runtime.Options.Restart).
func Restarts(s RestartStrategy) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Restart = s })
}

// StateBackend chooses the keyed state backend (Flink's state.backend.type):
// heap.Factory{Incremental: true} — the default, Flink's 'hashmap', with
// incremental checkpoints — or pebble.Factory{…} to keep state on local disk.
func StateBackend(f state.BackendFactory) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.StateBackend = f })
}

// WatermarkStallWarning sets how long a source split without records may
// hold back event time, while the source's other splits move on, before a
// warning names the split and the fix (Weir's
// weir.source.watermark-stall-warning; the default is 1 minute). 0 or a
// negative duration turns the warning off.
func WatermarkStallWarning(d time.Duration) EnvOpt {
	return envOpt(func(e *Environment) {
		if d == 0 {
			d = -1 // runtime.Options: 0 is the default, negative is off
		}
		e.opts.WatermarkStallWarning = d
	})
}

// Metrics reports the job's metrics to reg (MetricsHandler serves them).
// The default reports none.
func Metrics(reg *metrics.Registry) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Metrics = reg })
}

// Logger logs the job's lifecycle (deploys, checkpoints, failures,
// restarts) to l. The default is slog.Default().
func Logger(l *slog.Logger) EnvOpt {
	return envOpt(func(e *Environment) { e.opts.Logger = l })
}

// Runtime lets fn change any runtime option the others do not cover
// (buffer sizes, listeners, the clock, savepoint directory): see
// runtime.Options. It runs after the options before it.
func Runtime(fn func(*runtime.Options)) EnvOpt {
	return envOpt(func(e *Environment) { fn(&e.opts) })
}

// ---------------------------------------------------------------- operator

// Name sets the operator's name, shown by Explain, in metrics and in errors.
// A source's name keeps its "Source: " prefix and a sink's its "Sink: ".
func Name(name string) OperatorOpt {
	return nodeOpt(func(n *graph.Node) error {
		switch {
		case n.Source != nil:
			n.Name = "Source: " + name
		case n.IsSink():
			n.Name = "Sink: " + name
		default:
			n.Name = name
		}
		return nil
	})
}

// UID sets the operator's stable id (Flink's uid): state is matched by it
// on restore, so set it on every stateful operator and source of a
// long-running job.
func UID(uid string) OperatorOpt {
	return nodeOpt(func(n *graph.Node) error { n.UID = uid; return nil })
}

// DisableChaining starts a new operator chain at the operator, so it runs
// in its own subtasks (Flink's disableChaining).
func DisableChaining() OperatorOpt {
	return nodeOpt(func(n *graph.Node) error { n.DisableChaining = true; return nil })
}

// Watermarks gives a source's elements event time: timestamp reads it from
// an element (truncated to milliseconds), and strategy generates
// watermarks per split (bounded out-of-orderness, idleness; Flink's
// WatermarkStrategy with a TimestampAssigner). Only for sources.
func Watermarks[T any](strategy WatermarkStrategy, timestamp func(T) time.Time) OperatorOpt {
	return nodeOpt(func(n *graph.Node) error {
		if n.Source == nil {
			return fmt.Errorf("weir: Watermarks on %q: only a source assigns event time", n.Name)
		}
		s := strategy
		n.Watermarks = &s
		n.Timestamps = func(v any) event.Timestamp { return millisOf(timestamp(v.(T))) }
		return nil
	})
}

// WatermarkStrategy generates a source split's watermarks (Flink's
// WatermarkStrategy; see package watermark for its fields).
type WatermarkStrategy = watermark.Strategy

// BoundedOutOfOrderness is a strategy whose watermark trails the largest
// timestamp seen by d (Flink's forBoundedOutOfOrderness).
func BoundedOutOfOrderness(d time.Duration) WatermarkStrategy {
	return WatermarkStrategy{MaxOutOfOrderness: d}
}

// apply applies opts to n, recording errors to be returned by Execute.
func (e *Environment) apply(n *graph.Node, opts []OperatorOpt) {
	for _, o := range opts {
		if err := o.applyNode(n); err != nil {
			e.fail(err)
		}
	}
}

// timeOf turns event time in ms into a time.Time in UTC; no timestamp (and
// the watermark before any event time) is the zero time.Time.
func timeOf(ms int64) time.Time {
	if ms == event.NoTimestamp || ms == event.MinWatermark {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// millisOf is timeOf's inverse: ms since the epoch, the zero time.Time
// being no timestamp.
func millisOf(t time.Time) int64 {
	if t.IsZero() {
		return event.NoTimestamp
	}
	return t.UnixMilli()
}
