package task

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
)

// TestBarrierOfBackPressuredSourceReachesIdleChannel: an aligned source
// subtask (exactly once, no unaligned checkpoints) sends 0..39 in batches
// of 4 on channel 0, whose receiver processes nothing: its 2 credits are
// taken and the rest waits. Channel 1 carries no data. A checkpoint
// triggered now is taken at once — the source serves its mailbox while its
// output waits for a credit — and its barrier reaches channel 1's receiver
// while no credit of channel 0 has come back; on channel 0 it stays in
// order, behind all 40 records, as an aligned barrier. (The source used to
// wait for channel 0's credit in its send, reading no mail, and then sent
// the barrier channel by channel, each send waiting for a credit.)
func TestBarrierOfBackPressuredSourceReachesIdleChannel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	busy, idle := receiverGate("busy"), receiverGate("idle")
	_, reports, mail, done := runCountSource(ctx, t, Spec{Now: time.Now}, busy, idle)
	mail <- Mail{Kind: MailTrigger, Barrier: event.CheckpointBarrier{ID: 1, Timestamp: event.Timestamp(time.Now().UnixMilli())}}
	ack := waitAck(t, reports)
	if got := envelopeInts(nextEnvelope(t, idle)); got != "barrier 1" {
		t.Errorf("idle channel's receiver got %s, want barrier 1", got)
	}
	if n := len(busy.inbox); n != 2 {
		t.Errorf("busy channel's inbox holds %d envelopes, want the 2 batches in flight", n)
	}
	if m := ack.Ack.Metrics; m.Unaligned || m.PersistedBytes != 0 {
		t.Errorf("metrics %+v: want aligned, nothing persisted", m)
	}
	var got []string
	for len(got) < 11 {
		e := nextEnvelope(t, busy)
		got = append(got, envelopeInts(e))
		busy.recycle(e)
	}
	want := []string{"[0 1 2 3]", "[4 5 6 7]", "[8 9 10 11]", "[12 13 14 15]", "[16 17 18 19]", "[20 21 22 23]",
		"[24 25 26 27]", "[28 29 30 31]", "[32 33 34 35]", "[36 37 38 39]", "barrier 1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("busy channel's receiver got %v, want %v", got, want)
	}
	cancel()
	<-done
}

// TestTimedOutBarrierOfBackPressuredSource: the same source with an
// aligned timeout of 50 ms. Its barrier starts aligned: it reaches the idle
// channel's receiver in order at once and waits in the busy channel's
// queue, and nothing is acknowledged. Once the timeout passed it leaves
// the busy channel as a priority event, and the checkpoint acknowledges
// unaligned, with the 32 records it overtook there as the busy receiver's
// output channel state and none for the idle one. (This also covers a
// source with one channel, which TestQueuedBarrierTimesOut tested.)
func TestTimedOutBarrierOfBackPressuredSource(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clock atomic.Int64
	t0 := time.UnixMilli(1_000_000)
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	ticks := make(chan time.Time)
	tickAt := func(d time.Duration) {
		clock.Store(t0.Add(d).UnixNano())
		ticks <- now() // unbuffered: taken by the loop, which then finishes the previous step
		ticks <- now()
	}
	busy, idle := receiverGate("busy"), receiverGate("idle")
	spec := Spec{Now: now, Ticks: ticks, Unaligned: true, AlignedTimeout: 50 * time.Millisecond}
	fs, reports, mail, done := runCountSource(ctx, t, spec, busy, idle)
	mail <- Mail{Kind: MailTrigger, Barrier: event.CheckpointBarrier{ID: 1, Timestamp: event.Timestamp(t0.UnixMilli())}}
	if got := envelopeInts(nextEnvelope(t, idle)); got != "barrier 1" {
		t.Errorf("idle channel's receiver got %s, want barrier 1 (aligned, in order)", got)
	}
	tickAt(10 * time.Millisecond)
	for len(reports) > 0 {
		if r := <-reports; r.Kind == ReportAck {
			t.Fatalf("acknowledged before the aligned timeout, its barrier still queued: %+v", r.Ack.Metrics)
		}
	}
	if n := len(busy.inbox); n != 2 {
		t.Fatalf("busy channel's inbox holds %d envelopes before the timeout, want the 2 batches in flight", n)
	}
	tickAt(60 * time.Millisecond)
	ack := waitAck(t, reports)
	var got []string
	for range 3 {
		got = append(got, envelopeInts(nextEnvelope(t, busy)))
	}
	if want := "[[0 1 2 3] [4 5 6 7] priority barrier 1]"; fmt.Sprint(got) != want {
		t.Errorf("busy channel's receiver got %v, want %v", got, want)
	}
	if m := ack.Ack.Metrics; !m.Unaligned || m.PersistedOutputBytes == 0 {
		t.Errorf("metrics %+v: want unaligned, with output channel state", m)
	}
	if rs := outputStateFor(t, fs, ack, "busy"); fmt.Sprint(rs) != fmt.Sprint(seq(8, 40)) {
		t.Errorf("output channel state for the busy receiver: %v, want %v", rs, seq(8, 40))
	}
	if rs := outputStateFor(t, fs, ack, "idle"); len(rs) != 0 {
		t.Errorf("output channel state for the idle receiver: %v, want none", rs)
	}
	cancel()
	<-done
}

