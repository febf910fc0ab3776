package task

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// TestOutputQueue runs the scripts in testdata/output_queue: one sender's
// record writer with queued output (unaligned checkpoints) over the
// channels of one receiving gate, stepped by hand. Commands:
//
//	new channels=N credits=C batch=B    a writer and a gate
//	emit ch=C values=a,b,...            records for channel C
//	flush                               the writer's partly filled batches
//	barrier id=I [aligned]              a barrier: a priority event that
//	                                    overtakes the queues (prints what it
//	                                    overtook), or in order with the data
//	receive [n=K]                       the receiver takes K envelopes
//	                                    (default all) from its inbox, in order
//	process ch=C                        the receiver processes the oldest
//	                                    envelope it took from channel C: its
//	                                    credit (or priority slot) returns,
//	                                    and the writer sends what it can
//	state                               per channel: queue, free credits,
//	                                    priority slot; envelopes in the inbox
//
// Every command but state prints the state after it.
func TestOutputQueue(t *testing.T) {
	datadriven.Walk(t, "testdata/output_queue", func(t *testing.T, path string) {
		h := &queueHarness{}
		datadriven.RunTest(t, path, h.run)
	})
}

type queueHarness struct {
	gate  *InputGate
	w     *RecordWriter
	taken [][]Envelope // per channel, envelopes received and not processed
}

// toChannel sends a record to the channel its value names ("2:x" → 2).
type toChannel struct{}

func (toChannel) Select(r event.Record, _ int) int {
	ch, _, _ := strings.Cut(r.Value.(string), ":")
	n, _ := strconv.Atoi(ch)
	return n
}

func (h *queueHarness) run(t *testing.T, td *datadriven.TestData) string {
	var out strings.Builder
	switch td.Cmd {
	case "new":
		var n, credits, batch int
		td.ScanArgs(t, "channels", &n)
		td.ScanArgs(t, "credits", &credits)
		td.ScanArgs(t, "batch", &batch)
		h.gate = NewInputGate(make([]int, n), credits)
		chans := make([]*OutChannel, n)
		for i := range chans {
			chans[i] = h.gate.Channel(i)
		}
		h.w = NewRecordWriter(context.Background(), chans, toChannel{}, batch)
		h.w.queued = true
		h.taken = make([][]Envelope, n)
	case "emit":
		var ch int
		var vals string
		td.ScanArgs(t, "ch", &ch)
		td.ScanArgs(t, "values", &vals)
		for _, v := range strings.Split(vals, ",") {
			h.w.Emit(event.Record{Value: fmt.Sprintf("%d:%s", ch, v)})
		}
	case "flush":
		h.w.Flush()
	case "barrier":
		h.barrier(t, td, &out)
	case "receive":
		h.receive(t, td, &out)
	case "process":
		var ch int
		td.ScanArgs(t, "ch", &ch)
		if len(h.taken[ch]) == 0 {
			td.Fatalf(t, "nothing received on channel %d", ch)
		}
		e := h.taken[ch][0]
		h.taken[ch] = h.taken[ch][1:]
		h.gate.recycle(e)
		for _, c := range h.w.channels {
			c.push()
		}
	case "state":
	default:
		td.Fatalf(t, "unknown command %s", td.Cmd)
	}
	if err := h.w.Err(); err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	h.state(&out)
	return out.String()
}

func (h *queueHarness) barrier(t *testing.T, td *datadriven.TestData, out *strings.Builder) {
	var id int
	td.ScanArgs(t, "id", &id)
	b := event.CheckpointBarrier{ID: event.CheckpointID(id)}
	if td.HasArg("aligned") {
		h.w.BroadcastControl(event.Control{Kind: event.KindBarrier, Barrier: b})
		return
	}
	for ch := range h.w.channels {
		if len(h.w.channels[ch].priority) == 0 {
			td.Fatalf(t, "channel %d: priority slot taken, the barrier would wait", ch)
		}
	}
	for ch, rs := range h.w.overtake(b) {
		fmt.Fprintf(out, "overtook ch=%d: %s\n", ch, values(rs))
	}
}

