package weir_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// A job reads a topic with two partitions and only one gets records: event
// time stops, and the job says so in a warning naming the partition and the
// fix, once, and counts it. Time is a fake clock that moves one second each
// time the runtime reads it, so the threshold (2 min) passes within
// milliseconds; nothing asserts on wall-clock time — the test waits for the
// warning, then stops the job.
func TestWatermarkStallWarning(t *testing.T) {
	src := &partitions{ids: []string{"orders-0", "orders-1"}, records: map[string][]int64{"orders-0": {1000, 2000}}}
	runStalled(t, 1, src, `operator="Source: orders"`, "subtask=0", "split=orders-1",
		"held=", `watermark="MIN (no watermark yet)"`, `ahead="orders-0 at 1970-01-01T00:00:01.999Z (1999)"`,
		"'table.exec.source.idle-timeout'", "IdleTimeout")
}

// The most common setup: parallelism equals the partition count, so each
// source subtask reads one partition, and only partition 0 gets records.
// Subtask 1 stays at MIN and holds back every downstream subtask; its own
// split-level check cannot see it (it has no other split), so the job
// driver's check across subtasks warns, once, naming subtask 1, its
// partition, both watermarks and the fix, and counts it.
func TestWatermarkStallWarningAcrossSubtasks(t *testing.T) {
	src := &partitions{ids: []string{"orders-0", "orders-1"}, records: map[string][]int64{"orders-0": {1000, 2000}},
		byIndex: true}
	runStalled(t, 2, src, "a source subtask whose splits have no records", `operator="Source: orders"`,
		"subtask=1", "split=orders-1", "held=", `watermark="MIN (no watermark yet)"`,
		`ahead="subtask 0 at 1970-01-01T00:00:01.999Z (1999)"`, "'table.exec.source.idle-timeout'", "IdleTimeout")
}

// runStalled runs a job reading src at parallelism par with a stall
// threshold of 2 min, waits for the first warning, stops the job, and
// checks that there was exactly one, containing every want, and that
// Metrics[orders].WatermarkStalls counted it.
func runStalled(t *testing.T, par int, src *partitions, want ...string) {
	t.Helper()
	var ticks atomic.Int64
	clock := func() time.Time { return time.UnixMilli(0).Add(time.Duration(ticks.Add(1)) * time.Second) }
	logs := newStallLog()
	env := weir.NewEnvironment().SetParallelism(par).EnableCheckpointing(0, weir.AtMostOnce, "").
		SetWatermarkStallWarning(2 * time.Minute)
	opts := env.RuntimeOptions()
	opts.Now, opts.Logger = clock, slog.New(logs)
	orders := weir.FromSource[int64](env, src, "orders", weir.WithUID("orders"),
		weir.WithWatermarks(weir.WatermarkStrategy{}, func(ts int64) int64 { return ts }))
	weir.SinkTo(orders, &apiSink[int64]{}, "out")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-logs.seen:
		case <-ctx.Done():
		}
		cancel()
	}()
	res, err := env.Execute(ctx, "stall")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("job ended with %v; want it stopped after the warning", err)
	}
	warnings := logs.warnings()
	if len(warnings) != 1 {
		t.Fatalf("got %d stall warnings, want exactly 1: %q", len(warnings), warnings)
	}
	t.Log(warnings[0])
	for _, w := range want {
		if !strings.Contains(warnings[0], w) {
			t.Errorf("the warning lacks %s", w)
		}
	}
	if n := res.Metrics["orders"].WatermarkStalls; n != 1 {
		t.Errorf("Metrics[orders].WatermarkStalls = %d, want 1", n)
	}
}

// stallLog is a slog.Handler that keeps WARN records as text and signals
// seen on the first one.
type stallLog struct {
	*stallLines
	attrs []slog.Attr // from With: the job's, the subtask's
}

type stallLines struct {
	mu   sync.Mutex
	out  []string
	seen chan struct{}
}

func newStallLog() *stallLog { return &stallLog{stallLines: &stallLines{seen: make(chan struct{})}} }

func (l *stallLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *stallLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &stallLog{stallLines: l.stallLines, attrs: append(l.attrs[:len(l.attrs):len(l.attrs)], as...)}
}
func (l *stallLog) WithGroup(string) slog.Handler { return l }

func (l *stallLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	var b strings.Builder
	h := slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}).WithAttrs(l.attrs)
	if err := h.Handle(context.Background(), r); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, strings.TrimSpace(b.String()))
	if len(l.out) == 1 {
		close(l.seen)
	}
	return nil
}

func (l *stallLog) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.out...)
}

// partitions is an unbounded source of fixed splits; each split emits its
// records (event times) once, then nothing more, like a topic whose
// producers stopped. With byIndex, split i goes to subtask i modulo the
// parallelism, like Kafka's partitions.
type partitions struct {
	ids     []string
	records map[string][]int64
	byIndex bool
}

func (p *partitions) AssignSplit(id string, n int) int {
	if !p.byIndex {
		return operator.HashSplit(id, n)
	}
	return slices.Index(p.ids, id) % n
}

func (p *partitions) Bounded() bool { return false }

func (p *partitions) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(p.ids))
	for i, id := range p.ids {
		out[i] = operator.SplitState{ID: id}
	}
	return out, nil
}

func (p *partitions) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &partitionReader{src: p}, nil
}

type partitionReader struct {
	src    *partitions
	splits []string
	done   bool
}

func (r *partitionReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		r.splits = append(r.splits, s.ID)
	}
	return nil
}

func (r *partitionReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.done {
		for _, id := range r.splits {
			for _, ts := range r.src.records[id] {
				out.Collect(id, event.Record{Value: ts, Timestamp: ts})
			}
		}
		r.done = true
	}
	return operator.NothingAvailable, nil
}

// Available returns nil: the subtask polls again soon, which keeps the
// clock moving.
func (r *partitionReader) Available() <-chan struct{} { return nil }

func (r *partitionReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return nil, nil
}

func (r *partitionReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *partitionReader) Close() error                                      { return nil }
