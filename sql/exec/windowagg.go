package exec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// WindowKind is a windowing table-valued function.
type WindowKind uint8

const (
	// Tumble is TUMBLE(TABLE t, DESCRIPTOR(ts), size): fixed, disjoint
	// windows.
	Tumble WindowKind = iota
	// Hop is HOP(TABLE t, DESCRIPTOR(ts), slide, size): windows of size
	// starting every slide; a row is in size/slide of them.
	Hop
	// Cumulate is CUMULATE(TABLE t, DESCRIPTOR(ts), step, size): windows
	// that all start at a multiple of size and end step, 2·step, … size
	// later, so each emits the running aggregate of its max window.
	Cumulate
)

// String is the window table-valued function's name: TUMBLE, HOP or
// CUMULATE; an unknown kind prints as WindowKind(n).
func (k WindowKind) String() string {
	switch k {
	case Tumble:
		return "TUMBLE"
	case Hop:
		return "HOP"
	case Cumulate:
		return "CUMULATE"
	}
	return fmt.Sprintf("WindowKind(%d)", uint8(k))
}

// WindowSpec is a window TVF's arguments. Every duration is a whole number
// of milliseconds.
type WindowSpec struct {
	Kind WindowKind
	// Size is the window size (TUMBLE, HOP) or the max window size
	// (CUMULATE).
	Size time.Duration
	// Slide is HOP's slide. Size must be a multiple of it.
	Slide time.Duration
	// Step is CUMULATE's step. Size must be a multiple of it.
	Step time.Duration
	// Offset shifts the window starts (the TVFs' optional offset). Default 0:
	// windows align to the epoch.
	Offset time.Duration
}

// Validate checks the spec.
func (w WindowSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s window: "+format, append([]any{ErrInvalidOptions, w.Kind}, args...)...)
	}
	ms := func(d time.Duration) bool { return d%time.Millisecond == 0 }
	if w.Size <= 0 || !ms(w.Size) || !ms(w.Offset) {
		return bad("size %v and offset %v must be whole milliseconds, size positive", w.Size, w.Offset)
	}
	switch w.Kind {
	case Tumble:
	case Hop:
		if w.Slide <= 0 || !ms(w.Slide) || w.Size%w.Slide != 0 {
			return bad("slide %v must be a positive whole number of ms dividing the size %v", w.Slide, w.Size)
		}
	case Cumulate:
		if w.Step <= 0 || !ms(w.Step) || w.Size%w.Step != 0 {
			return bad("step %v must be a positive whole number of ms dividing the max size %v", w.Step, w.Size)
		}
	default:
		return bad("unknown kind")
	}
	return nil
}

// windowRange is [Start, End) in ms.
type windowRange struct{ Start, End int64 }

// floorMod is x mod m in [0, m).
func floorMod(x, m int64) int64 { return ((x % m) + m) % m }

// assign returns the windows a row at ts (ms) belongs to.
func (w WindowSpec) assign(ts int64) []windowRange {
	size, off := w.Size.Milliseconds(), w.Offset.Milliseconds()
	switch w.Kind {
	case Hop:
		slide := w.Slide.Milliseconds()
		last := ts - floorMod(ts-off, slide)
		var out []windowRange
		for s := last; s > ts-size; s -= slide {
			out = append(out, windowRange{s, s + size})
		}
		return out
	case Cumulate:
		step := w.Step.Milliseconds()
		start := ts - floorMod(ts-off, size)
		first := start + (ts-start)/step*step + step // the first end after ts
		var out []windowRange
		for end := first; end <= start+size; end += step {
			out = append(out, windowRange{start, end})
		}
		return out
	}
	start := ts - floorMod(ts-off, size)
	return []windowRange{{start, start + size}}
}

// id names a window in timers and state keys.
func (r windowRange) id() string {
	return strconv.FormatInt(r.Start, 10) + "," + strconv.FormatInt(r.End, 10)
}

// windowIDs remembers the ids of the last few windows: a firing names the
// same windows for every key, a HOP row names 5 in turn, and each name was
// a new string (2.5 % of q5's CPU), each kept in a timer.
type windowIDs struct{ recent[windowRange, string] }

func (m *windowIDs) of(r windowRange) string { return m.get(r, windowRange.id) }

func parseWindowID(s string) (windowRange, error) {
	a, b, ok := strings.Cut(s, ",")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return windowRange{}, fmt.Errorf("%w: bad window id %q in a timer", state.ErrCorrupt, s)
	}
	return windowRange{start, end}, nil
}

