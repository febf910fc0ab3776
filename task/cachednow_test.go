package task

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// nowLogger logs the processing time it reads for each record.
type nowLogger struct {
	operator.Base
	seen []int64
}

func (n *nowLogger) ProcessElement(r event.Record) error {
	n.seen = append(n.seen, n.Ctx.Now())
	return nil
}

// TestCachedNowDroppedPerBatch: an operator reading processing time for
// every record shares a reading of the clock across at most
// operator.CachedNowReads records, and never across two input batches.
func TestCachedNowDroppedPerBatch(t *testing.T) {
	in := NewInputGate([]int{0}, 8)
	reports, mail := make(chan Report, 16), make(chan Mail, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reads int64 // the clock: each reading is the next number
	cached := operator.NewCachedNow(func() int64 { reads++; return reads })
	op := &nowLogger{}
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "now", Index: 0}, UID: "now", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: cached.Now, CachedNow: cached}
	st := New(Spec{ID: opCtx.Subtask, Mode: AtMostOnce, Gate: in, Reports: reports, Mail: mail, Now: time.Now,
		Chain: []ChainedOperator{{UID: "now", Op: op, Ctx: opCtx}}})
	batch := func(n int) event.Batch {
		rs := make([]event.Record, n)
		for i := range rs {
			rs[i] = event.Record{Value: i, Timestamp: event.NoTimestamp}
		}
		return event.Batch{Records: rs}
	}
	for _, b := range []event.Batch{batch(operator.CachedNowReads + 4), batch(3), {Control: event.Control{Kind: event.KindEndOfInput}}} {
		if err := in.Channel(0).Send(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	runToEnd(t, ctx, st)
	var want []int64
	for range operator.CachedNowReads {
		want = append(want, 1)
	}
	want = append(want, 2, 2, 2, 2, 3, 3, 3)
	if !slices.Equal(op.seen, want) {
		t.Errorf("readings per record %v, want %v", op.seen, want)
	}
}

// tickReader reads processing time for each record and in a
// processing-time callback, and says when it did.
type tickReader struct {
	operator.Base
	seen, fired []int64
	done        chan string
}

func (r *tickReader) Open(ctx *operator.Context) error {
	if err := r.Base.Open(ctx); err != nil {
		return err
	}
	ctx.ProcessingTime.RegisterTimer(0, func(event.Timestamp) error {
		r.fired = append(r.fired, r.Ctx.Now())
		r.done <- "fired"
		return nil
	})
	return nil
}

func (r *tickReader) ProcessElement(event.Record) error {
	r.seen = append(r.seen, r.Ctx.Now())
	r.done <- "record"
	return nil
}

// TestCachedNowDroppedBeforeTimers: a processing-time tick drops the
// reading before it runs the callbacks due, so a callback never reads a
// time older than the tick's (a window placed by that time would belong
// to one that already fired).
func TestCachedNowDroppedBeforeTimers(t *testing.T) {
	in := NewInputGate([]int{0}, 8)
	reports, mail, ticks := make(chan Report, 16), make(chan Mail, 4), make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reads int64
	cached := operator.NewCachedNow(func() int64 { reads++; return reads })
	op := &tickReader{done: make(chan string, 4)}
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "tick", Index: 0}, UID: "tick", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: cached.Now, CachedNow: cached}
	st := New(Spec{ID: opCtx.Subtask, Mode: AtMostOnce, Gate: in, Reports: reports, Mail: mail, Now: time.Now,
		Ticks: ticks, Chain: []ChainedOperator{{UID: "tick", Op: op, Ctx: opCtx}}})
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	wait := func(want string) {
		t.Helper()
		select {
		case got := <-op.done:
			if got != want {
				t.Fatalf("%s, want %s first", got, want)
			}
		case <-time.After(10 * time.Second): // a failure guard, not a timing assertion
			t.Fatalf("no %s", want)
		}
	}
	if err := in.Channel(0).Send(ctx, event.Batch{Records: []event.Record{{Value: 1, Timestamp: event.NoTimestamp}}}); err != nil {
		t.Fatal(err)
	}
	wait("record")
	ticks <- time.Now()
	wait("fired")
	if err := in.Channel(0).Send(ctx, event.Batch{Control: event.Control{Kind: event.KindEndOfInput}}); err != nil {
		t.Fatal(err)
	}
	waitExit(t, done)
	if !slices.Equal(op.seen, []int64{1}) || !slices.Equal(op.fired, []int64{2}) {
		t.Errorf("the record read %v, the callback %v; want [1] and a new reading, [2]", op.seen, op.fired)
	}
}

// runToEnd runs st until it exits at the end of its input.
func runToEnd(t *testing.T, ctx context.Context, st *Subtask) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	waitExit(t, done)
}

// waitExit waits for a subtask's Run to return, and fails on its error.
func waitExit(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a failure guard, not a timing assertion
		t.Fatal("the subtask did not exit at the end of its input")
	}
}