// nextEnvelope takes the next envelope from g's inbox (a bound on the
// wait, not on speed).
func nextEnvelope(t *testing.T, g *InputGate) Envelope {
	t.Helper()
	select {
	case e := <-g.inbox:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("nothing reaches the receiver")
		return Envelope{}
	}
}

// TestPriorityBarrierAfterAlignedTimeoutOvertakes: a receiver with an
// aligned timeout of 50 ms aligns checkpoint 1 (its barrier came on
// channel 1 10 ms after the trigger) and is processing [1 2 3 4] of
// channel 0, with [5 6] waiting, when channel 0's barrier comes as a
// priority event 60 ms after the trigger — its sender's timeout passed —,
// before any tick told the receiver that its own alignment timed out. The
// barrier still overtakes, between records 1 and 2: the snapshot holds 1,
// and 2..6 are input channel state. (Judged while the alignment still
// looked aligned, it waited behind [5 6] with its channel's priority slot
// taken; the sender's next timed-out barrier waited for that slot.)
func TestPriorityBarrierAfterAlignedTimeoutOvertakes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clock atomic.Int64
	t0 := time.UnixMilli(1_000_000)
	at := func(d time.Duration) { clock.Store(t0.Add(d).UnixNano()) }
	at(10 * time.Millisecond)
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	spec := Spec{Now: now, Ticks: make(chan time.Time), AlignedTimeout: 50 * time.Millisecond}
	fs, gate, rec, reports, done := runPausingReceiver(ctx, t, spec)
	b := event.Control{Kind: event.KindBarrier, Barrier: event.CheckpointBarrier{ID: 1, Timestamp: event.Timestamp(t0.UnixMilli())}}
	mustSend(ctx, t, gate.Channel(1), event.Batch{Control: b})
	waitAligning(t, reports)
	mustSend(ctx, t, gate.Channel(0), event.Batch{Records: recs(1, 2, 3, 4)})
	<-rec.paused
	mustSend(ctx, t, gate.Channel(0), event.Batch{Records: recs(5, 6)})
	at(60 * time.Millisecond)
	if err := gate.Channel(0).sendPriority(ctx, nil, b); err != nil {
		t.Fatal(err)
	}
	close(rec.resume)
	ack := waitAck(t, reports)
	if !ack.Ack.Metrics.Unaligned {
		t.Errorf("metrics %+v: want unaligned", ack.Ack.Metrics)
	}
	if got := seenIn(t, fs, ack); !equal(got, []int{1}) {
		t.Errorf("snapshot holds %v, want [1]", got)
	}
	if got := inputStateOf(t, fs, ack, "rec"); !equal(got, []int{2, 3, 4, 5, 6}) {
		t.Errorf("input channel state %v, want [2 3 4 5 6]", got)
	}
	cancel()
	<-done
}

func mustSend(ctx context.Context, t *testing.T, c *OutChannel, b event.Batch) {
	t.Helper()
	if err := c.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
}

// waitAligning waits for the report that an alignment began (a bound on
// the wait, not on speed).
func waitAligning(t *testing.T, reports chan Report) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case r := <-reports:
			if r.Kind == ReportProgress && r.Phase == checkpoint.PhaseAlignment {
				return
			}
		case <-timeout:
			t.Fatal("no alignment began")
		}
	}
}
