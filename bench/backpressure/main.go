// Command backpressure measures checkpoints under back-pressure: a source
// whose rate is ten times what its sink can take (the sink sleeps -sink-sleep
// per record: with -burst records per -pause per source split, 2 splits and
// 2 sink subtasks the sink takes 10 % of the source rate), a keyed exchange
// between them, and a checkpoint every -interval. It runs the job for
// -duration in each mode — aligned, aligned with an aligned-checkpoint
// timeout (-timeout), unaligned —, each with buffer debloating off and on
// (target -debloat-target), and reports the p50/p99 end-to-end duration
// of the checkpoints that completed, how many failed, the channel state
// they persisted, and the p50/p99 time from a checkpoint's trigger to its
// barrier at a sink subtask (Flink's start delay: the barrier's way
// through the source's output and the sink's input). It reports; it
// asserts nothing.
//
// With -flink it then runs the same job on Flink (bench/flink's
// Backpressure main on a local MiniCluster, built with mvn -o package; see
// bench/flink/README.md) in the same modes and prints both side by side.
//
//	go run ./bench/backpressure -duration 20s -interval 1s -timeout 100ms -credits 8 -debloat-target 1s
//	go run ./bench/backpressure -duration 8s -flink
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

type config struct {
	duration, interval, timeout, pause, sinkSleep, debloatTarget time.Duration
	burst, credits                                               int
	flink                                                        bool
	flinkDir, flinkSegment                                       string
}

func main() {
	var c config
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "how long each mode runs")
	flag.DurationVar(&c.interval, "interval", time.Second, "execution.checkpointing.interval")
	flag.DurationVar(&c.timeout, "timeout", 100*time.Millisecond, "aligned-checkpoint-timeout of the middle mode")
	flag.IntVar(&c.burst, "burst", 100, "records per source split per pause")
	flag.DurationVar(&c.pause, "pause", 10*time.Millisecond, "source pause between bursts")
	flag.IntVar(&c.credits, "credits", 8, "batches in flight per channel (runtime.Options.ChannelCredits)")
	flag.DurationVar(&c.sinkSleep, "sink-sleep", time.Millisecond, "sink time per record")
	flag.DurationVar(&c.debloatTarget, "debloat-target", time.Second, "taskmanager.network.memory.buffer-debloat.target of the debloating runs")
	flag.BoolVar(&c.flink, "flink", false, "also run the job on Flink (bench/flink, built) and print both side by side")
	flag.StringVar(&c.flinkDir, "flink-dir", filepath.Join("bench", "flink"), "the bench/flink project (run.sh)")
	flag.StringVar(&c.flinkSegment, "flink-segment-size", "4kb", "Flink's taskmanager.memory.segment-size (4kb is its least)")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	fmt.Printf("source nominal %.0f rec/s (2 splits × %d per %v), sink nominal %.0f rec/s (2 × 1/%v), %d credits, interval %v, %v per mode\n",
		2*float64(c.burst)/c.pause.Seconds(), c.burst, c.pause, 2/c.sinkSleep.Seconds(), c.sinkSleep, c.credits, c.interval, c.duration)
	fmt.Printf("%-30s %9s %6s %9s %9s %9s %14s %12s %12s\n", "mode", "completed", "failed", "p50", "p99", "max", "persisted/cp",
		"sink rec/s", "barrier p50/p99 at sink")
	ms := modes(c)
	weir := make([]row, len(ms))
	for i, m := range ms {
		r, err := run(c, m)
		if err != nil {
			log.Fatalf("%s: %v", m.name, err)
		}
		weir[i] = r.row(c)
		fmt.Printf("%-30s %9d %6d %9v %9v %9v %14s %12.0f %v / %v\n", m.name, len(r.durations), r.failed,
			pct(r.durations, 50), pct(r.durations, 99), pct(r.durations, 100), bytesPer(r.persisted, len(r.durations)),
			float64(r.sunk.Load())/c.duration.Seconds(), pct(r.delays, 50), pct(r.delays, 99))
	}
	if c.flink {
		flink, err := runFlink(c, ms)
		if err != nil {
			log.Fatalf("flink: %v", err)
		}
		printSideBySide(ms, weir, flink)
	}
}

// mode is one run's checkpointing and debloating.
type mode struct {
	name      string
	unaligned bool
	timeout   time.Duration
	debloat   bool
}