func (h *queueHarness) receive(t *testing.T, td *datadriven.TestData, out *strings.Builder) {
	n := len(h.gate.inbox)
	td.MaybeScanArgs(t, "n", &n)
	for range n {
		select {
		case e := <-h.gate.inbox:
			h.taken[e.Channel] = append(h.taken[e.Channel], e)
			fmt.Fprintf(out, "received %s\n", envelope(e))
		default:
			td.Fatalf(t, "the inbox is empty")
		}
	}
}

func (h *queueHarness) state(out *strings.Builder) {
	for ch, c := range h.w.channels {
		var q []string
		for _, b := range c.queue {
			q = append(q, batch(b))
		}
		slot := "free"
		if len(c.priority) == 0 {
			slot = "taken"
		}
		fmt.Fprintf(out, "ch=%d queue=[%s] credits=%d priority=%s\n", ch, strings.Join(q, " "), len(c.credits), slot)
	}
	fmt.Fprintf(out, "inbox=%d\n", len(h.gate.inbox))
}

func envelope(e Envelope) string {
	s := fmt.Sprintf("ch=%d %s", e.Channel, batch(e.Batch))
	if e.Priority {
		s += " (priority)"
	}
	return s
}

func batch(b event.Batch) string {
	s := "(" + values(b.Records)
	switch b.Control.Kind {
	case event.KindBarrier:
		s += fmt.Sprintf(" |barrier %d", b.Control.Barrier.ID)
	case event.KindNone:
	default:
		s += fmt.Sprintf(" |control %d", b.Control.Kind)
	}
	return s + ")"
}

func values(rs []event.Record) string {
	var vs []string
	for _, r := range rs {
		_, v, _ := strings.Cut(r.Value.(string), ":")
		vs = append(vs, v)
	}
	return strings.Join(vs, ",")
}

// runQueuedSource runs a source subtask with unaligned checkpoints (and
// spec's Now, Ticks and AlignedTimeout) that emits 0..39 in batches of 4
// towards a gate with 2 credits that nobody reads, and waits until both
// credits are taken.
func runQueuedSource(ctx context.Context, t *testing.T, spec Spec) (*checkpointstorage.FS, *InputGate, chan Report, chan Mail, chan error) {
	t.Helper()
	gate := receiverGate("down")
	spec.Unaligned = true
	fs, reports, mail, done := runCountSource(ctx, t, spec, gate)
	return fs, gate, reports, mail, done
}

// receiverGate is the gate of a receiving subtask (vertex, subtask 0 of
// 1) with one channel of 2 credits.
func receiverGate(vertex string) *InputGate {
	gate := NewInputGate([]int{0}, 2)
	gate.SetTarget(GateTarget{Vertex: vertex, Subtask: 0, Parallelism: 1, EdgeOf: []int{0}})
	return gate
}

// runCountSource runs an exactly-once source subtask (spec's Now, Ticks,
// Unaligned and AlignedTimeout) that emits 0..39 in batches of 4 on the
// first of its output channels, one per gate — the others carry no
// data —, and waits until the first gate's credits are all taken.
func runCountSource(ctx context.Context, t *testing.T, spec Spec, gates ...*InputGate) (*checkpointstorage.FS, chan Report, chan Mail, chan error) {
	t.Helper()
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reports, mail := make(chan Report, 64), make(chan Mail, 4)
	spec.ID, spec.Mode, spec.Parallelism = event.SubtaskID{Vertex: "src", Index: 0}, ExactlyOnce, 1
	spec.Source = &SourceSpec{UID: "src", Source: countSource{&countReader{n: 40}}, Parallelism: 1}
	chans := make([]*OutChannel, len(gates))
	for i, g := range gates {
		chans[i] = g.Channel(0)
	}
	spec.Writers = []*RecordWriter{NewRecordWriter(ctx, chans, Forward{}, 4)}
	spec.Storage, spec.Reports, spec.Mail = fs, reports, mail
	st := New(spec)
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	for len(gates[0].inbox) < gates[0].Credits() {
		time.Sleep(time.Millisecond)
	}
	return fs, reports, mail, done
}

// countReader emits the integers below n in one poll, then has nothing more.
type countReader struct {
	n    int
	done bool
}

