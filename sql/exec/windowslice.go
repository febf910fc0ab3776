package exec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// Sliced window aggregation (Flink's slicing window operator): windows
// are cut into slices — the window for TUMBLE, the slide for HOP, the step
// for CUMULATE — and a row is folded into the one slice it falls in, not
// into each of its windows (HOP(2 s, 10 s) puts a row in 5 windows). A
// window fires by merging the accumulators of its slices. Rows are first
// combined per key and slice in memory (the window buffer) and reach
// state only when the buffer flushes: before a watermark is processed,
// before a checkpoint barrier, when it holds windowBufferSize entries,
// and at the end of the input. Used when every aggregate call can merge
// accumulators (no DISTINCT).

// A key has one timer pending per chain, not one per window: a slice new to
// state sets the timer of its first window still to fire, and a firing
// window sets the timer of the next window end among the key's remaining
// slices. The timer heap then holds about one timer per key, not one per
// key and window (HOP(2 s, 10 s): 5).

// windowBufferSize bounds the in-memory combine buffer (key × slice
// entries), as Flink's mini-batch size bounds its buffer.
const windowBufferSize = 50_000

// sliceMillis is the slice length.
func (w WindowSpec) sliceMillis() int64 {
	switch w.Kind {
	case Hop:
		return w.Slide.Milliseconds()
	case Cumulate:
		return w.Step.Milliseconds()
	}
	return w.Size.Milliseconds()
}

// sliceStart is the start of the slice holding ts.
func (w WindowSpec) sliceStart(ts int64) int64 {
	s := w.sliceMillis()
	return ts - floorMod(ts-w.Offset.Milliseconds(), s)
}

// windowsOfSlice returns the windows that contain the slice starting at ss,
// in end order.
func (w WindowSpec) windowsOfSlice(ss int64) []windowRange {
	size, step := w.Size.Milliseconds(), w.sliceMillis()
	switch w.Kind {
	case Hop:
		out := make([]windowRange, 0, size/step)
		for e := ss + step; e <= ss+size; e += step {
			out = append(out, windowRange{e - size, e})
		}
		return out
	case Cumulate:
		ps := ss - floorMod(ss-w.Offset.Milliseconds(), size)
		var out []windowRange
		for e := ss + step; e <= ps+size; e += step {
			out = append(out, windowRange{ps, e})
		}
		return out
	}
	return []windowRange{{ss, ss + size}}
}

// lastWindowOfSlice is the last of windowsOfSlice(ss), without making the
// list: addToSlice asks it of every row, and the list was an allocation
// per row. A size is a multiple of the slide or step, so a HOP or TUMBLE
// slice's last window starts with it, and a CUMULATE slice's is its
// period's whole window.
func (w WindowSpec) lastWindowOfSlice(ss int64) windowRange {
	size := w.Size.Milliseconds()
	if w.Kind == Cumulate {
		ps := ss - floorMod(ss-w.Offset.Milliseconds(), size)
		return windowRange{ps, ps + size}
	}
	return windowRange{ss, ss + size}
}

// expiredSlices returns the slices whose last window is win: they can go
// once win has fired.
func (w WindowSpec) expiredSlices(win windowRange) []int64 {
	switch w.Kind {
	case Hop:
		return []int64{win.End - w.Size.Milliseconds()}
	case Cumulate:
		if win.End-win.Start < w.Size.Milliseconds() {
			return nil
		}
		var out []int64
		for s := win.Start; s < win.End; s += w.sliceMillis() {
			out = append(out, s)
		}
		return out
	}
	return []int64{win.Start}
}

// windowAcc is what state holds of a key's slice (of a window, when the
// aggregation is not sliced): the group keys and the accumulator, one Go
// value in the heap backend, written by windowAccCodec in the bytes
// RowCodec wrote for [keys, accumulator] (older checkpoints restore).
// Stored as that []any, an entry was two more objects, and each flush
// copied the accumulator. The keys are those of the slice's first row
// (values SQL holds equal but written differently, DECIMAL 1.5 and 1.50,
// come out as the first was), as a session's are.
type windowAcc struct {
	keys, acc []any
}

// inlineWindowAcc is a windowAcc whose keys and accumulator are inside
// it (newEntry; Copy, for a snapshot, too): one object per entry, whose accumulator a
// read finds next to its header, where a windowAcc and its two slices
// were three objects, each a miss of its own as state outgrew the caches.
type inlineWindowAcc struct {
	windowAcc
	fields [windowAccInline]any
}

// windowAccInline is how many keys and accumulator fields an
// inlineWindowAcc holds: a key and COUNT(*)'s [rows, n, v].
const windowAccInline = 4

