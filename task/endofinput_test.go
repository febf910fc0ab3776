package task

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// finisher passes records on and logs the calls the end of a bounded job
// makes; its Finish emits "flushed", as operators that hold output until
// the end of input (a sink's writer, a mini-batch) do.
type finisher struct {
	operator.Base
	log []string
}

func (f *finisher) ProcessElement(r event.Record) error {
	f.Ctx.Output.Collect(r)
	return nil
}

func (f *finisher) Finish() error {
	f.log = append(f.log, "finish")
	f.Ctx.Output.Collect(event.Record{Value: "flushed", Timestamp: event.NoTimestamp})
	return nil
}

func (f *finisher) PrepareSnapshotPreBarrier(id event.CheckpointID) error {
	f.log = append(f.log, fmt.Sprintf("prepare %d", id))
	return nil
}

// TestFinishBeforeFinalSnapshotAtLastEndOfInput: the final checkpoint's
// barrier arrives on channel 0 (after its end of input) while channel 1
// still delivers data, and channel 1's end of input completes the
// alignment (an ended channel counts as arrived). The chain must finish
// before it snapshots: the final checkpoint is the last one, so what
// Finish does (a sink's writer committing everything at the end of input,
// an operator's flushed output) must be in it and before its barrier
// downstream. Finished after the snapshot, a filesystem sink's partitions
// never got their _SUCCESS (TestPartitionedParquetExactlyOnce, 1 run in
// 20-30 on a loaded machine, when one upstream subtask lagged).
func TestFinishBeforeFinalSnapshotAtLastEndOfInput(t *testing.T) {
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := NewInputGate([]int{0, 0}, 4), NewInputGate([]int{0}, 64)
	reports, mail := make(chan Report, 16), make(chan Mail, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := &finisher{}
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "fin", Index: 0}, UID: "fin", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: func() int64 { return time.Now().UnixMilli() }}
	w := NewRecordWriter(ctx, []*OutChannel{out.Channel(0)}, Forward{}, 256)
	st := New(Spec{ID: opCtx.Subtask, Mode: ExactlyOnce, Gate: in, Writers: []*RecordWriter{w}, Storage: fs,
		Reports: reports, Mail: mail, Now: time.Now, Chain: []ChainedOperator{{UID: "fin", Op: op, Ctx: opCtx}}})
	send := func(ch int, b event.Batch) {
		if err := in.Channel(ch).Send(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	final := event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 1, Final: true}}
	endOfInput := event.Control{Kind: event.KindEndOfInput}
	// Queued before Run: the subtask admits all of it at once and takes
	// the channels in turn (NextHeld), so channel 0's barrier is handled
	// before channel 1's end of input, whichever channel it starts with.
	send(0, event.Batch{Control: endOfInput})
	send(0, event.Batch{Control: final})
	send(1, event.Batch{Records: []event.Record{{Value: "a", Timestamp: event.NoTimestamp}}})
	send(1, event.Batch{Records: []event.Record{{Value: "b", Timestamp: event.NoTimestamp}}})
	send(1, event.Batch{Control: endOfInput})
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	waitAck(t, reports)
	send(1, event.Batch{Control: final}) // channel 1's own barrier, behind its end of input
	mail <- Mail{Kind: MailComplete, ID: 1}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a failure guard, not a timing assertion
		t.Fatal("the subtask did not exit after its final checkpoint completed")
	}
	if want := []string{"finish", "prepare 1"}; !slices.Equal(op.log, want) {
		t.Errorf("operator calls %q, want %q", op.log, want)
	}
	var got []string
	for len(out.inbox) > 0 {
		got = append(got, outputs(<-out.inbox)...)
	}
	if want := []string{"a", "b", "flushed", "end of input", "barrier 1"}; !slices.Equal(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
}