func (r *countReader) AddSplits([]operator.SplitState) error { return nil }
func (r *countReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.done {
		for i := range r.n {
			out.Collect("s", event.Record{Value: i, Timestamp: event.NoTimestamp})
		}
		r.done = true
	}
	return operator.NothingAvailable, nil
}
func (r *countReader) Available() <-chan struct{} { return make(chan struct{}) }
func (r *countReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (r *countReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *countReader) Close() error                                      { return nil }

type countSource struct{ r *countReader }

func (countSource) Bounded() bool { return false }
func (countSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (s countSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return s.r, nil
}

// TestBarrierOvertakesFullOutputQueue: a source subtask with unaligned
// checkpoints emits 40 records in batches of 4 towards a receiver that
// processes nothing: its 2 credits are taken and 8 batches queue. A
// checkpoint triggered then still acknowledges, and its barrier reaches
// the receiver's inbox right behind the 2 batches in flight, as a priority
// event; the 32 records it overtook are the checkpoint's output channel
// state, in order, addressed to the receiver. (Without output queues the
// subtask waited for a credit in its send, and neither the snapshot nor
// the barrier came before the receiver processed something.)
func TestBarrierOvertakesFullOutputQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, gate, reports, mail, done := runQueuedSource(ctx, t, Spec{Now: time.Now})
	mail <- Mail{Kind: MailTrigger, Barrier: event.CheckpointBarrier{ID: 1, Timestamp: event.Timestamp(time.Now().UnixMilli())}}
	ack := waitAck(t, reports)

	var got []string
	for range 3 {
		select {
		case e := <-gate.inbox:
			got = append(got, envelopeInts(e))
		case <-time.After(10 * time.Second):
			t.Fatalf("the inbox holds only %v", got)
		}
	}
	want := []string{"[0 1 2 3]", "[4 5 6 7]", "priority barrier 1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("inbox: %v, want %v", got, want)
	}
	m := ack.Ack.Metrics
	if !m.Unaligned || m.PersistedOutputBytes == 0 || m.PersistedOutputBytes != m.PersistedBytes {
		t.Errorf("metrics %+v: want unaligned, with only output channel state persisted", m)
	}
	if rs := outputStateFor(t, fs, ack, "down"); fmt.Sprint(rs) != fmt.Sprint(seq(8, 40)) {
		t.Errorf("output channel state for the receiver: %v, want %v", rs, seq(8, 40))
	}
	cancel()
	<-done
}

func envelopeInts(e Envelope) string {
	if e.Priority && e.Batch.Control.Kind == event.KindBarrier {
		return fmt.Sprintf("priority barrier %d", e.Batch.Control.Barrier.ID)
	}
	if len(e.Batch.Records) == 0 && e.Batch.Control.Kind == event.KindBarrier {
		return fmt.Sprintf("barrier %d", e.Batch.Control.Barrier.ID)
	}
	var vs []int
	for _, r := range e.Batch.Records {
		vs = append(vs, r.Value.(int))
	}
	return fmt.Sprint(vs)
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// outputStateFor reads the output channel state an acknowledgement wrote
// for the receiving vertex: the values of its records, in order.
func outputStateFor(t *testing.T, fs *checkpointstorage.FS, ack Report, vertex string) []int {
	t.Helper()
	ts, err := DecodeTaskState(ack.Ack.State)
	if err != nil {
		t.Fatal(err)
	}
	var vs []int
	for _, parts := range ts.Operators {
		h, ok := parts[PartOutputState]
		if !ok {
			continue
		}
		b, err := fs.ReadState(h)
		if err != nil {
			t.Fatal(err)
		}
		byTarget, err := DecodeOutputState(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, blob := range byTarget[vertex] {
			cs, err := DecodeChannelState(blob)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range cs.Records {
				vs = append(vs, p.Record.Value.(int))
			}
		}
	}
	return vs
}

// pausingRecorder is a recorder that, on value pause, says so on paused
// and waits for resume before it records it.
type pausingRecorder struct {
	recorder
	pause          int
	paused, resume chan struct{}
}

func (r *pausingRecorder) ProcessElement(rec event.Record) error {
	if rec.Value.(int) == r.pause {
		r.paused <- struct{}{}
		<-r.resume
	}
	return r.recorder.ProcessElement(rec)
}

// TestPriorityBarrierBetweenRecords: a receiver with unaligned checkpoints
// is processing the batch [1 2 3 4] of channel 0 when the priority barrier
// of channel 1 arrives. It snapshots between records 1 and 2, not after
// the batch: the snapshot holds 1, and 2, 3 and 4 — data of channel 0
// before its barrier, processed after the snapshot — are its input channel
// state, as are the records of channel 0 after the batch and before its
// barrier.
func TestPriorityBarrierBetweenRecords(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, gate, rec, reports, done := runPausingReceiver(ctx, t, Spec{Now: time.Now})
	send := func(ch int, b event.Batch) {
		if err := gate.Channel(ch).Send(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	barrier := event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 1}}
	send(0, event.Batch{Records: recs(1, 2, 3, 4)})
	<-rec.paused
	if err := gate.Channel(1).sendPriority(ctx, nil, barrier); err != nil {
		t.Fatal(err)
	}
	close(rec.resume)
	send(0, event.Batch{Records: recs(5)})
	if err := gate.Channel(0).sendPriority(ctx, nil, barrier); err != nil {
		t.Fatal(err)
	}
	ack := waitAck(t, reports)
	cancel()
	<-done
	if got := seenIn(t, fs, ack); !equal(got, []int{1}) {
		t.Errorf("snapshot holds %v, want [1]", got)
	}
	if got := inputStateOf(t, fs, ack, "rec"); !equal(got, []int{2, 3, 4, 5}) {
		t.Errorf("input channel state %v, want [2 3 4 5]", got)
	}
}

// runPausingReceiver runs a receiving subtask with unaligned checkpoints
// (and spec's Now, Ticks and AlignedTimeout) over 2 channels of 4 credits,
// its chain a pausingRecorder "rec" that pauses on record 1.
func runPausingReceiver(ctx context.Context, t *testing.T, spec Spec) (*checkpointstorage.FS, *InputGate, *pausingRecorder, chan Report, chan error) {
	t.Helper()
	fs, err := checkpointstorage.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gate := NewInputGate([]int{0, 0}, 4)
	reports := make(chan Report, 16)
	opCtx := &operator.Context{Subtask: event.SubtaskID{Vertex: "rec", Index: 0}, UID: "rec", Parallelism: 1,
		MaxParallelism: 128, Metrics: &operator.Metrics{}, OperatorState: heap.NewOperatorBackend(),
		Now: func() int64 { return spec.Now().UnixMilli() }}
	rec := &pausingRecorder{pause: 1, paused: make(chan struct{}), resume: make(chan struct{})}
	spec.ID, spec.Mode, spec.Unaligned, spec.Gate, spec.Storage = opCtx.Subtask, ExactlyOnce, true, gate, fs
	spec.Reports, spec.Mail, spec.Parallelism = reports, make(chan Mail, 4), 1
	spec.Chain = []ChainedOperator{{UID: "rec", Op: rec, Ctx: opCtx}}
	st := New(spec)
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	return fs, gate, rec, reports, done
}

// inputStateOf reads the input channel state an acknowledgement wrote for
// operator uid: the values of its records, in order.
func inputStateOf(t *testing.T, fs *checkpointstorage.FS, ack Report, uid string) []int {
	t.Helper()
	ts, err := DecodeTaskState(ack.Ack.State)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := ts.Operators[uid][PartChannelState]
	if !ok {
		return nil
	}
	blob, err := fs.ReadState(h)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := DecodeChannelState(blob)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range cs.Records {
		got = append(got, p.Record.Value.(int))
	}
	return got
}

// TestTwoQueuedBarriersTimeOut: with an aligned timeout of 50 ms two
// checkpoints' barriers wait in the source's full output queue, barrier 2
// right behind barrier 1 (triggered at 0 and 20 ms). Each is held and
// turned into a priority event on its own timeout, in order: checkpoint 1
// acknowledges at 60 ms (not before, and not checkpoint 2 in its place),
// checkpoint 2 at 80 ms; each overtook the 32 records queued before it.
func TestTwoQueuedBarriersTimeOut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newStepClock()
	fs, gate, reports, mail, done := runQueuedSource(ctx, t, Spec{Now: clk.now, Ticks: clk.ticks, AlignedTimeout: 50 * time.Millisecond})
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(1, 0)})
	clk.tickAt(10 * time.Millisecond)
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(2, 20*time.Millisecond)})
	clk.tickAt(30 * time.Millisecond)
	noAck(t, reports)

	clk.tickAt(60 * time.Millisecond)
	ack1 := waitAck(t, reports)
	if ack1.ID != 1 || !ack1.Ack.Metrics.Unaligned {
		t.Fatalf("first acknowledgement: checkpoint %d (unaligned %v), want 1, unaligned", ack1.ID, ack1.Ack.Metrics.Unaligned)
	}
	noAck(t, reports)
	got := takeInbox(t, gate, 3)
	if want := "[[0 1 2 3] [4 5 6 7] priority barrier 1]"; fmt.Sprint(got) != want {
		t.Errorf("inbox after checkpoint 1 timed out: %v, want %v", got, want)
	}

	clk.tickAt(80 * time.Millisecond)
	ack2 := waitAck(t, reports)
	if ack2.ID != 2 || !ack2.Ack.Metrics.Unaligned {
		t.Fatalf("second acknowledgement: checkpoint %d (unaligned %v), want 2, unaligned", ack2.ID, ack2.Ack.Metrics.Unaligned)
	}
	if got := takeInbox(t, gate, 1); fmt.Sprint(got) != "[priority barrier 2]" {
		t.Errorf("inbox after checkpoint 2 timed out: %v, want [priority barrier 2]", got)
	}
	for _, ack := range []Report{ack1, ack2} {
		if rs := outputStateFor(t, fs, ack, "down"); fmt.Sprint(rs) != fmt.Sprint(seq(8, 40)) {
			t.Errorf("checkpoint %d: output channel state %v, want %v", ack.ID, rs, seq(8, 40))
		}
	}
	cancel()
	<-done
}

