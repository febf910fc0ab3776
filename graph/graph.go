// Package graph turns what a program declares (the StreamGraph: one node per
// operator) into what runs: the JobGraph, whose vertices are operator chains
// (Flink's chaining: forward edge, same parallelism, single input), and, per
// vertex, its parallel subtasks. Explain prints the plan.
package graph

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/watermark"
)

// Partitioning is how an edge spreads records over downstream subtasks.
type Partitioning int

const (
	Forward   Partitioning = iota // subtask i → subtask i (same parallelism)
	Rebalance                     // round-robin
	Broadcast                     // every record to every subtask
	Hash                          // by key group of the record's key
)

// String implements fmt.Stringer.
func (p Partitioning) String() string {
	return [...]string{"FORWARD", "REBALANCE", "BROADCAST", "HASH"}[p]
}

// Kind is a node's role between the sources and the sinks. Sources are the
// nodes whose Source is set; Kind tells a sink from the operators between.
type Kind int

const (
	// KindTransform is an operator that takes records and emits records
	// (Flink's one-input or two-input transformation): the zero value.
	KindTransform Kind = iota
	// KindSink writes records out of the job (Flink's sink
	// transformation): operator.NewSinkOperator over a connector's sink.
	KindSink
)

// Node is one operator of the StreamGraph.
type Node struct {
	ID             int
	UID            string // stable id: state is matched by it on restore
	Name           string
	Kind           Kind // KindSink for sinks; sources are told by Source
	Parallelism    int
	MaxParallelism int
	// Source nodes set Source (and optionally Watermarks, Timestamps).
	Source     operator.Source
	Watermarks *watermark.Strategy
	Timestamps operator.TimestampAssigner
	// WatermarkInterval is how often a source emits watermarks (default
	// 200 ms, Flink's pipeline.auto-watermark-interval).
	WatermarkInterval time.Duration
	// NewOperator makes one operator instance per subtask (non-sources).
	NewOperator func() operator.Operator
	// KeySelector is set on keyed operators (those after keyBy).
	KeySelector operator.KeySelector
	// DisableChaining keeps the node at the head of its own chain.
	DisableChaining bool
	// StateSchema, when set, says what the operator's state holds. Each
	// checkpoint records it; a restore into a node whose StateSchema.Types
	// differ fails, as Flink's serializer compatibility check does.
	StateSchema *StateSchema
}

// StateSchema describes the state of an operator, in the terms of the
// job's language (SQL types).
type StateSchema struct {
	// Operator names the operator for people, as EXPLAIN prints it
	// ("GroupAggregate(groupBy=[k], select=[k, SUM(v)])").
	Operator string
	// Types is the fingerprint compared on restore: the operator kind and
	// the types of its key and of what it keeps, without column names (a
	// renamed column reads the same state).
	Types string
	// Text is Types for people, with the column names
	// ("key (k INT), state (SUM(v) BIGINT)").
	Text string
	// Legacy, when set, is what older Weirs recorded as Types for the
	// same state (before aggregate functions, or binary rows, were part
	// of it): a checkpoint that recorded one of them restores unchecked
	// by the functions, and an operator that now keeps binary rows (a
	// Top-N, a group aggregation) reads its rows of the older format.
	Legacy []string
}

// IsSource reports whether n is a source.
func (n *Node) IsSource() bool { return n.Source != nil }

// IsSink reports whether n is a sink (Kind KindSink).
func (n *Node) IsSink() bool { return n.Kind == KindSink }

// Edge connects two nodes.
type Edge struct {
	From, To     int
	Partitioning Partitioning
	Key          operator.KeySelector // for Hash
	// KeyHash, when set on a Hash edge, is keygroup.HashKey of Key's
	// result, made without the key (optional).
	KeyHash operator.KeyHasher
	SideTag string // non-empty: carries that side output only
	Input   int    // 0: first input of To, 1: second input
}

// StreamGraph is the graph as the program declared it.
type StreamGraph struct {
	JobName        string
	MaxParallelism int
	Nodes          []*Node
	Edges          []*Edge
}

// AddNode appends n, giving it an id, a default name, UID and parallelism.
func (g *StreamGraph) AddNode(n *Node) *Node {
	n.ID = len(g.Nodes)
	if n.MaxParallelism == 0 {
		n.MaxParallelism = g.maxParallelism()
	}
	if n.UID == "" {
		n.UID = fmt.Sprintf("%s-%d", strings.ReplaceAll(strings.ToLower(n.Name), " ", "-"), n.ID)
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

func (g *StreamGraph) maxParallelism() int {
	if g.MaxParallelism > 0 {
		return g.MaxParallelism
	}
	return keygroup.DefaultMaxParallelism
}

// Connect adds an edge; a Forward edge between different parallelisms
// becomes Rebalance, as in Flink.
func (g *StreamGraph) Connect(e *Edge) {
	if e.Partitioning == Forward && g.Nodes[e.From].Parallelism != g.Nodes[e.To].Parallelism {
		e.Partitioning = Rebalance
	}
	g.Edges = append(g.Edges, e)
}

// Validate checks UIDs are unique and parallelism is within bounds.
func (g *StreamGraph) Validate() error {
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if seen[n.UID] {
			return fmt.Errorf("graph: two operators have uid %q; give each a unique uid", n.UID)
		}
		seen[n.UID] = true
		if n.Parallelism < 1 || n.Parallelism > n.MaxParallelism {
			return fmt.Errorf("graph: operator %q has parallelism %d, want 1..%d (max parallelism)", n.Name, n.Parallelism, n.MaxParallelism)
		}
	}
	return nil
}

func (g *StreamGraph) outEdges(id int) []*Edge {
	var out []*Edge
	for _, e := range g.Edges {
		if e.From == id {
			out = append(out, e)
		}
	}
	return out
}

func (g *StreamGraph) inEdges(id int) []*Edge {
	var in []*Edge
	for _, e := range g.Edges {
		if e.To == id {
			in = append(in, e)
		}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].Input < in[j].Input })
	return in
}

// chainable reports whether e's target can run in its source's chain.
func (g *StreamGraph) chainable(e *Edge) bool {
	from, to := g.Nodes[e.From], g.Nodes[e.To]
	return e.Partitioning == Forward && e.SideTag == "" && !to.DisableChaining &&
		from.Parallelism == to.Parallelism && len(g.mainOut(e.From)) == 1 &&
		len(g.inEdges(e.To)) == 1 && !to.IsSource()
}

func (g *StreamGraph) mainOut(id int) []*Edge {
	var out []*Edge
	for _, e := range g.outEdges(id) {
		if e.SideTag == "" {
			out = append(out, e)
		}
	}
	return out
}