// newWindowAcc returns a windowAcc of keys and acc: an inlineWindowAcc's,
// holding copies of them, when they fit; else one that holds them.
func newWindowAcc(keys, acc []any) *windowAcc {
	nk, n := len(keys), len(keys)+len(acc)
	if n > windowAccInline {
		return &windowAcc{keys: keys, acc: acc}
	}
	e := newInlineWindowAcc(nk, n)
	copy(e.keys, keys)
	copy(e.acc, acc)
	return e
}

// newInlineWindowAcc returns an inlineWindowAcc's windowAcc of nk keys
// and an accumulator of n-nk fields, their values unset.
func newInlineWindowAcc(nk, n int) *windowAcc {
	e := &inlineWindowAcc{}
	e.keys, e.acc = e.fields[:nk:nk], e.fields[nk:n:n]
	return &e.windowAcc
}

// newEntry returns the windowAcc of a key's first row, fields: its group
// keys boxed apart from the row (pickOwned) and an accumulator of no
// rows, in an inlineWindowAcc when they fit, else in one slice.
func (w *WindowAggregate) newEntry(fields []any) *windowAcc {
	keys := w.opts.GroupKeys
	nk, n := len(keys), len(keys)+w.agg.accLen()
	var e *windowAcc
	if n <= windowAccInline {
		e = newInlineWindowAcc(nk, n)
	} else {
		buf := make([]any, n)
		e = &windowAcc{keys: buf[:nk:nk], acc: buf[nk:n:n]}
	}
	for i, j := range keys {
		e.keys[i] = rebox(fields[j])
	}
	w.agg.initAcc(e.acc)
	return e
}

// windowAccCodec encodes a windowAcc as RowCodec encodes [keys, acc];
// accLen is the accumulator's width, which Decode checks.
type windowAccCodec struct{ accLen int }

func (windowAccCodec) Encode(buf []byte, e *windowAcc) []byte {
	buf = binary.AppendUvarint(append(buf, tagArray), 2)
	return appendValue(appendValue(buf, e.keys, false), e.acc, false)
}

func (c windowAccCodec) Decode(b []byte) (*windowAcc, []byte, error) {
	v, rest, err := RowCodec{}.Decode(b)
	if err != nil {
		return nil, b, err
	}
	if len(v) == 2 {
		keys, ok1 := v[0].([]any)
		acc, ok2 := v[1].([]any)
		if (ok1 || v[0] == nil) && ok2 && len(acc) == c.accLen {
			return &windowAcc{keys: keys, acc: acc}, rest, nil
		}
	}
	return nil, b, fmt.Errorf("%w: sql/exec: a window's state holds %d fields, want keys and an accumulator of %d", state.ErrCorrupt, len(v), c.accLen)
}

// Copy is a deep copy of the accumulator (the keys are never changed),
// for the heap backend to hand the owner while a snapshot encodes e.
func (windowAccCodec) Copy(e *windowAcc) *windowAcc {
	return newWindowAcc(e.keys, RowCodec{}.Copy(e.acc))
}

type sliceKey struct {
	key   string
	start int64
}

type sliceBuf struct {
	e    *windowAcc // what state takes when it has no entry of the slice
	rows int64
}

// windowBuffer is the in-memory combine buffer, in insertion order.
type windowBuffer struct {
	m     map[sliceKey]*sliceBuf
	order []sliceKey
}

func sliceID(ss int64) string { return strconv.FormatInt(ss, 10) }

// sliceIDs remembers the ids of the last few slices: a buffer flush names
// the same few slices for every key.
type sliceIDs struct{ recent[int64, string] }

func (m *sliceIDs) of(ss int64) string { return m.get(ss, sliceID) }

// addSliced folds a row at ts into its slice's buffer entry.
func (w *WindowAggregate) addSliced(k string, fields []any, ts int64) error {
	return w.addToSlice(k, w.opts.Window.sliceStart(ts), fields, 1, func(acc []any) error {
		return w.agg.accumulate(acc, fields, false, nil)
	})
}

// addSlicePartial merges a local phase's partial [keys…, slice start,
// accumulator…] into its slice's buffer entry (WindowAggOptions.Slices).
func (w *WindowAggregate) addSlicePartial(k string, fields []any) error {
	n := len(w.opts.GroupKeys)
	ss, ok := fields[n].(int64)
	if !ok {
		return fmt.Errorf("sql/exec: WindowAggregate: a slice partial's slice start is a %T", fields[n])
	}
	rows, _ := fields[n+1].(int64) // a partial's accumulator counts its rows first
	return w.addToSlice(k, ss, fields, rows, func(acc []any) error { return w.agg.merge(acc, fields[n+1:]) })
}

