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

// Subqueries in WHERE are planned as Flink plans them after decorrelation:
// a conjunct `x [NOT] IN (subquery)` or `[NOT] EXISTS (subquery)` becomes
// a semi (anti) join of the rows so far with the subquery's rows, on the
// IN pair and the subquery's correlated conditions; an uncorrelated
// scalar subquery becomes a join with its single row, whose value a
// column carries for the condition or select item that reads it.
//
// NOT IN follows SQL's NULL logic, as Flink's null-aware anti join does:
// a left row is kept only when no right row compares equal or unknown, so
// a NULL on the right removes every row (x <> NULL is unknown) and a NULL
// x is kept only while the subquery is empty.

// hasSubquery reports whether e holds a subquery outside a nested query.
func hasSubquery(e parser.Expr) bool {
	found := false
	walk(e, func(x parser.Expr) bool {
		switch x.(type) {
		case *parser.InQuery, *parser.Exists, *parser.Subquery:
			found = true
		}
		return !found
	})
	return found
}

// itemsHaveSubquery reports whether a select item holds a subquery.
func itemsHaveSubquery(items []*parser.SelectItem) bool {
	for _, it := range items {
		if hasSubquery(it.Expr) {
			return true
		}
	}
	return false
}

// subqueryConjuncts splits a condition into its conjuncts with every NOT
// pushed down to the subquery predicates (NOT (a OR b) is NOT a AND NOT b
// in SQL's three-valued logic too), so that NOT EXISTS, NOT (x IN …) and
// Flink tests' NOT (c OR NOT EXISTS (…)) read as semi and anti joins.
func subqueryConjuncts(e parser.Expr) []parser.Expr {
	switch x := e.(type) {
	case *parser.Binary:
		if x.Op == parser.And {
			return append(subqueryConjuncts(x.L), subqueryConjuncts(x.R)...)
		}
	case *parser.Unary:
		if x.Op != parser.Not || !hasSubquery(x.X) {
			break
		}
		switch y := x.X.(type) {
		case *parser.Binary:
			if y.Op == parser.Or {
				return append(subqueryConjuncts(not(y.L)), subqueryConjuncts(not(y.R))...)
			}
		case *parser.Unary:
			if y.Op == parser.Not {
				return subqueryConjuncts(y.X)
			}
		case *parser.InQuery:
			n := *y
			n.Not = !n.Not
			return []parser.Expr{&n}
		}
	}
	return []parser.Expr{e}
}

func not(e parser.Expr) parser.Expr {
	return &parser.Unary{Pos: e.Position(), Op: parser.Not, X: e}
}