// WindowAggOptions configures a WindowAggregate.
type WindowAggOptions struct {
	// Window is the window TVF.
	Window WindowSpec
	// TimeField is the rowtime column (DESCRIPTOR(ts)): a time.Time or an
	// int64 of ms since the epoch.
	TimeField int
	// GroupKeys are the GROUP BY fields besides window_start and
	// window_end.
	GroupKeys []int
	// Aggs are the aggregate calls. The input is insert-only, as for
	// Flink's window aggregation.
	Aggs []AggCall
	// WindowTime adds window_time (window_end - 1ms, the rowtime of the
	// output) after window_end. Default false.
	WindowTime bool
	// ProcTime makes the windows follow processing time (DESCRIPTOR of a
	// PROCTIME() attribute): a row belongs to the windows of the wall
	// clock when it arrives (TimeField is not read), and a window fires
	// when the wall clock passes its end; at the end of a bounded input
	// every open window fires. Default false: event time.
	ProcTime bool
	// Zone, when set, aligns the windows to its wall clock, as Flink does
	// for a TIMESTAMP_LTZ time attribute under a 'table.local-time-zone'
	// other than UTC: window_start and window_end are that wall clock, a
	// window fires when the watermark (or processing time) passes the
	// instant of its end, and window_time is that instant (see
	// windowZone). Default nil: UTC.
	Zone *time.Location
	// Attached, when set, takes each row's window from its window_start
	// and window_end fields instead of assigning windows by TimeField,
	// which is then not read: an aggregation grouped by the window
	// columns of an upstream window aggregation, rank or join (Flink's
	// cascaded window aggregation, its windows attached to the rows).
	// Window says what those windows are. Default nil.
	Attached *WindowColumns
	// Partial: the rows are a LocalAggregate's partials [keys…,
	// window_start, window_end, accumulator…] (the second phase of a
	// two-phase cascaded window aggregation, Flink's
	// GlobalWindowAggregate): GroupKeys are 0…n-1 and Attached is n, n+1,
	// and the accumulators are merged. Every call must merge (see
	// LocalAggOptions). Default false.
	Partial bool
	// Slices: the rows are a LocalAggregate's slice partials [keys…,
	// slice start, accumulator…] (LocalAggOptions.Slice; the second phase
	// of a window TVF's two-phase aggregation): GroupKeys are 0…n-1 and
	// TimeField is n, the slice start (an int64 of ms), and the
	// accumulators merge into their slices. Default false.
	Slices bool
	// Project, if set, maps each result row [keys…, window_start,
	// window_end, (window_time,) aggs…] to the output row (the SELECT
	// list's order). Default: that row as it is.
	Project func(fields []any) ([]any, error)
}

// WindowColumns are the fields where rows carry their window.
type WindowColumns struct{ Start, End int }

// Validate checks the options.
func (o *WindowAggOptions) Validate() error {
	if err := o.Window.Validate(); err != nil {
		return err
	}
	if len(o.Aggs) == 0 {
		return fmt.Errorf("%w: WindowAggregate has no aggregate calls", ErrInvalidOptions)
	}
	if o.Attached != nil && o.ProcTime {
		return fmt.Errorf("%w: WindowAggregate: attached windows follow event time", ErrInvalidOptions)
	}
	if err := checkFields("GroupKeys and the window fields", o.reads(), 0); err != nil {
		return err
	}
	if o.Slices {
		n := len(o.GroupKeys)
		if o.Partial || o.Attached != nil || o.ProcTime || !slices.Equal(o.GroupKeys, firstN(n)) || o.TimeField != n {
			return fmt.Errorf("%w: a WindowAggregate of slice partials reads [keys…, slice start, accumulator…] in event time", ErrInvalidOptions)
		}
		local := LocalAggOptions{Agg: GroupAggOptions{GroupKeys: o.GroupKeys, Aggs: o.Aggs, InputInsertOnly: true}, BatchSize: 1}
		return local.Validate()
	}
	if err := checkAggs(o.Aggs, false); err != nil || !o.Partial {
		return err
	}
	n := len(o.GroupKeys)
	if o.Attached == nil || !slices.Equal(o.GroupKeys, firstN(n)) || *o.Attached != (WindowColumns{n, n + 1}) {
		return fmt.Errorf("%w: a partial WindowAggregate reads [keys…, window_start, window_end, accumulator…]", ErrInvalidOptions)
	}
	local := LocalAggOptions{Agg: GroupAggOptions{GroupKeys: o.reads(), Aggs: o.Aggs, InputInsertOnly: true}, BatchSize: 1}
	return local.Validate()
}

