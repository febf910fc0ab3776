// Package task runs subtasks: one goroutine per subtask owns its operator
// chain, its state, its barrier handler and its watermark valve, and runs a
// mailbox loop (Flink's StreamTask + MailboxProcessor). Data moves between
// subtasks in batches over channels with credit-based flow control, with
// barriers, watermarks and end-of-input in-band and in order.
package task

import (
	"context"
	"sync/atomic"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
)

// Envelope is a batch tagged with the index of the input channel it came on.
// Priority marks a priority event (an unaligned checkpoint's barrier): it
// took no credit of its channel, but the channel's priority slot, which the
// receiver frees when it has handled it (see OutChannel.SendPriority).
type Envelope struct {
	Channel  int
	Batch    event.Batch
	Priority bool
}

// OutChannel is the sending end of one channel between two subtasks. A
// sender needs a credit per batch in flight; the receiver returns the credit
// when it has processed the batch, not when it merely holds it, so a channel
// blocked for barrier alignment back-pressures its sender.
//
// With unaligned checkpoints a sender queues its batches (see queue.go):
// the queue is the channel's result subpartition, owned by the sending
// subtask's goroutine.
type OutChannel struct {
	inbox    chan<- Envelope
	index    int
	credits  chan struct{}
	priority chan struct{}
	gate     *InputGate
	queue    outQueue
	spare    chan []event.Record // the receiver's processed batches, for reuse
}

// buffer returns an empty batch slice of capacity at least size: one the
// receiver has processed and handed back, or a new one. A job's records
// then move in a few slices per channel, not a new one per batch.
func (c *OutChannel) buffer(size int) []event.Record {
	select {
	case rs := <-c.spare:
		if cap(rs) >= size {
			return rs[:0]
		}
	default:
	}
	return make([]event.Record, 0, size)
}

// batchLimit is the batch size the receiver announced (buffer debloating),
// or 0 when it announced none.
func (c *OutChannel) batchLimit() int { return int(c.gate.batchSize.Load()) }

// Send hands b to the receiver, waiting for a credit; it fails only when ctx
// is cancelled.
func (c *OutChannel) Send(ctx context.Context, b event.Batch) error { return c.send(ctx, b, nil) }

// send is Send that counts a wait for a credit as back-pressured time in
// acct (nil: not counted).
func (c *OutChannel) send(ctx context.Context, b event.Batch, acct *timeAccount) error {
	select {
	case <-c.credits:
	default:
		if err := c.waitCredit(ctx, acct); err != nil {
			return err
		}
	}
	c.gate.buffered.Add(int64(len(b.Records)))
	// Never blocks: the inbox holds as many envelopes as all its channels
	// have credits.
	c.inbox <- Envelope{Channel: c.index, Batch: b}
	return nil
}

// waitCredit blocks until a credit comes or ctx is cancelled, counting
// the wait as back-pressured time and publishing the subtask's metrics
// while it lasts.
func (c *OutChannel) waitCredit(ctx context.Context, acct *timeAccount) error {
	acct.waitStart()
	defer acct.waitEnd()
	tick, stop := acct.waitTick()
	defer stop()
	s := acct.scheduler()
	for {
		credits, done, tk := (<-chan struct{})(c.credits), ctx.Done(), tick
		if s != nil {
			i := clock.Choose(s, clock.Pending(credits), clock.Done(ctx), clock.Pending(tk))
			credits, done, tk = clock.Only(i, 0, credits), clock.Only(i, 1, done), clock.Only(i, 2, tk)
		}
		select {
		case <-credits:
			return nil
		case <-done:
			return ctx.Err()
		case <-tk:
			acct.duringWait()
		}
	}
}

// priorityCredits is how many priority events (an unaligned barrier) one
// channel may have in flight. One: the receiver takes a priority event
// before any data, so a second waits only briefly, and the inbox keeps a
// slot per channel for it on top of the credits so that it never waits for
// a credit held by data.
const priorityCredits = 1

// InputGate is the receiving end of all channels of one subtask.
type InputGate struct {
	inbox   chan Envelope
	credits []chan struct{}
	// spare holds, per channel, batch slices processed and cleared, which
	// the channel's sender reuses (OutChannel.buffer).
	spare []chan []event.Record
	// priority holds each channel's slot for a priority event in flight:
	// the inbox has room for one per channel beyond the credits, so a
	// priority event never waits for a credit.
	prio    []chan struct{}
	inputOf []int // channel → input number (0 = first input, 1 = second)
	// target describes the receiving subtask, for a sender's output
	// channel state (see SetTarget).
	target  GateTarget
	held    [][]Envelope
	blocked []bool
	// roundRobin makes NextHeld take the channels in turn (a subtask that
	// reads ahead holds every channel's input; always taking the lowest
	// channel first would starve the others). next is the channel to try
	// first.
	roundRobin bool
	next       int
	// buffered counts the records sent on the channels and not yet
	// processed (senders add, the subtask subtracts). batchSize is the
	// batch size the subtask's debloater announced to its senders, 0
	// before any. Both are atomics: they are the only state of the gate
	// that senders and the receiver share besides the channels, as
	// Flink's receiver announces a buffer size to its senders.
	buffered  atomic.Int64
	batchSize atomic.Int32
}

