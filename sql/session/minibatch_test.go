package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// With mini-batches on and no checkpoints, a batch ends allow-latency
// after it started even when the input goes idle: the source below sends
// its rows and then sends nothing more, and ends only once the sink has
// the results. Processing time is a fake clock that moves only when the
// test moves it, so no batch can end by time before every row is in it.
func TestMiniBatchEndsOnIdleInput(t *testing.T) {
	for _, c := range []struct {
		name, phases string
		rows         [][]any
		want         []string
	}{
		// Two phases: the local phase is chained to the source, so once the
		// reader has handed over its rows they are all in the local batch.
		{"two-phase", "TWO_PHASE", [][]any{{"a", int64(1)}, {"b", int64(2)}, {"a", int64(3)}},
			[]string{"+I[a, 2, 4]", "+I[b, 1, 2]"}},
		// One phase, behind the exchange: where the batch boundaries fall
		// is not fixed, so one row a group.
		{"one-phase", "ONE_PHASE", [][]any{{"a", int64(1)}, {"b", int64(2)}},
			[]string{"+I[a, 1, 1]", "+I[b, 1, 2]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runIdleMiniBatch(t, c.phases, c.rows, len(c.want))
			expect(t, "changelog", got, c.want)
		})
	}
}

func runIdleMiniBatch(t *testing.T, phases string, rows [][]any, want int) []string {
	t.Helper()
	src := &idleSource{rows: rows, handedOver: make(chan struct{})}
	sink := &rowsSink{want: want, full: make(chan struct{})}
	s := New()
	s.Connectors.Sources["idle"] = func(*catalog.Table) (operator.Source, error) { return src, nil }
	s.Connectors.Sinks["await"] = func(*catalog.Table) (planner.SinkSpec, error) {
		return planner.SinkSpec{Sink: sink, AcceptsUpdates: true}, nil
	}
	src.end = sink.full
	const latencyMs = 2000
	err := s.Execute(`
CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'idle');
CREATE TABLE dst (k STRING, n BIGINT, total BIGINT) WITH ('connector' = 'await');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.mini-batch.size' = '1000';
SET 'table.optimizer.agg-phase-strategy' = '` + phases + `';
INSERT INTO dst SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;`)
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(1_000_000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "idle-minibatch", func(o *runtime.Options) {
			o.Now = func() time.Time { return time.UnixMilli(clock.Load()) }
		})
		done <- err
	}()
	select {
	case <-src.handedOver:
	case err := <-done:
		t.Fatalf("job ended before the source handed over its rows: %v", err)
	}
	// The input is idle now. Move processing time on in steps of the
	// latency until the results arrive: a phase's batch ends at the first
	// wake-up one latency after its first row, however many steps it
	// waited for that row.
	for step := 0; ; step++ {
		select {
		case <-sink.full:
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			return sink.rows
		case err := <-done:
			// The sink's being full ends the source and so the job: both
			// may be ready at once, and select picks either.
			select {
			case <-sink.full:
				if err != nil {
					t.Fatal(err)
				}
				return sink.rows
			default:
			}
			t.Fatalf("job ended before the results arrived: %v (rows %q)", err, sink.rows)
		case <-time.After(20 * time.Millisecond): // a wake-up or two of the subtasks
			clock.Add(latencyMs)
		case <-ctx.Done():
			t.Fatalf("no results after %d steps of the clock: the batch never ended", step)
		}
	}
}

// idleSource reads rows in one Poll, then nothing until end is closed, and
// then ends.
type idleSource struct {
	rows       [][]any
	handedOver chan struct{} // closed once the rows went down the source's chain
	end        <-chan struct{}
}

func (s *idleSource) Bounded() bool { return true }
func (s *idleSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "idle"}}, nil
}
func (s *idleSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &idleReader{s: s}, nil
}

type idleReader struct {
	s    *idleSource
	sent bool
}

func (r *idleReader) AddSplits([]operator.SplitState) error { return nil }

func (r *idleReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.sent {
		select {
		case <-r.s.end:
			return operator.EndOfInput, nil
		default:
			return operator.NothingAvailable, nil
		}
	}
	for _, row := range r.s.rows {
		out.Collect("idle", event.Record{Value: event.Row{Kind: event.Insert, Fields: row}, Timestamp: event.NoTimestamp})
	}
	r.sent = true
	close(r.s.handedOver) // Collect ran the chain: the rows are in its operators
	return operator.NothingAvailable, nil
}

func (r *idleReader) Available() <-chan struct{} { return r.s.end }
func (r *idleReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "idle"}}, nil
}
func (r *idleReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *idleReader) Close() error                                      { return nil }
