package weir

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/window"
	"github.com/weirstream/weir/state"
)

// WindowedStream is a keyed stream cut into event-time windows, waiting for
// its window function (Flink's WindowedStream). Build it with Window.
type WindowedStream[T any, K comparable] struct {
	err      error // the first construction error, returned by Execute
	keyed    KeyedStream[T, K]
	assigner window.Assigner
	lateness time.Duration
	lateTag  string
}

// Window cuts each key's elements into the windows of assigner:
// TumblingEventTimeWindows, SlidingEventTimeWindows or
// EventTimeSessionWindows. Elements need event time (Watermarks on the
// source); a window fires when the watermark passes its end. An invalid
// assigner (a size of 0) is returned by Execute.
func Window[T any, K comparable](k KeyedStream[T, K], assigner WindowAssigner) WindowedStream[T, K] {
	w := WindowedStream[T, K]{keyed: k, assigner: assigner}
	if err := assigner.Validate(); err != nil {
		w.err = fmt.Errorf("weir: Window: %w", err)
	}
	return w
}

// AllowedLateness keeps each window's state d (event time) after it fired:
// an element that arrives meanwhile updates the window, which fires again at
// once with the updated result. Default 0. A d that is negative or not
// whole milliseconds is returned by Execute.
func (w WindowedStream[T, K]) AllowedLateness(d time.Duration) WindowedStream[T, K] {
	if (d < 0 || d%time.Millisecond != 0) && w.err == nil {
		w.err = fmt.Errorf("weir: AllowedLateness(%v): use 0 or a positive whole number of milliseconds", d)
	}
	w.lateness = d
	return w
}

// SideOutputLateData sends elements too late for every one of their
// windows to the side output tag (read it with SideOutput on the window's
// result stream) instead of dropping them. Dropped or not, late elements
// are counted in the job's metrics.
func (w WindowedStream[T, K]) SideOutputLateData(tag OutputTag[T]) WindowedStream[T, K] {
	w.lateTag = tag.ID
	return w
}

// WindowReduce folds each window's elements with fn and emits one value per
// key and window, stamped with the window's last millisecond.
func WindowReduce[T any, K comparable](w WindowedStream[T, K], fn func(a, b T) T, opts ...OperatorOpt) DataStream[T] {
	wopts := w.options(state.Erase(state.CodecFor[T]()))
	wopts.Reduce = func(a, b any) any { return fn(a.(T), b.(T)) }
	return windowThen[T](w, "Reduce", wopts, opts)
}

// WindowAggregate folds each window's elements into an accumulator with agg
// and emits agg.GetResult per key and window, stamped with the window's
// last millisecond. Session windows merge accumulators with agg.Merge.
func WindowAggregate[T any, K comparable, ACC, OUT any](w WindowedStream[T, K], agg AggregateFunction[T, ACC, OUT], opts ...OperatorOpt) DataStream[OUT] {
	wopts := w.options(state.Erase(state.CodecFor[ACC]()))
	wopts.Aggregate = erasedAggregate[T, ACC, OUT]{agg}
	return windowThen[OUT](w, "Aggregate", wopts, opts)
}

// WindowProcess keeps every element of a window and calls fn with all of
// them and the window when it fires (Flink's ProcessWindowFunction). What
// fn emits is stamped with the window's MaxTimestamp unless it uses EmitAt.
// An error fails the job.
func WindowProcess[T any, K comparable, OUT any](w WindowedStream[T, K], fn func(key K, w TimeWindow, elems []T, out Emitter[OUT]) error, opts ...OperatorOpt) DataStream[OUT] {
	wopts := w.options(state.Erase(state.CodecFor[T]()))
	wopts.Process = func(key any, win window.Window, elems []any, out *operator.Collector) error {
		typed := make([]T, len(elems))
		for i, e := range elems {
			typed[i], _ = e.(T) // a nil element of an interface type T stays T's zero value
		}
		return fn(key.(K), timeWindowOf(win), typed, Emitter[OUT]{out})
	}
	return windowThen[OUT](w, "Process", wopts, opts)
}

