package exec

import (
	"fmt"
	"sort"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// WindowRows says where a windowed rank finds each row's window: it runs
// either directly over a window TVF (Assign set: it assigns the windows
// itself, as Flink's WindowRank with a TimeAttributeWindowingStrategy
// does) or over rows that carry their window in two fields (a window
// aggregation's output, or a TUMBLE read through a projection).
type WindowRows struct {
	// Assign, when set, places each row in the windows of this TVF by its
	// rowtime field TimeField, and appends window_start, window_end and
	// window_time to it, as the TVF does: a HOP row is ranked once per
	// window. Default nil: the row carries its window in Start and End.
	Assign *WindowSpec
	// TimeField is the rowtime field (a time.Time or int64 ms) with Assign.
	TimeField int
	// Start and End are the window_start and window_end fields without
	// Assign.
	Start, End int
	// Zone, when set, is the session zone the windows follow (a
	// TIMESTAMP_LTZ time attribute outside UTC, see windowZone): Assign
	// cuts them in its wall clock, Start and End hold its wall clock, and
	// a window fires when the watermark passes the instant of its end.
	// Default nil: UTC.
	Zone *time.Location
}

func (w WindowRows) validate() error {
	if w.Assign != nil {
		if err := w.Assign.Validate(); err != nil {
			return err
		}
		return checkFields("TimeField", []int{w.TimeField}, 0)
	}
	return checkFields("window Start and End", []int{w.Start, w.End}, 0)
}

func (w WindowRows) reads() []int {
	if w.Assign != nil {
		return []int{w.TimeField}
	}
	return []int{w.Start, w.End}
}

// carriedWindow is the window a row carries in its fields start and end.
func carriedWindow(fields []any, start, end int) (windowRange, error) {
	s, err := timeMillis(fields[start])
	if err != nil {
		return windowRange{}, fmt.Errorf("window_start field %d: %w", start, err)
	}
	e, err := timeMillis(fields[end])
	if err != nil {
		return windowRange{}, fmt.Errorf("window_end field %d: %w", end, err)
	}
	return windowRange{s, e}, nil
}

// windows appends the windows of a row to dst (a buffer the caller
// reuses).
func (w WindowRows) windows(dst []windowRange, fields []any) ([]windowRange, error) {
	if w.Assign == nil {
		win, err := carriedWindow(fields, w.Start, w.End)
		if err != nil {
			return nil, err
		}
		return append(dst, win), nil
	}
	ts, err := timeMillis(fields[w.TimeField])
	if err != nil {
		return nil, fmt.Errorf("rowtime field %d: %w", w.TimeField, err)
	}
	zone := newWindowZone(w.Zone)
	return append(dst, w.Assign.assign(zone.local(ts))...), nil
}

// rowIn is the row as it is ranked or joined in window win: with Assign,
// the row with the window's columns appended (boxed by cols; zone is
// w.Zone's).
func (w WindowRows) rowIn(fields []any, win windowRange, zone windowZone, cols *windowColumns) []any {
	if w.Assign == nil {
		return fields
	}
	start, end, wtime := cols.of(win, zone.instant(win.End-1))
	out := make([]any, 0, len(fields)+3)
	return append(append(out, fields...), start, end, wtime)
}

// windowRanker is what WindowRank and WindowDeduplicate share: the rows
// kept so far per key and window, in keyed state (window id → list of
// rows), and an event-time timer at each window's end - 1 ms. When the
// watermark reaches it, the window's rows go out as +I and its state is
// cleared, so the operators need no state TTL. A row of a window that has
// fired is late: it is dropped and counted in Metrics.LateDropped (no
// allowed lateness, as for Flink's window TVFs).
type windowRanker struct {
	operator.Base
	name  string
	win   WindowRows
	key   KeyFunc
	reads []int
	rows  state.MapState[string, []any]
	wm    watermarkKeeper
	zone  windowZone
	ids   windowIDs
	wins  []windowRange // a row's windows, reused
	cols  windowColumns
	// keep returns the rows kept for a window once row arrives, nil when
	// they do not change.
	keep func(kept []any, row []any) ([]any, error)
	// result returns the output rows of a window that fires.
	result func(kept []any) [][]any
}

// Open registers the state and makes the operator the timers' target.
func (w *windowRanker) Open(ctx *operator.Context) error {
	if err := w.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(w)
	w.zone = newWindowZone(w.win.Zone)
	w.rows = state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{Name: "window-rank-rows", ValueCodec: RowCodec{}})
	var err error
	w.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (w *windowRanker) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	w.wm.save(w.Ctx)
	return w.Base.SnapshotState(id)
}

