package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
)

// builder turns Rels into graph nodes.
type builder struct {
	g           *graph.StreamGraph
	parallelism int
	seq         int
	calcs       map[*graph.Node]*calcNode
	picks       map[*graph.Node]*pickNode
	// refs counts the Rels of each reuse key in the job; nodes holds the
	// node built for a key read more than once (see Rel.reuseKey).
	refs  map[string]int
	nodes map[string]*graph.Node
	// aside: uid numbers nodes apart from seq (see projectAside); asides
	// counts them.
	aside  bool
	asides int
}

// countReuse counts the reuse keys under r. A keyed subtree seen before is
// not descended into again: it will be built once.
func (b *builder) countReuse(r *Rel) {
	if r.reuseKey != "" {
		if b.refs == nil {
			b.refs = map[string]int{}
		}
		if b.refs[r.reuseKey]++; b.refs[r.reuseKey] > 1 {
			return
		}
	}
	for _, in := range r.Inputs {
		b.countReuse(in)
	}
}

// build adds r (and, first, its inputs) to the graph. A Rel whose reuse
// key the job reads more than once is built once (Flink's sub-plan and
// source reuse): Nexmark's person, auction and bid views all read one
// generated stream, q5 and q7 read the bid view twice and q5 computes the
// same window aggregation twice. No Calc fuses into a shared node: each
// reader filters and projects on its own.
func (b *builder) build(r *Rel) (*graph.Node, error) {
	shared := r.reuseKey != "" && b.refs[r.reuseKey] > 1
	if n, ok := b.nodes[r.reuseKey]; ok && shared {
		return n, nil
	}
	in := make([]*graph.Node, len(r.Inputs))
	for i, x := range r.Inputs {
		n, err := b.build(x)
		if err != nil {
			return nil, err
		}
		in[i] = n
	}
	first := len(b.g.Nodes)
	n, err := r.build(b, in)
	if err == nil {
		b.describeState(r, b.g.Nodes[first:])
	}
	if err != nil || !shared {
		return n, err
	}
	b.markRead(n)
	if b.nodes == nil {
		b.nodes = map[string]*graph.Node{}
	}
	b.nodes[r.reuseKey] = n
	return n, nil
}

// describeState gives the keyed operators among ns, which r's build
// added, the schema of their state, which restore checks.
func (b *builder) describeState(r *Rel, ns []*graph.Node) {
	for _, n := range ns {
		if n.KeySelector != nil && n.StateSchema == nil {
			n.StateSchema = stateSchema(r)
		}
	}
}

// uid gives operators ids that are stable for the same SQL text, so a
// restarted job finds its state.
func (b *builder) uid(op string) string {
	if b.aside {
		b.asides++
		return fmt.Sprintf("sql-%d-%d-%s", b.seq, b.asides, strings.ToLower(op))
	}
	b.seq++
	return fmt.Sprintf("sql-%d-%s", b.seq, strings.ToLower(op))
}

// projectAside is project for a projection a planner change added where
// there was none (a pruning one): when it does not fuse into a Calc
// before it and so adds a node, that node's uid is numbered aside, and
// every other operator keeps the uid it had without it — checkpoints and
// savepoints of jobs planned before restore. (A stateless Calc new to a
// job restores as a new operator does, with nothing.)
func (b *builder) projectAside(name string, in *graph.Node, evals []*expr.Compiled) *graph.Node {
	b.aside = true
	defer func() { b.aside = false }()
	return b.project(name, in, evals)
}

// op adds a one-input operator node.
func (b *builder) op(name string, f func() operator.Operator) *graph.Node {
	return b.g.AddNode(&graph.Node{Name: name, UID: b.uid(name), Parallelism: b.parallelism, NewOperator: f})
}

// checkedOp is op for an operator whose constructor can fail.
func (b *builder) checkedOp(name string, f factory) (*graph.Node, error) {
	nf, err := checked(name, f)
	if err != nil {
		return nil, err
	}
	return b.op(name, nf), nil
}

// forward connects from → to (chained when possible).
func (b *builder) forward(from, to *graph.Node, input int) {
	b.markRead(from)
	b.g.Connect(&graph.Edge{From: from.ID, To: to.ID, Partitioning: graph.Forward, Input: input})
}

// hash connects from → to partitioned by key.
func (b *builder) hash(from, to *graph.Node, key exec.KeyOf, input int) {
	b.markRead(from)
	b.g.Connect(&graph.Edge{From: from.ID, To: to.ID, Partitioning: graph.Hash, Key: key.Key, KeyHash: key.Hash, Input: input})
}

// keyed adds a keyed one-input operator fed by a hash exchange.
func (b *builder) keyed(name string, from *graph.Node, key exec.KeyOf, f func() operator.Operator) *graph.Node {
	n := b.op(name, f)
	n.KeySelector = key.Key
	b.hash(from, n, key, 0)
	return n
}

// keyedTwoInput adds a keyed two-input operator (a join) fed by hash
// exchanges of ins[0] by lk and ins[1] by rk.
func (b *builder) keyedTwoInput(name string, f factory, lk, rk exec.KeyOf, ins []*graph.Node) (*graph.Node, error) {
	n, err := b.checkedOp(name, f)
	if err != nil {
		return nil, err
	}
	n.KeySelector = lk.Key
	b.hash(ins[0], n, lk, 0)
	b.hash(ins[1], n, rk, 1)
	return n, nil
}

// checkedKeyed is keyed for an operator whose constructor can fail.
func (b *builder) checkedKeyed(name string, from *graph.Node, key exec.KeyOf, f factory) (*graph.Node, error) {
	nf, err := checked(name, f)
	if err != nil {
		return nil, err
	}
	return b.keyed(name, from, key, nf), nil
}

// checkedChained is chained for an operator whose constructor can fail.
func (b *builder) checkedChained(name string, from *graph.Node, f factory) (*graph.Node, error) {
	nf, err := checked(name, f)
	if err != nil {
		return nil, err
	}
	return b.chained(name, from, nf), nil
}

// chained adds a one-input operator fed forward by from, at from's
// parallelism, so that it runs in from's chain (a LocalGroupAggregate in
// front of its exchange).
func (b *builder) chained(name string, from *graph.Node, f func() operator.Operator) *graph.Node {
	n := b.g.AddNode(&graph.Node{Name: name, UID: b.uid(name), Parallelism: from.Parallelism, NewOperator: f})
	b.forward(from, n, 0)
	return n
}
