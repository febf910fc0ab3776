package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// WindowTableFunctionOptions configure a WindowTableFunction.
type WindowTableFunctionOptions struct {
	// Window is the TVF: TUMBLE, HOP or CUMULATE.
	Window WindowSpec
	// TimeField is the event-time attribute's field.
	TimeField int
	// ProcTime assigns each row to the windows of the processing time it
	// arrives at (DESCRIPTOR of a PROCTIME() attribute); TimeField is not
	// read.
	ProcTime bool
	// Zone, when set, aligns the windows to its wall clock (a TIMESTAMP_LTZ
	// attribute in a 'table.local-time-zone' other than UTC); default nil:
	// UTC.
	Zone *time.Location
}

// WindowTableFunction is a window TVF read on its own (Flink's
// AlignedWindowTableFunctionOperator): each row is emitted once per
// window it falls in, with window_start, window_end (the zone's wall
// clock) and window_time (the instant of the window's last millisecond)
// appended. A row whose time attribute is NULL is dropped, as Flink
// drops it. Late rows pass, as in Flink: the TVF keeps no state and
// fires nothing, so it has nothing to checkpoint. Over processing time a
// row falls in the windows of the moment it arrives, as in Flink
// (FLINK-24001).
type WindowTableFunction struct {
	operator.Base
	opts WindowTableFunctionOptions
	zone windowZone
	cols windowColumns
}

// NewWindowTableFunction returns a WindowTableFunction.
func NewWindowTableFunction(opts WindowTableFunctionOptions) (*WindowTableFunction, error) {
	if err := opts.Window.Validate(); err != nil {
		return nil, err
	}
	if opts.TimeField < 0 && !opts.ProcTime {
		return nil, fmt.Errorf("%w: WindowTableFunction needs a time field", ErrInvalidOptions)
	}
	return &WindowTableFunction{opts: opts, zone: newWindowZone(opts.Zone)}, nil
}

// ProcessElement emits the row once per window.
func (w *WindowTableFunction) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	ts, ok, err := w.rowTime(row.Fields)
	if !ok || err != nil {
		return err
	}
	for _, win := range w.opts.Window.assign(w.zone.local(ts)) {
		out := event.NewRow(row.Kind, len(row.Fields)+3)
		start, end, wtime := w.cols.of(win, w.zone.instant(win.End-1))
		n := copy(out.Fields, row.Fields)
		out.Fields[n], out.Fields[n+1], out.Fields[n+2] = start, end, wtime
		emitRow(w.Ctx, out, r.Timestamp)
	}
	return nil
}

// rowTime is the instant that places a row in windows: its rowtime field,
// or the processing time for processing-time windows; not ok for a NULL
// rowtime (Flink's numNullRowTimeRecordsDropped; Weir has no such
// counter).
func (w *WindowTableFunction) rowTime(fields []any) (ts int64, ok bool, err error) {
	if w.opts.ProcTime {
		return w.Ctx.Now(), true, nil
	}
	if fields[w.opts.TimeField] == nil {
		return 0, false, nil
	}
	ts, err = timeMillis(fields[w.opts.TimeField])
	if err != nil {
		return 0, false, fmt.Errorf("sql/exec: WindowTableFunction: rowtime field %d: %w", w.opts.TimeField, err)
	}
	return ts, true, nil
}