// addToSlice folds a row, which stands for rows input rows, into the
// buffer entry of key k and slice ss.
func (w *WindowAggregate) addToSlice(k string, ss int64, fields []any, rows int64, fold func(acc []any) error) error {
	if last := w.opts.Window.lastWindowOfSlice(ss); w.fireAt(last) <= w.Ctx.Timers.CurrentWatermark() && !w.opts.ProcTime {
		w.Ctx.Metrics.LateDropped += rows // every window of the row has fired
		return nil
	}
	sk := sliceKey{k, ss}
	b := w.buf.m[sk]
	if b == nil {
		if w.buf.m == nil {
			w.buf.m = map[sliceKey]*sliceBuf{}
		}
		b = &sliceBuf{e: w.newEntry(fields)}
		w.buf.m[sk] = b
		w.buf.order = append(w.buf.order, sk)
	}
	if err := fold(b.e.acc); err != nil {
		return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
	}
	b.rows += rows
	if len(w.buf.order) >= windowBufferSize {
		return w.flushSlices()
	}
	return nil
}

// flushSlices merges the buffer into the slices in state, registering the
// timers of the windows of each slice new to state. It leaves the current
// key changed.
func (w *WindowAggregate) flushSlices() error {
	wm := w.Ctx.Timers.CurrentWatermark()
	for _, sk := range w.buf.order {
		b := w.buf.m[sk]
		setKey(w.Ctx, sk.key)
		id := w.sliceIDs.of(sk.start)
		e, ok := w.accs.Get(id) // the owner's to change in place
		if ok {
			if err := w.agg.merge(e.acc, b.e.acc); err != nil {
				return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
			}
		} else if !w.armFirst(sk.start, wm) {
			// Every window of the slice has fired: its rows are late. The
			// watermark does not move while rows wait in the buffer, so
			// addSliced has dropped them already; this keeps the slice out
			// of state (no timer would ever remove it) and its rows counted
			// should that ever change.
			w.Ctx.Metrics.LateDropped += b.rows
			continue
		}
		if !ok {
			e = b.e
		}
		w.accs.Put(id, e)
	}
	clear(w.buf.m)
	w.buf.order = w.buf.order[:0]
	return nil
}

// armFirst registers the timer of the first window of the slice starting
// at ss that has not fired at watermark wm, and reports whether there is
// one. Rows of the slice are late for the windows before it, which fired
// without them (as in Flink, the row still counts in the later windows).
func (w *WindowAggregate) armFirst(ss int64, wm event.Timestamp) bool {
	for _, win := range w.opts.Window.windowsOfSlice(ss) {
		if w.fireAt(win) > wm || w.opts.ProcTime {
			w.Ctx.Timers.Register(w.domain(), w.fireAt(win), w.ids.of(win))
			return true
		}
	}
	return false
}

// fireSliced emits window win of the current key: the merge of its slices.
// One scan of the key's slices finds both the window's slices and the next
// window to arm (a point read per slice of the window found mostly none:
// HOP(2 s, 10 s) read 5 slices per window for a key with rows in one).
func (w *WindowAggregate) fireSliced(t operator.Timer, win windowRange) error {
	if len(w.buf.order) > 0 { // processing-time timers fire without a watermark before them
		if err := w.flushSlices(); err != nil {
			return err
		}
		w.Ctx.Keyed.SetCurrentKey(t.Key, t.KeyGroup)
	}
	expired := w.opts.Window.expiredSlices(win)
	scan := &w.scan
	scan.in, scan.next, scan.n = scan.in[:0], math.MaxInt64, 0
	w.accs.Range(func(id string, e *windowAcc) bool {
		if s, err := strconv.ParseInt(id, 10, 64); err == nil {
			scan.add(s, e, win, w.opts.Window.sliceMillis(), slices.Contains(expired, s))
		}
		return true
	})
	if scan.n == 1 && len(scan.in) == 1 && !w.opts.ProcTime {
		sl := scan.in[0]
		clear(scan.in)
		return w.fireThrough(win, sl)
	}
	// Merge in slice order, as accumulators that keep the first or last
	// value need.
	slices.SortFunc(scan.in, func(a, b storedSlice) int { return cmp.Compare(a.start, b.start) })
	var keys, acc []any
	for _, sl := range scan.in {
		if acc == nil {
			keys, acc = sl.e.keys, w.agg.newAcc()
		}
		if err := w.agg.merge(acc, sl.e.acc); err != nil {
			return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
		}
	}
	clear(scan.in) // let the state's values go
	for _, s := range expired {
		w.accs.Remove(w.sliceIDs.of(s))
	}
	w.armNext(scan.next, scan.from)
	if acc == nil {
		return nil
	}
	return w.emitWindow(keys, win, acc)
}

