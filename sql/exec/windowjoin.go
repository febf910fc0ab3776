package exec

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// WindowJoinOptions configures a WindowJoin: the query
//
//	SELECT … FROM L [LEFT|RIGHT|FULL] JOIN R ON L.window_start =
//	  R.window_start AND L.window_end = R.window_end AND L.k = R.k …
//
// over two inputs windowed by the same window TVF, or its semi and anti
// forms (IN, EXISTS, NOT IN, NOT EXISTS correlated on both window
// columns).
type WindowJoinOptions struct {
	// Type is INNER, LEFT, RIGHT or FULL; with Semi or Anti it must be
	// INNER (the default).
	Type JoinType
	// Semi emits each left row that a right row of its window matches
	// (IN, EXISTS), once; Anti each that none matches (NOT IN, NOT
	// EXISTS). Both false (the default): a join, which emits the pairs.
	Semi, Anti bool
	// LeftWindow and RightWindow say where each side's rows find their
	// window: a window TVF's or window aggregation's window_start and
	// window_end fields (the usual case), or Assign to place rows in
	// windows by their rowtime (the row then gets the window's three
	// columns appended, as the TVF appends them). Their Zone must be the
	// same.
	LeftWindow, RightWindow WindowRows
	// LeftKeys and RightKeys are the equi-join fields besides the window
	// columns, of equal length; none puts every row of a window under one
	// key. A row with a NULL in a key field that is not NullSafe matches
	// nothing.
	LeftKeys, RightKeys []int
	// NullSafe marks the key pairs compared by IS NOT DISTINCT FROM.
	// Default nil: none.
	NullSafe []bool
	// LeftArity and RightArity are the widths of the joined rows (with
	// Assign, the input's plus three): an outer join pads with that many
	// NULLs.
	LeftArity, RightArity int
	// LeftWidth is how many leading fields of a left row a semi or anti
	// join emits (the planner may append computed keys). Default 0: all.
	LeftWidth int
	// Condition is the rest of the ON clause (or correlation), over a
	// left and a right row. Default nil: true.
	Condition func(left, right []any) (bool, error)
}

// Validate checks the options.
func (o *WindowJoinOptions) Validate() error {
	j := JoinOptions{Type: o.Type, LeftKeys: o.LeftKeys, RightKeys: o.RightKeys, NullSafe: o.NullSafe,
		LeftArity: o.LeftArity, RightArity: o.RightArity}
	if err := j.Validate(); err != nil {
		return err
	}
	if (o.Semi || o.Anti) && (o.Type != InnerJoin || o.Semi == o.Anti) {
		return fmt.Errorf("%w: a window semi or anti join is one of the two, of type INNER", ErrInvalidOptions)
	}
	if o.LeftWindow.Zone.String() != o.RightWindow.Zone.String() {
		return fmt.Errorf("%w: the window join's sides have windows in different zones", ErrInvalidOptions)
	}
	if err := o.LeftWindow.validate(); err != nil {
		return err
	}
	return o.RightWindow.validate()
}

// LeftKey is the KeyFunc the left input must be partitioned by: its
// LeftKeys fields (the window is a namespace of the state, as in Flink).
func (o *WindowJoinOptions) LeftKey() KeyFunc { return FieldKey(o.LeftKeys...) }

// RightKey is the KeyFunc the right input must be partitioned by.
func (o *WindowJoinOptions) RightKey() KeyFunc { return FieldKey(o.RightKeys...) }

// WindowJoin is Flink's window join: each side's rows are buffered in
// keyed state per key and window (window id → list of rows), with an
// event-time timer at the window's end - 1 ms. When the watermark reaches
// it, the window's rows of both sides are joined, the result goes out
// insert-only (an outer side's unmatched rows NULL-padded, once, with no
// retraction), and the window's state is dropped: the join needs no state
// TTL. A row whose window has fired is late: it is dropped and counted in
// Metrics.LateDropped, as the other window operators count it.
//
// Input 1 (ProcessElement) is the left side, input 2 the right.
type WindowJoin struct {
	operator.Base
	opts  WindowJoinOptions
	keys  [2]KeyFunc
	win   [2]WindowRows
	reads [2][]int
	buf   [2]state.MapState[string, []any]
	wm    watermarkKeeper
	zone  windowZone
	ids   windowIDs
	wins  []windowRange // a row's windows, reused
	cols  windowColumns
}

var _ operator.TwoInput = (*WindowJoin)(nil)

// NewWindowJoin returns a WindowJoin; its inputs must be keyed by
// opts.LeftKey() and opts.RightKey().
func NewWindowJoin(opts WindowJoinOptions) (*WindowJoin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &WindowJoin{opts: opts, keys: [2]KeyFunc{opts.LeftKey(), opts.RightKey()},
		win:   [2]WindowRows{opts.LeftWindow, opts.RightWindow},
		reads: [2][]int{concatInts(opts.LeftKeys, opts.LeftWindow.reads()...), concatInts(opts.RightKeys, opts.RightWindow.reads()...)}}, nil
}

