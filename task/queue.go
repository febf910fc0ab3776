package task

import (
	"context"
	"slices"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
)

// A subtask that takes checkpoints queues its output (availability-based
// output, as Flink's). Each OutChannel holds the batches that wait for a
// credit of its receiver (Flink's result subpartition), and the subtask's
// goroutine never blocks in a send: it stops processing input while a
// channel's queue is full (Spec.OutputQueue) and meanwhile still serves its
// mailbox, its ticks and, reading ahead, its inbox. So a barrier that reaches
// it — a checkpoint trigger on a back-pressured source, an overtaking barrier
// on an input — is handled at once, and a barrier is put on every channel at
// once: one channel waiting for credits holds up none of the others. An
// aligned barrier queues behind the channel's data; the barrier of an
// unaligned snapshot leaves as a priority event: ahead of the batches queued
// for the channel, without a credit (the channel's priority slot, freed when
// the receiver handled it). The batches it overtook are the checkpoint's
// output channel state (outputstate.go): still sent after the barrier as
// usual, and replayed by the receiver on a restore.

// outQueue is the batches of an output channel waiting for a credit.
type outQueue []event.Batch

// records returns the records of every queued batch, in order.
func (q outQueue) records() []event.Record {
	var rs []event.Record
	for _, b := range q {
		rs = append(rs, b.Records...)
	}
	return rs
}

// enqueue appends b to the channel's queue and sends what credits allow.
func (c *OutChannel) enqueue(b event.Batch) {
	c.queue = append(c.queue, b)
	c.push()
}

// push sends queued batches while the receiver has credits; it never
// waits.
func (c *OutChannel) push() {
	for len(c.queue) > 0 {
		select {
		case <-c.credits:
			c.deliver()
		default:
			return
		}
	}
}

// deliver sends the head of the queue; the caller took its credit.
func (c *OutChannel) deliver() {
	b := c.queue[0]
	c.queue[0] = event.Batch{}
	c.queue = c.queue[1:]
	c.gate.buffered.Add(int64(len(b.Records)))
	// Never blocks: the inbox holds as many envelopes as all its channels
	// have credits and priority slots.
	c.inbox <- Envelope{Channel: c.index, Batch: b}
}

// sendPriority hands ctl to the receiver ahead of everything queued on the
// channel, without a credit. It waits only for the channel's priority slot:
// until the receiver handled the previous priority event.
func (c *OutChannel) sendPriority(ctx context.Context, s clock.Scheduler, ctl event.Control) error {
	select {
	case <-c.priority:
	default:
		slot, done := (<-chan struct{})(c.priority), ctx.Done()
		if s != nil {
			i := clock.Choose(s, clock.Pending(slot), clock.Done(ctx))
			slot, done = clock.Only(i, 0, slot), clock.Only(i, 1, done)
		}
		select {
		case <-slot:
		case <-done:
			return ctx.Err()
		}
	}
	c.inbox <- Envelope{Channel: c.index, Batch: event.Batch{Control: ctl}, Priority: true}
	return nil
}

// drain sends every queued batch, waiting for credits.
func (c *OutChannel) drain(ctx context.Context, s clock.Scheduler) error {
	for len(c.queue) > 0 {
		credits, done := (<-chan struct{})(c.credits), ctx.Done()
		if s != nil {
			i := clock.Choose(s, clock.Pending(credits), clock.Done(ctx))
			credits, done = clock.Only(i, 0, credits), clock.Only(i, 1, done)
		}
		select {
		case <-credits:
			c.deliver()
		case <-done:
			return ctx.Err()
		}
	}
	return nil
}

// Queued is the number of batches the channel's queue holds.
func (c *OutChannel) Queued() int { return len(c.queue) }

// overtake sends the barrier b on every channel as a priority event, after
// queueing the records buffered for the channel, and returns per channel the
// records it overtook: those still queued.
func (w *RecordWriter) overtake(b event.CheckpointBarrier) [][]event.Record {
	out := make([][]event.Record, len(w.channels))
	for ch, c := range w.channels {
		if len(w.bufs[ch]) > 0 {
			w.send(ch, event.Control{})
		}
		out[ch] = c.queue.records()
		if w.err == nil {
			w.err = c.sendPriority(w.ctx, w.acct.scheduler(), event.Control{Kind: event.KindBarrier, Barrier: b})
		}
	}
	return out
}

// queuesOutput reports whether the subtask's writers queue their batches:
// it takes checkpoints. Without them (at most once) nothing needs the
// mailbox while the output waits, and a send simply blocks.
func (t *Subtask) queuesOutput() bool { return t.spec.Mode != AtMostOnce }

// outputQueue is the number of batches a channel may queue before the
// subtask stops processing input.
func (t *Subtask) outputQueue() int { return max(1, t.spec.OutputQueue) }