// planWhereSubqueries plans FROM and a WHERE holding subqueries: the plain
// conjuncts first (pushed into joins as usual), then one semi/anti join
// per subquery predicate, then the conditions over scalar subqueries.
func (p *Planner) planWhereSubqueries(s *parser.Select) (*Rel, error) {
	var plain, subs []parser.Expr
	for _, c := range subqueryConjuncts(s.Where) {
		if hasSubquery(c) {
			subs = append(subs, c)
		} else {
			plain = append(plain, c)
		}
	}
	var where parser.Expr
	if len(plain) > 0 {
		where = andAll(plain)
	}
	in, err := p.planSourceWhere(s.From, where)
	if err != nil {
		return nil, err
	}
	for _, c := range subs {
		if in, err = p.applySubquery(in, c); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// applySubquery filters in by one conjunct that holds a subquery.
func (p *Planner) applySubquery(in *Rel, c parser.Expr) (*Rel, error) {
	switch x := c.(type) {
	case *parser.InQuery:
		if sc, ok := p.scalarUnderIn(in, x); ok {
			c = sc
			break
		}
		return p.inJoin(in, x)
	case *parser.Exists:
		return p.existsJoin(in, x.Query, exec.Semi)
	case *parser.Unary:
		if e, ok := x.X.(*parser.Exists); ok && x.Op == parser.Not {
			return p.existsJoin(in, e.Query, exec.Anti)
		}
	}
	if pos, ok := predicateSubquery(c); ok {
		return nil, &Error{Pos: pos, Msg: "an IN or EXISTS subquery is supported only as a condition of WHERE joined by AND (not inside OR, CASE or a function)",
			Hint: "split the condition, e.g. a UNION ALL of one query per OR branch"}
	}
	sc := scalarCols{}
	in, err := p.scalarSubqueries(in, c, sc)
	if err != nil {
		return nil, err
	}
	return p.filter(in, c, sc.resolve(in, nil))
}

// predicateSubquery finds an IN or EXISTS subquery in e.
func predicateSubquery(e parser.Expr) (parser.Pos, bool) {
	var pos parser.Pos
	found := false
	walk(e, func(x parser.Expr) bool {
		switch x.(type) {
		case *parser.InQuery, *parser.Exists:
			pos, found = x.Position(), true
		}
		return !found
	})
	return pos, found
}

// subqueryPlan is the right side of a semi join: the subquery's rows, the
// IN value's column (-1 for EXISTS) and its correlated conditions.
type subqueryPlan struct {
	rel        *Rel
	value      int
	correlated []parser.Expr
	// keys are equi keys (outer, inner columns) the plan already placed.
	keys [2][]int
}

// planSubquery plans q as the right side of a semi join of outer. An
// uncorrelated subquery is planned whole; a correlated one must be a
// plain SELECT … FROM … WHERE (no GROUP BY, aggregate, DISTINCT): its
// WHERE conjuncts that read outer columns become the join's condition.
func (p *Planner) planSubquery(outer *Rel, q *parser.Query, in, anti bool) (*subqueryPlan, error) {
	sel, simple := q.Body.(*parser.Select)
	simple = simple && len(q.With) == 0 && len(q.OrderBy) == 0 && q.Limit == nil && sel.From != nil
	var inner, corr []parser.Expr
	if simple && sel.Where != nil {
		from, err := p.planFrom(sel.From)
		if err != nil {
			return nil, err
		}
		for _, c := range conjuncts(sel.Where) {
			if readsOuter(outer, from, c) {
				corr = append(corr, c)
			} else {
				inner = append(inner, c)
			}
		}
	}
	if len(corr) == 0 {
		return p.uncorrelated(q, in)
	}
	if hasSubquery(andAll(corr)) {
		return nil, &Error{Pos: q.Pos, Msg: "a subquery inside the correlated condition of a subquery is not supported yet"}
	}
	// DISTINCT does not change which rows a semi or anti join matches.
	if len(sel.GroupBy) > 0 || sel.Having != nil || len(collectAggregates(sel)) > 0 {
		return p.decorrelateAggregate(outer, sel, inner, corr, in)
	}
	var where parser.Expr
	if len(inner) > 0 {
		where = andAll(inner)
	}
	rel, err := p.planSourceWhere(sel.From, where)
	if err != nil {
		return nil, err
	}
	sp := &subqueryPlan{rel: rel, value: -1, correlated: corr}
	if !in {
		return sp, nil
	}
	if len(sel.Items) != 1 || isStar(sel.Items[0].Expr) {
		return nil, &Error{Pos: q.Pos, Msg: "the subquery of IN must select exactly one column"}
	}
	c, err := expr.Compile(sel.Items[0].Expr, p.scope(rel.Cols))
	if err != nil {
		return nil, err
	}
	sp.rel, sp.value = withColumn(p, rel, c, sel.Items[0].Expr)
	return sp, nil
}

// decorrelateAggregate plans a correlated aggregating subquery of IN
// whose correlated conditions are all outer.col = inner.col, as Flink's
// decorrelation does: the subquery grouped also by the inner columns, so
// that each outer row meets the groups of its own correlation values.
// Without GROUP BY the subquery has one row even over no rows, which the
// grouped form lacks: that differs only when the empty aggregate could
// match, so such a subquery comes here only when every aggregate's empty
// value is NULL (which IN never matches) and not under NOT IN (where that
// NULL removes the row); the others are scalar subqueries (scalarUnderIn).
func (p *Planner) decorrelateAggregate(outer *Rel, sel *parser.Select, inner, corr []parser.Expr, in bool) (*subqueryPlan, error) {
	refuse := func(why string) error {
		return &Error{Pos: sel.Pos, Msg: "this correlated subquery with GROUP BY or an aggregate is not supported yet: " + why,
			Hint: "join the aggregated subquery on the correlated columns instead"}
	}
	if !in {
		return nil, refuse("Weir decorrelates one only under IN")
	}
	if sel.Having != nil || len(sel.Items) != 1 || isStar(sel.Items[0].Expr) {
		return nil, refuse("it must select one column and have no HAVING")
	}
	from, err := p.planFrom(sel.From)
	if err != nil {
		return nil, err
	}
	var outerCols []int
	items, groupBy := []*parser.SelectItem{sel.Items[0]}, append([]parser.Expr(nil), sel.GroupBy...)
	for _, c := range corr {
		o, i, ok := correlatedExprs(outer, from, c)
		if !ok {
			return nil, refuse(fmt.Sprintf("its correlated condition %s is not outer.col = inner.col", parser.Format(c)))
		}
		outerCols = append(outerCols, identIndex(outer, o))
		items = append(items, &parser.SelectItem{Pos: i.Position(), Expr: i})
		groupBy = append(groupBy, i)
	}
	g := *sel
	g.Items, g.GroupBy, g.Where = items, groupBy, nil
	if len(inner) > 0 {
		g.Where = andAll(inner)
	}
	rel, err := p.planSelect(&g)
	if err != nil {
		return nil, err
	}
	sp := &subqueryPlan{rel: rel, value: 0}
	for i, o := range outerCols {
		sp.keys[0], sp.keys[1] = append(sp.keys[0], o), append(sp.keys[1], 1+i)
	}
	return sp, nil
}

// correlatedExprs splits outer.col = inner.col into its outer and inner
// column references.
func correlatedExprs(outer, inner *Rel, e parser.Expr) (parser.Expr, parser.Expr, bool) {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != parser.Eq {
		return nil, nil, false
	}
	for _, pair := range [2][2]parser.Expr{{b.L, b.R}, {b.R, b.L}} {
		if identIndex(inner, pair[1]) >= 0 && identIndex(inner, pair[0]) < 0 && identIndex(outer, pair[0]) >= 0 {
			return pair[0], pair[1], true
		}
	}
	return nil, nil, false
}

// uncorrelated plans a subquery that reads no outer column.
func (p *Planner) uncorrelated(q *parser.Query, in bool) (*subqueryPlan, error) {
	rel, err := p.Plan(q)
	if err != nil {
		return nil, err
	}
	visible := visibleColumns(rel)
	if in && len(visible) != 1 {
		return nil, &Error{Pos: q.Pos, Msg: fmt.Sprintf("the subquery of IN must select exactly one column, it selects %d", len(visible))}
	}
	sp := &subqueryPlan{rel: rel, value: -1}
	if in {
		sp.value = visible[0]
	}
	return sp, nil
}

// visibleColumns are the indexes of the columns the query selected (not
// those the plan added, named $…).
func visibleColumns(r *Rel) []int {
	var out []int
	for i, c := range r.Cols {
		if !strings.HasPrefix(c.Name, "$") {
			out = append(out, i)
		}
	}
	return out
}

// readsOuter reports whether c names a column of outer that is not one of
// inner's (an inner column of the same name hides the outer one).
func readsOuter(outer, inner *Rel, c parser.Expr) bool {
	found := false
	walk(c, func(x parser.Expr) bool {
		if id, ok := x.(*parser.Ident); ok && identIndex(inner, id) < 0 && identIndex(outer, id) >= 0 {
			found = true
		}
		return !found
	})
	return found
}

// withColumn returns in with c appended as a column (unless src names a
// column of in already) and the column's index.
func withColumn(p *Planner, in *Rel, c *expr.Compiled, src parser.Expr) (*Rel, int) {
	if i := identIndex(in, src); i >= 0 {
		return in, i
	}
	evals := make([]*expr.Compiled, 0, len(in.Cols)+1)
	for i, col := range in.Cols {
		evals = append(evals, fieldRef(i, col.Type))
	}
	cols := append(append([]expr.Column(nil), in.Cols...), expr.Column{Name: "$subquery_key", Type: c.Type})
	out := p.calcOver(in, append(evals, c), cols)
	out.upsertKey, out.win = in.upsertKey, in.win
	return out, len(in.Cols)
}

// inJoin plans x [NOT] IN (subquery).
func (p *Planner) inJoin(in *Rel, x *parser.InQuery) (*Rel, error) {
	sp, err := p.planSubquery(in, x.Query, true, x.Not)
	if err != nil {
		return nil, err
	}
	lc, err := expr.Compile(x.X, p.scope(in.Cols))
	if err != nil {
		return nil, err
	}
	width := len(in.Cols)
	left, li := withColumn(p, in, lc, x.X)
	right, ri := sp.rel, sp.value
	mode := exec.Semi
	if x.Not {
		mode = exec.Anti
	}
	keys, cond, err := p.correlation(left, right, sp.correlated)
	if err != nil {
		return nil, err
	}
	keys[0], keys[1] = append(keys[0], sp.keys[0]...), append(keys[1], sp.keys[1]...)
	lt, rt := left.Cols[li].Type, right.Cols[ri].Type
	if !x.Not || (!lt.Nullable && !rt.Nullable) {
		keys[0], keys[1] = append(keys[0], li), append(keys[1], ri)
	} else {
		cond = andCond(cond, nullAwareEqual(li, ri))
	}
	detail := fmt.Sprintf("where=[%s]", parser.Format(x))
	return p.semiJoin(left, right, width, exec.SemiJoinOptions{Mode: mode, LeftKeys: keys[0], RightKeys: keys[1], Condition: cond}, detail), nil
}

// existsJoin plans [NOT] EXISTS (subquery).
func (p *Planner) existsJoin(in *Rel, q *parser.Query, mode exec.SemiJoinMode) (*Rel, error) {
	sp, err := p.planSubquery(in, q, false, mode == exec.Anti)
	if err != nil {
		return nil, err
	}
	keys, cond, err := p.correlation(in, sp.rel, sp.correlated)
	if err != nil {
		return nil, err
	}
	what := "EXISTS"
	if mode == exec.Anti {
		what = "NOT EXISTS"
	}
	detail := fmt.Sprintf("where=[%s (%s)]", what, strings.Join(formatAll(sp.correlated), " AND "))
	return p.semiJoin(in, sp.rel, len(in.Cols), exec.SemiJoinOptions{Mode: mode, LeftKeys: keys[0], RightKeys: keys[1], Condition: cond}, detail), nil
}

func formatAll(es []parser.Expr) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = parser.Format(e)
	}
	return out
}