// Open registers the state and makes the operator the timers' target.
func (j *WindowJoin) Open(ctx *operator.Context) error {
	if err := j.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(j)
	j.zone = newWindowZone(j.opts.LeftWindow.Zone)
	for s, name := range []string{"window-join-left", "window-join-right"} {
		j.buf[s] = state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{Name: name, ValueCodec: RowCodec{}})
	}
	var err error
	j.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (j *WindowJoin) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	j.wm.save(j.Ctx)
	return j.Base.SnapshotState(id)
}

// ProcessElement takes a row of the left input.
func (j *WindowJoin) ProcessElement(r event.Record) error { return j.process(0, r) }

// ProcessElement2 takes a row of the right input.
func (j *WindowJoin) ProcessElement2(r event.Record) error { return j.process(1, r) }

// process buffers the row in each of its windows that has not fired.
func (j *WindowJoin) process(s int, r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if row.Kind != event.Insert {
		return fmt.Errorf("%w: WindowJoin got a %s row; a window join takes append-only inputs", ErrUpdatesUnsupported, row.Kind)
	}
	if err := checkWidth("WindowJoin", row.Fields, j.reads[s]...); err != nil {
		return err
	}
	wins, err := j.win[s].windows(j.wins[:0], row.Fields)
	if err != nil {
		return fmt.Errorf("sql/exec: WindowJoin, %s input: %w", timerNS[s], err)
	}
	j.wins = wins
	setKey(j.Ctx, j.keys[s](row.Fields))
	wm, added := j.Ctx.Timers.CurrentWatermark(), false
	for _, win := range wins {
		at := j.zone.timer(win.End - 1)
		if at <= wm {
			continue // this window fired already
		}
		id := j.ids.of(win)
		windowRowBuffer{j.buf[s]}.add(id, j.win[s].rowIn(row.Fields, win, j.zone, &j.cols))
		j.Ctx.Timers.Register(operator.EventTime, at, id)
		added = true
	}
	if !added {
		j.Ctx.Metrics.LateDropped++
	}
	return nil
}

// OnTimer fires the window the timer names: it joins the window's rows of
// the current key and forgets them.
func (j *WindowJoin) OnTimer(t operator.Timer) error {
	var rows [2][]any
	for s := range rows {
		rows[s] = windowRowBuffer{j.buf[s]}.take(t.Namespace)
	}
	if err := j.fire(rows[0], rows[1], t.Timestamp); err != nil {
		return fmt.Errorf("sql/exec: WindowJoin condition: %w", err)
	}
	return nil
}

// fire emits what the window's left and right rows give.
func (j *WindowJoin) fire(left, right []any, ts event.Timestamp) error {
	pairs := !j.opts.Semi && !j.opts.Anti
	var rightMatched []bool
	if pairs && j.opts.Type.outer(1) {
		rightMatched = make([]bool, len(right))
	}
	for _, l := range left {
		lrow := l.([]any)
		matched, err := j.probe(lrow, right, rightMatched, pairs, ts)
		if err != nil {
			return err
		}
		switch {
		case j.opts.Semi && matched, j.opts.Anti && !matched:
			emit(j.Ctx, event.Insert, j.leftOut(lrow), ts)
		case pairs && !matched && j.opts.Type.outer(0):
			emitRow(j.Ctx, concatRow(event.Insert, lrow, nulls(j.opts.RightArity)), ts)
		}
	}
	for i, m := range rightMatched {
		if !m {
			emitRow(j.Ctx, concatRow(event.Insert, nulls(j.opts.LeftArity), right[i].([]any)), ts)
		}
	}
	return nil
}

// probe matches lrow with the window's right rows: with pairs it emits
// each joined pair and marks the right rows matched; without, it stops at
// the first match.
func (j *WindowJoin) probe(lrow []any, right []any, rightMatched []bool, pairs bool, ts event.Timestamp) (bool, error) {
	if nullKeyUnsafe(lrow, j.opts.LeftKeys, j.opts.NullSafe) {
		return false, nil
	}
	matched := false
	for i, r := range right {
		rrow := r.([]any)
		if nullKeyUnsafe(rrow, j.opts.RightKeys, j.opts.NullSafe) {
			continue
		}
		if j.opts.Condition != nil {
			ok, err := j.opts.Condition(lrow, rrow)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
		}
		matched = true
		if !pairs {
			return true, nil
		}
		emitRow(j.Ctx, concatRow(event.Insert, lrow, rrow), ts)
		if rightMatched != nil {
			rightMatched[i] = true
		}
	}
	return matched, nil
}

func (j *WindowJoin) leftOut(row []any) []any {
	if w := j.opts.LeftWidth; w > 0 && w < len(row) {
		return row[:w:w]
	}
	return row
}

// ProcessWatermark fires the windows the watermark closes, then forwards
// it; a watermark behind the restored one is held (advanceWatermark).
// The rows a window emits carry its end - 1 ms, which the watermark has
// just reached, so they are not late downstream.
func (j *WindowJoin) ProcessWatermark(wm event.Timestamp) error {
	wm, err := advanceWatermark(j.Ctx, wm)
	if err != nil {
		return err
	}
	j.Ctx.Output.EmitWatermark(wm)
	return nil
}
