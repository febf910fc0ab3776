// Package runtime_bench measures the local runtime: throughput per CPU core
// of source → map → keyBy → reduce → discard with checkpoints off and on,
// the checkpoint overhead, and alignment and checkpoint durations.
//
//	go test -run '^$' -bench . -benchtime 3x ./bench/runtime/
package runtime_bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// countSource emits N int64 values per split as fast as it is polled.
type countSource struct{ n, splits int }

func (s *countSource) Bounded() bool { return true }
func (s *countSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.splits)
	for i := range out {
		out[i] = operator.SplitState{ID: fmt.Sprint(i), Position: binary.AppendUvarint(nil, 0)}
	}
	return out, nil
}
func (s *countSource) AssignSplit(id string, n int) int {
	var i int
	fmt.Sscan(id, &i)
	return i % n
}
func (s *countSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &countReader{src: s, pos: map[string]int{}}, nil
}

type countReader struct {
	src *countSource
	ids []string
	pos map[string]int
}

func (r *countReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		p, _ := binary.Uvarint(s.Position)
		r.ids = append(r.ids, s.ID)
		r.pos[s.ID] = int(p)
	}
	return nil
}

func (r *countReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	done := true
	for _, id := range r.ids {
		p := r.pos[id]
		end := min(p+256, r.src.n)
		for ; p < end; p++ {
			out.Collect(id, event.Record{Value: int64(p), Timestamp: event.NoTimestamp})
		}
		r.pos[id] = p
		if p < r.src.n {
			done = false
		}
	}
	if done {
		return operator.EndOfInput, nil
	}
	return operator.MoreAvailable, nil
}
func (r *countReader) Available() <-chan struct{} { return nil }
func (r *countReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	var out []operator.SplitState
	for _, id := range r.ids {
		out = append(out, operator.SplitState{ID: id, Position: binary.AppendUvarint(nil, uint64(r.pos[id]))})
	}
	return out, nil
}
func (r *countReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *countReader) Close() error                                      { return nil }

// sumOp is a keyed reduce over int64 values kept in a Go map per subtask
// is not allowed (state must checkpoint): it uses keyed ValueState.
type discard struct{ operator.Base }

func (d *discard) ProcessElement(event.Record) error { return nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func pipeline(n int, keyed bool) *graph.StreamGraph {
	g := &graph.StreamGraph{JobName: "bench"}
	src := g.AddNode(&graph.Node{Name: "Source", UID: "src", Parallelism: 2, Source: &countSource{n: n, splits: 2}})
	m := g.AddNode(&graph.Node{Name: "Map", UID: "map", Parallelism: 2, NewOperator: func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return v.(int64) * 3, nil }}
	}})
	g.Connect(&graph.Edge{From: src.ID, To: m.ID})
	last := m
	if keyed {
		key := func(v any) any { return v.(int64) % 1000 }
		r := g.AddNode(&graph.Node{Name: "Reduce", UID: "reduce", Parallelism: 2, KeySelector: key,
			NewOperator: func() operator.Operator { return newReduce() }})
		g.Connect(&graph.Edge{From: m.ID, To: r.ID, Partitioning: graph.Hash, Key: key})
		last = r
	}
	d := g.AddNode(&graph.Node{Name: "Discard", UID: "discard", Parallelism: 2, NewOperator: func() operator.Operator { return &discard{} }})
	g.Connect(&graph.Edge{From: last.ID, To: d.ID})
	return g
}

type result struct {
	perCore  float64
	stats    []checkpoint.CheckpointStats
	wall     time.Duration
	cpu      time.Duration
	complete int
}

func runOnce(b *testing.B, n int, keyed bool, interval time.Duration) result {
	jg, err := pipeline(n, keyed).JobGraph()
	if err != nil {
		b.Fatal(err)
	}
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: b.TempDir(), Restart: runtime.NoRestart{}}
	opts.Checkpoint.Interval = interval
	if interval == 0 {
		opts.Mode = task.AtMostOnce
	}
	c0, t0 := cpuTime(), time.Now()
	res, err := runtime.Run(context.Background(), jg, opts)
	if err != nil {
		b.Fatal(err)
	}
	cpu, wall := cpuTime()-c0, time.Since(t0)
	r := result{perCore: float64(2*n) / cpu.Seconds(), stats: res.Checkpoints, wall: wall, cpu: cpu}
	for _, s := range res.Checkpoints {
		if s.Status == checkpoint.StatusCompleted {
			r.complete++
		}
	}
	return r
}

func bench(b *testing.B, keyed bool, interval time.Duration, n int) {
	var sum float64
	var all []checkpoint.CheckpointStats
	for i := 0; i < b.N; i++ {
		r := runOnce(b, n, keyed, interval)
		sum += r.perCore
		all = append(all, r.stats...)
	}
	b.ReportMetric(sum/float64(b.N), "records/s/core")
	if interval > 0 {
		reportDurations(b, all)
	}
}

func reportDurations(b *testing.B, stats []checkpoint.CheckpointStats) {
	var dur, align []time.Duration
	for _, s := range stats {
		if s.Status != checkpoint.StatusCompleted {
			continue
		}
		dur = append(dur, s.Duration)
		for _, t := range s.Tasks {
			align = append(align, t.Metrics.AlignmentDuration)
		}
	}
	b.ReportMetric(float64(len(dur))/float64(b.N), "checkpoints/op")
	b.ReportMetric(pct(dur, 50).Seconds()*1000, "ckpt-p50-ms")
	b.ReportMetric(pct(dur, 99).Seconds()*1000, "ckpt-p99-ms")
	b.ReportMetric(pct(align, 50).Seconds()*1000, "align-p50-ms")
	b.ReportMetric(pct(align, 99).Seconds()*1000, "align-p99-ms")
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[(len(d)-1)*p/100]
}

const records = 3_000_000 // per source subtask

func BenchmarkStatelessChainNoCheckpoints(b *testing.B) { bench(b, false, 0, records) }
func BenchmarkStatelessChainCheckpoint1s(b *testing.B)  { bench(b, false, time.Second, records) }
func BenchmarkKeyedReduceNoCheckpoints(b *testing.B)    { bench(b, true, 0, records) }
func BenchmarkKeyedReduceCheckpoint1s(b *testing.B)     { bench(b, true, time.Second, records) }
func BenchmarkKeyedReduceCheckpoint100ms(b *testing.B)  { bench(b, true, 100*time.Millisecond, records) }