// TestQueuedBarrierAbortedKeepsNewer: two checkpoints' barriers wait in the
// source's full output queue; checkpoint 1 is aborted. Checkpoint 2 is
// still held, and acknowledges on its own timeout; checkpoint 1 never does.
func TestQueuedBarrierAbortedKeepsNewer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newStepClock()
	fs, gate, reports, mail, done := runQueuedSource(ctx, t, Spec{Now: clk.now, Ticks: clk.ticks, AlignedTimeout: 50 * time.Millisecond})
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(1, 0)})
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(2, 20*time.Millisecond)})
	clk.tickAt(30 * time.Millisecond)
	post(mail, Mail{Kind: MailAborted, ID: 1})
	clk.tickAt(60 * time.Millisecond)
	noAck(t, reports)

	clk.tickAt(80 * time.Millisecond)
	ack := waitAck(t, reports)
	if ack.ID != 2 || !ack.Ack.Metrics.Unaligned {
		t.Fatalf("acknowledgement: checkpoint %d (unaligned %v), want 2, unaligned", ack.ID, ack.Ack.Metrics.Unaligned)
	}
	// Barrier 1 stays queued in order (the receiver ignores it, older than
	// the barrier 2 it has seen); barrier 2 overtook it.
	if got := takeInbox(t, gate, 3); fmt.Sprint(got) != "[[0 1 2 3] [4 5 6 7] priority barrier 2]" {
		t.Errorf("inbox: %v, want the 2 batches in flight and priority barrier 2", got)
	}
	if rs := outputStateFor(t, fs, ack, "down"); fmt.Sprint(rs) != fmt.Sprint(seq(8, 40)) {
		t.Errorf("output channel state %v, want %v", rs, seq(8, 40))
	}
	cancel()
	<-done
}