// reads are the fields a row must have: the keys and the time field, or
// the keys and the attached window's fields.
func (o *WindowAggOptions) reads() []int {
	if o.Attached != nil {
		return concatInts(concatInts(o.GroupKeys, o.Attached.Start), o.Attached.End)
	}
	return concatInts(o.GroupKeys, o.TimeField)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *WindowAggOptions) Key() KeyFunc { return FieldKey(o.GroupKeys...) }

// WindowAggregate aggregates the rows of each key and window of a window
// TVF (Flink's window aggregation over TUMBLE, HOP and CUMULATE) and emits
// one +I row per window and key once the watermark passes the window's
// end, stamped with window_time. Rows of windows that already fired are
// dropped and counted in Metrics.LateDropped (no allowed lateness, as in
// Flink's window TVFs). Timers clean each window's state when it fires,
// so the operator needs no state TTL.
type WindowAggregate struct {
	operator.Base
	opts WindowAggOptions
	key  KeyFunc
	agg  aggregator
	// reads are the fields a row must have.
	reads []int
	accs  state.MapState[string, *windowAcc] // window (or slice) id → [keys, accumulator]
	sets  []state.MapState[string, []any]
	wm    watermarkKeeper
	// sliced: the accumulators merge, so rows go to slices (windowslice.go).
	sliced   bool
	buf      windowBuffer
	scan     sliceScan // fireSliced's, reused
	zone     windowZone
	ids      windowIDs
	cols     windowColumns
	sliceIDs sliceIDs
}

// NewWindowAggregate returns a WindowAggregate; its input must be keyed by
// opts.Key().
func NewWindowAggregate(opts WindowAggOptions) (*WindowAggregate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	w := &WindowAggregate{opts: opts, key: opts.Key(), reads: opts.reads(),
		agg: aggregator{calls: opts.Aggs, insertOnly: true}, sliced: opts.Attached == nil, zone: newWindowZone(opts.Zone)}
	for i := range opts.Aggs {
		w.sliced = w.sliced && !w.agg.needsSet(i)
	}
	return w, nil
}

// Open registers the state and makes the operator the timers' target.
func (w *WindowAggregate) Open(ctx *operator.Context) error {
	if err := w.Base.Open(ctx); err != nil {
		return err
	}
	ctx.Timers.SetTriggerable(w)
	name := "window-acc"
	if w.sliced {
		name = "window-slices"
	}
	w.accs = state.Map(ctx.Keyed, state.MapDescriptor[string, *windowAcc]{Name: name, ValueCodec: windowAccCodec{accLen: len(w.agg.newAcc())}})
	w.sets = make([]state.MapState[string, []any], len(w.opts.Aggs))
	for i := range w.opts.Aggs {
		if w.agg.needsSet(i) {
			w.sets[i] = state.Map(ctx.Keyed, state.MapDescriptor[string, []any]{
				Name: fmt.Sprintf("window-values-%d", i), ValueCodec: RowCodec{}})
		}
	}
	var err error
	w.wm, err = openWatermark(ctx)
	return err
}

// SnapshotState keeps the watermark with the state (see watermarkKeeper).
func (w *WindowAggregate) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	w.wm.save(w.Ctx)
	return w.Base.SnapshotState(id)
}

// valueSet is call i's multiset of window win of the current key.
func (w *WindowAggregate) valueSet(i int, win windowRange) valueSet {
	return valueSet{m: w.sets[i], prefix: win.id() + "/"}
}

// ProcessElement adds the row to each of its windows that has not fired.
func (w *WindowAggregate) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if row.Kind != event.Insert {
		return fmt.Errorf("%w: WindowAggregate got a %s row; window aggregation takes an append-only input", ErrUpdatesUnsupported, row.Kind)
	}
	if err := checkWidth("WindowAggregate", row.Fields, w.reads...); err != nil {
		return err
	}
	if w.opts.Attached != nil {
		return w.addAttached(row.Fields)
	}
	if w.opts.Slices {
		return w.addSlicePartial(w.key(row.Fields), row.Fields)
	}
	ts, err := w.rowTime(row.Fields)
	if err != nil {
		return err
	}
	k := w.key(row.Fields)
	if w.sliced {
		return w.addSliced(k, row.Fields, ts)
	}
	setKey(w.Ctx, k)
	wm, added := w.Ctx.Timers.CurrentWatermark(), false
	for _, win := range w.opts.Window.assign(ts) {
		if w.fireAt(win) <= wm && !w.opts.ProcTime {
			continue // this window fired already
		}
		if err := w.add(win, row.Fields); err != nil {
			return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
		}
		added = true
	}
	if !added {
		w.Ctx.Metrics.LateDropped++
	}
	return nil
}

