package planner

import (
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// intersectExcept plans INTERSECT [ALL] and EXCEPT [ALL] as Flink's
// RewriteIntersectAllRule and RewriteMinusAllRule do: each input's rows
// get a marker of their side, the union of both is counted per whole row
// (a GroupAggregate keyed on every column, so NULLs are equal, as set
// operations compare rows), and ReplicateRows emits each row as many
// times as the operation keeps for its two counts. The result updates
// (retract mode) like the aggregate; the aggregate's state is the only
// state, keyed by the row.
//
// Flink plans INTERSECT and EXCEPT without ALL as semi and anti joins
// followed by a DISTINCT; the counting plan gives the same table.
func (p *Planner) intersectExcept(s *parser.SetOp, l, r *Rel, cols []expr.Column) (*Rel, error) {
	kind := map[parser.SetOpKind]exec.SetOpKind{parser.Intersect: exec.Intersect, parser.Except: exec.Except}[s.Op]
	if s.All {
		kind++ // IntersectAll, ExceptAll
	}
	u := unionRel(p.sideMarked(l, cols, true), p.sideMarked(r, cols, false), markedCols(cols))
	keys := upTo(len(cols))
	calls := []exec.AggCall{{Kind: exec.Count, Arg: len(cols)}, {Kind: exec.Count, Arg: len(cols) + 1}}
	counted := append(append([]expr.Column(nil), cols...),
		expr.Column{Name: "$left", Type: types.Type{Kind: types.BigInt}}, expr.Column{Name: "$right", Type: types.Type{Kind: types.BigInt}})
	agg, err := p.groupAgg(u, keys, calls, counted)
	if err != nil {
		return nil, err
	}
	opts := exec.ReplicateRowsOptions{Kind: kind, Arity: len(cols)}
	if _, err := exec.NewReplicateRows(opts); err != nil {
		return nil, err
	}
	out := &Rel{Op: "ReplicateRows", Detail: "setOp=[" + kind.String() + "], select=[" + colNames(cols) + "]",
		Inputs: []*Rel{agg}, Cols: cols, RowTime: -1}
	out.updating(firstNonEmpty(l.UpdatesFrom, r.UpdatesFrom, agg.UpdatesFrom))
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedChained("ReplicateRows", ins[0], opOf(exec.NewReplicateRows, opts))
	}
	return out, nil
}

// sideMarked appends the two side markers to in's rows: 1 and NULL on the
// left, NULL and 1 on the right, so COUNT of each marker counts a row's
// copies on that side.
func (p *Planner) sideMarked(in *Rel, cols []expr.Column, left bool) *Rel {
	evals := make([]*expr.Compiled, 0, len(cols)+2)
	for i, c := range in.Cols {
		evals = append(evals, fieldRef(i, c.Type))
	}
	one := &expr.Compiled{Type: types.Type{Kind: types.Int, Nullable: true}, Const: true,
		Eval: func([]any) (any, error) { return int64(1), nil }}
	null := &expr.Compiled{Type: types.Type{Kind: types.Int, Nullable: true}, Const: true,
		Eval: func([]any) (any, error) { return nil, nil }}
	if left {
		evals = append(evals, one, null)
	} else {
		evals = append(evals, null, one)
	}
	return p.calcOver(in, evals, markedCols(cols))
}

func markedCols(cols []expr.Column) []expr.Column {
	marker := types.Type{Kind: types.Int, Nullable: true}
	return append(append([]expr.Column(nil), cols...),
		expr.Column{Name: "$l", Type: marker}, expr.Column{Name: "$r", Type: marker})
}
