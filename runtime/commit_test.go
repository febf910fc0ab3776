package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// countSource emits 1..n, then ends if bounded or waits forever.
type countSource struct {
	n       int
	bounded bool
}

func (s countSource) Bounded() bool { return s.bounded }
func (s countSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (s countSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &countReader{s: s}, nil
}

type countReader struct {
	s    countSource
	next int
}

func (r *countReader) AddSplits([]operator.SplitState) error { return nil }
func (r *countReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	for ; r.next < r.s.n; r.next++ {
		out.Collect("s", event.Record{Value: int64(r.next + 1), Timestamp: event.NoTimestamp})
	}
	if r.s.bounded {
		return operator.EndOfInput, nil
	}
	return operator.NothingAvailable, nil
}
func (r *countReader) Available() <-chan struct{} { return nil }
func (r *countReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (r *countReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *countReader) Close() error                                      { return nil }

func sinkJob(t *testing.T, src countSource, sink operator.Sink) *graph.JobGraph {
	g := &graph.StreamGraph{JobName: "commit-test"}
	s := g.AddNode(&graph.Node{Name: "Source: numbers", Parallelism: 1, Source: src})
	k := g.AddNode(&graph.Node{Name: "Sink: out", Parallelism: 1,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(sink) }})
	g.Connect(&graph.Edge{From: s.ID, To: k.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

// A job without checkpoints: bounded, its two-phase sink commits at the end
// of input; unbounded, it fails at once, without restarts, naming the sink.
func TestSinkCommitWithoutCheckpoints(t *testing.T) {
	var mu sync.Mutex
	var written []string
	wal := &operator.WriteAheadSink{Write: func(_ context.Context, _ int, id event.CheckpointID, recs []any) error {
		mu.Lock()
		defer mu.Unlock()
		written = append(written, fmt.Sprintf("commit %d: %v", id, recs))
		return nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Run(ctx, sinkJob(t, countSource{n: 3, bounded: true}, wal), Options{Mode: task.AtMostOnce})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(written); got != "[commit 1: [1 2 3]]" {
		t.Fatalf("bounded job without checkpoints wrote %s", got)
	}

	res, err := Run(ctx, sinkJob(t, countSource{n: 3}, wal), Options{Mode: task.AtMostOnce})
	if !errors.Is(err, operator.ErrNeverCommits) || res.Restarts != 0 {
		t.Fatalf("unbounded job without checkpoints: %d restarts, err %v", res.Restarts, err)
	}
}

func TestCommitTrigger(t *testing.T) {
	for _, c := range []struct {
		mode     task.Mode
		interval time.Duration
		bounded  bool
		want     operator.CommitTrigger
	}{
		{task.ExactlyOnce, time.Second, false, operator.CommitOnCheckpoint},
		{task.AtLeastOnce, 0, true, operator.CommitOnCheckpoint}, // the final checkpoint
		{task.ExactlyOnce, 0, false, operator.CommitNever},
		{task.AtMostOnce, 0, true, operator.CommitAtEndOfInput},
		{task.AtMostOnce, time.Second, false, operator.CommitNever},
	} {
		jg := sinkJob(t, countSource{bounded: c.bounded}, &operator.IdempotentSink{})
		if got := commitTrigger(jg, &Options{Mode: c.mode, Checkpoint: checkpoint.Options{Interval: c.interval}}); got != c.want {
			t.Errorf("mode %v, interval %v, bounded %v: %v, want %v", c.mode, c.interval, c.bounded, got, c.want)
		}
	}
}

// ctxSink records the WriterContext its writer was created with.
type ctxSink struct {
	mu  sync.Mutex
	got []time.Duration
}

func (s *ctxSink) CreateWriter(w operator.WriterContext) (operator.SinkWriter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, w.CheckpointInterval)
	return nopWriter{}, nil
}
func (s *ctxSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type nopWriter struct{}

func (nopWriter) Write(event.Record) error                           { return nil }
func (nopWriter) Flush(bool) error                                   { return nil }
func (nopWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (nopWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (nopWriter) Close() error                                       { return nil }

// A sink learns the job's checkpoint interval (to check its transaction
// timeouts against it); 0 when periodic checkpoints are off.
func TestWriterContextCarriesCheckpointInterval(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		opts Options
		want time.Duration
	}{
		{Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Checkpoint: checkpoint.Options{Interval: 250 * time.Millisecond}}, 250 * time.Millisecond},
		{Options{Mode: task.AtMostOnce, Checkpoint: checkpoint.Options{Interval: 250 * time.Millisecond}}, 0},
	} {
		s := &ctxSink{}
		if _, err := Run(ctx, sinkJob(t, countSource{n: 3, bounded: true}, s), tc.opts); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s.got) != fmt.Sprint([]time.Duration{tc.want}) {
			t.Errorf("mode %v: writers saw intervals %v, want [%v]", tc.opts.Mode, s.got, tc.want)
		}
	}
}

// A sink's commits are counted and the last one's duration (retries
// included) published: numCommits and lastCommitDuration of its operator
// group. The write-ahead sink's commit writes for at least hold, a lower
// bound the clock guarantees.
func TestSinkCommitMetrics(t *testing.T) {
	const hold = 30 * time.Millisecond
	wal := &operator.WriteAheadSink{Write: func(context.Context, int, event.CheckpointID, []any) error {
		time.Sleep(hold)
		return nil
	}}
	reg := metrics.NewRegistry()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Run(ctx, sinkJob(t, countSource{n: 3, bounded: true}, wal),
		Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Metrics: reg, JobID: "commits"})
	if err != nil {
		t.Fatal(err)
	}
	var sink *metrics.Operator
	for _, s := range reg.Job("commits").Subtasks() {
		for _, o := range s.Operators {
			if o.Name == "Sink: out" {
				sink = o
			}
		}
	}
	if sink == nil {
		t.Fatal("no metrics group for Sink: out")
	}
	if n, ms := sink.Commits.Load(), sink.LastCommitMs.Load(); n != 1 || ms < hold.Milliseconds() {
		t.Errorf("numCommits %d, lastCommitDuration %d ms; want 1 (the final checkpoint's) taking at least %v", n, ms, hold)
	}
}

// logSink logs through its writer's logger when the writer is made.
type logSink struct{ nopSink }

type nopSink struct{}

func (nopSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) { return nil, nil }

func (logSink) CreateWriter(w operator.WriterContext) (operator.SinkWriter, error) {
	w.Logger.Info("writer created")
	return nopWriter{}, nil
}

// Every line a job logs names it; an operator's (through its subtask's
// logger, Context.Logger, which a sink writer gets as WriterContext.Logger)
// also names the vertex, the subtask and the operator.
func TestTaskLogsNameJobVertexSubtask(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Run(ctx, sinkJob(t, countSource{n: 3, bounded: true}, logSink{}),
		Options{Mode: task.AtMostOnce, Logger: log, JobID: "logs-1"})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if rec["msg"] == "writer created" {
			if rec["job"] != "logs-1" || rec["vertex"] != "Source: numbers -> Sink: out" || rec["subtask"] != float64(0) ||
				rec["operator"] != "Sink: out" {
				t.Errorf("the writer's line lacks job, vertex, subtask or operator: %s", line)
			}
			return
		}
	}
	t.Fatalf("no line from the writer in:\n%s", buf.String())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