// queuedChannel returns an output channel that queues at least n batches,
// or nil.
func (t *Subtask) queuedChannel(n int) *OutChannel {
	for _, w := range t.allWriters() {
		for _, c := range w.channels {
			if len(c.queue) >= n {
				return c
			}
		}
	}
	return nil
}

// outputAvailable reports whether the subtask may process more input: no
// output channel's queue is full.
func (t *Subtask) outputAvailable() bool {
	return !t.queuesOutput() || t.queuedChannel(t.outputQueue()) == nil
}

// creditWaiting returns the credits of a channel with queued batches, for
// the mailbox loop to wait on, or nil (a nil channel never fires).
func (t *Subtask) creditWaiting() (*OutChannel, <-chan struct{}) {
	if !t.queuesOutput() {
		return nil, nil
	}
	if c := t.queuedChannel(1); c != nil {
		return c, c.credits
	}
	return nil, nil
}

// onCredit sends the head of c's queue with the credit just taken, then
// whatever else the credits allow.
func (t *Subtask) onCredit(c *OutChannel) {
	c.deliver()
	t.pushOutputs()
}

// pushOutputs sends queued batches wherever credits allow.
func (t *Subtask) pushOutputs() {
	for _, w := range t.allWriters() {
		for _, c := range w.channels {
			c.push()
		}
	}
}

// waitOutput waits, back-pressured, until a credit comes for a full output
// queue, serving meanwhile the mailbox, the ticks and (reading ahead) the
// inbox: an overtaking barrier is handled there, and its snapshot taken.
func (t *Subtask) waitOutput(ticks <-chan time.Time) error {
	c := t.queuedChannel(t.outputQueue())
	var inbox <-chan Envelope
	if g := t.spec.Gate; g != nil && t.readsAhead() {
		inbox = g.inbox
	}
	t.rearm() // a tick may have fired while it waited before: ticks go on
	t.acct.waitStart()
	defer t.acct.waitEnd()
	publish, stop := t.acct.waitTick()
	defer stop()
	credits, mail, done := (<-chan struct{})(c.credits), (<-chan Mail)(t.spec.Mail), t.ctx.Done()
	if t.sched != nil {
		i := clock.Choose(t.sched, clock.Pending(credits), clock.Pending(inbox), clock.Pending(mail),
			clock.Pending(ticks), clock.Pending(publish), clock.Done(t.ctx))
		credits, inbox, mail = clock.Only(i, 0, credits), clock.Only(i, 1, inbox), clock.Only(i, 2, mail)
		ticks, publish, done = clock.Only(i, 3, ticks), clock.Only(i, 4, publish), clock.Only(i, 5, done)
	}
	select {
	case <-credits:
		t.onCredit(c)
	case e := <-inbox:
		t.admit(e)
	case m := <-mail:
		t.onMail(m)
	case <-ticks:
		t.onTick()
	case <-publish:
		t.acct.duringWait()
	case <-done:
		return t.ctx.Err()
	}
	return nil
}

// drainOutputs sends everything still queued, waiting for credits: the
// subtask is done.
func (t *Subtask) drainOutputs() error {
	if !t.queuesOutput() {
		return nil
	}
	for _, w := range t.allWriters() {
		for _, c := range w.channels {
			if err := c.drain(t.ctx, t.sched); err != nil {
				return err
			}
		}
	}
	return nil
}

// forwardBarrier sends barrier b downstream after the snapshot: as a
// priority event that overtakes the queued output when the snapshot is
// unaligned (persisting what it overtook, returned), or in order with
// the data.
func (t *Subtask) forwardBarrier(b event.CheckpointBarrier, unaligned bool) []overtaken {
	if !t.overtakesOutput(b, unaligned) {
		t.broadcast(event.Control{Kind: event.KindBarrier, Barrier: b})
		return nil
	}
	var out []overtaken
	for _, w := range t.allWriters() {
		for ch, rs := range w.overtake(b) {
			if len(rs) > 0 {
				out = append(out, overtaken{c: w.channels[ch], records: rs})
			}
		}
	}
	return out
}

// overtakesOutput reports whether barrier b leaves as a priority event: its
// snapshot is unaligned — on a source, a checkpoint with an aligned timeout
// of 0 —, and it is neither a savepoint nor the final checkpoint (which
// stay in order, behind the end of the input).
func (t *Subtask) overtakesOutput(b event.CheckpointBarrier, unaligned bool) bool {
	if !t.spec.Unaligned || b.Type.IsSavepoint() || b.Final {
		return false
	}
	return unaligned || t.src != nil && t.spec.AlignedTimeout == 0
}