// modes are aligned, aligned+timeout and unaligned, each without and with
// buffer debloating.
func modes(c config) []mode {
	var ms []mode
	for _, m := range []mode{
		{name: "aligned"},
		{name: fmt.Sprintf("aligned+timeout %v", c.timeout), unaligned: true, timeout: c.timeout},
		{name: "unaligned", unaligned: true},
	} {
		ms = append(ms, m)
		m.name, m.debloat = m.name+" +debloat", true
		ms = append(ms, m)
	}
	return ms
}

type result struct {
	durations []time.Duration
	// delays are the sink subtasks' start delays of completed checkpoints.
	delays    []time.Duration
	failed    int
	persisted int64
	sunk      atomic.Int64
	// pending are the checkpoints in progress (Flink's in_progress).
	pending map[int64]bool
}

// row is one mode's line of the side-by-side table.
func (r *result) row(c config) row {
	pending := 0
	for _, p := range r.pending {
		if p {
			pending++
		}
	}
	return row{completed: len(r.durations), failed: r.failed, pending: pending, p50: pct(r.durations, 50), p99: pct(r.durations, 99),
		persisted: bytesPer(r.persisted, len(r.durations)), sinkRate: float64(r.sunk.Load()) / c.duration.Seconds(),
		delay50: pct(r.delays, 50), delay99: pct(r.delays, 99)}
}

func run(c config, m mode) (*result, error) {
	dir, err := os.MkdirTemp("", "bench-backpressure-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	r := &result{pending: map[int64]bool{}}
	o := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: dir, Restart: runtime.NoRestart{}, ChannelCredits: c.credits}
	o.Checkpoint.Interval = c.interval
	o.Checkpoint.Timeout = 30 * time.Second
	o.Checkpoint.TolerableFailures = -1
	o.Checkpoint.Unaligned, o.Checkpoint.AlignedTimeout = m.unaligned, m.timeout
	o.Debloat.Enabled, o.Debloat.Target = m.debloat, c.debloatTarget
	o.Listener = func(e runtime.Event) {
		switch e.Kind {
		case runtime.EventCheckpointPending:
			r.pending[e.Checkpoint] = e.Stats == nil || e.Stats.Status == checkpoint.StatusPending
		case runtime.EventCheckpointCompleted, runtime.EventCheckpointFailed:
			delete(r.pending, e.Checkpoint)
		}
		switch {
		case e.Kind == runtime.EventCheckpointCompleted && e.Stats != nil:
			r.durations = append(r.durations, e.Stats.Duration)
			for _, t := range e.Stats.Tasks {
				r.persisted += t.Metrics.PersistedBytes
				if t.Task.Vertex == sinkName {
					r.delays = append(r.delays, t.Metrics.StartDelay)
				}
			}
		case e.Kind == runtime.EventCheckpointFailed:
			r.failed++
		}
	}
	jg, err := graphOf(c, &r.sunk).JobGraph()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	if _, err := runtime.Run(ctx, jg, o); err != nil && ctx.Err() == nil {
		return nil, err
	}
	return r, nil
}

// graphOf: SeqSource (p=2, 2 splits) → keyBy → SlowSink (p=2).
func graphOf(c config, sunk *atomic.Int64) *graph.StreamGraph {
	g := &graph.StreamGraph{JobName: "backpressure"}
	src := &sim.SeqSource{Keys: 64, PerKey: 1 << 30, Splits: 2, Burst: c.burst, Pause: c.pause}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: 2, Source: src})
	key := func(x any) any { return x.(sim.Seq).Key }
	k := g.AddNode(&graph.Node{Name: sinkName, UID: "sink", Parallelism: 2, KeySelector: key,
		NewOperator: func() operator.Operator { return &slowSink{sleep: c.sinkSleep, n: sunk} }})
	g.Connect(&graph.Edge{From: s.ID, To: k.ID, Partitioning: graph.Hash, Key: key})
	return g
}

// sinkName is the sink's vertex (it is not chained).
const sinkName = "Sink: slow"

// slowSink takes sleep per record.
type slowSink struct {
	operator.Base
	sleep time.Duration
	n     *atomic.Int64
}

func (s *slowSink) ProcessElement(event.Record) error {
	time.Sleep(s.sleep)
	s.n.Add(1)
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(time.Millisecond)
}

func bytesPer(total int64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d B", total/int64(n))
}