// correlation splits the correlated conditions into equi keys (an outer
// column = an inner column) and the rest, compiled over a left and a
// right row; a name resolves on the inner side first, as in SQL.
func (p *Planner) correlation(l, r *Rel, conds []parser.Expr) ([2][]int, func(l, r []any) (bool, error), error) {
	var keys [2][]int
	var rest []*expr.Compiled
	sc := p.scope(append(append([]expr.Column(nil), l.Cols...), r.Cols...))
	sc.Resolve = func(e parser.Expr) (*expr.Compiled, error) {
		if i := identIndex(r, e); i >= 0 {
			return fieldRef(len(l.Cols)+i, r.Cols[i].Type), nil
		}
		if i := identIndex(l, e); i >= 0 {
			return fieldRef(i, l.Cols[i].Type), nil
		}
		return nil, nil
	}
	for _, c := range conds {
		if li, ri, ok := correlatedPair(l, r, c); ok {
			keys[0], keys[1] = append(keys[0], li), append(keys[1], ri)
			continue
		}
		cc, err := expr.Compile(c, sc)
		if err != nil {
			return keys, nil, err
		}
		if cc.Type.Kind != types.Boolean && cc.Type.Kind != types.Null {
			return keys, nil, errAt(c.Position(), "the condition %s is %s, not BOOLEAN", parser.Format(c), cc.Type)
		}
		rest = append(rest, cc)
	}
	return keys, rowsCondition(rest), nil
}

