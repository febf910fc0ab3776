package window

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// AggregateFunction is a type-erased aggregate: accumulators, inputs and
// results are of the caller's types behind any.
type AggregateFunction = state.AggregateFunction[any, any, any]

// ProcessFunction sees every element of a window of key when it fires and
// emits into out, whose records carry the window's MaxTimestamp (Flink's
// ProcessWindowFunction). elements is the function's own copy.
type ProcessFunction func(key any, w Window, elements []any, out *operator.Collector) error

// Options configures an Operator. Exactly one of Reduce, Aggregate and
// Process must be set.
type Options struct {
	// Assigner maps elements to windows; a MergingAssigner (Session) makes
	// windows merge. Required.
	Assigner Assigner
	// Reduce folds a window's elements pairwise; the window emits the
	// folded value. It may modify and return a.
	Reduce func(a, b any) any
	// Aggregate folds a window's elements into an accumulator; the window
	// emits GetResult. Add and Merge may modify and return their
	// accumulator argument.
	Aggregate AggregateFunction
	// Process keeps every element of a window and hands them all to the
	// function when the window fires.
	Process ProcessFunction
	// AllowedLateness keeps a window's state this long (in event time)
	// after it fired; elements arriving meanwhile fire it again. Whole
	// milliseconds, >= 0. Default 0.
	AllowedLateness time.Duration
	// LateTag names the side output for late elements. Default "": late
	// elements are dropped (and counted in Metrics.LateDropped).
	LateTag string
	// Codec encodes what a window keeps in state: the reduced value, the
	// accumulator, or each element (Process). Default state.AnyCodec{}.
	Codec state.Codec[any]
}

// EnsureDefaults fills in the defaults of unset fields.
func (o *Options) EnsureDefaults() {
	if o.Codec == nil {
		o.Codec = state.AnyCodec{}
	}
}

// Validate checks the options (after EnsureDefaults).
func (o *Options) Validate() error {
	if o.Assigner == nil {
		return fmt.Errorf("%w: no Assigner; use Tumbling, Sliding or Session", ErrInvalidOptions)
	}
	if err := o.Assigner.Validate(); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{o.Reduce != nil, o.Aggregate != nil, o.Process != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: %d window functions set; set exactly one of Reduce, Aggregate and Process", ErrInvalidOptions, n)
	}
	if o.AllowedLateness < 0 || o.AllowedLateness%time.Millisecond != 0 {
		return fmt.Errorf("%w: AllowedLateness is %v; use 0 or a positive whole number of milliseconds", ErrInvalidOptions, o.AllowedLateness)
	}
	if o.Codec == nil {
		return fmt.Errorf("%w: no Codec; call EnsureDefaults", ErrInvalidOptions)
	}
	return nil
}

// stateName is the name of the MapState from window namespace to contents.
// It is stored in snapshots: renaming it loses every window on restore.
const stateName = "window-contents"

// Operator is the keyed event-time window operator (Flink's
// WindowOperator with an EventTimeTrigger). See the package documentation
// for its rules.
type Operator struct {
	operator.Base
	opts     Options
	merging  MergingAssigner // nil unless the assigner merges
	lateness int64           // ms
	// contents maps a window's namespace to its reduced value, accumulator
	// or element list ([]any), for the current key.
	contents state.MapState[string, any]
	// owned lists the windows whose stored value this operator may modify
	// in place: it was made (or copied) after the last snapshot, so no
	// snapshot's asynchronous Write can be reading it. It is a cache, not
	// state: after a restore it is empty and values are copied once more.
	owned map[ownedKey]struct{}
}

type ownedKey struct {
	key any
	ns  string
}

var (
	_ operator.Operator    = (*Operator)(nil)
	_ operator.Triggerable = (*Operator)(nil)
)

// New returns a window operator, or an error wrapping ErrInvalidOptions.
func New(opts Options) (*Operator, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	op := &Operator{opts: opts, lateness: opts.AllowedLateness.Milliseconds()}
	op.merging, _ = opts.Assigner.(MergingAssigner)
	return op, nil
}

// Open restores state, registers the window state and makes the operator
// the target of its timers.
func (op *Operator) Open(ctx *operator.Context) error {
	if ctx.Keyed == nil || ctx.Timers == nil {
		return fmt.Errorf("window: operator %q has no keyed state or timers; call KeyBy before Window", ctx.UID)
	}
	if err := op.Base.Open(ctx); err != nil {
		return err
	}
	if ctx.Metrics == nil {
		ctx.Metrics = &operator.Metrics{}
	}
	codec := op.opts.Codec
	if op.opts.Process != nil {
		codec = listCodec{elem: codec}
	}
	op.contents = state.Map(ctx.Keyed, state.MapDescriptor[string, any]{
		Name: stateName, KeyCodec: state.StringCodec{}, ValueCodec: codec,
	})
	op.owned = map[ownedKey]struct{}{}
	ctx.Timers.SetTriggerable(op)
	return nil
}

