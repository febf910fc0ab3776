package task

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/debloat"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// slowOp takes a millisecond per record: busy time the debloater measures.
type slowOp struct{ operator.Base }

func (*slowOp) ProcessElement(event.Record) error { time.Sleep(time.Millisecond); return nil }

// With buffer debloating a subtask's debloater closes a period on a tick,
// the gate announces its batch size, the subtask's metrics show it, and a
// sender cuts its batches at that size. A target of 1 ns wants less than
// a record in flight whatever the machine's speed: the minimum, 1.
func TestDebloatedSubtaskAnnouncesBatchSize(t *testing.T) {
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gate := NewInputGate([]int{0}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "slow", Index: 0}, UID: "slow", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: func() int64 { return time.Now().UnixMilli() }}
	ticks := make(chan time.Time)
	m := &metrics.Subtask{Task: "slow", Operators: []*metrics.Operator{metrics.NewOperator("slow", "slow")}}
	st := New(Spec{ID: opCtx.Subtask, Mode: ExactlyOnce, Gate: gate, Storage: fs, Reports: make(chan Report, 16),
		Mail: make(chan Mail, 4), Now: time.Now, Ticks: ticks, Metrics: m,
		Debloat: debloat.Options{Enabled: true, Target: time.Nanosecond, Period: time.Nanosecond, MaxBatch: 256},
		Chain:   []ChainedOperator{{UID: "slow", Op: &slowOp{}, Ctx: opCtx}}})
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	w := NewRecordWriter(ctx, []*OutChannel{gate.Channel(0)}, Forward{}, 256)
	if w.limit(0) != 256 {
		t.Fatalf("before any announcement the batch limit is %d, want the writer's 256", w.limit(0))
	}
	if err := gate.Channel(0).Send(ctx, event.Batch{Records: recs(1, 2, 3, 4, 5)}); err != nil {
		t.Fatal(err)
	}
	for gate.Buffered() > 0 {
		time.Sleep(time.Millisecond)
	}
	ticks <- time.Now()
	ticks <- time.Now() // the first tick's work is done once the second is taken
	if got := m.DebloatedBufferSize.Load(); got != 1 {
		t.Errorf("debloatedBufferSize = %d, want 1", got)
	}
	if w.limit(0) != 1 {
		t.Errorf("the writer's batch limit is %d, want the announced 1", w.limit(0))
	}
	w.Emit(event.Record{Value: 6})
	if len(w.bufs[0]) != 0 || w.sent != 1 {
		t.Errorf("after one record the writer holds %d and sent %d, want the batch of 1 sent", len(w.bufs[0]), w.sent)
	}
	cancel()
	<-done
}