// rowTime is the time that places a row in windows: its rowtime field, or
// the wall clock for processing-time windows.
func (w *WindowAggregate) rowTime(fields []any) (int64, error) {
	if w.opts.ProcTime {
		return w.zone.local(w.Ctx.Now()), nil
	}
	ts, err := timeMillis(fields[w.opts.TimeField])
	if err != nil {
		return 0, fmt.Errorf("sql/exec: WindowAggregate: rowtime field %d: %w", w.opts.TimeField, err)
	}
	return w.zone.local(ts), nil
}

// fireAt is the instant (watermark or processing time) at which win
// fires: its end - 1 ms, as an instant when the windows follow a zone.
func (w *WindowAggregate) fireAt(win windowRange) int64 { return w.zone.timer(win.End - 1) }

func (w *WindowAggregate) domain() operator.TimeDomain {
	if w.opts.ProcTime {
		return operator.ProcessingTime
	}
	return operator.EventTime
}

// Finish fires every open processing-time window at the end of the input
// (event-time windows fire on the final watermark).
func (w *WindowAggregate) Finish() error {
	if w.sliced {
		if err := w.flushSlices(); err != nil {
			return err
		}
	}
	if w.opts.ProcTime {
		return w.Ctx.Timers.AdvanceProcessingTime(math.MaxInt64)
	}
	return nil
}

// addAttached adds the row to the window it carries, unless that window
// has fired.
func (w *WindowAggregate) addAttached(fields []any) error {
	win, err := carriedWindow(fields, w.opts.Attached.Start, w.opts.Attached.End)
	if err != nil {
		return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
	}
	if w.fireAt(win) <= w.Ctx.Timers.CurrentWatermark() {
		w.Ctx.Metrics.LateDropped++
		return nil
	}
	setKey(w.Ctx, w.key(fields))
	if err := w.add(win, fields); err != nil {
		return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
	}
	return nil
}

func (w *WindowAggregate) add(win windowRange, fields []any) error {
	id := w.ids.of(win)
	e, ok := w.accs.Get(id) // the owner's to change in place
	if !ok {
		e = w.newEntry(fields)
		w.Ctx.Timers.Register(w.domain(), w.fireAt(win), id)
	}
	if w.opts.Partial {
		if err := w.agg.merge(e.acc, fields[len(w.opts.GroupKeys)+2:]); err != nil {
			return err
		}
	} else if err := w.agg.accumulate(e.acc, fields, false, func(i int) multiset { return w.valueSet(i, win) }); err != nil {
		return err
	}
	w.accs.Put(id, e)
	return nil
}

// OnTimer fires the window the timer names: it emits the window's result
// and forgets the window.
func (w *WindowAggregate) OnTimer(t operator.Timer) error {
	win, err := parseWindowID(t.Namespace)
	if err != nil {
		return err
	}
	if w.sliced {
		return w.fireSliced(t, win)
	}
	e, ok := w.accs.Get(t.Namespace)
	if !ok {
		return nil
	}
	w.accs.Remove(t.Namespace)
	for i, s := range w.sets {
		if s != nil {
			w.valueSet(i, win).clear()
		}
	}
	return w.emitWindow(e.keys, win, e.acc)
}

// windowColumns boxes the window_start, window_end and window_time values
// of the last few windows, so that rows of the same window share them
// instead of each row allocating three: a window fires for its keys one
// after another, and a TVF's rows fall in the windows of the row before
// (HOP(2 s, 10 s) cycles through 5).
type windowColumns struct{ recent[timedWindow, [3]any] }

// timedWindow is a window and its window_time.
type timedWindow struct {
	win  windowRange
	time int64
}

// of returns win's columns, window_time being the instant t.
func (c *windowColumns) of(win windowRange, t int64) (start, end, windowTime any) {
	v := c.get(timedWindow{win, t}, func(w timedWindow) [3]any {
		return [3]any{millisTime(w.win.Start), millisTime(w.win.End), millisTime(w.time)}
	})
	return v[0], v[1], v[2]
}

// recent maps the last 8 keys looked up to their values, made by mk on a
// miss: for values that rows in a row share (window names, boxed window
// bounds), so each is made once, not once per row. It belongs to one
// subtask.
type recent[K comparable, V any] struct {
	keys [8]K
	vals [8]V
	set  [8]bool
	next int // the entry replaced next
}

func (c *recent[K, V]) get(k K, mk func(K) V) V {
	for i := range c.keys {
		if c.set[i] && c.keys[i] == k {
			return c.vals[i]
		}
	}
	i := c.next
	c.next = (c.next + 1) % len(c.keys)
	c.keys[i], c.vals[i], c.set[i] = k, mk(k), true
	return c.vals[i]
}
