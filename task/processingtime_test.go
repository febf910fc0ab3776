package task

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
)

// tickHarness runs one subtask with one input channel on its own
// goroutine, with a fake clock and explicit wake-ups, and records its
// output: record values, and "barrier N".
type tickHarness struct {
	t       *testing.T
	clock   atomic.Int64 // ms
	ticks   chan time.Time
	in, out *InputGate
	st      *Subtask
	reports chan Report
	cancel  context.CancelFunc
	done    chan error
}

func startTickHarness(t *testing.T, op operator.Operator, keyed bool) *tickHarness {
	t.Helper()
	return startHarness(t, op, keyed, false)
}

// startHarness is startTickHarness, or with realTime a harness on the
// real clock whose subtask wakes by itself (no Spec.Ticks, no metrics):
// tick and the clock are then not used.
func startHarness(t *testing.T, op operator.Operator, keyed, realTime bool) *tickHarness {
	t.Helper()
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &tickHarness{t: t, ticks: make(chan time.Time), in: NewInputGate([]int{0}, 4),
		out: NewInputGate([]int{0}, 64), reports: make(chan Report, 64), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	t.Cleanup(h.stop)
	id := event.SubtaskID{Vertex: "timed", Index: 0}
	opCtx := &operator.Context{Subtask: id, UID: "timed", Parallelism: 1, MaxParallelism: 128,
		Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(), Now: h.clock.Load}
	now, ticks := func() time.Time { return time.UnixMilli(h.clock.Load()) }, (<-chan time.Time)(h.ticks)
	if realTime {
		now, ticks = time.Now, nil
		opCtx.Now = func() int64 { return time.Now().UnixMilli() }
	}
	if keyed {
		kb, err := heap.New(heap.Options{KeyGroupRange: keygroup.RangeFor(128, 1, 0), MaxParallelism: 128,
			KeyCodec: state.AnyCodec{}, Clock: opCtx.Now})
		if err != nil {
			t.Fatal(err)
		}
		opCtx.Keyed, opCtx.KeySelector = kb, func(v any) any { return v }
		opCtx.Timers = operator.NewTimerService(kb, state.AnyCodec{}, 128)
	}
	w := NewRecordWriter(ctx, []*OutChannel{h.out.Channel(0)}, Forward{}, 256)
	h.st = New(Spec{ID: id, Mode: ExactlyOnce, Gate: h.in, Writers: []*RecordWriter{w}, Storage: fs,
		Reports: h.reports, Mail: make(chan Mail, 1), Ticks: ticks, Now: now,
		Chain: []ChainedOperator{{UID: "timed", Op: op, Ctx: opCtx}}})
	go func() { h.done <- h.st.Run(ctx) }()
	return h
}

// tick sets the clock and wakes the subtask. It returns when the wake-up
// has been handled and what it emitted flushed: the subtask takes the
// second tick only then (and it finds nothing more due).
func (h *tickHarness) tick(ms int64) {
	h.clock.Store(ms)
	h.ticks <- time.Time{}
	h.ticks <- time.Time{}
}

func (h *tickHarness) send(b event.Batch) {
	if err := h.in.Channel(0).Send(context.Background(), b); err != nil {
		h.t.Fatal(err)
	}
}

// expect waits for the subtask's next outputs and checks they are want,
// then that nothing else is there yet.
func (h *tickHarness) expect(want ...string) {
	h.t.Helper()
	var got []string
	timeout := time.After(10 * time.Second) // a failure guard, not a timing assertion
	for len(got) < len(want) {
		select {
		case e := <-h.out.inbox:
			got = append(got, outputs(e)...)
			h.out.Recycle(e.Channel, len(e.Batch.Records))
		case <-timeout:
			h.t.Fatalf("got %q, still waiting for %q", got, want[len(got):])
		}
	}
	for len(h.out.inbox) > 0 {
		e := <-h.out.inbox
		got = append(got, outputs(e)...)
		h.out.Recycle(e.Channel, len(e.Batch.Records))
	}
	if !slices.Equal(got, want) {
		h.t.Fatalf("output %q, want %q", got, want)
	}
}

func outputs(e Envelope) []string {
	var out []string
	for _, r := range e.Batch.Records {
		out = append(out, fmt.Sprint(r.Value))
	}
	switch c := e.Batch.Control; c.Kind {
	case event.KindBarrier:
		out = append(out, fmt.Sprintf("barrier %d", c.Barrier.ID))
	case event.KindEndOfInput:
		out = append(out, "end of input")
	}
	return out
}

// stop cancels the subtask and waits until Run has returned.
func (h *tickHarness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	<-h.done
}

// timed uses processing-time callbacks: at Open it registers "open" at
// 100, one it cancels at 100 and "never" at 1000; it forwards each record v
// as "in v" and emits "late v" 50 ms later. Each callback logs itself and
// whether it ran on the goroutine that opened the operator: the subtask's.
type timed struct {
	operator.Base
	goroutine string
	log       []string
}

func (o *timed) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.goroutine = goroutineID()
	ctx.ProcessingTime.RegisterTimer(100, o.callback("open"))
	ctx.ProcessingTime.RegisterTimer(100, o.callback("cancelled")).Cancel()
	ctx.ProcessingTime.RegisterTimer(1000, o.callback("never"))
	return nil
}

