package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// unnestJoin plans `l, UNNEST(x) AS a(cols)`, `l CROSS JOIN UNNEST(x)`,
// `l JOIN UNNEST(x) ON cond` and `l LEFT JOIN UNNEST(x) ON TRUE` as
// Flink's Correlate: each row of l joined with the elements of the
// collection x it holds. The ON condition of an inner join and the WHERE
// above it filter the joined rows; they are returned as the rest.
func (p *Planner) unnestJoin(j *parser.Join, l *Rel, u *parser.Unnest, where []parser.Expr) (*Rel, []parser.Expr, error) {
	left := false
	switch j.Kind {
	case parser.LeftJoin:
		if !isTrueLit(j.On) || len(j.Using) > 0 {
			return nil, nil, &Error{Pos: j.Pos, Msg: "LEFT JOIN UNNEST supports only ON TRUE",
				Hint: "write LEFT JOIN UNNEST(…) AS t(x) ON TRUE and filter in WHERE"}
		}
		left = true
	case parser.RightJoin, parser.FullJoin:
		return nil, nil, &Error{Pos: j.Pos, Msg: fmt.Sprintf("%s UNNEST is not supported (as in Flink)", j.Kind),
			Hint: "use CROSS JOIN UNNEST or LEFT JOIN UNNEST … ON TRUE"}
	default:
		if len(j.Using) > 0 {
			return nil, nil, errAt(j.Pos, "JOIN UNNEST … USING is not supported; write the condition in ON or WHERE")
		}
		if j.On != nil && !isTrueLit(j.On) {
			where = append(conjuncts(j.On), where...)
		}
	}
	r, err := p.unnest(l, u, left)
	return r, where, err
}

// tableFunction reads `LATERAL TABLE(f(x)) AS t(cols)` of a user-defined
// function f (a WebAssembly function whose result is an ARRAY: its
// elements are the rows) as UNNEST(f(x)) AS t(cols): Flink's Correlate of a
// table function.
func (p *Planner) tableFunction(t parser.TableExpr) (*parser.Unnest, bool) {
	tf, ok := t.(*parser.TableFunc)
	if !ok || p.Config.Functions[strings.ToUpper(tf.Call.Name)] == nil {
		return nil, false
	}
	return &parser.Unnest{Pos: tf.Pos, Exprs: []parser.Expr{tf.Call}, Alias: tf.Alias, Columns: tf.Columns}, true
}

func isTrueLit(e parser.Expr) bool {
	b, ok := e.(*parser.BoolLit)
	return ok && b.Value
}

// planUnnestAlone plans UNNEST(x) as a FROM item of its own: the
// collection is a constant, unnested once (a one-row, no-column VALUES
// joined with it).
func (p *Planner) planUnnestAlone(u *parser.Unnest) (*Rel, error) {
	one := &Rel{Op: "Values", Detail: "tuples=[[{  }]]", InsertOnly: true, RowTime: -1}
	one.build = func(b *builder, _ []*graph.Node) (*graph.Node, error) {
		return b.g.AddNode(&graph.Node{Name: "Source: Values", UID: b.uid("values"), Parallelism: 1,
			Source: exec.NewValuesSource([][]any{{}})}), nil
	}
	return p.unnest(one, u, false)
}

// unnest joins in with the elements of u's collection, an expression
// over in's columns.
func (p *Planner) unnest(in *Rel, u *parser.Unnest, left bool) (*Rel, error) {
	if len(u.Exprs) != 1 {
		return nil, &Error{Pos: u.Pos, Msg: fmt.Sprintf("UNNEST of %d collections is not supported (as in Flink)", len(u.Exprs)),
			Hint: "unnest one ARRAY or MAP at a time: CROSS JOIN UNNEST(a) AS x(a1) CROSS JOIN UNNEST(b) AS y(b1)"}
	}
	c, err := expr.Compile(u.Exprs[0], p.scope(in.Cols))
	if err != nil {
		return nil, err
	}
	opts, elemCols, err := unnestColumns(u, c.Type)
	if err != nil {
		return nil, err
	}
	opts.Collection, opts.Left, opts.Ordinality = c.Eval, left, u.WithOrdinality
	if len(u.Columns) > 0 && len(u.Columns) != len(elemCols) {
		return nil, &Error{Pos: u.Pos, Msg: fmt.Sprintf("UNNEST(%s) gives %d column(s), but the alias names %d", parser.Format(u.Exprs[0]), len(elemCols), len(u.Columns)),
			Hint: "name every column the UNNEST gives: AS t(" + colNames(elemCols) + ")"}
	}
	for i := range elemCols {
		elemCols[i].Qualifier = u.Alias
		if len(u.Columns) > 0 {
			elemCols[i].Name = u.Columns[i]
		}
		if left {
			elemCols[i].Type.Nullable = true
		}
	}
	if _, err := exec.NewUnnest(opts); err != nil {
		return nil, err
	}
	joinType := "INNER"
	if left {
		joinType = "LEFT"
	}
	out := &Rel{Op: "Correlate", Detail: fmt.Sprintf("invocation=[UNNEST(%s)], joinType=[%s]", parser.Format(u.Exprs[0]), joinType),
		Inputs: []*Rel{in}, Cols: append(append([]expr.Column(nil), in.Cols...), elemCols...), RowTime: in.RowTime, win: in.win}
	out.withMode(in)
	if !in.InsertOnly {
		// One input row gives many rows: the input's key is no key here.
		out.NoDeletes = false
	}
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n, err := b.checkedOp("Correlate", opOf(exec.NewUnnest, opts))
		if err != nil {
			return nil, err
		}
		b.forward(ins[0], n, 0)
		return n, nil
	}
	return out, nil
}

// unnestColumns are the columns an element of a collection of type t
// gives, named as Flink names them until an alias renames them: an
// ARRAY (or MULTISET) of ROWs its fields, of anything else one column EXPR$0,
// a MAP KEY and VALUE; WITH ORDINALITY appends ORDINALITY.
func unnestColumns(u *parser.Unnest, t types.Type) (exec.UnnestOptions, []expr.Column, error) {
	var opts exec.UnnestOptions
	var cols []expr.Column
	switch {
	case (t.Kind == types.Array || t.Kind == types.Multiset) && t.Elem.Kind == types.Row:
		opts.RowElems, opts.Width = true, len(t.Elem.Fields)
		for _, f := range t.Elem.Fields {
			ft := f.Type
			ft.Nullable = ft.Nullable || t.Elem.Nullable
			cols = append(cols, expr.Column{Name: f.Name, Type: ft})
		}
	case t.Kind == types.Array || t.Kind == types.Multiset:
		opts.Width = 1
		cols = append(cols, expr.Column{Name: "EXPR$0", Type: *t.Elem})
	case t.Kind == types.Map:
		opts.Width = 2
		cols = append(cols, expr.Column{Name: "KEY", Type: *t.Key}, expr.Column{Name: "VALUE", Type: *t.Elem})
	default:
		return opts, nil, &Error{Pos: u.Exprs[0].Position(), Msg: fmt.Sprintf("UNNEST takes an ARRAY, a MAP or a MULTISET, not %s (%s)", t, parser.Format(u.Exprs[0])),
			Hint: "unnest a collection column, e.g. CROSS JOIN UNNEST(t.tags) AS x(tag)"}
	}
	for i := range cols {
		cols[i].Type.TimeAttr = ""
	}
	if u.WithOrdinality {
		cols = append(cols, expr.Column{Name: "ORDINALITY", Type: types.Type{Kind: types.Int}})
	}
	return opts, cols, nil
}
