package weir

import (
	"fmt"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
)

// DataStream is a stream of T values.
type DataStream[T any] struct {
	env  *Environment
	node *graph.Node
}

// Env returns the stream's environment.
func (s DataStream[T]) Env() *Environment { return s.env }

// Name sets the operator's name (shown by Explain and in errors).
func (s DataStream[T]) Name(name string) DataStream[T] { s.node.Name = name; return s }

// UID sets the operator's stable id; state is matched by it on restore, so
// set it on every stateful operator of a long-running job.
func (s DataStream[T]) UID(uid string) DataStream[T] { s.node.UID = uid; return s }

// Parallelism sets the operator's parallelism.
func (s DataStream[T]) Parallelism(n int) DataStream[T] {
	s.node.Parallelism = n
	return s
}

// DisableChaining starts a new operator chain at this operator.
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

// then adds a one-input operator after s, connected forward.
func then[U any, T any](s DataStream[T], name string, f func() operator.Operator) DataStream[U] {
	n := s.env.addNode(name, f)
	s.env.graph.Connect(&graph.Edge{From: s.node.ID, To: n.ID, Partitioning: graph.Forward})
	return DataStream[U]{env: s.env, node: n}
}

// Map applies fn to every element.
func Map[T, U any](s DataStream[T], fn func(T) U) DataStream[U] {
	return then[U](s, "Map", func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return fn(v.(T)), nil }}
	})
}

// MapErr is Map with an error: an error fails the job (and it restarts from
// the latest checkpoint).
func MapErr[T, U any](s DataStream[T], fn func(T) (U, error)) DataStream[U] {
	return then[U](s, "Map", func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return fn(v.(T)) }}
	})
}

// Filter keeps the elements for which fn is true.
func Filter[T any](s DataStream[T], fn func(T) bool) DataStream[T] {
	return then[T](s, "Filter", func() operator.Operator {
		return &operator.Filter{Fn: func(v any) (bool, error) { return fn(v.(T)), nil }}
	})
}

// Emitter is what flat-map and process functions emit into.
type Emitter[U any] struct{ c *operator.Collector }

// Emit sends u on the main output with the input's timestamp.
func (e Emitter[U]) Emit(u U) { e.c.Collect(u) }

// EmitAt sends u with event time ts (ms).
func (e Emitter[U]) EmitAt(u U, ts int64) { e.c.CollectWithTimestamp(u, ts) }

// Side sends v to a side output.
func Side[U, S any](e Emitter[U], tag OutputTag[S], v S) { e.c.Side(tag.ID, v) }

// Timestamp is the event time of the element being processed.
func (e Emitter[U]) Timestamp() int64 { return e.c.Timestamp() }

// FlatMap calls fn for each element; fn emits zero or more results.
func FlatMap[T, U any](s DataStream[T], fn func(T, Emitter[U])) DataStream[U] {
	return then[U](s, "FlatMap", func() operator.Operator {
		return &operator.FlatMap{Fn: func(v any, c *operator.Collector) error {
			fn(v.(T), Emitter[U]{c})
			return nil
		}}
	})
}

// Process is FlatMap with an error result (Flink's ProcessFunction without
// timers; timers need a keyed stream).
func Process[T, U any](s DataStream[T], fn func(T, Emitter[U]) error) DataStream[U] {
	return then[U](s, "Process", func() operator.Operator {
		return &operator.FlatMap{Fn: func(v any, c *operator.Collector) error { return fn(v.(T), Emitter[U]{c}) }}
	})
}

// OutputTag names a side output of type T (Flink's OutputTag).
type OutputTag[T any] struct{ ID string }

// NewOutputTag returns the tag id.
func NewOutputTag[T any](id string) OutputTag[T] { return OutputTag[T]{ID: id} }

// SideOutput is the stream of what s's operator emitted under tag.
func SideOutput[T, S any](s DataStream[T], tag OutputTag[S]) DataStream[S] {
	n := s.env.addNode("SideOutput "+tag.ID, func() operator.Operator {
		return &operator.Map{Fn: func(v any) (any, error) { return v, nil }}
	})
	n.Parallelism = s.node.Parallelism
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

// SinkTo writes the stream to sink.
func SinkTo[T any](s DataStream[T], sink operator.Sink, name string) DataStream[T] {
	return then[T](s, "Sink: "+name, func() operator.Operator { return operator.NewSinkOperator(sink) })
}
