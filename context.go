package weir

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// RuntimeContext is what a keyed function's Open receives (Flink's
// RuntimeContext): which subtask runs it, and its keyed state, registered
// with ValueStateOf, ListStateOf and MapStateOf. Register state in Open and
// keep the handles; a handle reads and writes the value of the key being
// processed.
type RuntimeContext struct{ ctx *operator.Context }

// openUser runs a user function's Open. A mistake in registering keyed
// state — a TTL under 1 ms, a name registered with two kinds, a restored
// state of another kind — panics in package state (Flink's getState throws
// there too); here it becomes Open's error, marked
// operator.ErrNonRestartable: a restart would register the same way, so
// the job fails at once, saying why, instead of restarting in a loop.
// Other panics go on to the subtask, which reports them.
func openUser(ctx *operator.Context, open func(*RuntimeContext) error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(error)
		if !ok || !(errors.Is(e, state.ErrInvalidDescriptor) || errors.Is(e, state.ErrIncompatible)) {
			panic(r)
		}
		err = fmt.Errorf("%w: %w", operator.ErrNonRestartable, e)
	}()
	return open(&RuntimeContext{ctx})
}

// SubtaskIndex is the index of the subtask running the function, from 0.
func (c *RuntimeContext) SubtaskIndex() int { return c.ctx.Subtask.Index }

// Parallelism is the number of subtasks running the function.
func (c *RuntimeContext) Parallelism() int { return c.ctx.Parallelism }

// Restored is true when the function's state came from a checkpoint or
// savepoint (after a failover or a restore), false on a fresh start.
func (c *RuntimeContext) Restored() bool { return c.ctx.Restored }

// ValueState is one value per key (Flink's ValueState): Value, Update,
// Clear.
type ValueState[T any] = state.ValueState[T]

// ListState is a list per key (Flink's ListState): Add, Get, Update, Clear.
type ListState[T any] = state.ListState[T]

// MapState is a map per key (Flink's MapState): Get, Put, Remove, Range, ….
type MapState[K comparable, V any] = state.MapState[K, V]

// StateOpt configures a keyed state when it is registered.
type StateOpt interface{ applyState(*stateConfig) }

type stateConfig struct{ ttl *state.TTLConfig }

type stateOpt func(*stateConfig)

func (f stateOpt) applyState(c *stateConfig) { f(c) }

// StateTTL expires each entry ttl (processing time) after it was created
// or last written, and never returns an expired one (Flink's
// StateTtlConfig with OnCreateAndWrite and NeverReturnExpired). ttl must be
// at least 1 ms: a shorter one fails the job, not restartable, when Open
// registers the state. The default keeps entries until cleared.
func StateTTL(ttl time.Duration) StateOpt {
	return stateOpt(func(c *stateConfig) {
		c.ttl = &state.TTLConfig{TTL: ttl, UpdateType: state.OnCreateAndWrite}
	})
}

func stateConfigOf(opts []StateOpt) stateConfig {
	var c stateConfig
	for _, o := range opts {
		o.applyState(&c)
	}
	return c
}

// ValueStateOf registers (or, after a restore, finds) the keyed value
// state name of type T (Flink's getState(ValueStateDescriptor)). name is
// stored in checkpoints: renaming a state loses it on restore. Values are
// encoded with the state package's codec for T (gob for structs).
func ValueStateOf[T any](c *RuntimeContext, name string, opts ...StateOpt) ValueState[T] {
	return state.Value(c.ctx.Keyed, state.ValueDescriptor[T]{Name: name, TTL: stateConfigOf(opts).ttl})
}

// ListStateOf registers the keyed list state name with elements of type T
// (Flink's getListState); a TTL expires each element on its own.
func ListStateOf[T any](c *RuntimeContext, name string, opts ...StateOpt) ListState[T] {
	return state.List(c.ctx.Keyed, state.ListDescriptor[T]{Name: name, TTL: stateConfigOf(opts).ttl})
}

// MapStateOf registers the keyed map state name from K to V (Flink's
// getMapState); a TTL expires each entry on its own.
func MapStateOf[K comparable, V any](c *RuntimeContext, name string, opts ...StateOpt) MapState[K, V] {
	return state.Map(c.ctx.Keyed, state.MapDescriptor[K, V]{Name: name, TTL: stateConfigOf(opts).ttl})
}

// KeyedContext gives a keyed function the current key, the clocks and
// timers (Flink's KeyedProcessFunction.Context and TimerService). Times are
// in UTC, with millisecond precision: a timer's time is truncated to the
// millisecond. It is valid only during the call it is given to.
type KeyedContext[K comparable] struct{ kc *operator.KeyedContext }

// Key is the key of the element or timer being processed.
func (c *KeyedContext[K]) Key() K { return c.kc.Key.(K) }

// CurrentWatermark is the operator's event-time clock: the zero time.Time
// before the first watermark.
func (c *KeyedContext[K]) CurrentWatermark() time.Time { return timeOf(c.kc.CurrentWatermark()) }

// CurrentProcessingTime is the subtask's processing-time clock (the wall
// clock, or the runtime's Now).
func (c *KeyedContext[K]) CurrentProcessingTime() time.Time {
	return timeOf(c.kc.CurrentProcessingTime())
}

// RegisterEventTimeTimer calls OnTimer with t for this key once the
// watermark reaches t. A timer registered twice for the same key and time
// fires once; timers are checkpointed.
func (c *KeyedContext[K]) RegisterEventTimeTimer(t time.Time) {
	c.kc.RegisterEventTimeTimer(t.UnixMilli())
}

// RegisterProcessingTimeTimer calls OnTimer with t for this key once the
// processing-time clock reaches t.
func (c *KeyedContext[K]) RegisterProcessingTimeTimer(t time.Time) {
	c.kc.RegisterProcessingTimeTimer(t.UnixMilli())
}

// DeleteEventTimeTimer removes this key's event-time timer at t, if any.
func (c *KeyedContext[K]) DeleteEventTimeTimer(t time.Time) {
	c.kc.DeleteEventTimeTimer(t.UnixMilli())
}

// EndOfTime is the watermark a bounded input ends with (Flink's
// Watermark.MAX_WATERMARK, Long.MAX_VALUE ms): an event-time timer at
// EndOfTime fires once every input has ended, after every other timer.
var EndOfTime = time.UnixMilli(event.MaxWatermark).UTC()