func (o *timed) callback(name string) operator.ProcessingTimeCallback {
	return func(now event.Timestamp) error {
		o.log = append(o.log, fmt.Sprintf("%s@%d own-goroutine=%v", name, now, goroutineID() == o.goroutine))
		o.Ctx.Output.Collect(event.Record{Value: name, Timestamp: event.NoTimestamp})
		return nil
	}
}

func (o *timed) ProcessElement(r event.Record) error {
	v := r.Value.(string)
	o.Ctx.Output.Collect(event.Record{Value: "in " + v, Timestamp: r.Timestamp})
	o.Ctx.ProcessingTime.RegisterTimer(o.Ctx.Now()+50, o.callback("late "+v))
	return nil
}

// goroutineID is the id of the calling goroutine ("goroutine N [...").
func goroutineID() string {
	b := make([]byte, 64)
	return strings.Fields(string(b[:runtime.Stack(b, false)]))[1]
}

// A callback runs once, at its time, on the subtask's goroutine, and emits
// through the operator's Output like ProcessElement: in mailbox order, so
// one that runs after a barrier was forwarded lands after the barrier. A
// cancelled callback never runs, and none runs once the subtask stopped.
func TestProcessingTimeCallbacks(t *testing.T) {
	op := &timed{}
	h := startTickHarness(t, op, false)
	h.tick(99)
	h.expect()
	h.tick(100)
	h.expect("open")
	h.tick(120)
	h.expect()

	h.send(event.Batch{Records: []event.Record{{Value: "x", Timestamp: event.NoTimestamp}},
		Control: event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 1}}})
	h.expect("in x", "barrier 1")
	waitAck(t, h.reports)
	h.tick(169)
	h.expect()
	h.tick(170)
	h.expect("late x")

	h.stop()
	if want := []string{"open@100 own-goroutine=true", "late x@170 own-goroutine=true"}; !slices.Equal(op.log, want) {
		t.Fatalf("callbacks ran %q, want %q", op.log, want)
	}
	// Stopping dropped "never"; nothing registers or runs any more.
	pts := h.st.pts
	pts.RegisterTimer(0, op.callback("after stop"))
	if err := pts.Advance(5000); err != nil || pts.Len() != 0 || len(op.log) != 2 {
		t.Fatalf("after stop: Advance %v, %d callbacks waiting, log %q", err, pts.Len(), op.log)
	}
}

// At the end of input processing time is quiesced before the operators
// finish (Flink's quiesceTimeServiceAndFinishOperator): a callback still
// waiting then never runs, so nothing follows the end-of-input marker.
func TestProcessingTimeQuiescedAtEndOfInput(t *testing.T) {
	op := &timed{}
	h := startTickHarness(t, op, false)
	h.tick(100)
	h.expect("open")
	h.send(event.Batch{Records: []event.Record{{Value: "y", Timestamp: event.NoTimestamp}},
		Control: event.Control{Kind: event.KindEndOfInput}})
	h.expect("in y", "end of input")
	h.tick(150) // "late y" would be due now
	h.tick(5000)
	h.expect()
	h.stop()
	if want := []string{"open@100 own-goroutine=true"}; !slices.Equal(op.log, want) {
		t.Fatalf("callbacks ran %q, want %q", op.log, want)
	}
}

// timerFn registers a processing-time timer 30 ms after each element of
// its key, and emits "fired KEY@TS" when it fires.
type timerFn struct{}

func (timerFn) Open(*operator.Context) error { return nil }
func (timerFn) ProcessElement(_ any, kc *operator.KeyedContext, _ *operator.Collector) error {
	kc.RegisterProcessingTimeTimer(kc.CurrentProcessingTime() + 30)
	return nil
}
func (timerFn) OnTimer(t operator.Timer, kc *operator.KeyedContext, out *operator.Collector) error {
	out.Collect(fmt.Sprintf("fired %v@%d", kc.Key, t.Timestamp))
	return nil
}

// Keyed processing-time timers fire through the same wake-up.
func TestKeyedProcessingTimeTimers(t *testing.T) {
	h := startTickHarness(t, &operator.KeyedProcess{Fn: timerFn{}}, true)
	h.tick(100)
	h.send(event.Batch{Records: []event.Record{{Value: "a", Timestamp: event.NoTimestamp}},
		Control: event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 1}}})
	h.expect("barrier 1") // the barrier shows the record was processed
	h.tick(110)
	h.send(event.Batch{Records: []event.Record{{Value: "b", Timestamp: event.NoTimestamp}},
		Control: event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 2}}})
	h.expect("barrier 2")
	h.tick(129)
	h.expect()
	h.tick(145) // one late wake-up fires every timer due
	h.expect("fired a@130", "fired b@140")
	h.tick(1000)
	h.expect()
}
