package weir

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
)

// DataStream is a stream of T values produced by one operator (Flink's
// DataStream). Transformations that change T are functions (Map, FlatMap,
// KeyBy, …): Go methods cannot take type parameters.
type DataStream[T any] struct {
	env  *Environment
	node *graph.Node
}

// Env returns the stream's environment.
func (s DataStream[T]) Env() *Environment { return s.env }

// Name sets the operator's name (shown by Explain and in errors).
//
// Deprecated: pass Name(name) to the function that adds the operator.
func (s DataStream[T]) Name(name string) DataStream[T] { s.node.Name = name; return s }

// UID sets the operator's stable id; state is matched by it on restore.
//
// Deprecated: pass UID(uid) to the function that adds the operator. Kept
// while other packages' tests still call it.
func (s DataStream[T]) UID(uid string) DataStream[T] { s.node.UID = uid; return s }

// Parallelism sets the operator's parallelism.
//
// Deprecated: pass Parallelism(n) to the function that adds the operator.
func (s DataStream[T]) Parallelism(n int) DataStream[T] {
	s.node.Parallelism = n
	return s
}

// DisableChaining starts a new operator chain at this operator.
//
// Deprecated: pass DisableChaining() to the function that adds the operator.
func (s DataStream[T]) DisableChaining() DataStream[T] { s.node.DisableChaining = true; return s }

// Rebalance spreads the stream round-robin over the next operator's subtasks.
func (s DataStream[T]) Rebalance() DataStream[T] { return s.partitioned(graph.Rebalance) }

// Broadcast sends every element to every subtask of the next operator.
func (s DataStream[T]) Broadcast() DataStream[T] { return s.partitioned(graph.Broadcast) }

// partitioned inserts an identity operator whose input edge uses p.
func (s DataStream[T]) partitioned(p graph.Partitioning) DataStream[T] {
	n := s.env.addNode(fmt.Sprintf("%s", p), func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return v, nil }}
	})
	s.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: p})
	return DataStream[T]{env: s.env, node: n}
}

func (e *Environment) addNode(name string, f func() operator.Operator) *graph.Node {
	return e.graph.AddNode(&graph.Node{Name: name, Parallelism: e.parallelism, NewOperator: f})
}

// then adds a one-input operator after s, connected forward, configured
// by opts.
func then[U any, T any](s DataStream[T], name string, f func() operator.Operator, opts []OperatorOpt) DataStream[U] {
	n := s.env.addNode(name, f)
	s.env.apply(n, opts)
	s.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: graph.Forward})
	return DataStream[U]{env: s.env, node: n}
}

// Map applies fn to every element.
func Map[T, U any](s DataStream[T], fn func(T) U, opts ...OperatorOpt) DataStream[U] {
	return then[U](s, "Map", func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return fn(v.(T)), nil }}
	}, opts)
}

// MapErr is Map with an error: an error fails the job (and it restarts from
// the latest checkpoint).
func MapErr[T, U any](s DataStream[T], fn func(T) (U, error), opts ...OperatorOpt) DataStream[U] {
	return then[U](s, "Map", func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return fn(v.(T)) }}
	}, opts)
}

// Filter keeps the elements for which fn is true.
func Filter[T any](s DataStream[T], fn func(T) bool, opts ...OperatorOpt) DataStream[T] {
	return then[T](s, "Filter", func() operator.Operator {
		return &operator.Filter{Fn: func(v any) (bool, error) { return fn(v.(T)), nil }}
	}, opts)
}

// Emitter is what flat-map, process and window functions emit U values
// into (Flink's Collector). It is valid only during the call it is given
// to.
type Emitter[U any] struct{ c *operator.Collector }

// Emit sends u on the main output with the input's event time.
func (e Emitter[U]) Emit(u U) { e.c.Collect(u) }

// EmitAt sends u with event time t (truncated to milliseconds; the zero
// time.Time sends u without event time).
func (e Emitter[U]) EmitAt(u U, t time.Time) { e.c.CollectWithTimestamp(u, millisOf(t)) }

// Side sends v to the side output tag (read it with SideOutput).
func Side[U, S any](e Emitter[U], tag OutputTag[S], v S) { e.c.Side(tag.ID, v) }

// Timestamp is the event time of the element (or timer) being processed,
// in UTC; the zero time.Time when it has none.
func (e Emitter[U]) Timestamp() time.Time { return timeOf(e.c.Timestamp()) }

// FlatMap calls fn for each element; fn emits zero or more results.
func FlatMap[T, U any](s DataStream[T], fn func(T, Emitter[U]), opts ...OperatorOpt) DataStream[U] {
	return then[U](s, "FlatMap", func() operator.Operator {
		return &operator.FlatMap{Fn: func(v any, c *operator.Collector) error {
			fn(v.(T), Emitter[U]{c})
			return nil
		}}
	}, opts)
}

// Process is FlatMap with an error result (Flink's ProcessFunction without
// timers; timers need a keyed stream).
func Process[T, U any](s DataStream[T], fn func(T, Emitter[U]) error, opts ...OperatorOpt) DataStream[U] {
	return then[U](s, "Process", func() operator.Operator {
		return &operator.FlatMap{Fn: func(v any, c *operator.Collector) error { return fn(v.(T), Emitter[U]{c}) }}
	}, opts)
}

// OutputTag names a side output of type T (Flink's OutputTag).
type OutputTag[T any] struct{ ID string }

// NewOutputTag returns the tag named id; tags with equal ids are the same
// side output.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{ID: id} }

// SideOutput is the stream of what s's operator emitted under tag.
func SideOutput[T, S any](s DataStream[T], tag OutputTag[S], opts ...OperatorOpt) DataStream[S] {
	n := s.env.addNode("SideOutput "+tag.ID, func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return v, nil }}
	})
	n.Parallelism = s.node.Parallelism
	s.env.apply(n, opts)
	s.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: graph.Forward, SideTag: tag.ID})
	return DataStream[S]{env: s.env, node: n}
}

// Union merges streams of the same type.
func Union[T any](first DataStream[T], others ...DataStream[T]) DataStream[T] {
	n := first.env.addNode("Union", func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return v, nil }}
	})
	for _, s := range append([]DataStream[T]{first}, others...) {
		first.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: graph.Forward})
	}
	return DataStream[T]{env: first.env, node: n}
}

// SinkTo writes the stream to sink (a connector's: kafka.NewSink,
// jdbc.New, …) under the operator name "Sink: "+name. Its guarantee is the
// job's and the sink's together: exactly-once needs both.
func SinkTo[T any](s DataStream[T], sink operator.Sink, name string, opts ...OperatorOpt) DataStream[T] {
	n := s.env.addNode("Sink: "+name, func() operator.Operator { return operator.NewSinkOperator(sink) })
	n.Kind = graph.KindSink // before opts: Name keeps a sink's "Sink: " prefix
	s.env.apply(n, opts)
	s.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: graph.Forward})
	return DataStream[T]{env: s.env, node: n}
}