// ProcessElement adds the row to each of its windows that has not fired.
func (w *windowRanker) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if row.Kind != event.Insert {
		return fmt.Errorf("%w: %s got a %s row; it takes an append-only input", ErrUpdatesUnsupported, w.name, row.Kind)
	}
	if err := checkWidth(w.name, row.Fields, w.reads...); err != nil {
		return err
	}
	wins, err := w.win.windows(w.wins[:0], row.Fields)
	if err != nil {
		return fmt.Errorf("sql/exec: %s: %w", w.name, err)
	}
	w.wins = wins
	setKey(w.Ctx, w.key(row.Fields))
	wm, added := w.Ctx.Timers.CurrentWatermark(), false
	for _, win := range wins {
		if w.zone.timer(win.End-1) <= wm {
			continue // this window fired already
		}
		if err := w.add(win, w.win.rowIn(row.Fields, win, w.zone, &w.cols)); err != nil {
			return fmt.Errorf("sql/exec: %s: %w", w.name, err)
		}
		added = true
	}
	if !added {
		w.Ctx.Metrics.LateDropped++
	}
	return nil
}

func (w *windowRanker) add(win windowRange, row []any) error {
	id := w.ids.of(win)
	kept, ok := w.rows.Get(id)
	if !ok {
		w.Ctx.Timers.Register(operator.EventTime, w.zone.timer(win.End-1), id)
	}
	next, err := w.keep(kept, row)
	if err != nil || next == nil {
		return err
	}
	w.rows.Put(id, next)
	return nil
}

// OnTimer fires the window the timer names: it emits the window's rows
// and forgets them.
func (w *windowRanker) OnTimer(t operator.Timer) error {
	kept, ok := w.rows.Get(t.Namespace)
	if !ok {
		return nil
	}
	w.rows.Remove(t.Namespace)
	for _, out := range w.result(kept) {
		emit(w.Ctx, event.Insert, out, t.Timestamp)
	}
	return nil
}

// ProcessWatermark fires the windows the watermark closes, then forwards
// it; a watermark behind the restored one is held (advanceWatermark).
func (w *windowRanker) ProcessWatermark(wm event.Timestamp) error {
	wm, err := advanceWatermark(w.Ctx, wm)
	if err != nil {
		return err
	}
	w.Ctx.Output.EmitWatermark(wm)
	return nil
}

// WindowRankOptions configures a WindowRank: the query
//
//	SELECT … FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start,
//	  window_end, p ORDER BY x DESC) AS rn FROM windowed) WHERE rn <= N
//
// (or rn = N, rn BETWEEN M AND N).
type WindowRankOptions struct {
	// Window says where each row's window comes from.
	Window WindowRows
	// PartitionKeys are the PARTITION BY fields besides window_start and
	// window_end.
	PartitionKeys []int
	// OrderBy is the ORDER BY, over the ranked row (with Window.Assign, the
	// row with the window's columns appended). Required. Rows that tie keep
	// their arrival order.
	OrderBy []SortKey
	// RankStart and RankEnd bound the ranks emitted: 1 <= RankStart <=
	// RankEnd. Required.
	RankStart, RankEnd int
	// RankNumber appends rn (BIGINT) to every output row. Default false.
	RankNumber bool
}

// Validate checks the options.
func (o *WindowRankOptions) Validate() error {
	if o.RankStart < 1 || o.RankEnd < o.RankStart {
		return fmt.Errorf("%w: WindowRank has ranks [%d, %d]; the filter must keep ranks 1 <= M <= N", ErrInvalidOptions, o.RankStart, o.RankEnd)
	}
	if len(o.OrderBy) == 0 {
		return fmt.Errorf("%w: WindowRank has no ORDER BY", ErrInvalidOptions)
	}
	for _, k := range o.OrderBy {
		if err := checkFields("OrderBy", []int{k.Field}, 0); err != nil {
			return err
		}
	}
	if err := checkFields("PartitionKeys", o.PartitionKeys, 0); err != nil {
		return err
	}
	return o.Window.validate()
}

