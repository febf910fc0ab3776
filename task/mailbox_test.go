package task

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// paced processes record k only once the sender has sent record k+ahead,
// so a subtask reading ahead always has batches queued while the input
// lasts; it notes how many records it had processed when a checkpoint
// completion reached it.
type paced struct {
	operator.Base
	sent        *atomic.Int64
	ahead, last int64
	processed   int64
	atNotify    atomic.Int64
}

func (p *paced) ProcessElement(r event.Record) error {
	want := min(int64(r.Value.(int))+p.ahead, p.last)
	for p.sent.Load() < want {
		time.Sleep(50 * time.Microsecond)
	}
	p.processed++
	return nil
}

func (p *paced) NotifyCheckpointComplete(event.CheckpointID) error {
	p.atNotify.CompareAndSwap(-1, p.processed)
	return nil
}

// A subtask that reads ahead (unaligned checkpoints) takes its mail while
// its queues are never empty: a completed checkpoint's notification is
// handled after a record or two, not once the input runs dry (before, the
// loop only looked at its mailbox and ticks when it had nothing queued, so
// a back-pressured sink never committed and its timers never fired).
func TestReadAheadSubtaskTakesMailUnderSteadyInput(t *testing.T) {
	const n, credits = 200, 4
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gate := NewInputGate([]int{0}, credits)
	var sent atomic.Int64
	op := &paced{sent: &sent, ahead: credits - 1, last: n}
	op.atNotify.Store(-1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "paced", Index: 0}, UID: "paced", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: func() int64 { return time.Now().UnixMilli() }}
	mail := make(chan Mail, 4)
	mail <- Mail{Kind: MailComplete, ID: 1}
	st := New(Spec{ID: opCtx.Subtask, Mode: ExactlyOnce, Unaligned: true, Gate: gate, Storage: fs,
		Reports: make(chan Report, 16), Mail: mail, Now: time.Now,
		Chain: []ChainedOperator{{UID: "paced", Op: op, Ctx: opCtx}}})
	sendDone := make(chan error, 1)
	go func() {
		for v := 1; v <= n; v++ {
			if err := gate.Channel(0).Send(ctx, event.Batch{Records: recs(v)}); err != nil {
				sendDone <- err
				return
			}
			sent.Store(int64(v))
		}
		sendDone <- nil
	}()
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	if err := <-sendDone; err != nil {
		t.Fatal(err)
	}
	for gate.Buffered() > 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := op.atNotify.Load(); got < 0 || got > 2 {
		t.Fatalf("the completion of checkpoint 1 was handled after %d of %d records, want after at most 2", got, n)
	}
}
