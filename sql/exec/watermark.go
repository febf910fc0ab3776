package exec

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// watermarkKeeper carries an event-time operator's watermark across a
// restore, in operator state. Flink does not, and starts a restored
// operator at the minimum watermark, so until the first watermark after
// the restore a row of a window that already fired counts as on time: it
// opens the window again, and the window fires a second time. With the
// watermark restored, and held until upstream catches up with it
// (advanceWatermark), such a row is late, as it was before the failure.
//
// After a rescale every subtask gets every old subtask's watermark (union
// redistribution) and takes the smallest: the subtasks of one operator
// see the same watermarks, so they differ only by what was in flight.
type watermarkKeeper struct {
	list state.ListState[int64]
}

// openWatermark registers the state and, on a restore, advances the
// timer service to the restored watermark (every timer at or below it
// had fired before the checkpoint). Call it after SetTriggerable.
func openWatermark(ctx *operator.Context) (watermarkKeeper, error) {
	if ctx.OperatorState == nil {
		return watermarkKeeper{}, nil
	}
	w := watermarkKeeper{list: state.OperatorList(ctx.OperatorState,
		state.ListDescriptor[int64]{Name: "sql-watermark"}, state.Union)}
	restored := w.list.Get()
	if len(restored) == 0 {
		return w, nil
	}
	wm := restored[0]
	for _, v := range restored[1:] {
		wm = min(wm, v)
	}
	if wm == event.MinWatermark {
		return w, nil
	}
	return w, ctx.Timers.AdvanceWatermark(wm)
}

// advanceWatermark moves the timer service to wm, never back, and returns
// the watermark the operator then stands at. Upstream watermarks only rise,
// except across a restore: the sources restart their generators at the
// minimum and re-read what came after the checkpoint, so the first
// watermarks after it are usually behind the restored one. Taking them
// would lower event time again: a row that was late before the failure
// would be on time, reopen a window that had fired (and whose slices were
// dropped), and the window would fire a second time with that row alone.
func advanceWatermark(ctx *operator.Context, wm event.Timestamp) (event.Timestamp, error) {
	if cur := ctx.Timers.CurrentWatermark(); wm <= cur {
		return cur, nil
	}
	return wm, ctx.Timers.AdvanceWatermark(wm)
}

// save records the current watermark for the next snapshot.
func (w watermarkKeeper) save(ctx *operator.Context) {
	if w.list != nil {
		w.list.Update([]int64{ctx.Timers.CurrentWatermark()})
	}
}