// correlatedPair recognises outer.col = inner.col (either order), names
// resolving on the inner side first.
func correlatedPair(l, r *Rel, e parser.Expr) (int, int, bool) {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != parser.Eq {
		return 0, 0, false
	}
	for _, pair := range [2][2]parser.Expr{{b.L, b.R}, {b.R, b.L}} {
		ri := identIndex(r, pair[1])
		if ri >= 0 && identIndex(r, pair[0]) < 0 {
			if li := identIndex(l, pair[0]); li >= 0 {
				return li, ri, true
			}
		}
	}
	return 0, 0, false
}

// rowsCondition is the conjunction of cs over a left and a right row.
func rowsCondition(cs []*expr.Compiled) func(l, r []any) (bool, error) {
	if len(cs) == 0 {
		return nil
	}
	return func(l, r []any) (bool, error) {
		row := concatRows(l, r)
		for _, c := range cs {
			v, err := c.Eval(row)
			if err != nil || !expr.IsTrue(v) {
				return false, err
			}
		}
		return true, nil
	}
}

func concatRows(l, r []any) []any {
	out := make([]any, 0, len(l)+len(r))
	return append(append(out, l...), r...)
}

// nullAwareEqual matches a left and a right row whose fields li and ri are
// equal or either NULL: for NOT IN, x = y unknown excludes the row too.
func nullAwareEqual(li, ri int) func(l, r []any) (bool, error) {
	return func(l, r []any) (bool, error) {
		x, y := l[li], r[ri]
		return x == nil || y == nil || exec.RowKey(l, []int{li}) == exec.RowKey(r, []int{ri}), nil
	}
}

