package task

import (
	"github.com/weirstream/weir/barrier"
	"github.com/weirstream/weir/event"
)

// A subtask that takes checkpoints reads ahead: every envelope that
// reaches its inbox is admitted at once into the gate's held queues
// (bounded by the channels' credits, which return only when a batch is
// processed), and processed from there in order. A barrier that the
// handler says overtakes is handled when it is admitted, ahead of the
// data of its channel still queued before it: that data, and the data of
// the other channels until their barrier, is the checkpoint's input
// channel state. It is processed as usual after the snapshot, and
// persisted too, so that a restore replays it. The inbox is admitted
// between batches, and between the records of a batch when something
// waits in it (admitBetween).

// readsAhead reports whether the subtask admits its input ahead of
// processing it: it has inputs and takes checkpoints. Besides letting an
// unaligned barrier overtake, reading ahead takes the channels in turn
// (NextHeld), as Flink's input gate does, instead of in the order their
// batches reached the shared inbox: an aligned barrier of an idle channel
// is handled after at most one batch of a busy one, not after all the
// busy channel's batches in flight.
func (t *Subtask) readsAhead() bool {
	return t.spec.Mode != AtMostOnce && t.spec.Gate != nil
}

// drainInbox admits every envelope waiting in the inbox.
func (t *Subtask) drainInbox() {
	g := t.spec.Gate
	for t.err == nil {
		select {
		case e := <-g.inbox:
			t.admit(e)
		default:
			return
		}
	}
}

// admit queues envelope e behind the data of its channel, persists its
// records if its channel is being persisted, and handles its barrier at
// once if that barrier overtakes.
func (t *Subtask) admit(e Envelope) {
	t.dropNow()
	g := t.spec.Gate
	if e.Priority && t.err == nil {
		// Its sender's aligned timeout passed: the handler sees the time
		// first, so that an alignment of the checkpoint here, timed out
		// too but not yet ticked, turns unaligned now and the barrier
		// overtakes. Judged still aligned, it would wait behind its
		// channel's data, its priority slot taken until that data is
		// processed — and the sender's next timed-out barrier with it.
		t.apply(t.barriers.Tick(t.spec.Now()))
	}
	g.Hold(e)
	ch := e.Channel
	if u := t.unal; u != nil && u.persisting[ch] {
		u.persist(ch, e.Batch.Records)
	}
	c := e.Batch.Control
	if c.Kind != event.KindBarrier || t.err != nil {
		return
	}
	now := t.spec.Now()
	if !t.barriers.Overtakes(now, c.Barrier) {
		return
	}
	q := g.held[ch]
	if e.Priority {
		// It took no credit: it leaves the queue, and its channel's
		// priority slot is free again.
		q[len(q)-1] = Envelope{}
		g.held[ch] = q[:len(q)-1]
		g.prio[ch] <- struct{}{}
	} else {
		q[len(q)-1].Batch.Control = event.Control{} // handled now, not when processed
	}
	t.overtaking = ch
	t.apply(t.barriers.OnBarrier(now, ch, c.Barrier))
	t.overtaking = -1
}

// admitBetween admits what waits in the inbox while a batch of channel ch
// is being processed, rest being its records not processed yet: a barrier
// that overtakes is handled between two records, as Flink's mailbox takes a
// priority event between two records, not after a whole batch (of a slow
// operator, that could take long). Only a batch without a control element
// is interrupted, so rest is data of ch before any barrier admitted now:
// a snapshot taken here persists it when ch is persisted (startPersisting).
func (t *Subtask) admitBetween(ch int, rest []event.Record) {
	t.current, t.currentCh = rest, ch
	t.drainInbox()
	t.current = nil
}

// persistCurrent persists the rest of the batch being processed, if it is
// channel ch's: it comes before anything of ch still queued.
func (t *Subtask) persistCurrent(ch int) {
	if t.current != nil && t.currentCh == ch {
		t.unal.persist(ch, t.current)
	}
}

// startPersisting begins the input channel state of the unaligned
// checkpoint just snapshotted: the data queued before the barrier that
// overtook it, if one did, and everything queued or to come on the
// channels in persist until their barrier. A barrier of the checkpoint
// already queued on such a channel (it came while the checkpoint was still
// aligned) ends that channel's part at once.
func (t *Subtask) startPersisting(persist []int) {
	u, g := t.unal, t.spec.Gate
	if ch := t.overtaking; ch >= 0 {
		t.persistCurrent(ch)
		for _, e := range g.held[ch] {
			u.persist(ch, e.Batch.Records)
		}
	}
	var arrived []int
	for _, ch := range persist {
		u.persisting[ch] = true
		t.persistCurrent(ch)
		for i, e := range g.held[ch] {
			u.persist(ch, e.Batch.Records)
			if c := e.Batch.Control; c.Kind == event.KindBarrier && c.Barrier.ID == u.b.ID {
				g.held[ch][i].Batch.Control = event.Control{}
				arrived = append(arrived, ch)
				break
			}
		}
	}
	for _, ch := range arrived {
		t.apply(t.barriers.OnBarrier(t.spec.Now(), ch, u.b))
	}
}

// applyUnaligned carries out the unaligned half of decision d, after its
// snapshot.
func (t *Subtask) applyUnaligned(d barrier.Decision) {
	if d.Unaligned && t.unal != nil && t.unal.b.ID == d.Snapshot.ID {
		t.startPersisting(d.Persist)
	}
	for _, ch := range d.Persisted {
		if t.unal != nil {
			t.unal.persisting[ch] = false
		}
	}
	if t.unal != nil && d.ChannelStateDone == t.unal.b.ID {
		t.finishUnaligned()
	}
}

// dropUnaligned forgets the channel state of checkpoint id, abandoned.
func (t *Subtask) dropUnaligned(id event.CheckpointID) {
	if t.unal != nil && t.unal.b.ID == id {
		t.unal = nil
	}
}

// finishUnaligned writes the snapshot and channel state of the unaligned
// checkpoint, now complete, and acknowledges it (asynchronously).
func (t *Subtask) finishUnaligned() {
	u := t.unal
	t.unal = nil
	parts := u.parts
	for _, rs := range u.records {
		if len(rs) > 0 {
			parts = append(parts, t.channelStatePart(u))
			break
		}
	}
	u.m.Unaligned = true
	t.startAsync(u.b.ID, func() { t.writeAsync(u.b.ID, u.storage, parts, u.m, true) })
}