// stepClock is a test's clock for a subtask, advanced by hand with a tick
// at each step.
type stepClock struct {
	t0    time.Time
	ns    atomic.Int64
	ticks chan time.Time
}

func newStepClock() *stepClock {
	c := &stepClock{t0: time.UnixMilli(1_000_000), ticks: make(chan time.Time)}
	c.ns.Store(c.t0.UnixNano())
	return c
}

func (c *stepClock) now() time.Time { return time.Unix(0, c.ns.Load()) }

// tickAt moves the clock to d after t0 and ticks twice: the ticks are
// unbuffered, so the second is taken once the loop finished the step of
// the first.
func (c *stepClock) tickAt(d time.Duration) {
	c.ns.Store(c.t0.Add(d).UnixNano())
	c.ticks <- c.now()
	c.ticks <- c.now()
}

// barrier is checkpoint id's barrier, triggered at d after t0.
func (c *stepClock) barrier(id event.CheckpointID, d time.Duration) event.CheckpointBarrier {
	return event.CheckpointBarrier{ID: id, Timestamp: event.Timestamp(c.t0.Add(d).UnixMilli())}
}

// noAck fails if an acknowledgement was reported; it drops other reports.
func noAck(t *testing.T, reports chan Report) {
	t.Helper()
	for len(reports) > 0 {
		if r := <-reports; r.Kind == ReportAck {
			t.Fatalf("unexpected acknowledgement of checkpoint %d: %+v", r.ID, r.Ack.Metrics)
		}
	}
}