// andCond is the conjunction of two conditions (nil: true).
func andCond(a, b func(l, r []any) (bool, error)) func(l, r []any) (bool, error) {
	if a == nil {
		return b
	}
	return func(l, r []any) (bool, error) {
		ok, err := a(l, r)
		if !ok || err != nil {
			return false, err
		}
		return b(l, r)
	}
}

// semiJoin builds the SemiJoin node of left and right; its rows are the
// first width columns of left.
func (p *Planner) semiJoin(left, right *Rel, width int, opts exec.SemiJoinOptions, detail string) *Rel {
	if w := p.windowSemiJoin(left, right, width, opts, detail); w != nil {
		return w
	}
	opts.LeftWidth, opts.StateTTL = width, p.Config.StateTTL
	out := &Rel{Op: opts.Mode.String(), Detail: detail, Inputs: []*Rel{left, right}, Cols: left.Cols[:width:width], RowTime: -1,
		InsertOnly: opts.Mode == exec.Semi && left.InsertOnly && right.InsertOnly}
	if !out.InsertOnly {
		out.UpdatesFrom = firstNonEmpty(left.UpdatesFrom, right.UpdatesFrom, "Join(joinType=["+opts.Mode.String()+"])")
	}
	if len(opts.LeftKeys) > 0 {
		out.upsertKey = left.upsertKey
	}
	lk, rk := opts.LeftKey().Of(), opts.RightKey().Of()
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("Join", opOf(exec.NewSemiJoin, opts), lk, rk, ins)
	}
	return out
}

