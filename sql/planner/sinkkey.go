package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
)

// An updating query writes into a sink with a PRIMARY KEY by that key. Two
// things can reorder the changes of one sink key on the way, and both lose
// rows (Flink plans around them the same way):
//
//  1. The rows of one sink key come from several upstream keys. An inner
//     join on cust_id emits an order's row from the subtask of its
//     cust_id; when the order moves to another cust_id, the +I of the new
//     row (from the new cust's subtask) can reach the sink before the -D
//     of the old one (from the old cust's subtask), and the sink, applying
//     the -D by order_id, deletes the new row. A SinkUpsertMaterializer
//     keyed by the sink key (exec.SinkUpsertMaterializer) absorbs the late
//     -D. It is needed unless the query's upsert key is the sink key
//     (table.exec.sink.upsert-materialize).
//  2. Even with one producer per sink key, the sink's subtasks must each
//     see all the changes of their keys in order: a hash exchange by the
//     sink key in front of the sink, unless the rows already come hashed by
//     exactly that key (table.exec.sink.keyed-shuffle). The planner tracks
//     that partitioning in Rel.hashedBy.

// SinkMode is the value of table.exec.sink.upsert-materialize and
// table.exec.sink.keyed-shuffle.
type SinkMode uint8

const (
	// SinkAuto (AUTO, the default) adds the operator when the planner
	// cannot show it is not needed.
	SinkAuto SinkMode = iota
	// SinkForce (FORCE) adds it to every sink with a PRIMARY KEY.
	SinkForce
	// SinkNone (NONE) never adds it.
	SinkNone
)

// ParseSinkMode reads AUTO, FORCE or NONE (any case).
func ParseSinkMode(s string) (SinkMode, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "AUTO":
		return SinkAuto, nil
	case "FORCE":
		return SinkForce, nil
	case "NONE":
		return SinkNone, nil
	}
	return 0, fmt.Errorf("%q is not AUTO, FORCE or NONE", s)
}

// keyThrough maps key, columns of a Calc's input, to the Calc's output
// columns, given from (the input column each output column copies, or
// -1). It is nil when a key column is not copied.
func keyThrough(key, from []int) []int {
	if key == nil {
		return nil
	}
	out := make([]int, len(key))
	for i, k := range key {
		j := slices.Index(from, k)
		if j < 0 {
			return nil
		}
		out[i] = j
	}
	return out
}

// upTo returns 0, 1, …, n-1: the group keys at the front of an
// aggregation's output.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// sameSet reports whether a and b hold the same columns, in any order.
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// sinkKeyIndexes are the positions of t's PRIMARY KEY columns in its
// physical row, in key order.
func sinkKeyIndexes(t *catalog.Table) []int {
	var names []string
	for _, f := range t.Physical() {
		names = append(names, f.Name)
	}
	out := make([]int, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		out[i] = indexOf(names, k)
	}
	return out
}

// materialize reports whether an updating q written into t needs a
// SinkUpsertMaterializer.
func (p *Planner) materialize(t *catalog.Table, q *Rel) bool {
	if len(t.PrimaryKey) == 0 || q.InsertOnly {
		return false
	}
	switch p.Config.UpsertMaterialize {
	case SinkForce:
		return true
	case SinkNone:
		return false
	}
	return !sameSet(q.upsertKey, sinkKeyIndexes(t))
}

// keyedShuffle reports whether q needs a hash exchange by t's PRIMARY KEY
// in front of the sink.
func (p *Planner) keyedShuffle(t *catalog.Table, q *Rel) bool {
	if len(t.PrimaryKey) == 0 || p.Config.Parallelism <= 1 {
		return false
	}
	switch p.Config.KeyedShuffle {
	case SinkForce:
		return true
	case SinkNone:
		return false
	}
	return !q.InsertOnly && !slices.Equal(q.hashedBy, sinkKeyIndexes(t))
}

// sinkInput puts what t's PRIMARY KEY needs in front of its sink: a hash
// exchange by the key and a SinkMaterializer behind it, or only the
// exchange, or nothing.
func (p *Planner) sinkInput(t *catalog.Table, q *Rel) *Rel {
	mat, shuffle := p.materialize(t, q), p.keyedShuffle(t, q)
	if !mat && !shuffle {
		return q
	}
	pk := sinkKeyIndexes(t)
	key := exec.FieldKeyOf(pk...)
	names := strings.Join(t.PrimaryKey, ", ")
	ex := &Rel{Op: "Exchange", Detail: "distribution=[hash[" + names + "]]", Inputs: []*Rel{q}, Cols: q.Cols, RowTime: -1,
		upsertKey: q.upsertKey, hashedBy: pk}
	ex.withMode(q)
	// The exchange is the edge into the next node: it builds nothing, and
	// the node it feeds connects by hash (hashedBy says so).
	ex.build = func(_ *builder, ins []*graph.Node) (*graph.Node, error) { return ins[0], nil }
	if !mat {
		return ex
	}
	opts := exec.SinkMaterializerOptions{PrimaryKey: pk, StateTTL: p.Config.StateTTL}
	m := &Rel{Op: "SinkMaterializer", Detail: "pk=[" + names + "]", Inputs: []*Rel{ex}, Cols: q.Cols, RowTime: -1,
		upsertKey: pk, hashedBy: pk}
	m.withMode(q)
	m.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("SinkMaterializer", ins[0], key, opOf(exec.NewSinkUpsertMaterializer, opts))
	}
	return m
}

// primaryKeyCols are the positions of t's PRIMARY KEY columns in cols (a
// scan's), or nil when t has none.
func primaryKeyCols(t *catalog.Table, cols []expr.Column) []int {
	if len(t.PrimaryKey) == 0 {
		return nil
	}
	out := make([]int, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		if out[i] = slices.IndexFunc(cols, func(c expr.Column) bool { return c.Name == k }); out[i] < 0 {
			return nil
		}
	}
	return out
}
