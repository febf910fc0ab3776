package weir

import (
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// ConnectedStreams pairs two streams of different types for a two-input
// operator (Flink's ConnectedStreams); each keeps its own type.
type ConnectedStreams[A, B any] struct {
	a DataStream[A]
	b DataStream[B]
}

// Connect pairs a and b.
func Connect[A, B any](a DataStream[A], b DataStream[B]) ConnectedStreams[A, B] {
	return ConnectedStreams[A, B]{a: a, b: b}
}

// CoFlatMap applies fa to elements of the first stream and fb to those of
// the second; both emit into one output stream.
func CoFlatMap[A, B, U any](c ConnectedStreams[A, B], fa func(A, Emitter[U]), fb func(B, Emitter[U]), opts ...OperatorOpt) DataStream[U] {
	env := c.a.env
	n := env.addNode("CoFlatMap", func() operator.Operator { return &coFlatMap[A, B, U]{fa: fa, fb: fb} })
	env.apply(n, opts)
	env.graph.Connect(&graph.Edge{From: c.a.node.ID, To: n.ID, Partitioning: graph.Forward, Input: 0})
	env.graph.Connect(&graph.Edge{From: c.b.node.ID, To: n.ID, Partitioning: graph.Forward, Input: 1})
	return DataStream[U]{env: env, node: n}
}

type coFlatMap[A, B, U any] struct {
	operator.Base
	fa  func(A, Emitter[U])
	fb  func(B, Emitter[U])
	col operator.Collector
}

func (o *coFlatMap[A, B, U]) ProcessElement(r event.Record) error {
	o.col = operator.NewCollector(o.Ctx.Output, r.Timestamp)
	o.fa(r.Value.(A), Emitter[U]{&o.col})
	return nil
}

func (o *coFlatMap[A, B, U]) ProcessElement2(r event.Record) error {
	o.col = operator.NewCollector(o.Ctx.Output, r.Timestamp)
	o.fb(r.Value.(B), Emitter[U]{&o.col})
	return nil
}

// KeyedCoProcessFunction handles two keyed inputs with shared keyed state
// and timers (Flink's KeyedCoProcessFunction).
type KeyedCoProcessFunction[A, B any, K comparable, U any] interface {
	Open(ctx *RuntimeContext) error
	ProcessElement1(v A, ctx *KeyedContext[K], out Emitter[U]) error
	ProcessElement2(v B, ctx *KeyedContext[K], out Emitter[U]) error
	OnTimer(t time.Time, ctx *KeyedContext[K], out Emitter[U]) error
}

// KeyedCoProcess joins two streams keyed by the same key type: elements of
// both with equal keys meet in the same subtask and share its keyed state.
// newFn is called once per subtask and attempt.
func KeyedCoProcess[A, B any, K comparable, U any](ka KeyedStream[A, K], kb KeyedStream[B, K], newFn func() KeyedCoProcessFunction[A, B, K, U], opts ...OperatorOpt) DataStream[U] {
	env := ka.in.env
	keyA, keyB := ka.selector(), kb.selector()
	n := env.addNode("KeyedCoProcess", func() operator.Operator {
		return &keyedCoProcess[A, B, K, U]{fn: newFn(), keyB: keyB}
	})
	env.apply(n, opts)
	n.KeySelector = keyA
	env.graph.Connect(&graph.Edge{From: ka.in.node.ID, To: n.ID, Partitioning: graph.Hash, Key: keyA, Input: 0})
	env.graph.Connect(&graph.Edge{From: kb.in.node.ID, To: n.ID, Partitioning: graph.Hash, Key: keyB, Input: 1})
	return DataStream[U]{env: env, node: n}
}

type keyedCoProcess[A, B any, K comparable, U any] struct {
	operator.Base
	fn   KeyedCoProcessFunction[A, B, K, U]
	keyB operator.KeySelector
	kc   operator.KeyedContext
	col  operator.Collector
}

func (o *keyedCoProcess[A, B, K, U]) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.kc = operator.NewKeyedContext(ctx)
	ctx.Timers.SetTriggerable(o)
	return openUser(ctx, o.fn.Open)
}

func (o *keyedCoProcess[A, B, K, U]) ProcessElement(r event.Record) error {
	o.kc.Key = o.Ctx.SetCurrentKeyOf(r.Value)
	o.col = operator.NewCollector(o.Ctx.Output, r.Timestamp)
	return o.fn.ProcessElement1(r.Value.(A), &KeyedContext[K]{&o.kc}, Emitter[U]{&o.col})
}

func (o *keyedCoProcess[A, B, K, U]) ProcessElement2(r event.Record) error {
	k := o.keyB(r.Value)
	o.Ctx.Keyed.SetCurrentKey(k, keygroup.ForKey(k, o.Ctx.MaxParallelism))
	o.kc.Key = k
	o.col = operator.NewCollector(o.Ctx.Output, r.Timestamp)
	return o.fn.ProcessElement2(r.Value.(B), &KeyedContext[K]{&o.kc}, Emitter[U]{&o.col})
}

func (o *keyedCoProcess[A, B, K, U]) OnTimer(t operator.Timer) error {
	o.kc.Key = t.Key
	o.col = operator.NewCollector(o.Ctx.Output, t.Timestamp)
	return o.fn.OnTimer(timeOf(t.Timestamp), &KeyedContext[K]{&o.kc}, Emitter[U]{&o.col})
}
