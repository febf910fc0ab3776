package task

import (
	"time"

	"github.com/weirstream/weir/debloat"
)

// Buffer debloating (Spec.Debloat): the subtask measures its throughput,
// and every period its debloater picks the batch size at which its
// input's credits hold about the target time's worth of records; the
// gate announces it and the senders cut their batches at that size from
// their next record on. Fewer records in flight means an aligned barrier
// waits behind less data, and an unaligned checkpoint persists less.

// openDebloater starts the debloater of a subtask with inputs, if
// debloating is on.
func (t *Subtask) openDebloater() {
	if !t.spec.Debloat.Enabled || t.spec.Gate == nil {
		return
	}
	t.debloater = debloat.New(t.spec.Debloat)
	t.debloatSample() // starts the first period
}

// countProcessed tells the debloater that n records were processed.
func (t *Subtask) countProcessed(n int) {
	if t.debloater != nil {
		t.debloater.Processed(n)
	}
}

// debloatSample feeds the debloater the current measurements and carries
// out its decision when a period has closed.
func (t *Subtask) debloatSample() {
	g := t.spec.Gate
	var idle time.Duration
	if t.acct != nil {
		idle = t.acct.idle
	}
	// The subtask's clock, as the time account measures idle time with it.
	d, ok := t.debloater.Tick(debloat.Sample{Now: t.spec.Clock.Now(), Idle: idle, Buffered: g.Buffered(), Batches: g.Credits()})
	if !ok {
		return
	}
	if d.Announce {
		g.AnnounceBatchSize(d.BatchSize)
	}
	if m := t.spec.Metrics; m != nil {
		m.DebloatedBufferSize.Store(int64(d.BatchSize))
		m.EstimatedTimeToConsumeBuffersMs.Store(d.TimeToConsume.Milliseconds())
	}
}

// debloat runs the debloater on a processing-time tick.
func (t *Subtask) debloat() {
	if t.debloater != nil {
		t.debloatSample()
	}
}