// NewInputGate makes a gate for channels whose input numbers are inputOf,
// with creditsPerChannel batches in flight per channel.
func NewInputGate(inputOf []int, creditsPerChannel int) *InputGate {
	n := len(inputOf)
	g := &InputGate{
		inbox:   make(chan Envelope, n*(creditsPerChannel+priorityCredits)),
		credits: make([]chan struct{}, n),
		spare:   make([]chan []event.Record, n),
		prio:    make([]chan struct{}, n),
		inputOf: inputOf,
		held:    make([][]Envelope, n),
		blocked: make([]bool, n),
	}
	for i := range g.credits {
		g.credits[i] = make(chan struct{}, creditsPerChannel)
		for j := 0; j < creditsPerChannel; j++ {
			g.credits[i] <- struct{}{}
		}
		g.spare[i] = make(chan []event.Record, creditsPerChannel)
		g.prio[i] = make(chan struct{}, priorityCredits)
		g.prio[i] <- struct{}{}
	}
	return g
}

// GateTarget describes the subtask that owns a gate: what a sender records
// with the output channel state it persists for it, so that a restore
// replays that state at the receiver (see outputstate.go).
type GateTarget struct {
	// Vertex is the uid of the head of the receiving subtask's chain;
	// Subtask its index and Parallelism its vertex's.
	Vertex               string
	Subtask, Parallelism int
	// EdgeOf gives, per channel, the number of its input edge (as
	// Spec.ChannelEdges).
	EdgeOf []int
}

// SetTarget records who owns the gate. Call it before any subtask runs.
func (g *InputGate) SetTarget(t GateTarget) { g.target = t }

// Channel returns the sending end of channel i.
func (g *InputGate) Channel(i int) *OutChannel {
	return &OutChannel{inbox: g.inbox, index: i, credits: g.credits[i], priority: g.prio[i], gate: g, spare: g.spare[i]}
}

// NumChannels is the number of input channels.
func (g *InputGate) NumChannels() int { return len(g.inputOf) }

// Recycle returns the credit of a processed batch of n records from
// channel ch.
func (g *InputGate) Recycle(ch, n int) {
	g.buffered.Add(-int64(n))
	g.credits[ch] <- struct{}{}
}

// recycle returns what envelope e took: its credit, or the priority slot
// of its channel. Its records are processed: their slice, cleared, goes
// back to the sender for a later batch, so e's records must not be read
// after.
func (g *InputGate) recycle(e Envelope) {
	if e.Priority {
		g.prio[e.Channel] <- struct{}{}
		return
	}
	g.Recycle(e.Channel, len(e.Batch.Records))
	if rs := e.Batch.Records; cap(rs) > 0 {
		clear(rs)
		select {
		case g.spare[e.Channel] <- rs[:0]:
		default:
		}
	}
}

// Credits is the number of batches that can be in flight towards the
// gate: its channels times their credits.
func (g *InputGate) Credits() int { return cap(g.inbox) - len(g.prio) }

// Buffered is the number of records sent towards the gate and not yet
// processed.
func (g *InputGate) Buffered() int64 { return g.buffered.Load() }

// AnnounceBatchSize makes senders cut batches of at most n records from
// their next record on (buffer debloating); 0 lifts the limit.
func (g *InputGate) AnnounceBatchSize(n int) { g.batchSize.Store(int32(n)) }

// mustHold reports whether an envelope from ch has to wait: its channel is
// blocked, or earlier batches of it are still held (order per channel).
func (g *InputGate) mustHold(ch int) bool { return g.blocked[ch] || len(g.held[ch]) > 0 }

// heldRecords counts the records held on blocked channels now: what
// barrier alignment buffers.
func (g *InputGate) heldRecords() int64 {
	var n int64
	for _, q := range g.held {
		for _, e := range q {
			n += int64(len(e.Batch.Records))
		}
	}
	return n
}

// Hold queues a batch of a blocked channel.
func (g *InputGate) Hold(e Envelope) { g.held[e.Channel] = append(g.held[e.Channel], e) }

// Block stops the consumption of channel ch.
func (g *InputGate) Block(ch int) { g.blocked[ch] = true }

// UnblockAll resumes every channel; held batches are processed first.
func (g *InputGate) UnblockAll() {
	for i := range g.blocked {
		g.blocked[i] = false
	}
}

// NextHeld returns a held batch of an unblocked channel, if any.
func (g *InputGate) NextHeld() (Envelope, bool) {
	n := len(g.held)
	for i := range n {
		ch := i
		if g.roundRobin {
			ch = (g.next + i) % n
		}
		if q := g.held[ch]; len(q) > 0 && !g.blocked[ch] {
			e := q[0]
			q[0] = Envelope{}
			g.held[ch] = q[1:]
			g.next = (ch + 1) % n
			return e, true
		}
	}
	return Envelope{}, false
}
