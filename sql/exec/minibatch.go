package exec

import (
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// batchDeadline ends a mini-batch allow-latency after its first row
// (table.exec.mini-batch.allow-latency) even when no more rows come, as
// Flink's MiniBatchAssigner does with its processing-time markers: at the
// batch's first row it registers a processing-time callback at start +
// latency that ends the batch. Every end of a batch (by size, watermark,
// barrier, end of input or the callback) calls stop, which cancels the
// callback; so when the callback runs, the batch it ends is the one that
// registered it, and that batch is not empty.
type batchDeadline struct {
	latency time.Duration // 0: no time limit
	start   int64         // processing time of the batch's first row, ms
	timer   *operator.ProcessingTimer
}

// begin starts the clock of a batch whose first row just came; end ends
// the batch (and so calls stop).
func (d *batchDeadline) begin(ctx *operator.Context, end func()) {
	if d.latency <= 0 {
		return
	}
	d.start = ctx.Now()
	d.timer = ctx.ProcessingTime.RegisterTimer(d.start+d.latency.Milliseconds(), func(event.Timestamp) error {
		end()
		return nil
	})
}

// expired reports whether the batch is latency old at now: a row that
// finds it so ends it without waiting for the callback's wake-up.
func (d *batchDeadline) expired(now int64) bool {
	return d.latency > 0 && now-d.start >= d.latency.Milliseconds()
}

// stop cancels the callback of a batch that ended.
func (d *batchDeadline) stop() {
	d.timer.Cancel()
	d.timer = nil
}
