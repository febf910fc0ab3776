package task

import (
	"context"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
)

// Partitioner picks the channel(s) of a record writer a record goes to.
type Partitioner interface {
	// Select returns the target channel, or -1 for all channels.
	Select(r event.Record, numChannels int) int
}

// Forward sends everything to the single channel (same-index subtask).
type Forward struct{}

// Select returns 0.
func (Forward) Select(event.Record, int) int { return 0 }

// Rebalance spreads records round-robin.
type Rebalance struct{ next int }

// Select returns the next channel in turn.
func (p *Rebalance) Select(_ event.Record, n int) int {
	p.next++
	if p.next >= n {
		p.next = 0
	}
	return p.next
}

// Broadcast sends every record to every channel.
type Broadcast struct{}

// Select returns -1 (all channels).
func (Broadcast) Select(event.Record, int) int { return -1 }

// KeyGroupHash sends a record to the subtask owning its key's key group, as
// Flink's KeyGroupStreamPartitioner does.
type KeyGroupHash struct {
	Key func(v any) any
	// Hash, when set, is keygroup.HashKey of Key's result, made without
	// the key (operator.KeyHasher).
	Hash           func(v any) uint64
	MaxParallelism int
}

// Select returns the owner of the record's key group.
func (p KeyGroupHash) Select(r event.Record, n int) int {
	var g int
	if p.Hash != nil {
		g = keygroup.ForHash(p.Hash(r.Value), p.MaxParallelism)
	} else {
		g = keygroup.ForKey(p.Key(r.Value), p.MaxParallelism)
	}
	return keygroup.OperatorIndex(g, p.MaxParallelism, n)
}

// RecordWriter batches records per channel and sends them downstream.
type RecordWriter struct {
	ctx       context.Context
	channels  []*OutChannel
	part      Partitioner
	bufs      [][]event.Record
	batchSize int
	err       error
	sent      int64
	// acct counts the waits for credits as back-pressured time; set by the
	// subtask when it runs (nil: not counted).
	acct *timeAccount
	// queued: batches go to their channel's queue, never waiting for a
	// credit (unaligned checkpoints; see queue.go). Set by the subtask.
	queued bool
}

// NewRecordWriter writes to channels through part in batches of batchSize.
func NewRecordWriter(ctx context.Context, channels []*OutChannel, part Partitioner, batchSize int) *RecordWriter {
	return &RecordWriter{ctx: ctx, channels: channels, part: part,
		bufs: make([][]event.Record, len(channels)), batchSize: batchSize}
}

// Emit adds r to its channel's batch, sending the batch when full.
func (w *RecordWriter) Emit(r event.Record) {
	ch := w.part.Select(r, len(w.channels))
	if ch >= 0 {
		w.add(ch, r)
		return
	}
	for i := range w.channels {
		w.add(i, r)
	}
}

func (w *RecordWriter) add(ch int, r event.Record) {
	w.bufs[ch] = append(w.bufs[ch], r)
	if len(w.bufs[ch]) >= w.limit(ch) {
		w.send(ch, event.Control{})
	}
}

// limit is the size at which channel ch's batch is sent: the writer's
// batch size, or less if the receiver announced less (buffer debloating).
func (w *RecordWriter) limit(ch int) int {
	if l := w.channels[ch].batchLimit(); l > 0 && l < w.batchSize {
		return l
	}
	return w.batchSize
}

func (w *RecordWriter) send(ch int, c event.Control) {
	if w.err != nil {
		return
	}
	b := event.Batch{Records: w.bufs[ch], Control: c}
	w.bufs[ch] = w.channels[ch].buffer(w.batchSize)
	w.sent += int64(len(b.Records))
	if w.queued {
		w.channels[ch].enqueue(b)
		return
	}
	w.err = w.channels[ch].send(w.ctx, b, w.acct)
}

// Flush sends every non-empty batch.
func (w *RecordWriter) Flush() {
	for ch := range w.bufs {
		if len(w.bufs[ch]) > 0 {
			w.send(ch, event.Control{})
		}
	}
}

// BroadcastControl sends c on every channel after the records buffered
// for it, keeping control elements in order with data.
func (w *RecordWriter) BroadcastControl(c event.Control) {
	for ch := range w.channels {
		w.send(ch, c)
	}
}

// Err is the first send error (the job was cancelled).
func (w *RecordWriter) Err() error { return w.err }
