package planner

import (
	"fmt"

	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// A correlated scalar subquery, (SELECT v FROM t WHERE t.k = outer.k …),
// is decorrelated as Calcite and Flink do: the subquery is planned once
// with its correlated inner columns added to its select list (and to its
// GROUP BY when it aggregates), and each outer row is joined on those
// columns with the one row of its key — a ScalarJoin keyed by them, NULL
// while the key has no row, a second row of a key failing the job as
// Flink's SINGLE_VALUE does.
//
// An aggregate without GROUP BY has one row even where no row correlates,
// which the grouped form lacks: there the aggregates must take their
// value over no rows. That is NULL for all but COUNT, which is 0, so the
// select item is computed above the join from the aggregates' columns,
// a COUNT read as COALESCE(count, 0) (Flink's CASE WHEN … IS NULL THEN 0).

// correlatedScalar reports whether sq is a scalar subquery whose WHERE
// reads a column of in, and returns its SELECT and planned FROM.
func (p *Planner) correlatedScalar(in *Rel, q *parser.Query) (*parser.Select, *Rel, bool) {
	sel, ok := q.Body.(*parser.Select)
	if !ok || len(q.With) > 0 || len(q.OrderBy) > 0 || q.Limit != nil || sel.From == nil || sel.Where == nil {
		return nil, nil, false
	}
	from, err := p.planFrom(sel.From)
	if err != nil || !readsOuter(in, from, sel.Where) {
		return nil, nil, false
	}
	return sel, from, true
}

// singleRowAggregate reports whether q is a correlated SELECT of aggregates
// without GROUP BY or HAVING: exactly one row for every outer row.
func (p *Planner) singleRowAggregate(in *Rel, q *parser.Query) bool {
	sel, _, ok := p.correlatedScalar(in, q)
	return ok && len(sel.GroupBy) == 0 && sel.Having == nil && len(collectAggregates(sel)) > 0
}

// scalarUnderIn rewrites x [NOT] IN (q) of a single-row aggregate q whose
// empty value matters (a COUNT, or NOT IN, which sees the NULL row) to
// x = (q) [negated]: for one row the two are the same in SQL's logic.
// (Only SUM, MIN, MAX and AVG are known here to be NULL over no rows.)
func (p *Planner) scalarUnderIn(in *Rel, x *parser.InQuery) (parser.Expr, bool) {
	if !p.singleRowAggregate(in, x.Query) {
		return nil, false
	}
	nullWhenEmpty := true
	for _, f := range collectAggregates(x.Query.Body.(*parser.Select)) {
		switch f.Name {
		case "SUM", "MIN", "MAX", "AVG":
		default:
			nullWhenEmpty = false
		}
	}
	if nullWhenEmpty && !x.Not {
		return nil, false // a grouped semi join gives the same rows (decorrelateAggregate)
	}
	var c parser.Expr = &parser.Binary{Pos: x.Pos, Op: parser.Eq, L: x.X, R: &parser.Subquery{Pos: x.Query.Pos, Query: x.Query}}
	if x.Not {
		c = not(c)
	}
	return c, true
}

// correlatedScalarJoin joins in with the row of a correlated scalar
// subquery, its value in a column appended to in's.
func (p *Planner) correlatedScalarJoin(in *Rel, sq *parser.Subquery, sel *parser.Select, from *Rel) (*Rel, error) {
	refuse := func(why string) error {
		return &Error{Pos: sq.Pos, Msg: "this correlated scalar subquery is not supported yet: " + why,
			Hint: "join the subquery, aggregated by the correlated columns, on those columns"}
	}
	if len(sel.Items) != 1 || isStar(sel.Items[0].Expr) {
		return nil, &Error{Pos: sq.Pos, Msg: "a scalar subquery must select exactly one column"}
	}
	if sel.Having != nil || hasOver(sel.Items[0].Expr) || hasSubquery(sel.Items[0].Expr) {
		return nil, refuse("it has HAVING, OVER or a nested subquery in its select item")
	}
	var inner, corr []parser.Expr
	var outerCols []int
	for _, c := range conjuncts(sel.Where) {
		if !readsOuter(in, from, c) {
			inner = append(inner, c)
			continue
		}
		o, i, ok := correlatedExprs(in, from, c)
		if !ok {
			return nil, refuse(fmt.Sprintf("its correlated condition %s is not outer.col = inner.col", parser.Format(c)))
		}
		outerCols, corr = append(outerCols, identIndex(in, o)), append(corr, i)
	}
	aggs := collectAggregates(sel)
	fromAggs := len(sel.GroupBy) == 0 && len(aggs) > 0
	for _, f := range aggs {
		if fromAggs && (f.Name == "JSON_ARRAYAGG" || f.Name == "JSON_OBJECTAGG") {
			return nil, refuse(f.Name + " of no rows is not NULL")
		}
	}
	g, nvals := correlatedSelect(sel, inner, corr, aggs, fromAggs)
	right, err := p.planSelect(g)
	if err != nil {
		return nil, err
	}
	opts := exec.SemiJoinOptions{Mode: exec.Scalar, RightArity: len(right.Cols), LeftKeys: outerCols}
	for i := range corr {
		opts.RightKeys = append(opts.RightKeys, nvals+i)
	}
	j := p.semiJoin(in, right, len(in.Cols), opts, "select=["+parser.Format(sq)+"]")
	j.Cols = append(append([]expr.Column(nil), in.Cols...), nullableCols(right.Cols)...)
	j.InsertOnly, j.upsertKey = false, nil
	j.UpdatesFrom = firstNonEmpty(in.UpdatesFrom, right.UpdatesFrom, "Join(joinType=[ScalarJoin])")
	value := fieldRef(len(in.Cols), j.Cols[len(in.Cols)].Type)
	if fromAggs {
		if value, err = p.valueOverAggs(j, len(in.Cols), sel.Items[0].Expr, aggs); err != nil {
			return nil, err
		}
	}
	return p.withScalarColumn(j, len(in.Cols), value), nil
}

// correlatedSelect is sel with the correlated inner columns corr added to
// its select list (and GROUP BY), its WHERE only the inner conditions.
// With fromAggs the list is the aggregates, not the item. It returns the
// number of value columns before the correlated ones.
func correlatedSelect(sel *parser.Select, inner, corr []parser.Expr, aggs []*parser.FuncCall, fromAggs bool) (*parser.Select, int) {
	g := *sel
	g.Items, g.Where = []*parser.SelectItem{{Pos: sel.Items[0].Pos, Expr: sel.Items[0].Expr, Alias: "$value"}}, nil
	if fromAggs {
		g.Items = nil
		for i, f := range aggs {
			g.Items = append(g.Items, &parser.SelectItem{Pos: f.Pos, Expr: f, Alias: fmt.Sprintf("$agg%d", i)})
		}
	}
	nvals := len(g.Items)
	for i, c := range corr {
		g.Items = append(g.Items, &parser.SelectItem{Pos: c.Position(), Expr: c, Alias: fmt.Sprintf("$corr%d", i)})
	}
	if len(sel.GroupBy) > 0 || fromAggs {
		g.GroupBy = append(append([]parser.Expr(nil), sel.GroupBy...), corr...)
	}
	if len(inner) > 0 {
		g.Where = andAll(inner)
	}
	return &g, nvals
}

// valueOverAggs compiles the select item over the joined row, whose
// aggregate columns start at base: each aggregate reads its column (NULL
// where no row correlates), a COUNT reads 0 there.
func (p *Planner) valueOverAggs(j *Rel, base int, item parser.Expr, aggs []*parser.FuncCall) (*expr.Compiled, error) {
	col := map[string]int{}
	for i, f := range aggs {
		col[parser.Format(f)] = i
	}
	sc := p.scope(j.Cols)
	sc.Resolve = func(e parser.Expr) (*expr.Compiled, error) {
		f, ok := isAggCall(e)
		if !ok {
			return nil, nil
		}
		i := base + col[parser.Format(f)]
		if f.Name != "COUNT" {
			return fieldRef(i, j.Cols[i].Type), nil
		}
		zero := &parser.FuncCall{Pos: f.Pos, Name: "COALESCE", Args: []parser.Expr{
			&parser.Ident{Pos: f.Pos, Parts: []string{j.Cols[i].Name}}, &parser.NumberLit{Pos: f.Pos, Text: "0"}}}
		return expr.Compile(zero, p.scope(j.Cols))
	}
	return expr.Compile(item, sc)
}

// withScalarColumn keeps the first width columns of j and appends value,
// the scalar subquery's column.
func (p *Planner) withScalarColumn(j *Rel, width int, value *expr.Compiled) *Rel {
	evals := make([]*expr.Compiled, 0, width+1)
	for i := range width {
		evals = append(evals, fieldRef(i, j.Cols[i].Type))
	}
	t := value.Type
	t.Nullable, t.TimeAttr = true, ""
	cols := append(append([]expr.Column(nil), j.Cols[:width]...), expr.Column{Name: fmt.Sprintf("$scalar%d", width), Type: t})
	return p.calcOver(j, append(evals, value), cols)
}

func nullableCols(cols []expr.Column) []expr.Column {
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		c.Type.Nullable, c.Type.TimeAttr = true, ""
		out[i] = c
	}
	return out
}

// hasOver reports whether e holds a call with OVER.
func hasOver(e parser.Expr) bool {
	found := false
	walk(e, func(x parser.Expr) bool {
		if f, ok := x.(*parser.FuncCall); ok && f.Over != nil {
			found = true
		}
		return !found
	})
	return found
}