// Key is the KeyFunc the operator's input must be partitioned by: the
// partition keys without the window, which is a namespace of the state
// (as in Flink, so that a HOP row can be keyed before it is assigned).
func (o *WindowRankOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

// WindowRank is Flink's Window Top-N: the rows of ranks RankStart to
// RankEnd of each partition and window, emitted once, insert-only, when
// the watermark passes the window's end. Only the first RankEnd rows of a
// window are kept (the input is append-only: no row comes back from
// below), one sorted list per key and window.
type WindowRank struct {
	windowRanker
	opts WindowRankOptions
}

// NewWindowRank returns a WindowRank; its input must be keyed by
// opts.Key().
func NewWindowRank(opts WindowRankOptions) (*WindowRank, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	w := &WindowRank{opts: opts}
	w.windowRanker = windowRanker{name: "WindowRank", win: opts.Window, key: opts.Key(),
		reads: concatInts(opts.PartitionKeys, opts.Window.reads()...), keep: w.keep, result: w.result}
	if opts.Window.Assign == nil {
		// Without Assign the order fields are input fields too.
		for _, k := range opts.OrderBy {
			w.reads = append(w.reads, k.Field)
		}
	}
	return w, nil
}

// keep inserts row after the rows it ties with, and keeps the first
// RankEnd rows; nil when row ranks below them.
func (w *WindowRank) keep(kept []any, row []any) ([]any, error) {
	if err := checkWidth("WindowRank", row, w.sortFields()...); err != nil {
		return nil, err
	}
	i := sort.Search(len(kept), func(i int) bool { return compareRows(w.opts.OrderBy, row, kept[i].([]any)) < 0 })
	if i >= w.opts.RankEnd {
		return nil, nil
	}
	next := make([]any, 0, min(len(kept)+1, w.opts.RankEnd))
	next = append(append(append(next, kept[:i]...), row), kept[i:]...)
	return next[:min(len(next), w.opts.RankEnd)], nil
}

func (w *WindowRank) sortFields() []int {
	out := make([]int, len(w.opts.OrderBy))
	for i, k := range w.opts.OrderBy {
		out[i] = k.Field
	}
	return out
}

// result is ranks RankStart to RankEnd, each with its rank if asked.
func (w *WindowRank) result(kept []any) [][]any {
	var out [][]any
	for i := w.opts.RankStart - 1; i < len(kept); i++ {
		row := kept[i].([]any)
		if w.opts.RankNumber {
			row = append(append(make([]any, 0, len(row)+1), row...), int64(i+1))
		}
		out = append(out, row)
	}
	return out
}

// WindowDedupOptions configures a WindowDeduplicate: the query
//
//	SELECT … FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start,
//	  window_end, p ORDER BY rowtime ASC|DESC) AS rn FROM windowed)
//	WHERE rn = 1
type WindowDedupOptions struct {
	// Window says where each row's window comes from.
	Window WindowRows
	// PartitionKeys are the PARTITION BY fields besides window_start and
	// window_end.
	PartitionKeys []int
	// TimeField is the event-time field the ORDER BY names, in the ranked
	// row (with Window.Assign, the row with the window's columns
	// appended): a time.Time or an int64 of ms.
	TimeField int
	// KeepLast keeps the row with the latest time (ORDER BY … DESC; of
	// rows at one time, the last to arrive). Default false keeps the row
	// with the earliest time (of rows at one time, the first to arrive).
	KeepLast bool
}

// Validate checks the options.
func (o *WindowDedupOptions) Validate() error {
	if err := checkFields("PartitionKeys and TimeField", concatInts(o.PartitionKeys, o.TimeField), 0); err != nil {
		return err
	}
	return o.Window.validate()
}

// Key is the KeyFunc the operator's input must be partitioned by (see
// WindowRankOptions.Key).
func (o *WindowDedupOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

// WindowDeduplicate is Flink's Window Deduplication: the first or last row
// of each partition and window by event time, emitted once, insert-only,
// when the watermark passes the window's end. The state is one row per
// key and window. Output rows are the ranked rows, unchanged (a selected
// rn is always 1: the planner appends it).
type WindowDeduplicate struct {
	windowRanker
	opts WindowDedupOptions
}

// NewWindowDeduplicate returns a WindowDeduplicate; its input must be
// keyed by opts.Key().
func NewWindowDeduplicate(opts WindowDedupOptions) (*WindowDeduplicate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	w := &WindowDeduplicate{opts: opts}
	w.windowRanker = windowRanker{name: "WindowDeduplicate", win: opts.Window, key: opts.Key(),
		reads: concatInts(opts.PartitionKeys, opts.Window.reads()...), keep: w.keep,
		result: func(kept []any) [][]any { return [][]any{kept[0].([]any)} }}
	return w, nil
}

// keep replaces the kept row with row when row is later (keep last, a tie
// included) or strictly earlier (keep first).
func (w *WindowDeduplicate) keep(kept []any, row []any) ([]any, error) {
	if err := checkWidth("WindowDeduplicate", row, w.opts.TimeField); err != nil {
		return nil, err
	}
	ct, err := timeMillis(row[w.opts.TimeField])
	if err != nil {
		return nil, fmt.Errorf("time field %d: %w", w.opts.TimeField, err)
	}
	if len(kept) > 0 {
		pt, err := timeMillis(kept[0].([]any)[w.opts.TimeField])
		if err != nil {
			return nil, err
		}
		if (w.opts.KeepLast && ct < pt) || (!w.opts.KeepLast && ct >= pt) {
			return nil, nil
		}
	}
	return []any{row}, nil
}
