package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
)

// builder turns Rels into graph nodes.
type builder struct {
	g           *graph.StreamGraph
	parallelism int
	seq         int
	calcs       map[*graph.Node]*calcNode
}

// build adds r (and, first, its inputs) to the graph.
func (b *builder) build(r *Rel) (*graph.Node, error) {
	in := make([]*graph.Node, len(r.Inputs))
	for i, x := range r.Inputs {
		n, err := b.build(x)
		if err != nil {
			return nil, err
		}
		in[i] = n
	}
	return r.build(b, in)
}

// uid gives operators ids that are stable for the same SQL text, so a
// restarted job finds its state.
func (b *builder) uid(op string) string {
	b.seq++
	return fmt.Sprintf("sql-%d-%s", b.seq, strings.ToLower(op))
}

// op adds a one-input operator node.
func (b *builder) op(name string, f func() operator.Operator) *graph.Node {
	return b.g.AddNode(&graph.Node{Name: name, UID: b.uid(name), Parallelism: b.parallelism, NewOperator: f})
}

// forward connects from → to (chained when possible).
func (b *builder) forward(from, to *graph.Node, input int) {
	b.markRead(from)
	b.g.Connect(&graph.Edge{From: from.ID, To: to.ID, Partitioning: graph.Forward, Input: input})
}

// hash connects from → to partitioned by key.
func (b *builder) hash(from, to *graph.Node, key operator.KeySelector, input int) {
	b.markRead(from)
	b.g.Connect(&graph.Edge{From: from.ID, To: to.ID, Partitioning: graph.Hash, Key: key, Input: input})
}

// keyed adds a keyed one-input operator fed by a hash exchange.
func (b *builder) keyed(name string, from *graph.Node, key operator.KeySelector, f func() operator.Operator) *graph.Node {
	n := b.op(name, f)
	n.KeySelector = key
	b.hash(from, n, key, 0)
	return n
}