// takeInbox takes n envelopes from the gate's inbox and hands their
// credits (or priority slots) back, as a receiver processing them would.
func takeInbox(t *testing.T, gate *InputGate, n int) []string {
	t.Helper()
	var got []string
	for range n {
		select {
		case e := <-gate.inbox:
			got = append(got, envelopeInts(e))
			if e.Priority {
				gate.recycle(e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the inbox holds only %v", got)
		}
	}
	return got
}

// post sends m and waits until the subtask took it: a tick sent after it
// is then taken once the subtask handled it (mail and ticks race in its
// select otherwise).
func post(mail chan Mail, m Mail) {
	mail <- m
	for len(mail) > 0 {
		time.Sleep(time.Millisecond)
	}
}

// TestQueuedBarrierEndOfInput: the source's input ends (drain) while the
// aligned barrier of checkpoint 1 waits in its full output queue, so the
// end of input queues behind it. On the timeout the barrier leaves as a
// priority event and checkpoint 1 acknowledges, unaligned, with the 32
// records before it as output state; the end of input follows them, once.
func TestQueuedBarrierEndOfInput(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newStepClock()
	fs, gate, reports, mail, done := runQueuedSource(ctx, t, Spec{Now: clk.now, Ticks: clk.ticks, AlignedTimeout: 50 * time.Millisecond})
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(1, 0)})
	post(mail, Mail{Kind: MailDrain})
	clk.tickAt(10 * time.Millisecond)
	noAck(t, reports)

	clk.tickAt(60 * time.Millisecond)
	ack := waitAck(t, reports)
	if ack.ID != 1 || !ack.Ack.Metrics.Unaligned {
		t.Fatalf("acknowledgement: checkpoint %d (unaligned %v), want 1, unaligned", ack.ID, ack.Ack.Metrics.Unaligned)
	}
	if rs := outputStateFor(t, fs, ack, "down"); fmt.Sprint(rs) != fmt.Sprint(seq(8, 40)) {
		t.Errorf("output channel state %v, want %v", rs, seq(8, 40))
	}
	got := receiveUntilEnd(t, gate)
	want := "[[0 1 2 3] [4 5 6 7] priority barrier 1 [8 9 10 11] [12 13 14 15] [16 17 18 19] [20 21 22 23] [24 25 26 27] [28 29 30 31] [32 33 34 35] [36 37 38 39] end of input]"
	if fmt.Sprint(got) != want {
		t.Errorf("received %v\nwant     %v", got, want)
	}
	cancel()
	<-done
}

