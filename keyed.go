package weir

import (
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// KeyedStream is a stream partitioned by key: every element with the same
// key goes to the same subtask (by key group), where keyed state and timers
// are scoped to it.
type KeyedStream[T any, K comparable] struct {
	in  DataStream[T]
	key func(T) K
}

// KeyBy partitions s by key. Keys must be comparable and hash stably:
// strings, integers, booleans, or plain structs of them.
func KeyBy[T any, K comparable](s DataStream[T], key func(T) K) KeyedStream[T, K] {
	return KeyedStream[T, K]{in: s, key: key}
}

// selector erases the key function's types for the runtime.
func (k KeyedStream[T, K]) selector() operator.KeySelector {
	return func(v any) any { return k.key(v.(T)) }
}

// keyedThen adds a keyed operator fed by a hash edge from the keyed stream.
func keyedThen[U any, T any, K comparable](k KeyedStream[T, K], name string, f func() operator.Operator, opts []OperatorOpt) DataStream[U] {
	env := k.in.env
	n := env.addNode(name, f)
	env.apply(n, opts)
	n.KeySelector = k.selector()
	env.graph.Connect(&graph.Edge{From: k.in.node.ID, To: n.ID, Partitioning: graph.Hash, Key: n.KeySelector})
	return DataStream[U]{env: env, node: n}
}

// Reduce folds the elements of each key with fn and emits the running
// result after every element (Flink's KeyedStream.reduce).
func Reduce[T any, K comparable](k KeyedStream[T, K], fn func(a, b T) T, opts ...OperatorOpt) DataStream[T] {
	return keyedThen[T](k, "Reduce", func() operator.Operator { return &reduceOp[T]{fn: fn} }, opts)
}

type reduceOp[T any] struct {
	operator.Base
	fn    func(a, b T) T
	state state.ValueState[T]
}

func (r *reduceOp[T]) Open(ctx *operator.Context) error {
	if err := r.Base.Open(ctx); err != nil {
		return err
	}
	r.state = state.Value(ctx.Keyed, state.ValueDescriptor[T]{Name: "reduce"})
	return nil
}

func (r *reduceOp[T]) ProcessElement(rec event.Record) error {
	r.Ctx.SetCurrentKeyOf(rec.Value)
	v := rec.Value.(T)
	if acc, ok := r.state.Value(); ok {
		v = r.fn(acc, v)
	}
	r.state.Update(v)
	r.Ctx.Output.Collect(event.Record{Value: v, Timestamp: rec.Timestamp})
	return nil
}

// AggregateFunction folds IN values into an accumulator ACC and reads an
// OUT result from it (Flink's AggregateFunction).
type AggregateFunction[IN, ACC, OUT any] = state.AggregateFunction[IN, ACC, OUT]

// Aggregate folds each key's elements with agg and emits the running result
// after every element.
func Aggregate[T any, K comparable, ACC, OUT any](k KeyedStream[T, K], agg AggregateFunction[T, ACC, OUT], opts ...OperatorOpt) DataStream[OUT] {
	return keyedThen[OUT](k, "Aggregate", func() operator.Operator { return &aggregateOp[T, ACC, OUT]{agg: agg} }, opts)
}

type aggregateOp[T, ACC, OUT any] struct {
	operator.Base
	agg   AggregateFunction[T, ACC, OUT]
	state state.AggregatingState[T, OUT]
}

func (a *aggregateOp[T, ACC, OUT]) Open(ctx *operator.Context) error {
	if err := a.Base.Open(ctx); err != nil {
		return err
	}
	a.state = state.Aggregating(ctx.Keyed, state.AggregatingDescriptor[T, ACC, OUT]{Name: "aggregate", AggregateFunc: a.agg})
	return nil
}

func (a *aggregateOp[T, ACC, OUT]) ProcessElement(rec event.Record) error {
	a.Ctx.SetCurrentKeyOf(rec.Value)
	a.state.Add(rec.Value.(T))
	out, _ := a.state.Get()
	a.Ctx.Output.Collect(event.Record{Value: out, Timestamp: rec.Timestamp})
	return nil
}

// KeyedProcessFunction is user logic with keyed state and timers (Flink's
// KeyedProcessFunction). Open registers state (ValueStateOf, …) once per
// subtask and attempt; ProcessElement and OnTimer run with the key set, so
// the state handles read and write that key's values. An error from any
// of them fails the job (it restarts from the latest checkpoint).
type KeyedProcessFunction[T any, K comparable, U any] interface {
	Open(ctx *RuntimeContext) error
	ProcessElement(v T, ctx *KeyedContext[K], out Emitter[U]) error
	// OnTimer runs when a timer registered for ctx.Key() at t fires; what
	// it emits carries event time t.
	OnTimer(t time.Time, ctx *KeyedContext[K], out Emitter[U]) error
}

// KeyedProcess runs a function made by newFn on each key's elements and
// timers. newFn is called once per subtask (and again after a failover), so
// fields a function sets in Open are never shared.
func KeyedProcess[T any, K comparable, U any](k KeyedStream[T, K], newFn func() KeyedProcessFunction[T, K, U], opts ...OperatorOpt) DataStream[U] {
	return keyedThen[U](k, "KeyedProcess", func() operator.Operator {
		return &operator.KeyedProcess{Fn: keyedAdapter[T, K, U]{newFn()}}
	}, opts)
}

type keyedAdapter[T any, K comparable, U any] struct {
	fn KeyedProcessFunction[T, K, U]
}

func (a keyedAdapter[T, K, U]) Open(ctx *operator.Context) error {
	return openUser(ctx, a.fn.Open)
}

func (a keyedAdapter[T, K, U]) ProcessElement(v any, kc *operator.KeyedContext, out *operator.Collector) error {
	return a.fn.ProcessElement(v.(T), &KeyedContext[K]{kc}, Emitter[U]{out})
}

func (a keyedAdapter[T, K, U]) OnTimer(t operator.Timer, kc *operator.KeyedContext, out *operator.Collector) error {
	return a.fn.OnTimer(timeOf(t.Timestamp), &KeyedContext[K]{kc}, Emitter[U]{out})
}