// queuedBarrier is an aligned snapshot whose barrier, with an aligned
// timeout, still waits in some output queue. Its parts are written once the
// barrier left every queue in order — or, when the timeout passes first
// (counted from the trigger, as on the input side), the barrier is turned
// into a priority event, as Flink turns a timed-out aligned barrier still
// in its result subpartition into one: what it overtook there is the
// checkpoint's output channel state, and the checkpoint counts as unaligned
// here.
type queuedBarrier struct {
	b       event.CheckpointBarrier
	parts   []uidPart
	m       checkpoint.TaskMetrics
	storage *checkpointstorage.FS
}

// holdQueued holds the aligned snapshot of b, in t.queued, when its
// barrier waits in an output queue and may still time out there; it reports
// whether it did. Several may be held: with an aligned timeout, checkpoint
// n+1 may be triggered while the barrier of n still waits (the coordinator
// gave up on n and its abort has not reached this subtask yet), and its
// barrier then queues behind that of n.
func (t *Subtask) holdQueued(b event.CheckpointBarrier, parts []uidPart, m checkpoint.TaskMetrics, storage *checkpointstorage.FS) bool {
	if !t.queuesOutput() || t.spec.AlignedTimeout <= 0 || b.Type.IsSavepoint() || b.Final || !t.barrierQueued(b.ID) {
		return false
	}
	t.queued = append(t.queued, &queuedBarrier{b: b, parts: parts, m: m, storage: storage})
	return true
}

// barrierQueued reports whether the barrier of checkpoint id waits in an
// output queue.
func (t *Subtask) barrierQueued(id event.CheckpointID) bool {
	for _, w := range t.allWriters() {
		for _, c := range w.channels {
			if c.barrierAt(id) >= 0 {
				return true
			}
		}
	}
	return false
}

// barrierAt is the index in the queue of the batch that carries the
// barrier of checkpoint id, or -1.
func (c *OutChannel) barrierAt(id event.CheckpointID) int {
	for i, b := range c.queue {
		if b.Control.Kind == event.KindBarrier && b.Control.Barrier.ID == id {
			return i
		}
	}
	return -1
}

// settleQueuedBarriers settles the held aligned snapshots oldest first,
// and stops at the first that must still wait. The mailbox loops call it
// after every step.
//
// In order, because the queues are: a newer barrier leaves after the older
// ones, and its trigger (from which its timeout counts) came later. Turning
// a newer barrier into a priority event while an older one still waits in
// order would make the receiver see the newer first and drop the older
// checkpoint as subsumed.
func (t *Subtask) settleQueuedBarriers() {
	for len(t.queued) > 0 && t.err == nil {
		if !t.settleQueuedBarrier(t.queued[0]) {
			return
		}
		t.queued[0] = nil
		t.queued = t.queued[1:]
	}
}

// settleQueuedBarrier writes the held aligned snapshot q once its barrier
// left every queue, or turns the barrier into a priority event once the
// aligned timeout passed; it reports whether q is settled.
func (t *Subtask) settleQueuedBarrier(q *queuedBarrier) bool {
	if t.barrierQueued(q.b.ID) {
		if !t.timedOut(q.b) {
			return false
		}
		if p, ok := t.outputStatePart(t.convertQueued(q.b)); ok {
			q.parts = append(q.parts, p)
		}
		q.m.Unaligned = true
	}
	t.startAsync(q.b.ID, func() { t.writeAsync(q.b.ID, q.storage, q.parts, q.m, true) })
	return true
}

// timedOut reports whether the aligned timeout has passed since b was
// triggered (never, for a barrier without a trigger time).
func (t *Subtask) timedOut(b event.CheckpointBarrier) bool {
	if b.Timestamp == 0 {
		return false
	}
	return !t.spec.Now().Before(time.UnixMilli(int64(b.Timestamp)).Add(t.spec.AlignedTimeout))
}

// convertQueued takes the barrier of b out of each queue that still holds
// it and sends it as a priority event; the records queued up to it are
// what it overtook.
func (t *Subtask) convertQueued(b event.CheckpointBarrier) []overtaken {
	var out []overtaken
	for _, w := range t.allWriters() {
		for _, c := range w.channels {
			i := c.barrierAt(b.ID)
			if i < 0 {
				continue
			}
			c.queue[i].Control = event.Control{}
			if rs := c.queue[:i+1].records(); len(rs) > 0 {
				out = append(out, overtaken{c: c, records: rs})
			}
			if w.err == nil {
				w.err = c.sendPriority(t.ctx, t.sched, event.Control{Kind: event.KindBarrier, Barrier: b})
			}
		}
	}
	return out
}

// dropQueuedBarrier forgets the held snapshot of checkpoint id, aborted.
// Its barrier stays queued in order: a receiver ignores a barrier older
// than one it has seen, and the newer held barriers behind it still settle.
func (t *Subtask) dropQueuedBarrier(id event.CheckpointID) {
	t.queued = slices.DeleteFunc(t.queued, func(q *queuedBarrier) bool { return q.b.ID == id })
}