// fireThrough fires window win of the current key, whose only slice in
// state is sl, and every later window of sl that the watermark has passed
// too, then arms the timer of the first it has not (or drops the slice).
// A key with one slice has no other timer pending (a second slice's would
// be its first window's), so no timer fires these windows again. When the
// watermark jumps past many window ends at once — the end of the input, a
// backlog read — a key's windows fire on one read of its state instead of
// one timer and one read each (HOP(2 s, 10 s): 5).
func (w *WindowAggregate) fireThrough(win windowRange, sl storedSlice) error {
	keys, acc := sl.e.keys, w.agg.newAcc()
	if err := w.agg.merge(acc, sl.e.acc); err != nil {
		return fmt.Errorf("sql/exec: WindowAggregate: %w", err)
	}
	wm := w.Ctx.Timers.CurrentWatermark()
	for _, v := range w.opts.Window.windowsOfSlice(sl.start) {
		if v.End < win.End {
			continue // fired before
		}
		if v.End > win.End && w.fireAt(v) > wm {
			w.Ctx.Timers.Register(w.domain(), w.fireAt(v), w.ids.of(v))
			return nil
		}
		if err := w.emitWindow(keys, v, acc); err != nil {
			return err
		}
	}
	w.accs.Remove(w.sliceIDs.of(sl.start))
	return nil
}

// storedSlice is a slice of the current key read from state.
type storedSlice struct {
	start int64
	e     *windowAcc
}

// sliceScan collects, over a key's slices, those of a window that fires
// and the first window end after it among the slices that stay.
type sliceScan struct {
	in         []storedSlice
	next, from int64 // the next window end and a slice it holds
	n          int   // slices scanned
}

func (c *sliceScan) add(s int64, e *windowAcc, win windowRange, step int64, expires bool) {
	c.n++
	if s >= win.Start && s < win.End {
		c.in = append(c.in, storedSlice{s, e})
	}
	if expires {
		return
	}
	// The slice's first window end after win's (ends are aligned to step).
	if end := max(s, win.End) + step; end < c.next {
		c.next, c.from = end, s
	}
}

// armNext sets the timer of the window ending at next (none when next is
// math.MaxInt64); from is a slice of it.
func (w *WindowAggregate) armNext(next, from int64) {
	if next == math.MaxInt64 {
		return
	}
	win := windowRange{next - w.opts.Window.Size.Milliseconds(), next}
	if w.opts.Window.Kind == Cumulate {
		size := w.opts.Window.Size.Milliseconds()
		win.Start = from - floorMod(from-w.opts.Window.Offset.Milliseconds(), size)
	}
	w.Ctx.Timers.Register(w.domain(), w.fireAt(win), w.ids.of(win))
}

// emitWindow emits one window's result row.
func (w *WindowAggregate) emitWindow(keys []any, win windowRange, acc []any) error {
	n := len(keys) + 2 + len(w.opts.Aggs)
	if w.opts.WindowTime {
		n++
	}
	row := event.NewRow(event.Insert, n)
	out := append(row.Fields[:0], keys...)
	start, end, wtime := w.cols.of(win, w.fireAt(win))
	out = append(out, start, end)
	if w.opts.WindowTime {
		out = append(out, wtime)
	}
	out = append(out, w.agg.result(acc)...)
	if w.opts.Project == nil && sameSlice(out, row.Fields) {
		emitRow(w.Ctx, row, w.fireAt(win))
		return nil
	}
	if w.opts.Project != nil {
		var err error
		if out, err = w.opts.Project(out); err != nil {
			return err
		}
	}
	emit(w.Ctx, event.Insert, out, w.fireAt(win))
	return nil
}

// ProcessWatermark flushes the buffer, so that its slices' timers are
// registered before the watermark fires them, then fires and forwards.
func (w *WindowAggregate) ProcessWatermark(wm event.Timestamp) error {
	if w.sliced {
		if err := w.flushSlices(); err != nil {
			return err
		}
	}
	wm, err := advanceWatermark(w.Ctx, wm)
	if err != nil {
		return err
	}
	w.Ctx.Output.EmitWatermark(wm)
	return nil
}

// PrepareSnapshotPreBarrier flushes the buffer into state.
func (w *WindowAggregate) PrepareSnapshotPreBarrier(id event.CheckpointID) error {
	if w.sliced {
		if err := w.flushSlices(); err != nil {
			return err
		}
	}
	return w.Base.PrepareSnapshotPreBarrier(id)
}

var _ state.MapState[string, []any]