// scalarCols maps the scalar subqueries joined so far to the columns
// that carry their values; its resolve reads them in a compiled
// expression (Scope.Resolve).
type scalarCols map[*parser.Subquery]int

func (sc scalarCols) resolve(in *Rel, next func(parser.Expr) (*expr.Compiled, error)) func(parser.Expr) (*expr.Compiled, error) {
	return func(e parser.Expr) (*expr.Compiled, error) {
		if sq, ok := e.(*parser.Subquery); ok {
			if i, ok := sc[sq]; ok {
				return fieldRef(i, in.Cols[i].Type), nil
			}
		}
		if next != nil {
			return next(e)
		}
		return nil, nil
	}
}

// scalarSubqueries joins in with the single row of every scalar subquery
// in e, recording in sc the column that carries each.
func (p *Planner) scalarSubqueries(in *Rel, e parser.Expr, sc scalarCols) (*Rel, error) {
	var sqs []*parser.Subquery
	walk(e, func(x parser.Expr) bool {
		if sq, ok := x.(*parser.Subquery); ok {
			sqs = append(sqs, sq)
		}
		return true
	})
	for _, sq := range sqs {
		var err error
		if in, err = p.scalarJoin(in, sq); err != nil {
			return nil, err
		}
		sc[sq] = len(in.Cols) - 1
	}
	return in, nil
}

// scalarJoin joins in with the single row of an uncorrelated scalar
// subquery (NULL while it has none; a second row fails the job), carried
// in a column appended to in's.
func (p *Planner) scalarJoin(in *Rel, sq *parser.Subquery) (*Rel, error) {
	if sel, from, ok := p.correlatedScalar(in, sq.Query); ok {
		return p.correlatedScalarJoin(in, sq, sel, from)
	}
	r, err := p.Plan(sq.Query)
	if err != nil {
		return nil, err
	}
	visible := visibleColumns(r)
	if len(visible) != 1 {
		return nil, &Error{Pos: sq.Pos, Msg: fmt.Sprintf("a scalar subquery must select exactly one column, it selects %d", len(visible))}
	}
	if len(visible) != len(r.Cols) {
		r = p.calcOver(r, []*expr.Compiled{fieldRef(visible[0], r.Cols[visible[0]].Type)}, []expr.Column{r.Cols[visible[0]]})
	}
	t := r.Cols[0].Type
	t.Nullable, t.TimeAttr = true, ""
	opts := exec.SemiJoinOptions{Mode: exec.Scalar, RightArity: 1}
	out := p.semiJoin(in, r, len(in.Cols), opts, "select=["+parser.Format(sq)+"]")
	out.Cols = append(append([]expr.Column(nil), in.Cols...), expr.Column{Name: fmt.Sprintf("$scalar%d", len(in.Cols)), Type: t})
	out.InsertOnly, out.upsertKey = false, nil
	out.UpdatesFrom = firstNonEmpty(in.UpdatesFrom, r.UpdatesFrom, "Join(joinType=[ScalarJoin])")
	return out, nil
}

// planItemSubqueries joins the scalar subqueries of a SELECT list (without
// aggregation) into in, recording their columns in sc.
func (p *Planner) planItemSubqueries(in *Rel, items []*parser.SelectItem, sc scalarCols) (*Rel, error) {
	for _, it := range items {
		if !hasSubquery(it.Expr) {
			continue
		}
		if pos, ok := predicateSubquery(it.Expr); ok {
			return nil, &Error{Pos: pos, Msg: "an IN or EXISTS subquery in the SELECT list is not supported yet",
				Hint: "filter with it in WHERE, or LEFT JOIN the subquery and test the joined column"}
		}
		var err error
		if in, err = p.scalarSubqueries(in, it.Expr, sc); err != nil {
			return nil, err
		}
	}
	return in, nil
}