// TestQueuedBarrierLeavesBeforeEndOfInput: as above, but the receiver
// takes everything before the timeout: the barrier of checkpoint 1 leaves
// its queue in order, ahead of the end of input, and checkpoint 1
// acknowledges aligned, with no output state.
func TestQueuedBarrierLeavesBeforeEndOfInput(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newStepClock()
	_, gate, reports, mail, done := runQueuedSource(ctx, t, Spec{Now: clk.now, Ticks: clk.ticks, AlignedTimeout: 50 * time.Millisecond})
	post(mail, Mail{Kind: MailTrigger, Barrier: clk.barrier(1, 0)})
	post(mail, Mail{Kind: MailDrain})
	clk.tickAt(10 * time.Millisecond)
	noAck(t, reports)

	got := receiveUntilEnd(t, gate)
	want := "[[0 1 2 3] [4 5 6 7] [8 9 10 11] [12 13 14 15] [16 17 18 19] [20 21 22 23] [24 25 26 27] [28 29 30 31] [32 33 34 35] [36 37 38 39] barrier 1 end of input]"
	if fmt.Sprint(got) != want {
		t.Errorf("received %v\nwant     %v", got, want)
	}
	ack := waitAck(t, reports)
	if m := ack.Ack.Metrics; ack.ID != 1 || m.Unaligned || m.PersistedOutputBytes != 0 {
		t.Errorf("acknowledgement: checkpoint %d, metrics %+v; want 1, aligned, no output state", ack.ID, m)
	}
	cancel()
	<-done
}

// receiveUntilEnd takes envelopes from the gate's inbox, handing each one's
// credit (or priority slot) back, until the end of input.
func receiveUntilEnd(t *testing.T, gate *InputGate) []string {
	t.Helper()
	var got []string
	for {
		select {
		case e := <-gate.inbox:
			switch c := e.Batch.Control; {
			case c.Kind == event.KindEndOfInput:
				got = append(got, "end of input")
			case c.Kind == event.KindBarrier && !e.Priority:
				got = append(got, fmt.Sprintf("barrier %d", c.Barrier.ID))
			case len(e.Batch.Records) > 0 || e.Priority:
				got = append(got, envelopeInts(e))
			}
			gate.recycle(e) // after reading e: its records are cleared
			if e.Batch.Control.Kind == event.KindEndOfInput {
				return got
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no end of input; received %v", got)
		}
	}
}

// batchReader emits one batch of 4 records per poll, without end.
type batchReader struct {
	countReader
	polls atomic.Int64
}

func (r *batchReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	n := int(r.polls.Add(1))
	for i := range 4 {
		out.Collect("s", event.Record{Value: 4*(n-1) + i, Timestamp: event.NoTimestamp})
	}
	return operator.MoreAvailable, nil
}

// TestOutputQueueLimit: a source with unaligned checkpoints emits a batch
// per poll towards a receiver with 2 credits that processes nothing. It
// polls while its output channel queues fewer than Spec.OutputQueue
// batches (taskmanager.network.memory.max-buffers-per-channel): 2 batches
// in flight plus 1 queued by default, plus 3 with a limit of 3; then it
// waits, back-pressured, and polls no more.
func TestOutputQueueLimit(t *testing.T) {
	for _, tc := range []struct{ limit, polls int64 }{{0, 3}, {1, 3}, {3, 5}} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fs, err := checkpointstorage.OpenFS(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			gate := NewInputGate([]int{0}, 2)
			r := &batchReader{}
			clk := newStepClock()
			st := New(Spec{ID: event.SubtaskID{Vertex: "src"}, Mode: ExactlyOnce, Unaligned: true, Parallelism: 1,
				OutputQueue: int(tc.limit), Now: clk.now, Ticks: clk.ticks, Storage: fs,
				Reports: make(chan Report, 16), Mail: make(chan Mail, 4),
				Source:  &SourceSpec{UID: "src", Source: batchSource{r}, Parallelism: 1},
				Writers: []*RecordWriter{NewRecordWriter(ctx, []*OutChannel{gate.Channel(0)}, Forward{}, 4)}})
			done := make(chan error, 1)
			go func() { done <- st.Run(ctx) }()
			for r.polls.Load() < tc.polls {
				time.Sleep(time.Millisecond)
			}
			clk.tickAt(time.Millisecond) // the loop is past its last poll, waiting
			if n := r.polls.Load(); n != tc.polls {
				t.Errorf("polled %d times, want %d", n, tc.polls)
			}
			if n := len(gate.inbox); n != 2 {
				t.Errorf("inbox holds %d batches, want the 2 credits' worth", n)
			}
			cancel()
			<-done
		})
	}
}

type batchSource struct{ r *batchReader }

func (batchSource) Bounded() bool { return false }
func (batchSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (s batchSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return s.r, nil
}
