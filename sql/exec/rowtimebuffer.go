package exec

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// rowtimeBuffer holds the current key's rows waiting for the watermark
// (OverAggregate and Match on event time), by timestamp, each list in
// arrival order, with an event-time timer at each timestamp.
type rowtimeBuffer struct {
	rows state.MapState[int64, []any]
}

func openRowtimeBuffer(ctx *operator.Context, name string) rowtimeBuffer {
	return rowtimeBuffer{rows: state.Map(ctx.Keyed, state.MapDescriptor[int64, []any]{Name: name, ValueCodec: RowCodec{}})}
}

// add buffers fields under ts, or reports a late row (at or behind the
// watermark): dropped and counted in LateDropped.
func (b rowtimeBuffer) add(ctx *operator.Context, ts int64, fields []any) {
	if ts <= ctx.Timers.CurrentWatermark() {
		ctx.Metrics.LateDropped++
		return
	}
	rows, ok := b.rows.Get(ts)
	if !ok {
		ctx.Timers.Register(operator.EventTime, ts, "")
	}
	b.rows.Put(ts, append(slices.Clip(rows), fields))
}

// take removes and returns the rows at ts.
func (b rowtimeBuffer) take(ts int64) ([]any, bool) {
	rows, ok := b.rows.Get(ts)
	if ok {
		b.rows.Remove(ts)
	}
	return rows, ok
}

// forwardWatermark fires the timers wm passes and forwards it.
func forwardWatermark(ctx *operator.Context, wm event.Timestamp) error {
	wm, err := advanceWatermark(ctx, wm)
	if err != nil {
		return err
	}
	ctx.Output.EmitWatermark(wm)
	return nil
}

// appendOnlyRow reads the input row of an operator that takes inserts
// only (op names it, what names the SQL), checks that the fields it reads
// are there, and makes the row's key current.
func appendOnlyRow(ctx *operator.Context, op, what string, v any, reads []int, key KeyFunc) (event.Row, error) {
	row, err := rowOf(v)
	if err != nil {
		return row, err
	}
	if row.Kind != event.Insert {
		return row, fmt.Errorf("%w: %s got a %s row; %s takes an append-only input", ErrUpdatesUnsupported, op, row.Kind, what)
	}
	if err := checkWidth(op, row.Fields, reads...); err != nil {
		return row, err
	}
	setKey(ctx, key(row.Fields))
	return row, nil
}

// bufferRow buffers row under its rowtime, field timeField.
func (b rowtimeBuffer) bufferRow(ctx *operator.Context, op string, fields []any, timeField int) error {
	ts, err := timeMillis(fields[timeField])
	if err != nil {
		return fmt.Errorf("sql/exec: %s: rowtime field %d: %w", op, timeField, err)
	}
	b.add(ctx, ts, fields)
	return nil
}
