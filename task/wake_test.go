package task

import (
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// later registers, at Open, one processing-time callback 200 ms ahead.
type later struct{ timed }

func (o *later) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.goroutine = goroutineID()
	ctx.ProcessingTime.RegisterTimer(ctx.Now()+200, o.callback("due"))
	return nil
}

// An idle subtask still wakes for a processing-time callback: with no
// input, no mail and no metrics (so no rate window to publish), the only
// wake-up it arms after its first tick is the callback's time. Without
// it the subtask would block for good and the callback never run.
func TestIdleSubtaskWakesForItsCallback(t *testing.T) {
	h := startHarness(t, &later{}, false, true)
	h.expect("due")
	// And then it waits: a record is handled at once, its callback later.
	h.send(event.Batch{Records: []event.Record{{Value: "x", Timestamp: event.NoTimestamp}}})
	h.expect("in x", "late x")
}