// ProcessElement adds r to each of its windows that is not late, and
// routes r to the late output when all of them are.
func (op *Operator) ProcessElement(r event.Record) error {
	if r.Timestamp == event.NoTimestamp {
		return fmt.Errorf("%w: window operator %q got %v; assign event time at the source (the weir.Watermarks option)",
			ErrNoTimestamp, op.Ctx.UID, r.Value)
	}
	windows := op.opts.Assigner.AssignWindows(r.Timestamp)
	if len(windows) == 0 {
		// Only a sliding assigner with Slide > Size leaves gaps. An element
		// in one belongs to no window; it is not late, so it is counted as
		// filtered out, as a Filter would.
		op.Ctx.Metrics.Filtered++
		return nil
	}
	op.Ctx.SetCurrentKeyOf(r.Value)
	add := op.addToWindows
	if op.merging != nil {
		add = op.addToSessions
	}
	accepted, err := add(windows, r.Value)
	if err != nil || accepted {
		return err
	}
	op.routeLate(r)
	return nil
}

func (op *Operator) addToWindows(windows []Window, v any) (accepted bool, err error) {
	for _, w := range windows {
		if op.isLate(w) {
			continue
		}
		accepted = true
		if err := op.addAndTrigger(w, v); err != nil {
			return true, err
		}
	}
	return accepted, nil
}

// addToSessions merges each new window with the key's windows it touches
// before adding the element. Lateness is judged on the merged window, as in
// Flink: an element whose own window is late still joins a live session.
func (op *Operator) addToSessions(windows []Window, v any) (accepted bool, err error) {
	for _, w := range windows {
		m, err := op.mergeGroup(w)
		if err != nil {
			return accepted, err
		}
		if op.isLate(m.Result) {
			continue
		}
		accepted = true
		if err := op.mergeContents(m); err != nil {
			return true, err
		}
		if err := op.addAndTrigger(m.Result, v); err != nil {
			return true, err
		}
	}
	return accepted, nil
}

// addAndTrigger adds v to w and applies the event-time trigger: fire now
// if the watermark already passed w's end (a late firing), else when it
// does. The cleanup timer drops w's state once its lateness has passed.
func (op *Operator) addAndTrigger(w Window, v any) error {
	if err := op.add(w, v); err != nil {
		return err
	}
	ns := w.Namespace()
	op.Ctx.Timers.Register(operator.EventTime, op.cleanupTime(w), ns)
	if w.MaxTimestamp() <= op.Ctx.Timers.CurrentWatermark() {
		return op.fire(w)
	}
	op.Ctx.Timers.Register(operator.EventTime, w.MaxTimestamp(), ns)
	return nil
}

// OnTimer fires the window at its MaxTimestamp and drops its state at its
// cleanup time (both, with no allowed lateness).
func (op *Operator) OnTimer(t operator.Timer) error {
	if t.Domain != operator.EventTime {
		return nil
	}
	w, err := ParseNamespace(t.Namespace)
	if err != nil {
		return err
	}
	if !op.contents.Contains(t.Namespace) {
		return nil // merged away or cleaned up
	}
	if t.Timestamp == w.MaxTimestamp() {
		if err := op.fire(w); err != nil {
			return err
		}
	}
	if t.Timestamp == op.cleanupTime(w) {
		op.clear(w)
	}
	return nil
}

// SnapshotState forgets which values are owned: the snapshot now shares
// them. Then it snapshots keyed state and timers as Base does.
func (op *Operator) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	clear(op.owned)
	return op.Base.SnapshotState(id)
}

// cleanupTime is when w's state goes: MaxTimestamp + allowed lateness.
func (op *Operator) cleanupTime(w Window) int64 { return addClamped(w.MaxTimestamp(), op.lateness) }

// isLate reports whether w was already cleaned up, or would have been.
func (op *Operator) isLate(w Window) bool {
	return op.cleanupTime(w) <= op.Ctx.Timers.CurrentWatermark()
}

func (op *Operator) routeLate(r event.Record) {
	if op.opts.LateTag != "" {
		op.Ctx.Output.CollectSide(op.opts.LateTag, r)
		op.Ctx.Metrics.LateSide++
		return
	}
	op.Ctx.Metrics.LateDropped++
}

// clear drops w's state and timers for the current key.
func (op *Operator) clear(w Window) {
	ns := w.Namespace()
	op.contents.Remove(ns)
	op.disown(ns)
	op.Ctx.Timers.Delete(operator.EventTime, w.MaxTimestamp(), ns)
	op.Ctx.Timers.Delete(operator.EventTime, op.cleanupTime(w), ns)
}