// TimeWindow is an event-time window, [Start, End), in UTC with
// millisecond precision (Flink's TimeWindow): what a WindowProcess function
// is called for. A session window's bounds are those of its merged
// sessions.
type TimeWindow struct {
	// Start is the first instant in the window.
	Start time.Time
	// End is the first instant after it: windows of a tumbling assigner
	// end where the next one starts.
	End time.Time
}

// MaxTimestamp is the window's last millisecond, End minus 1 ms: results
// are stamped with it, and the window fires when the watermark reaches it.
func (w TimeWindow) MaxTimestamp() time.Time { return w.End.Add(-time.Millisecond) }

// String prints the window as "[start, end)" in milliseconds since the
// epoch, the form Weir's window operator and Flink's TimeWindow use.
func (w TimeWindow) String() string {
	return fmt.Sprintf("[%d, %d)", w.Start.UnixMilli(), w.End.UnixMilli())
}

func timeWindowOf(w window.Window) TimeWindow {
	return TimeWindow{Start: time.UnixMilli(w.Start).UTC(), End: time.UnixMilli(w.End).UTC()}
}

func (w WindowedStream[T, K]) options(codec state.Codec[any]) window.Options {
	return window.Options{Assigner: w.assigner, AllowedLateness: w.lateness, LateTag: w.lateTag, Codec: codec}
}

// windowThen adds the window operator after the keyed stream. The options
// are checked here, so that a mistake is returned by Execute before the
// job runs, not by its first attempt.
func windowThen[U any, T any, K comparable](w WindowedStream[T, K], fn string, wopts window.Options, opts []OperatorOpt) DataStream[U] {
	env := w.keyed.in.env
	if w.err != nil {
		env.fail(w.err)
	} else if _, err := window.New(wopts); err != nil {
		env.fail(fmt.Errorf("weir: Window %s: %w", fn, err))
	}
	name := fmt.Sprintf("Window(%v, %s)", w.assigner, fn)
	return keyedThen[U](w.keyed, name, func() operator.Operator {
		op, err := window.New(wopts)
		if err != nil {
			return operator.Failing(err) // cannot happen: Execute refused it above
		}
		return op
	}, opts)
}

type erasedAggregate[T, ACC, OUT any] struct {
	agg AggregateFunction[T, ACC, OUT]
}

func (e erasedAggregate[T, ACC, OUT]) CreateAccumulator() any { return e.agg.CreateAccumulator() }
func (e erasedAggregate[T, ACC, OUT]) Add(v, acc any) any     { return e.agg.Add(v.(T), acc.(ACC)) }
func (e erasedAggregate[T, ACC, OUT]) GetResult(acc any) any  { return e.agg.GetResult(acc.(ACC)) }
func (e erasedAggregate[T, ACC, OUT]) Merge(a, b any) any     { return e.agg.Merge(a.(ACC), b.(ACC)) }

// WindowAssigner assigns an element's event time to windows (Flink's
// WindowAssigner): make one with TumblingEventTimeWindows,
// SlidingEventTimeWindows or EventTimeSessionWindows.
type WindowAssigner = window.Assigner

// TumblingEventTimeWindows cuts event time into consecutive windows of
// size, starting at the epoch (Flink's TumblingEventTimeWindows.of). For an
// offset, e.g. days in a time zone, use window.Tumbling directly. A size
// under 1 ms is returned by Execute.
func TumblingEventTimeWindows(size time.Duration) WindowAssigner {
	return window.Tumbling{Size: size}
}

// SlidingEventTimeWindows makes windows of size that start every slide, so
// each element is in size/slide windows (Flink's
// SlidingEventTimeWindows.of).
func SlidingEventTimeWindows(size, slide time.Duration) WindowAssigner {
	return window.Sliding{Size: size, Slide: slide}
}

// EventTimeSessionWindows groups each key's elements into sessions that end
// after gap without elements (Flink's EventTimeSessionWindows.withGap).
func EventTimeSessionWindows(gap time.Duration) WindowAssigner {
	return window.Session{Gap: gap}
}
